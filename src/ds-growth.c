/* ds-growth.c: how large an arena's blocks are
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>

#include "ds-growth-private.h"

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

static __thread Memo memos[N_MEMO_SLOTS];

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

gsize
ds_growth_block_for (DsGrowth *self,
                     gsize     size,
                     gsize     padding,
                     gboolean  first)
{
  gsize ceil = ds_growth_ceiling (self);
  gsize needed, block;

  /* An arena that never released starts where its thread's arenas on the
   * same default resource left off. */
  if (G_UNLIKELY (first && self->demand_avg == 0 && self->memo_key != NULL))
    {
      const Memo *memo = &memos[self->memo_slot];

      if (memo->key == self->memo_key)
        {
          self->demand_max = memo->demand_max;
          self->demand_avg = memo->demand_avg;
          self->next_size = ds_growth_first_block (self);
        }
    }

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
void
ds_growth_learn (DsGrowth *self,
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
