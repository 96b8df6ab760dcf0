/* ds-pool-record.c: what a pool tells the observer
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Each observation reads where the pool stands (what it holds, has in use
 * and keeps pending), each figure on its own without a lock: a sequence
 * of observations is a picture over time, not a consistent snapshot.
 */

#include "config.h"

#include "ds-pool-record-private.h"

static void
fill_pool (DsObservation *o)
{
  DsPoolResource *self = o->object;
  gint64 demand = 0;
  guint64 pending = 0;

  for (guint i = 0; i <= self->shard_mask; i++)
    {
      demand += __atomic_load_n (&self->shards[i]->demand, __ATOMIC_RELAXED);
      pending += __atomic_load_n (&self->shards[i]->pending, __ATOMIC_RELAXED);
    }

  o->held = __atomic_load_n (&self->held, __ATOMIC_RELAXED);
  o->pending = pending;
  o->in_use = demand > (gint64) pending ? (guint64) demand - pending : 0;
  o->peak = __atomic_load_n (&self->peak, __ATOMIC_RELAXED);
  o->label = __atomic_load_n (&self->record_label, __ATOMIC_RELAXED);
}

void
ds_pool_observe_event (DsPoolResource  *self,
                       DsPoolShard     *shard,
                       DsObserverEvent  event,
                       guint64          bytes)
{
  DsObservation o = { 0, };

  o.event = event;
  o.object = self;
  o.kind = self->kind;
  o.device = self->kind != DS_MEMORY_KIND_HOST &&
             __atomic_load_n (&self->have_context, __ATOMIC_ACQUIRE) ? self->device : -1;
  o.bytes = bytes;
  ds_observer_tell (&o, shard != NULL, fill_pool);
}

void
ds_pool_resource_set_record_label (DsPoolResource *self,
                                   const char     *label)
{
  __atomic_store_n (&self->record_label, label, __ATOMIC_RELAXED);
}
