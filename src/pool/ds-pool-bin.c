/* ds-pool-bin.c: the free list of one size class
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "ds-pool-bin-private.h"

/* How many fenced blocks a scan looks at: more than the releases between
 * two checks of a stream (ds-fence.c), so that one stream's blocks given
 * back since its last check never hide those it found complete. */
#define SCAN_LIMIT 32

/* Moves @b, found complete, to the oldest end of @bin's ready list. */
static void
make_ready (DsPoolBin   *bin,
            DsPoolBlock *b)
{
  ds_pool_bin_unlink (bin, b);
  b->fenced = FALSE;
  b->prev = bin->tail;
  if (bin->tail != NULL)
    bin->tail->next = b;
  else
    bin->head = b;
  bin->tail = b;
}

DsPoolBlock *
ds_pool_bin_scan (DsPoolBin           *bin,
                  const DsAccessOrder *order,
                  DsFenceCounters     *counters)
{
  DsPoolBlock *b, *next, *match = NULL, *candidate = NULL;
  guint n = 0;

  /* Newest first: what completed goes to the ready list, oldest last, so
   * that it keeps its order there; the blocks still pending stay. */
  for (b = bin->fenced_head; b != NULL && n < SCAN_LIMIT; b = next, n++)
    {
      next = b->next;
      if (ds_stream_state_known_complete (b->ss, b->seq))
        {
          make_ready (bin, b);
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
      return b;
    }
  if (match != NULL)
    return match;
  if (candidate == NULL)
    return NULL;

  /* Wanted, still pending: its stream is checked from now on. Taken only
   * once its fence has completed (an event query, no wait): making the
   * requesting stream wait for it instead cost more than it saved
   * wherever the stream had work of its own. */
  ds_stream_state_note_demand (candidate->ss);
  if (ds_stream_state_poll (candidate->ss, candidate->seq, counters))
    return candidate;

  return NULL;
}

DsPoolBlock *
ds_pool_bin_oldest (DsPoolBin *bin)
{
  /* A ready block needs no wait at all. */
  if (bin->tail != NULL)
    return bin->tail;

  for (DsPoolBlock *b = bin->fenced_tail; b != NULL; b = b->prev)
    if (b->seq != DS_FENCE_LOST)
      return b;

  return NULL;
}
