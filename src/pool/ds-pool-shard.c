/* ds-pool-shard.c: one thread's cache in a pool
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "ds-pool-shard-private.h"

DsPoolShard *
ds_pool_shard_new (void)
{
  /* Its own cache lines: threads write their shards all the time. */
  return g_aligned_alloc0 (1, sizeof (DsPoolShard), 128);
}

void
ds_pool_shard_free (DsPoolShard *shard)
{
  for (guint ac = 0; ac < DS_POOL_N_ALIGN_CLASSES; ac++)
    g_free (shard->bins[ac]);
  if (shard->spare_ss != NULL)
    ds_stream_state_unref (shard->spare_ss);
  g_aligned_free (shard);
}

DsPoolBlock *
ds_pool_shard_take_any_locked (DsPoolShard         *shard,
                               const DsPoolRequest *request,
                               DsStreamState      **ss_out,
                               guint64             *seq_out)
{
  DsPoolBin *bin;
  DsPoolBlock *b;

  if (shard->bins[request->ac] == NULL)
    return NULL;

  bin = &shard->bins[request->ac][request->cls];
  b = ds_pool_bin_oldest (bin);
  if (b == NULL)
    return NULL;

  *seq_out = b->seq;
  return ds_pool_shard_take_block_locked (shard, bin, b, ss_out);
}
