/* ds-arena-private.h: a monotonic bump allocator over a chain of blocks
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * One arena per memory kind lives inside each DsScratchpad. Inside the
 * current block, allocation is a pointer bump (ds_arena_try_bump: no lock,
 * no CUDA call, no type check). When the block cannot fit a request, a new
 * block comes from the upstream resource: the first has the initial size,
 * each next one doubles up to the growth ceiling (max_block_size, or the
 * initial size if that is larger), and a larger request gets the smallest
 * doubled size that fits, or a block of its own size when that is above
 * the ceiling; the old block's tail is abandoned. ds_arena_release gives
 * every block back, newest first, with the size and alignment it was taken
 * with, exactly once, and leaves the arena empty and usable.
 *
 * A reused arena learns: after a release, its first block is the initial
 * size doubled (up to the ceiling) until it covers what recent units took
 * (the bytes handed out plus an eighth for padding, fading by a 32nd per
 * release, but at most twice their running average). So a scratchpad
 * released after each unit of work takes one block per kind per unit in
 * its steady state, not two or three: a pool round trip each saved.
 * With keep-blocks (ds-scratchpad.c), the arena keeps that block across
 * the release where that is safe, and saves the round trip too.
 *
 * The arena knows its upstream only through the DsMemoryResource
 * interface, and gives blocks back through a DsFenceBatch, which picks the
 * right way for each resource (ds-fence-private.h).
 */

#pragma once

#include "ds-fence-batch-private.h"
#include "ds-scratchpad.h"

G_BEGIN_DECLS

/* Blocks are taken from upstream with this alignment, so any request
 * aligned to at most this much needs no padding at the start of a block. */
#define DS_ARENA_BLOCK_ALIGNMENT ((gsize) 256)

typedef struct
{
  gpointer ptr;
  gsize    size;
} DsArenaBlock;

typedef struct
{
  /* The bump window: [cur, end) of the newest block. It lives in the
   * head of the scratchpad (ds-scratchpad.h: the inline bump), so the
   * arena points to it. {0, 0} when the arena holds no block. */
  _DsScratchpadWindow *window;

  guint64       reserved;       /* bytes held from upstream */
  /* Bytes the allocations took of the blocks before the newest, since
   * the last release; the newest's are its cursor's way (see
   * ds_arena_get_taken ()). */
  guint64       taken;

  /* The upstream's vtable and fenced deallocation (pools), looked up
   * once: blocks are taken and given back straight through them (the
   * arena validated the request already). */
  DsMemoryResource                *iface_of;
  const DsMemoryResourceInterface *iface;
  DsFencedDeallocateFunc           fenced;

  gsize         initial_size;
  gsize         next_size;
  /* What recent units of work took of this kind (see ds_arena_release):
   * a reused scratchpad's first block covers the smaller of the maximum
   * and twice the average. */
  gsize         demand_max;     /* fading maximum */
  gsize         demand_avg;     /* running average */
  /* Blocks stop doubling at MAX (max_block_size, initial_size). */
  gsize         max_block_size;

  DsArenaBlock *blocks;          /* inline_blocks, or the heap past them */
  guint         n_blocks;
  guint         blocks_capacity;
  /* 0, or 1 + the thread's demand memo this arena shares (see
   * ds_arena_share_demand ()). */
  guint         demand_memo;
  /* Most units of work take a few blocks per kind: no heap for those. */
  DsArenaBlock  inline_blocks[2];
} DsArena;

/* Initializes @arena (new, or emptied with ds_arena_clear ()) to bump in
 * @window, with a first block of @initial_size bytes and the default
 * growth ceiling (DS_SCRATCHPAD_DEFAULT_MAX_BLOCK_SIZE). */
void     ds_arena_init    (DsArena              *arena,
                           _DsScratchpadWindow  *window,
                           gsize                 initial_size);
void     ds_arena_clear   (DsArena              *arena);

/* Lets @arena share what it learns of its upstream with the other arenas
 * of this thread that draw from the same one: the first block of an arena
 * binds the upstream from the thread's memo @slot (< 4: the memory kind)
 * when the memo is of it, and each release leaves its demand there; an
 * arena that never released starts from that demand. Only for an
 * upstream that outlives every scratchpad (the default resources), or
 * address reuse could hand a new resource a dead one's vtable. */
void     ds_arena_share_demand (DsArena       *arena,
                                guint          slot);

/* The cursor after an allocation that ends at @next in a window that ends
 * at @end: rounded up to 16, which the inline bump of ds-scratchpad.h
 * counts on to place a request aligned to at most 16 at the cursor
 * itself, and never past @end (a window whose end is not a multiple of
 * 16 is then full). */
static inline guintptr
ds_arena_cursor_after (guintptr next,
                       guintptr end)
{
  guintptr rounded = (next + 15) & ~(guintptr) 15;

  return rounded >= next && rounded <= end ? rounded : end;
}

/* The bump itself. @alignment must be a non-zero power of two and @size
 * non-zero; returns NULL when the current block cannot fit the request. */
static inline gpointer
ds_arena_try_bump (DsArena *arena,
                   gsize    size,
                   gsize    alignment)
{
  _DsScratchpadWindow *w = arena->window;
  guintptr p = (w->_cur + alignment - 1) & ~(guintptr) (alignment - 1);

  if (G_LIKELY (p >= w->_cur && p <= w->_end && size <= w->_end - p))
    {
      w->_cur = ds_arena_cursor_after (p + size, w->_end);
      return (gpointer) p;
    }

  return NULL;
}

/* What the allocations since the last release took of the blocks: each
 * its size rounded up to 16 (ds-scratchpad.h), and the padding before
 * it; not the tail of a block given up for a new one. 0 exactly when
 * nothing was allocated (every allocation moves a cursor). */
static inline guint64
ds_arena_get_taken (const DsArena *arena)
{
  if (arena->n_blocks == 0)
    return 0;

  return arena->taken + (arena->window->_cur -
                         (guintptr) arena->blocks[arena->n_blocks - 1].ptr);
}

/* The size of the next block for a request of @size bytes aligned to
 * @alignment, or 0 if it cannot be represented. */
gsize    ds_arena_next_block_size (const DsArena *arena,
                                   gsize          size,
                                   gsize          alignment);

/* Takes a new block from @upstream (in @order when the upstream is
 * stream-ordered and @order is a device order; NULL for host order) and
 * allocates from it. @size and @alignment are validated already. On
 * failure the arena is unchanged. */
gpointer ds_arena_grow    (DsArena              *arena,
                           DsMemoryResource     *upstream,
                           const DsAccessOrder  *order,
                           gsize                 size,
                           gsize                 alignment,
                           GError              **error);

/* Gives every block back to @upstream in @order (NULL: host order),
 * newest first, through @batch, and empties the arena. With @keep, the
 * newest block stays instead, as the arena's current (empty) block, if
 * it suits the next unit of work (it covers the first block that unit
 * would take, and is at most twice that); the caller keeps only where
 * the block is taken again in the order it is given back in. Returns
 * FALSE with @error set if blocks could not be given back safely (they
 * are then leaked, never reused early); the arena has no allocations
 * either way. */
gboolean ds_arena_release (DsArena              *arena,
                           DsMemoryResource     *upstream,
                           const DsAccessOrder  *order,
                           DsFenceBatch         *batch,
                           gboolean              keep,
                           GError              **error);

/* Empties the arena without giving anything back: for blocks that cannot
 * be returned safely (their device is gone), leaking beats reuse while
 * queued work may still touch them. */
void     ds_arena_abandon (DsArena              *arena);

G_END_DECLS
