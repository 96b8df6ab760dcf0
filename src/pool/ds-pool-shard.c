/* ds-pool-shard.c: one thread's cache in a pool
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "ds-pool-shard-private.h"

void
ds_pool_shard_lock_wait (DsPoolShard *shard)
{
  for (guint spins = 0;; spins++)
    {
      if (!__atomic_load_n (&shard->lock, __ATOMIC_RELAXED) &&
          !__atomic_exchange_n (&shard->lock, 1, __ATOMIC_ACQUIRE))
        return;

      /* The holder is most likely running: wait a little on the cache
       * line; then it may have been preempted (or be in a CUDA call):
       * give it the CPU. */
      if (spins < 100)
        {
#if defined(__x86_64__) || defined(__i386__)
          __builtin_ia32_pause ();
#elif defined(__aarch64__)
          __asm__ __volatile__ ("yield");
#endif
        }
      else
        g_thread_yield ();
    }
}

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
