/* ds-arena.c: a monotonic bump allocator over a chain of blocks, and how
 * large its blocks are (DsGrowth)
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>

#include "ds-arena-private.h"
#include "ds-error.h"
#include "ds-memory-resource-private.h"

/* DsGrowth ------------------------------------------------------------------------ */

/* What this thread's units of work took of each kind from the default
 * resource they last drew it from (the key: defaults live as long as the
 * process). Per thread: no lock, no shared cache line, and the units one
 * thread runs are alike more often than those of a process. (libds uses
 * the compiler's TLS model: see ds-default-resources.c.) */
typedef struct
{
  gconstpointer key;
  gsize         demand_max;
  gsize         demand_avg;
} Memo;

#define N_MEMO_SLOTS 4

/* __thread, not a GPrivate: written at every release of a kind (see
 * thread_slot () in ds-pool-resource.c). */
static __thread Memo memos[N_MEMO_SLOTS];

/* The size blocks stop doubling at. */
static inline gsize
ds_growth_ceiling (const DsGrowth *self)
{
  return MAX (self->max_block_size, self->initial_size);
}

void
ds_growth_init (DsGrowth *self,
                gsize     initial_size,
                gsize     max_block_size)
{
  memset (self, 0, sizeof *self);
  self->initial_size = initial_size;
  self->max_block_size = max_block_size;
  self->next_size = initial_size;
}

void
ds_growth_share (DsGrowth      *self,
                 gconstpointer  key,
                 guint          slot)
{
  g_return_if_fail (slot < N_MEMO_SLOTS);

  self->memo_key = key;
  self->memo_slot = slot;
}

gsize
ds_growth_first_block (const DsGrowth *self)
{
  gsize block = self->initial_size;
  gsize hint = MIN (self->demand_max, 2 * self->demand_avg);

  while (block < hint && block <= ds_growth_ceiling (self) / 2)
    block *= 2;

  return block;
}

void
ds_growth_restart (DsGrowth *self)
{
  self->next_size = ds_growth_first_block (self);
}

/* An arena that never released starts where its thread's arenas on the
 * same default resource left off. */
static G_GNUC_NO_INLINE void
growth_recall (DsGrowth *self)
{
  const Memo *memo = &memos[self->memo_slot];

  if (memo->key == self->memo_key)
    {
      self->demand_max = memo->demand_max;
      self->demand_avg = memo->demand_avg;
      self->next_size = ds_growth_first_block (self);
    }
}

static inline gsize
growth_block_for (DsGrowth *self,
                  gsize     size,
                  gsize     padding,
                  gboolean  first)
{
  gsize ceil = ds_growth_ceiling (self);
  gsize needed, block;

  if (G_UNLIKELY (first && self->demand_avg == 0 && self->memo_key != NULL))
    growth_recall (self);

  if (size > G_MAXSIZE - padding)
    return 0;
  needed = size + padding;

  /* Double up to the ceiling; a request above it gets a block of its own
   * size, and the next block is a ceiling-sized one again. */
  block = self->next_size;
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
ds_growth_block_for (DsGrowth *self,
                     gsize     size,
                     gsize     padding,
                     gboolean  first)
{
  return growth_block_for (self, size, padding, first);
}

void
ds_growth_took (DsGrowth *self,
                gsize     block_size)
{
  gsize ceil = ds_growth_ceiling (self);

  self->next_size = block_size <= ceil / 2 ? block_size * 2 : ceil;
}

/* The hint is the smaller of a fading maximum (what the largest recent
 * unit took, plus an eighth for padding; a 32nd less per release) and
 * twice the running average (an eighth of the way to each new unit):
 * steady units get a first block just above their size, and a rare large
 * unit does not make every first block large. The maximum fades slowly so
 * that units of varying size (1..100 KiB) keep a first block that covers
 * the large ones. */
static inline void
growth_learn (DsGrowth *self,
              guint64   taken)
{
  gsize used = MIN (taken, G_MAXSIZE / 4);
  gsize faded = self->demand_max - self->demand_max / 32;

  self->demand_max = MAX (used + used / 8, faded);
  if (self->demand_avg == 0)
    self->demand_avg = used;
  else if (used >= self->demand_avg)
    self->demand_avg += (used - self->demand_avg) / 8;
  else
    self->demand_avg -= (self->demand_avg - used) / 8;

  if (self->memo_key != NULL)
    {
      Memo *memo = &memos[self->memo_slot];

      memo->key = self->memo_key;
      memo->demand_max = self->demand_max;
      memo->demand_avg = self->demand_avg;
    }

  self->next_size = ds_growth_first_block (self);
}

void
ds_growth_learn (DsGrowth *self,
                 guint64   taken)
{
  growth_learn (self, taken);
}

/* DsArena ------------------------------------------------------------------------- */

gboolean
ds_arena_bind (DsArena           *arena,
               DsMemoryResource  *resource,
               GError           **error)
{
  return ds_upstream_bind (&arena->upstream, resource, error);
}

void
ds_arena_bind_default (DsArena          *arena,
                       const DsUpstream *upstream,
                       guint             slot)
{
  arena->upstream = *upstream;
  ds_growth_share (&arena->growth, upstream->resource, slot);
}

/* Makes [ptr, ptr + size) the current block, empty: the cursor at its
 * start, rounded up to 16 (as every block is, that its upstream gave with
 * the alignment asked for). */
static inline void
open_window (DsArena  *arena,
             gpointer  ptr,
             gsize     size)
{
  guintptr start = (guintptr) ptr;
  guintptr cur = (start + DS_ARENA_MIN_ALIGNMENT - 1) & ~(guintptr) (DS_ARENA_MIN_ALIGNMENT - 1);

  arena->window->end = start + size;
  arena->window->cur = MIN (cur, arena->window->end);
}

gpointer
ds_arena_grow (DsArena             *arena,
               gsize                size,
               gsize                alignment,
               const DsAccessOrder *order,
               GError             **error)
{
  gsize a = alignment != 0 ? alignment : DS_ARENA_MIN_ALIGNMENT;
  gsize padding = a > DS_ARENA_BLOCK_ALIGNMENT ? a - DS_ARENA_BLOCK_ALIGNMENT : 0;
  gsize block_size;
  gpointer block, handle, ptr;

  block_size = growth_block_for (&arena->growth, size, padding, arena->n_blocks == 0);
  if (G_UNLIKELY (block_size == 0))
    {
      g_set_error (error, DS_ERROR, DS_ERROR_INVALID_ARGUMENT,
                   "Size %" G_GSIZE_FORMAT " with alignment %" G_GSIZE_FORMAT
                   " overflows", size, a);
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

  block = ds_upstream_take (&arena->upstream, block_size, DS_ARENA_BLOCK_ALIGNMENT, order,
                            &handle, error);
  if (G_UNLIKELY (block == NULL))
    {
      if (error != NULL && *error == NULL)
        g_set_error (error, DS_ERROR, DS_ERROR_OUT_OF_MEMORY,
                     "%s returned no memory for %" G_GSIZE_FORMAT " bytes",
                     G_OBJECT_TYPE_NAME (arena->upstream.resource), block_size);
      return NULL;
    }
  if (G_UNLIKELY (((guintptr) block & (DS_ARENA_BLOCK_ALIGNMENT - 1)) != 0))
    {
      DsFenceBatch batch;

      ds_fence_batch_init (&batch);
      ds_fence_batch_give_back (&batch, &arena->upstream, block, block_size,
                                DS_ARENA_BLOCK_ALIGNMENT, handle, order);
      ds_fence_batch_finish (&batch);
      g_set_error (error, DS_ERROR, DS_ERROR_INVALID_ARGUMENT,
                   "%s returned %p for %" G_GSIZE_FORMAT " bytes aligned to %" G_GSIZE_FORMAT
                   ", which is not aligned so", G_OBJECT_TYPE_NAME (arena->upstream.resource),
                   block, block_size, DS_ARENA_BLOCK_ALIGNMENT);
      return NULL;
    }

  /* What the allocations took of the block given up: its cursor's way. */
  arena->taken = ds_arena_get_taken (arena);
  arena->blocks[arena->n_blocks].ptr = block;
  arena->blocks[arena->n_blocks].size = block_size;
  arena->blocks[arena->n_blocks].handle = handle;
  arena->n_blocks++;
  arena->reserved += block_size;
  ds_growth_took (&arena->growth, block_size);

  open_window (arena, block, block_size);
  ptr = _ds_bump (arena->window, size, alignment);
  g_assert (ptr != NULL);

  return ptr;
}

/* Whether @arena may keep @b for the next unit of work, whose first block
 * would be @want bytes: @b covers it, and is at most twice that (a block
 * kept from a rare large unit goes back once recent units shrink). */
static inline gboolean
worth_keeping (const DsArenaBlock *b,
               gsize               want)
{
  return b->size >= want && b->size / 2 <= want;
}

static inline void
empty (DsArena *arena)
{
  arena->n_blocks = 0;
  arena->window->cur = arena->window->end = 0;
  arena->taken = 0;
  arena->reserved = 0;
}

gboolean
ds_arena_release (DsArena             *arena,
                  DsFenceBatch        *batch,
                  const DsAccessOrder *order,
                  gboolean             keep,
                  GError             **error)
{
  DsArenaBlock kept = { NULL, 0, NULL };
  guint n_back = arena->n_blocks;
  guint64 taken = ds_arena_get_taken (arena);

  growth_learn (&arena->growth, taken);

  /* Keep the newest block (the largest) if it suits the next unit: it is
   * taken again in the order it was given back in, so nothing needs a
   * fence. */
  if (keep && n_back > 0 && taken != 0 &&
      worth_keeping (&arena->blocks[n_back - 1], ds_growth_first_block (&arena->growth)))
    kept = arena->blocks[--n_back];

  for (guint i = n_back; i-- > 0;)
    ds_fence_batch_give_back (batch, &arena->upstream, arena->blocks[i].ptr,
                              arena->blocks[i].size, DS_ARENA_BLOCK_ALIGNMENT,
                              arena->blocks[i].handle, order);

  empty (arena);
  if (kept.ptr != NULL)
    {
      arena->blocks[0] = kept;
      arena->n_blocks = 1;
      arena->reserved = kept.size;
      ds_growth_took (&arena->growth, kept.size);
      open_window (arena, kept.ptr, kept.size);
    }

  return ds_fence_batch_take_error (batch, error) == 0;
}

void
ds_arena_abandon (DsArena *arena)
{
  empty (arena);
  ds_growth_restart (&arena->growth);
}

DsArenaBlock
ds_arena_take_out (DsArena *arena,
                   guint    i)
{
  DsArenaBlock block = arena->blocks[i];

  g_return_val_if_fail (i < arena->n_blocks, block);

  if (i == arena->n_blocks - 1)
    {
      /* The newest: what its allocations took moves to the count of
       * older blocks, and the window closes on the block before, so that
       * nothing bumps in either. */
      arena->taken = ds_arena_get_taken (arena);
      arena->n_blocks--;
      if (arena->n_blocks > 0)
        arena->window->cur = arena->window->end =
          (guintptr) arena->blocks[arena->n_blocks - 1].ptr;
      else
        arena->window->cur = arena->window->end = 0;
    }
  else
    {
      memmove (&arena->blocks[i], &arena->blocks[i + 1],
               (arena->n_blocks - i - 1) * sizeof *arena->blocks);
      arena->n_blocks--;
    }
  arena->reserved -= block.size;
  /* Nothing left for the release to give back: the unit ends here, and
   * the growth learns what it took, as a release would teach it. */
  if (arena->n_blocks == 0)
    {
      growth_learn (&arena->growth, arena->taken);
      arena->taken = 0;
    }
  return block;
}

guint64
ds_arena_get_taken (const DsArena *arena)
{
  if (arena->n_blocks == 0)
    return 0;

  return arena->taken + (arena->window->cur - (guintptr) arena->blocks[arena->n_blocks - 1].ptr);
}
