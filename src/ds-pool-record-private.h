/* ds-pool-record-private.h: what a pool tells the observer
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A pool tells its cache hits and frees (frequent: the observer may drop
 * them before the figures are read), its misses, upstream calls,
 * evictions, trims and disposal, and a look when the observer asks for
 * one (ds_observer_look_at_pools ()). While no observer is installed a
 * report costs one load and a branch (ds_pool_observe ()).
 */

#pragma once

#include "ds-pool-resource-private.h"
#include "ds-observer-private.h"

G_BEGIN_DECLS

/* Tells @event, which moved @bytes, to the observer with where the pool
 * stands now; @shard: the shard it happened on (a frequent event), or
 * NULL. */
DS_OBSERVER_COLD
void     ds_pool_observe_event  (DsPoolResource      *self,
                                 DsPoolShard         *shard,
                                 DsObserverEvent      event,
                                 guint64              bytes);

static inline void
ds_pool_observe (DsPoolResource  *self,
                 DsPoolShard     *shard,
                 DsObserverEvent  event,
                 guint64          bytes)
{
  if (DS_OBSERVING ())
    ds_pool_observe_event (self, shard, event, bytes);
}

/* Names the pool in observations (an interned string). */
void     ds_pool_resource_set_record_label (DsPoolResource *self,
                                            const char     *label);

G_END_DECLS
