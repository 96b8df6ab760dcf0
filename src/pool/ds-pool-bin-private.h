/* ds-pool-bin-private.h: the free list of one size class
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A shard (ds-pool-shard-private.h) keeps the blocks given back to it in
 * bins, one per (alignment class, size class). A bin has two lists,
 * newest first: the ready one (blocks anyone may take now: given back
 * without a fence, or under one known complete then) and the fenced one
 * (given back under a fence not known complete). A request takes the
 * newest block its own stream gave back from the fenced list (a stream
 * order's steady state: stream order makes that safe), else the newest
 * ready one; only when the ready list is empty does it look through the
 * fenced list (ds_pool_bin_scan ()), which moves every block found
 * complete to the ready list at once, so that a request in host order
 * (pinned staging) does not walk past the blocks still pending at every
 * take. The bin links and picks blocks; the shard takes them out and
 * keeps the counts.
 */

#pragma once

#include "ds-pool-block-private.h"

G_BEGIN_DECLS

typedef struct
{
  DsPoolBlock *head;         /* ready: newest */
  DsPoolBlock *tail;         /* ready: oldest */
  DsPoolBlock *fenced_head;  /* fenced: newest */
  DsPoolBlock *fenced_tail;  /* fenced: oldest */
} DsPoolBin;

/* Unlinks @b from whichever list of @bin it is in. */
static inline void
ds_pool_bin_unlink (DsPoolBin   *bin,
                    DsPoolBlock *b)
{
  DsPoolBlock **head = b->fenced ? &bin->fenced_head : &bin->head;
  DsPoolBlock **tail = b->fenced ? &bin->fenced_tail : &bin->tail;

  if (b->prev != NULL)
    b->prev->next = b->next;
  else
    *head = b->next;
  if (b->next != NULL)
    b->next->prev = b->prev;
  else
    *tail = b->prev;
  b->prev = b->next = NULL;
}

/* Links @b in at the head (newest) of @bin's ready list, or of its
 * fenced list with @fenced. */
static inline void
ds_pool_bin_push (DsPoolBin   *bin,
                  DsPoolBlock *b,
                  gboolean     fenced)
{
  DsPoolBlock **head = fenced ? &bin->fenced_head : &bin->head;
  DsPoolBlock **tail = fenced ? &bin->fenced_tail : &bin->tail;

  b->fenced = fenced;
  b->prev = NULL;
  b->next = *head;
  if (*head != NULL)
    (*head)->prev = b;
  else
    *tail = b;
  *head = b;
}

/* The block of @bin a request in @order (NULL: host order) takes without
 * looking at fences, or NULL: the newest one its own stream gave back,
 * else the newest ready one, noting the demand for its stream's blocks if
 * another stream gave it back (see ds_stream_state_note_demand ()). With
 * NULL and a fenced list, ds_pool_bin_scan () looks further. */
static inline DsPoolBlock *
ds_pool_bin_at_hand (DsPoolBin           *bin,
                     const DsAccessOrder *order)
{
  DsPoolBlock *b = bin->fenced_head;

  if (order != NULL && b != NULL && ds_stream_state_matches (b->ss, order))
    return b;
  b = bin->head;
  /* One moved here once its fence was known complete: the request wants
   * blocks of that stream, which must go on being checked. */
  if (b != NULL && b->ss != NULL && (order == NULL || !ds_stream_state_matches (b->ss, order)))
    ds_stream_state_note_demand (b->ss);

  return b;
}

/* A block of @bin (whose ready list is empty and whose newest fenced
 * block is not of @order's stream) that a request in @order may take now,
 * or NULL. Looks at the newest fenced blocks (at most 32), moves those
 * known complete to the ready list, and polls the oldest pending one
 * (counted in @counters). A stream whose blocks were wanted is noted as
 * in demand. */
DsPoolBlock *ds_pool_bin_scan      (DsPoolBin           *bin,
                                    const DsAccessOrder *order,
                                    DsFenceCounters     *counters);

/* The oldest block of @bin whatever its fence (except one that never
 * completes), for a caller that will wait for the fence; NULL if none. */
DsPoolBlock *ds_pool_bin_oldest    (DsPoolBin           *bin);

G_END_DECLS
