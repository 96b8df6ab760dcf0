/* ds-pool-eviction.c: choosing what a pool gives back upstream
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "ds-pool-eviction-private.h"

/* Whether the pass under way may take @b. */
static gboolean
may_take (DsPoolEviction *e,
          DsPoolBlock    *b)
{
  if (b->stamp > e->max_stamp)
    return FALSE;   /* not idle long enough */
  if (b->ss == NULL)
    return TRUE;
  if (b->seq == DS_FENCE_LOST)
    return FALSE;

  switch (e->mode)
    {
    case DS_POOL_EVICT_READY:
      return ds_stream_state_known_complete (b->ss, b->seq);
    case DS_POOL_EVICT_POLL:
      return ds_stream_state_poll (b->ss, b->seq, e->counters);
    case DS_POOL_EVICT_STALE:
      return !ds_stream_state_is_fenced (b->ss, b->seq) ||
             ds_stream_state_poll (b->ss, b->seq, e->counters);
    case DS_POOL_EVICT_ALL:
    default:
      return TRUE;
    }
}

/* One list of @bin, from @b (its oldest block) to its newest. */
static void
collect_list (DsPoolEviction *e,
              DsPoolShard    *shard,
              DsPoolBin      *bin,
              DsPoolBlock    *b)
{
  DsPoolBlock *prev;

  for (; b != NULL && e->taken < e->need; b = prev)
    {
      DsPoolVictim v;

      prev = b->prev;
      if (!may_take (e, b))
        continue;

      v.seq = b->seq;
      v.block = ds_pool_shard_take_block_locked (shard, bin, b, &v.ss);
      g_array_append_val (e->victims, v);
      e->taken += v.block->up_size;
    }
}

void
ds_pool_eviction_collect (DsPoolEviction *e,
                          DsPoolShard    *shard)
{
  for (gint ac = DS_POOL_N_ALIGN_CLASSES - 1; ac >= 0 && e->taken < e->need; ac--)
    {
      if (shard->bins[ac] == NULL)
        continue;

      for (gint cls = DS_POOL_N_SIZE_CLASSES - 1; cls >= 0 && e->taken < e->need; cls--)
        {
          DsPoolBin *bin = &shard->bins[ac][cls];

          /* Oldest first, the ready list before the fenced one. */
          collect_list (e, shard, bin, bin->tail);
          collect_list (e, shard, bin, bin->fenced_tail);
        }
    }
}
