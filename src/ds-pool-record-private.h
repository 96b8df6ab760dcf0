/* ds-pool-record-private.h: what a pool tells the running recorder
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A pool reports its cache hits and frees (frequent: coalesced per thread
 * by the recorder), its upstream calls, evictions, trims and disposal
 * (always kept), and a sample every 100 ms while a recorder runs. While
 * none runs a report costs one load and a branch (ds_pool_record ()).
 */

#pragma once

#include "ds-pool-resource-private.h"
#include "ds-recorder-private.h"

G_BEGIN_DECLS

/* Reports @event, which moved @bytes, to the running recorder with where
 * the pool stands now; @shard: the shard it happened on (a frequent
 * event, coalesced), or NULL (always kept). */
DS_RECORDER_COLD
void     ds_pool_record_event   (DsPoolResource      *self,
                                 DsPoolShard         *shard,
                                 DsRecorderEvent      event,
                                 guint64              bytes);

static inline void
ds_pool_record (DsPoolResource  *self,
                DsPoolShard     *shard,
                DsRecorderEvent  event,
                guint64          bytes)
{
  if (DS_RECORDING ())
    ds_pool_record_event (self, shard, event, bytes);
}

/* Names the pool in recordings (an interned string). */
void     ds_pool_resource_set_record_label (DsPoolResource *self,
                                            const char     *label);

G_END_DECLS
