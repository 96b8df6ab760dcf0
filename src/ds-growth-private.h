/* ds-growth-private.h: how large an arena's blocks are
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The block-sizing policy of a scratchpad's arenas, in one place. The
 * first block of a kind has the initial size; each next one doubles, up
 * to the ceiling (max_block_size, or the initial size if that is larger);
 * a request larger than the next block gets the smallest doubled size
 * that fits, or a block of its own size above the ceiling.
 *
 * A reused arena learns: after a release, its first block is the initial
 * size doubled (up to the ceiling) until it covers what recent units of
 * work took (a fading maximum plus an eighth for padding, but at most
 * twice the running average). So a scratchpad released after each unit
 * takes one block per kind per unit in its steady state. An arena on a
 * default resource shares what it learns with the other arenas of its
 * thread on that resource (a per-thread memo per kind): a scratchpad made
 * for one unit of work (one per GStreamer buffer, say) then takes one
 * block per kind from its first unit too.
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct
{
  gsize         initial_size;
  gsize         max_block_size;
  gsize         next_size;      /* the next block, before a request's own needs */
  gsize         demand_max;     /* what recent units took: a fading maximum */
  gsize         demand_avg;     /*   and a running average */
  gconstpointer memo_key;       /* the default resource whose thread memo it shares */
  guint         memo_slot;
} DsGrowth;

void  ds_growth_init           (DsGrowth      *self,
                                gsize          initial_size,
                                gsize          max_block_size);

/* Shares what @self learns with this thread's other arenas that draw from
 * @key in the memo @slot (< 4: the memory kind); an arena that never
 * released starts from what they learned. Only for a resource that
 * outlives every scratchpad (the defaults): a new resource at a dead
 * one's address would inherit its demand. */
void  ds_growth_share          (DsGrowth      *self,
                                gconstpointer  key,
                                guint          slot);

/* The size of the block for a request of @size bytes that needs @padding
 * bytes before it in a new block; 0 if it cannot be represented. @first:
 * the unit's first block (an arena that never released then starts from
 * its thread's memo). */
gsize ds_growth_block_for      (DsGrowth      *self,
                                gsize          size,
                                gsize          padding,
                                gboolean       first);

/* A block of @block_size bytes was taken: the next one doubles. */
void  ds_growth_took           (DsGrowth      *self,
                                gsize          block_size);

/* A unit of work took @taken bytes of its blocks and released them: the
 * next unit's first block covers what recent units took. */
void  ds_growth_learn          (DsGrowth      *self,
                                guint64        taken);

/* The next unit starts from its first block again, without learning
 * (its blocks were abandoned). */
void  ds_growth_restart        (DsGrowth      *self);

/* The size of a unit's first block, as learned so far. */
gsize ds_growth_first_block    (const DsGrowth *self);

/* The size blocks stop doubling at. */
static inline gsize
ds_growth_ceiling (const DsGrowth *self)
{
  return MAX (self->max_block_size, self->initial_size);
}

G_END_DECLS
