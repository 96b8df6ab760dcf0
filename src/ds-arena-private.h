/* ds-arena-private.h: a monotonic bump allocator over a chain of blocks
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * One arena per memory kind lives inside each DsScratchpad; this is the
 * one place where its allocation rule is used (the rule itself is in
 * ds-bump.h, installed for the inline allocations of C callers). A
 * request goes at the cursor of the newest block, aligned up to its
 * alignment (0 means 16), and takes its size rounded up to 16 (or the
 * rest of the block): _ds_bump (), no lock, no CUDA call. When it does not fit, ds_arena_grow () takes a new block from the
 * upstream (DsGrowth, below, says how large) and places the request in
 * it by the same rule; the old block's tail is abandoned. Blocks are taken
 * aligned to DS_ARENA_BLOCK_ALIGNMENT and the cursor is kept a multiple of
 * 16 wherever there is room, so a request aligned to at most 16 starts at
 * the cursor itself.
 *
 * ds_arena_release () gives every block back, newest first, through a
 * release batch, with the size and alignment it was taken with, exactly
 * once, and leaves the arena empty and usable; with keep, the newest
 * block stays for the next unit of work where that is safe.
 *
 * The arena knows its upstream through DsUpstream (the DsMemoryResource
 * interface) and release batches only.
 *
 * DsGrowth: how large an arena's blocks are.
 *
 * The block-sizing policy of the arenas, in one place. The
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

#include "ds-bump.h"
#include "ds-fence-batch-private.h"
#include "ds-memory-resource-private.h"

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

/* Blocks are taken from upstream with this alignment, so any request
 * aligned to at most this much needs no padding at the start of a block. */
#define DS_ARENA_BLOCK_ALIGNMENT ((gsize) 256)
/* What an alignment of 0 means, and the granule of the cursor. */
#define DS_ARENA_MIN_ALIGNMENT   _DS_BUMP_MIN_ALIGNMENT

typedef struct
{
  gpointer ptr;
  gsize    size;
  gpointer handle;   /* what ds_upstream_take () gave with it */
} DsArenaBlock;

typedef struct
{
  DsBumpWindow *window;        /* [cur, end) of the newest block (its owner
                                * keeps it: ds-bump.h) */
  DsUpstream    upstream;      /* bound at the kind's first block */
  guint64       reserved;      /* bytes held from upstream */
  /* Bytes the allocations took of the blocks before the newest, since
   * the last release (the newest's are its cursor's way). */
  guint64       taken;
  DsGrowth      growth;
  DsArenaBlock *blocks;        /* inline_blocks, or the heap past them */
  guint         n_blocks;
  guint         blocks_capacity;
  /* Most units of work take a block or two per kind: no heap for those. */
  DsArenaBlock  inline_blocks[2];
} DsArena;

/* Sets up @arena, empty, to bump in @window, with a first block of
 * @initial_size bytes and blocks that stop doubling at @max_block_size.
 * Both lie in zero-filled memory (a new instance's): only what is not
 * zero is written, once per new scratchpad and kind. */
static inline void
ds_arena_init (DsArena      *arena,
               DsBumpWindow *window,
               gsize         initial_size,
               gsize         max_block_size)
{
  arena->window = window;
  arena->blocks = arena->inline_blocks;
  arena->blocks_capacity = G_N_ELEMENTS (arena->inline_blocks);
  arena->growth.initial_size = initial_size;
  arena->growth.max_block_size = max_block_size;
  arena->growth.next_size = initial_size;
}

/* Frees what @arena holds of the heap; it must hold no block. */
static inline void
ds_arena_clear (DsArena *arena)
{
  g_warn_if_fail (arena->n_blocks == 0);

  if (G_UNLIKELY (arena->blocks != arena->inline_blocks))
    g_free (arena->blocks);
  arena->blocks = arena->inline_blocks;
  arena->blocks_capacity = G_N_ELEMENTS (arena->inline_blocks);
}

/* Checks a request as the rule takes it: DS_ERROR_INVALID_ARGUMENT for an
 * alignment that is not a power of two or a size that overflows once
 * padded. On success *@alignment is the alignment in effect (0 -> 16).
 * Blocks are taken aligned to DS_ARENA_BLOCK_ALIGNMENT: a size that
 * overflows once padded to that is refused here, in the caller's terms,
 * rather than by the upstream in terms of a block the caller never asked
 * for. */
static inline gboolean
ds_arena_check_request (gsize    size,
                        gsize   *alignment,
                        GError **error)
{
  return ds_memory_check_size_alignment (size, alignment, DS_ARENA_MIN_ALIGNMENT,
                                         DS_ARENA_BLOCK_ALIGNMENT, error);
}

/* Whether @arena draws from an upstream yet. */
static inline gboolean
ds_arena_is_bound (const DsArena *arena)
{
  return arena->upstream.resource != NULL;
}

/* Draws @arena's blocks from @resource (checked: see ds_upstream_bind ()),
 * or from @upstream, bound already (a default resource: shared in the
 * thread's memo @slot, see ds_growth_share ()). */
gboolean ds_arena_bind          (DsArena           *arena,
                                 DsMemoryResource  *resource,
                                 GError           **error);
void     ds_arena_bind_default  (DsArena           *arena,
                                 const DsUpstream  *upstream,
                                 guint              slot);

/* Takes a new block (in @order when the upstream is stream-ordered and
 * @order is a device order; NULL: host order) and places the request,
 * checked already, in it. On failure the arena is unchanged. */
gpointer ds_arena_grow          (DsArena             *arena,
                                 gsize                size,
                                 gsize                alignment,
                                 const DsAccessOrder *order,
                                 GError             **error);

/* What the allocations since the last release took of the blocks: each
 * its size rounded up to 16 and the padding before it, not the tail of a
 * block given up for a new one; 0 exactly when nothing was allocated. */
guint64  ds_arena_get_taken     (const DsArena       *arena);

/* Gives every block back in @order (NULL: host order), newest first,
 * through @batch, and empties the arena. With @keep, the newest block
 * stays instead, as the arena's current (empty) block, if it suits the
 * next unit of work; the caller keeps only where the block is taken again
 * in the order it is given back in. FALSE with @error set if blocks could
 * not be given back safely (they are then held back, never reused
 * early); the arena has no allocations either way. */
gboolean ds_arena_release       (DsArena             *arena,
                                 DsFenceBatch        *batch,
                                 const DsAccessOrder *order,
                                 gboolean             keep,
                                 GError             **error);

/* Empties the arena without giving anything back: for blocks that cannot
 * be returned safely (their device is gone), holding them beats reuse
 * while queued work may still touch them. */
void     ds_arena_abandon       (DsArena             *arena);

/* Takes block @i out of @arena without giving it back, for whoever keeps
 * it instead (ds-export-hold.c, before a release); the arena bumps no
 * more in it. */
DsArenaBlock ds_arena_take_out  (DsArena             *arena,
                                 guint                i);

G_END_DECLS
