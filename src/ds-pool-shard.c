/* ds-pool-shard.c: size classes and the per-thread shards of a pool
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "ds-pool-shard-private.h"

/* How many fenced blocks of a size class a request looks at before it
 * gives up on the cache of one shard: more than the releases between two
 * checks of a stream (ds-fence.c), so that one stream's blocks given back
 * since its last check never hide those it found complete. */
#define SCAN_LIMIT 32

gsize
ds_pool_class_size (guint cls)
{
  guint msb, top;

  if (cls < 8)
    return ((gsize) cls + 1) << DS_POOL_GRANULE_SHIFT;

  msb = 3 + (cls - 8) / 4;
  top = 4 + (cls - 8) % 4;
  return (gsize) (((guint64) (top + 1) << (msb - 2)) << DS_POOL_GRANULE_SHIFT);
}

DsPoolShard *
ds_pool_shard_new (void)
{
  /* Its own cache lines: threads write their shards all the time. */
  DsPoolShard *shard = g_aligned_alloc0 (1, sizeof (DsPoolShard), 128);

  return shard;
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

DsPoolBin *
ds_pool_shard_make_bin (DsPoolShard *shard,
                        guint        ac,
                        guint        cls)
{
  if (shard->bins[ac] == NULL)
    shard->bins[ac] = g_new0 (DsPoolBin, DS_POOL_N_SIZE_CLASSES);

  return &shard->bins[ac][cls];
}

DsPoolBlock *
ds_pool_shard_scan_locked (DsPoolShard          *shard,
                           DsPoolBin            *bin,
                           gsize                 class_bytes,
                           const DsAccessOrder  *order,
                           DsStreamState       **ss_out)
{
  DsPoolBlock *b, *next, *match = NULL, *candidate = NULL;
  DsFenceCrossStreamPolicy cross_stream;
  guint n = 0;

  /* Newest first: what completed goes to the ready list, oldest last, so
   * that it keeps its order there; the blocks still pending stay. */
  for (b = bin->fenced_head; b != NULL && n < SCAN_LIMIT; b = next, n++)
    {
      next = b->next;
      if (ds_stream_state_known_complete (b->ss, b->seq))
        {
          ds_pool_bin_unlink (bin, b);
          b->fenced = FALSE;
          b->next = NULL;
          b->prev = bin->tail;
          if (bin->tail != NULL)
            bin->tail->next = b;
          else
            bin->head = b;
          bin->tail = b;
          continue;
        }
      /* Stream order makes reuse on the releasing stream safe at once. */
      if (match == NULL && order != NULL && ds_stream_state_matches (b->ss, order))
        match = b;
      if (b->seq != DS_FENCE_LOST)
        candidate = b;   /* the oldest one seen is the most likely done */
    }

  if (bin->head != NULL)
    {
      b = bin->head;
      /* Reusable here only because its stream was checked. */
      if (order == NULL || !ds_stream_state_matches (b->ss, order))
        ds_stream_state_note_demand (b->ss);
      return ds_pool_shard_take_block_locked (shard, bin, b, class_bytes, ss_out);
    }
  if (match != NULL)
    return ds_pool_shard_take_block_locked (shard, bin, match, class_bytes, ss_out);

  if (candidate == NULL)
    return NULL;
  /* Wanted, still pending: its stream is checked from now on. */
  ds_stream_state_note_demand (candidate->ss);

  ds_fence_get_policies (NULL, &cross_stream);
  if (order != NULL && cross_stream == DS_FENCE_CROSS_STREAM_WAIT)
    {
      if (ds_stream_state_make_wait (candidate->ss, candidate->seq, order, &shard->cuda))
        return ds_pool_shard_take_block_locked (shard, bin, candidate, class_bytes, ss_out);
    }
  else if (ds_stream_state_poll (candidate->ss, candidate->seq, &shard->cuda))
    {
      return ds_pool_shard_take_block_locked (shard, bin, candidate, class_bytes, ss_out);
    }

  return NULL;
}

DsPoolBlock *
ds_pool_shard_take_any_locked (DsPoolShard    *shard,
                               guint           ac,
                               guint           cls,
                               gsize           class_bytes,
                               DsStreamState **ss_out,
                               guint64        *seq_out)
{
  DsPoolBin *bin = ds_pool_shard_bin (shard, ac, cls);

  if (bin == NULL)
    return NULL;

  /* A ready block needs no wait at all. */
  if (bin->tail != NULL)
    {
      *seq_out = bin->tail->seq;
      return ds_pool_shard_take_block_locked (shard, bin, bin->tail, class_bytes, ss_out);
    }

  for (DsPoolBlock *b = bin->fenced_tail; b != NULL; b = b->prev)
    if (b->seq != DS_FENCE_LOST)
      {
        *seq_out = b->seq;
        return ds_pool_shard_take_block_locked (shard, bin, b, class_bytes, ss_out);
      }

  return NULL;
}

/* ds_pool_shard_evict_locked () over one list of @bin, from @b (its
 * oldest block) to its newest; returns @taken plus what it took. */
static guint64
evict_list_locked (DsPoolShard     *shard,
                   DsPoolBin       *bin,
                   DsPoolBlock     *b,
                   gsize            class_bytes,
                   guint64          taken,
                   guint64          need,
                   DsPoolEvictMode  mode,
                   guint            max_stamp,
                   DsFenceCounters *counters,
                   GArray          *victims)
{
  DsPoolBlock *prev;

  for (; b != NULL && taken < need; b = prev)
    {
      gboolean take;

      prev = b->prev;
      if (b->stamp > max_stamp)
        take = FALSE;   /* not idle long enough */
      else if (b->ss == NULL)
        take = TRUE;
      else if (b->seq == DS_FENCE_LOST)
        take = FALSE;
      else if (mode == DS_POOL_EVICT_READY)
        take = ds_stream_state_known_complete (b->ss, b->seq);
      else if (mode == DS_POOL_EVICT_POLL)
        take = ds_stream_state_poll (b->ss, b->seq, counters);
      else if (mode == DS_POOL_EVICT_STALE)
        take = !ds_stream_state_is_fenced (b->ss, b->seq) ||
               ds_stream_state_poll (b->ss, b->seq, counters);
      else
        take = TRUE;

      if (take)
        {
          DsPoolVictim v;

          v.class_bytes = class_bytes;
          v.seq = b->seq;
          v.block = ds_pool_shard_take_block_locked (shard, bin, b, class_bytes, &v.ss);
          g_array_append_val (victims, v);
          taken += class_bytes;
        }
    }

  return taken;
}

guint64
ds_pool_shard_evict_locked (DsPoolShard     *shard,
                            guint64          need,
                            DsPoolEvictMode  mode,
                            guint            max_stamp,
                            DsFenceCounters *counters,
                            GArray          *victims)
{
  guint64 taken = 0;

  for (gint ac = DS_POOL_N_ALIGN_CLASSES - 1; ac >= 0 && taken < need; ac--)
    {
      if (shard->bins[ac] == NULL)
        continue;

      for (gint cls = DS_POOL_N_SIZE_CLASSES - 1; cls >= 0 && taken < need; cls--)
        {
          DsPoolBin *bin = &shard->bins[ac][cls];
          gsize class_bytes;

          if (bin->tail == NULL && bin->fenced_tail == NULL)
            continue;

          /* Oldest first, the ready list before the fenced one. */
          class_bytes = ds_pool_class_size ((guint) cls);
          taken = evict_list_locked (shard, bin, bin->tail, class_bytes, taken, need, mode,
                                     max_stamp, counters, victims);
          taken = evict_list_locked (shard, bin, bin->fenced_tail, class_bytes, taken, need, mode,
                                     max_stamp, counters, victims);
        }
    }

  return taken;
}
