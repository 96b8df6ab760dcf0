/* ds-pool-resource-private.h: the pool's instance, and what the default
 * registry calls
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A DsPoolResource is its shards (ds-pool-shard-private.h: one thread's
 * cache each), the registry of every block it holds
 * (ds-pool-registry-private.h) and its upstream side (what it holds, the
 * bound of twice the peak demand, new blocks, giving blocks back, idle
 * release); ds-pool-resource.c says how it works.
 */

#pragma once

#include "ds-pool-resource.h"
#include "ds-pool-registry-private.h"
#include "ds-pool-shard-private.h"
#include "ds-fenced-resource-private.h"

G_BEGIN_DECLS

/* The epochs remembered for idle release (see ds-pool-resource.c). */
#define DS_POOL_EPOCH_RING 16

struct _DsPoolResource
{
  GObject           parent_instance;

  DsMemoryResource *upstream;
  DsMemoryKind      kind;
  gboolean          upstream_async;
  guint64           max_cached_size;   /* atomic */
  DsPoolShard     **shards;
  guint             shard_mask;

  /* Every block held, handed out or cached. */
  DsPoolRegistry   *registry;

  /* Giving idle blocks back. */
  guint64           release_threshold; /* atomic */
  guint             idle_timeout_ms;   /* atomic */
  guint             epoch;             /* atomic; advanced under grow_lock */
  gint64            epoch_start[DS_POOL_EPOCH_RING];   /* under grow_lock */
  guint64           idle_releases;     /* under grow_lock */

  /* Growth and shrinking: held bytes, the peak and the upstream calls. */
  GMutex            grow_lock;
  guint64           held;              /* written under grow_lock (atomic reads) */
  guint64           upstream_allocations;
  guint64           upstream_deallocations;
  guint64           peak;              /* atomic */
  DsFenceCounters   grow_cuda;

  /* Where upstream calls made from any thread must run. */
  gint              device;
  gpointer          context;
  gboolean          have_context;      /* atomic: set once, after the two */

  /* Its label in observations (ds_pool_resource_set_record_label ()). */
  const char       *record_label;      /* atomic; interned */
};

/* For the default registry and ds-gst ------------------------------------------------ */

/* Gives every cached block back upstream, waiting for the stream work that
 * may still use them; returns the bytes given back. */
guint64           ds_pool_resource_drain          (DsPoolResource   *self);

/* A pool over @upstream whose upstream calls, from any thread, run on
 * @device (>= 0) in the driver context @context (NULL: the device's
 * primary context); both are ignored for host memory. */
DsMemoryResource *ds_pool_resource_new_for_device (DsMemoryResource *upstream,
                                                   gint              device,
                                                   gpointer          context);

/* Names the pool in observations (an interned string). */
void     ds_pool_resource_set_record_label (DsPoolResource *self,
                                            const char     *label);

G_END_DECLS
