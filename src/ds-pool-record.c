/* ds-pool-record.c: what a pool tells the running recorder
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Each report reads where the pool stands (what it holds, has in use and
 * keeps pending), each figure on its own without a lock: a recording is
 * a picture over time, not a consistent snapshot.
 */

#include "config.h"

#include "ds-pool-record-private.h"

void
ds_pool_record_event (DsPoolResource  *self,
                      DsPoolShard     *shard,
                      DsRecorderEvent  event,
                      guint64          bytes)
{
  DsRecorderSample sample = { 0, };
  gint64 demand = 0;
  guint64 pending = 0;

  if (shard != NULL)
    {
      if (!ds_recorder_admit (DS_RECORDER_SOURCE_POOL, self->record_id, event, self->kind, bytes,
                              &sample))
        return;
    }
  else
    {
      sample.count = event == DS_RECORDER_EVENT_SAMPLE ? 0 : 1;
      sample.bytes = bytes;
    }

  /* Where the pool stands: each figure read on its own, without a lock. */
  for (guint i = 0; i <= self->shard_mask; i++)
    {
      demand += __atomic_load_n (&self->shards[i]->demand, __ATOMIC_RELAXED);
      pending += __atomic_load_n (&self->shards[i]->pending, __ATOMIC_RELAXED);
    }

  sample.event = event;
  sample.source = DS_RECORDER_SOURCE_POOL;
  sample.id = self->record_id;
  sample.kind = self->kind;
  sample.device = self->kind != DS_MEMORY_KIND_HOST &&
                  __atomic_load_n (&self->have_context, __ATOMIC_ACQUIRE) ? self->device : -1;
  sample.held = __atomic_load_n (&self->held, __ATOMIC_RELAXED);
  sample.pending = pending;
  sample.in_use = demand > (gint64) pending ? (guint64) demand - pending : 0;
  sample.peak = __atomic_load_n (&self->peak, __ATOMIC_RELAXED);
  sample.pool = self->record_id;
  sample.label = __atomic_load_n (&self->record_label, __ATOMIC_RELAXED);
  ds_recorder_record (&sample, DS_RECORDER_KEEP | DS_RECORDER_WATCH);
}

void
ds_pool_resource_set_record_label (DsPoolResource *self,
                                   const char     *label)
{
  __atomic_store_n (&self->record_label, label, __ATOMIC_RELAXED);
}
