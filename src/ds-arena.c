/* ds-arena.c
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "ds-arena-private.h"
#include "ds-error.h"
#include "ds-access-order-private.h"
#include "ds-memory-resource.h"

void
ds_arena_init (DsArena             *arena,
               _DsScratchpadWindow *window,
               gsize                initial_size)
{
  memset (arena, 0, sizeof *arena);
  memset (window, 0, sizeof *window);
  arena->window = window;
  arena->blocks = arena->inline_blocks;
  arena->blocks_capacity = G_N_ELEMENTS (arena->inline_blocks);
  arena->initial_size = initial_size;
  arena->next_size = initial_size;
  arena->max_block_size = DS_SCRATCHPAD_DEFAULT_MAX_BLOCK_SIZE;
}

/* The size blocks stop doubling at. */
static inline gsize
ceiling (const DsArena *arena)
{
  return MAX (arena->max_block_size, arena->initial_size);
}

void
ds_arena_clear (DsArena *arena)
{
  g_warn_if_fail (arena->n_blocks == 0);

  if (arena->blocks != arena->inline_blocks)
    g_free (arena->blocks);
  arena->blocks = arena->inline_blocks;
  arena->blocks_capacity = G_N_ELEMENTS (arena->inline_blocks);
}

/* What this thread knows of the default resource it last drew each kind
 * from (the key; defaults live as long as the process): its vtable and
 * fenced deallocation, and what the thread's newest units of work took
 * of it. A new scratchpad made for one unit of work (DALI's pattern, one
 * per GStreamer buffer) then takes one block per kind from its first
 * unit, as a reused one does from its second, and looks nothing up. Per
 * thread: no lock and no shared cache line; the units one thread runs
 * are alike more often than those of a process. The compiler's TLS
 * model, as in ds-default-resources.c. */
typedef struct
{
  gconstpointer                    key;
  const DsMemoryResourceInterface *iface;
  DsFencedDeallocateFunc           fenced;
  gsize                            demand_max;
  gsize                            demand_avg;
} DemandMemo;

#define N_DEMAND_SLOTS 4
G_STATIC_ASSERT (DS_N_MEMORY_KINDS <= N_DEMAND_SLOTS);

static __thread DemandMemo demand_memo[N_DEMAND_SLOTS];

void
ds_arena_share_demand (DsArena *arena,
                       guint    slot)
{
  g_return_if_fail (slot < N_DEMAND_SLOTS);

  arena->demand_memo = slot + 1;
}

/* Looks up how blocks are taken from and given back to @upstream: from
 * the thread's memo where the arena shares it. */
static void
bind_upstream (DsArena          *arena,
               DsMemoryResource *upstream)
{
  DemandMemo *memo = arena->demand_memo != 0 ? &demand_memo[arena->demand_memo - 1] : NULL;

  if (memo != NULL && memo->key == upstream)
    {
      arena->iface = memo->iface;
      arena->fenced = memo->fenced;
    }
  else
    {
      arena->iface = DS_MEMORY_RESOURCE_GET_IFACE (upstream);
      arena->fenced = ds_fence_lookup_fenced_func (upstream);
      if (memo != NULL)
        *memo = (DemandMemo) { upstream, arena->iface, arena->fenced, 0, 0 };
    }
  arena->iface_of = upstream;
}

static gsize first_block_size (const DsArena *arena);

/* An arena that never released takes the thread's memo of its upstream
 * (bound already): its first block covers what the thread's recent units
 * took, by the rule of ds_arena_release (). */
static void
take_demand_memo (DsArena *arena)
{
  const DemandMemo *memo = &demand_memo[arena->demand_memo - 1];

  if (memo->key != arena->iface_of)
    return;

  arena->demand_max = memo->demand_max;
  arena->demand_avg = memo->demand_avg;
  arena->next_size = first_block_size (arena);
}

static inline gsize
next_block_size (const DsArena *arena,
                 gsize          ceil,
                 gsize          size,
                 gsize          alignment)
{
  gsize padding = alignment > DS_ARENA_BLOCK_ALIGNMENT ? alignment - DS_ARENA_BLOCK_ALIGNMENT : 0;
  gsize needed, block;

  if (size > G_MAXSIZE - padding)
    return 0;
  needed = size + padding;

  /* Double up to the ceiling; a request above it gets a block of its own
   * size, and the next block is a ceiling-sized one again. */
  block = arena->next_size;
  if (G_LIKELY (block >= needed))
    return MIN (block, MAX (ceil, needed));
  while (block < needed && block < ceil)
    {
      if (block > G_MAXSIZE / 2)
        return needed;
      block *= 2;
    }
  if (block < needed)
    return needed;

  return MIN (block, MAX (ceil, needed));
}

gsize
ds_arena_next_block_size (const DsArena *arena,
                          gsize          size,
                          gsize          alignment)
{
  return next_block_size (arena, ceiling (arena), size, alignment);
}

gpointer
ds_arena_grow (DsArena              *arena,
               DsMemoryResource     *upstream,
               const DsAccessOrder  *order,
               gsize                 size,
               gsize                 alignment,
               GError              **error)
{
  _DsScratchpadWindow *w = arena->window;
  gsize block_size, ceil;
  gpointer block;

  if (G_UNLIKELY (arena->iface_of != upstream))
    bind_upstream (arena, upstream);
  if (G_UNLIKELY (arena->n_blocks == 0 && arena->demand_avg == 0 && arena->demand_memo != 0))
    take_demand_memo (arena);

  ceil = ceiling (arena);
  block_size = next_block_size (arena, ceil, size, alignment);
  if (G_UNLIKELY (block_size == 0))
    {
      g_set_error (error, DS_ERROR, DS_ERROR_INVALID_ARGUMENT,
                   "Size %" G_GSIZE_FORMAT " with alignment %" G_GSIZE_FORMAT
                   " overflows", size, alignment);
      return NULL;
    }

  if (G_UNLIKELY (arena->n_blocks == arena->blocks_capacity))
    {
      guint capacity = arena->blocks_capacity * 2;

      if (arena->blocks == arena->inline_blocks)
        arena->blocks = g_memdup2 (arena->inline_blocks, sizeof arena->inline_blocks);
      arena->blocks = g_renew (DsArenaBlock, arena->blocks, capacity);
      arena->blocks_capacity = capacity;
    }

  if (order != NULL && arena->iface->allocate_async != NULL)
    block = arena->iface->allocate_async (upstream, block_size, DS_ARENA_BLOCK_ALIGNMENT,
                                          order, error);
  else
    block = arena->iface->allocate (upstream, block_size, DS_ARENA_BLOCK_ALIGNMENT, error);
  if (G_UNLIKELY (block == NULL))
    {
      if (error != NULL && *error == NULL)
        g_set_error (error, DS_ERROR, DS_ERROR_OUT_OF_MEMORY,
                     "%s returned no memory for %" G_GSIZE_FORMAT " bytes",
                     G_OBJECT_TYPE_NAME (upstream), block_size);
      return NULL;
    }

  /* What the allocations took of the block given up: its cursor's way. */
  arena->taken = ds_arena_get_taken (arena);
  arena->blocks[arena->n_blocks].ptr = block;
  arena->blocks[arena->n_blocks].size = block_size;
  arena->n_blocks++;
  arena->reserved += block_size;
  arena->next_size = block_size <= ceil / 2 ? block_size * 2 : ceil;

  /* The request at the start of the block (aligned to
   * DS_ARENA_BLOCK_ALIGNMENT) or after its padding: next_block_size ()
   * made room for both. */
  if (G_UNLIKELY (alignment > DS_ARENA_BLOCK_ALIGNMENT))
    {
      gpointer ptr;

      w->_cur = (guintptr) block;
      w->_end = (guintptr) block + block_size;
      ptr = ds_arena_try_bump (arena, size, alignment);
      g_assert (ptr != NULL);
      return ptr;
    }

  w->_end = (guintptr) block + block_size;
  w->_cur = ds_arena_cursor_after ((guintptr) block + size, w->_end);

  return block;
}

/* Remembers what this unit of work took, for the next one's first block;
 * called before the blocks go. The hint is the smaller of a fading
 * maximum (what the largest recent unit took, plus an eighth for padding;
 * a 32nd less per release) and twice the running average (an eighth of
 * the way to each new unit): steady units get a first block just above
 * their size, and a rare large unit does not make every first block large
 * (the GPU soak's peak use tripled with the maximum alone). The maximum
 * fades slowly so that units of varying size (DALI's 1..100 KiB) keep a
 * first block that covers the large ones: with an eighth, a few small
 * units in a row dropped it, and 8% of units took two blocks. */
static void
remember_demand (DsArena          *arena,
                 DsMemoryResource *upstream)
{
  /* What the unit took of its blocks (each allocation its size rounded
   * up to 16, ds-scratchpad.h, and its padding). */
  guint64 taken = ds_arena_get_taken (arena);
  gsize used = MIN (taken, G_MAXSIZE / 4);
  gsize faded = arena->demand_max - arena->demand_max / 32;

  arena->demand_max = MAX (used + used / 8, faded);
  if (arena->demand_avg == 0)
    arena->demand_avg = used;
  else if (used >= arena->demand_avg)
    arena->demand_avg += (used - arena->demand_avg) / 8;
  else
    arena->demand_avg -= (arena->demand_avg - used) / 8;

  if (arena->demand_memo != 0 && arena->iface_of == upstream)
    {
      DemandMemo *memo = &demand_memo[arena->demand_memo - 1];

      if (memo->key != upstream)
        *memo = (DemandMemo) { upstream, arena->iface, arena->fenced, 0, 0 };
      memo->demand_max = arena->demand_max;
      memo->demand_avg = arena->demand_avg;
    }
}

/* The first block of a unit of work: the initial size, doubled up to the
 * ceiling while it does not cover the demand hint. */
static gsize
first_block_size (const DsArena *arena)
{
  gsize block = arena->initial_size;
  gsize hint = MIN (arena->demand_max, 2 * arena->demand_avg);

  while (block < hint && block <= ceiling (arena) / 2)
    block *= 2;

  return block;
}

/* Whether @arena may keep @b for the next unit of work, whose first block
 * would be @want bytes: @b covers it, and is at most twice that (a block
 * kept from a rare large unit goes back once recent units shrink the
 * hint). The caller keeps nothing of a kind the unit did not use. */
static inline gboolean
worth_keeping (const DsArenaBlock *b,
               gsize               want)
{
  return b->size >= want && b->size / 2 <= want;
}

/* Empties the arena, whose next first block is @first bytes. */
static inline void
empty (DsArena *arena,
       gsize    first)
{
  arena->n_blocks = 0;
  memset (arena->window, 0, sizeof *arena->window);
  arena->taken = 0;
  arena->reserved = 0;
  arena->next_size = first;
}

gboolean
ds_arena_release (DsArena              *arena,
                  DsMemoryResource     *upstream,
                  const DsAccessOrder  *order,
                  DsFenceBatch         *batch,
                  gboolean              keep,
                  GError              **error)
{
  DsArenaBlock kept = { NULL, 0 };
  guint n_back = arena->n_blocks;
  gboolean ok = TRUE;
  gsize first;

  remember_demand (arena, upstream);
  first = first_block_size (arena);

  /* Keep the newest block (the largest) if it suits the next unit: it is
   * taken again in the order it was given back in, so nothing needs a
   * fence (see ds_scratchpad_release ()). */
  if (keep && n_back > 0 && ds_arena_get_taken (arena) != 0 &&
      worth_keeping (&arena->blocks[n_back - 1], first))
    kept = arena->blocks[--n_back];

  /* A pool (the blocks came through grow (), which looked it up): every
   * block under the batch's fence, no other dispatch. */
  if (G_LIKELY (arena->iface_of == upstream && arena->fenced != NULL))
    {
      DsFencedDeallocateFunc fenced = arena->fenced;
      const DsAccessOrder *fence_order =
        order != NULL && order->type == DS_ACCESS_ORDER_TYPE_DEVICE ? order : NULL;

      for (guint i = n_back; i-- > 0;)
        fenced (upstream, arena->blocks[i].ptr, arena->blocks[i].size,
                DS_ARENA_BLOCK_ALIGNMENT, fence_order, batch);
    }
  else
    {
      for (guint i = n_back; i-- > 0;)
        {
          GError *local_error = NULL;

          if (!ds_fence_batch_deallocate (batch, upstream, arena->blocks[i].ptr,
                                          arena->blocks[i].size, DS_ARENA_BLOCK_ALIGNMENT,
                                          order, &local_error))
            {
              if (ok)
                g_propagate_error (error, local_error);
              else
                g_error_free (local_error);
              ok = FALSE;
            }
        }
    }

  empty (arena, first);

  if (kept.ptr != NULL)
    {
      gsize ceil = ceiling (arena);

      /* The kept block is the current one again, empty: the next unit
       * bumps in it without a slow path. */
      arena->blocks[0] = kept;
      arena->n_blocks = 1;
      arena->reserved = kept.size;
      arena->next_size = kept.size <= ceil / 2 ? kept.size * 2 : ceil;
      arena->window->_end = (guintptr) kept.ptr + kept.size;
      /* A multiple of 16 (the inline bump counts on it), as any block of
       * an upstream that keeps to the alignment it was asked for is. */
      arena->window->_cur = ds_arena_cursor_after ((guintptr) kept.ptr, arena->window->_end);
    }

  return ok;
}

void
ds_arena_abandon (DsArena *arena)
{
  empty (arena, first_block_size (arena));
}
