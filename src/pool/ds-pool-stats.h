/* ds-pool-stats.h: what a pool did and holds
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined (DS_INSIDE) && !defined (DS_COMPILATION)
# error "Only <ds.h> can be included directly."
#endif

#include <glib-object.h>

#include "ds-types.h"

G_BEGIN_DECLS

#define DS_TYPE_POOL_STATS (ds_pool_stats_get_type ())

typedef struct _DsPoolStats DsPoolStats;

/**
 * DsPoolStats:
 * @upstream_allocations: blocks taken from the upstream resource
 * @upstream_deallocations: blocks given back to the upstream resource
 * @cache_hits: requests served from the pool's cache
 * @cache_misses: requests that went to the upstream resource (this
 *   includes requests too large or too aligned to be cached)
 * @events_recorded: CUDA events recorded to mark the end of the work that
 *   may use a block given back in a stream's order (`cuEventRecord`)
 * @events_created: CUDA events created (`cudaEventCreateWithFlags`);
 *   events are reused, so this stops growing once the pool is warm
 * @event_queries: non-blocking completion checks (`cudaEventQuery` and
 *   `cuStreamQuery`)
 * @stream_waits: streams made to wait for another stream's release
 *   (`cudaStreamWaitEvent`)
 * @event_waits: blocking waits for a release to complete
 *   (`cudaEventSynchronize`, `cudaStreamSynchronize`,
 *   `cudaDeviceSynchronize`); only under memory pressure, for a release
 *   whose event could not be recorded, and at finalization
 * @bytes_held: bytes currently held from the upstream resource, in use or
 *   cached
 * @bytes_cached: bytes currently cached: held but not in use, including
 *   blocks that wait for stream work to finish
 * @bytes_in_use: bytes currently handed out and not given back; each
 *   request counts its size rounded up to a multiple of 256 bytes
 * @peak_bytes_in_use: the highest demand seen: @bytes_in_use plus
 *   @bytes_pending (the pool's peak concurrent demand, which bounds what
 *   it holds)
 * @n_cached_blocks: blocks currently cached
 * @bytes_pending: bytes given back in a stream's order that the pool does
 *   not know to be reusable by others yet (their stream work may still use
 *   them; the stream that gave them back can reuse them at once)
 * @refused_deallocations: blocks given back that the pool refused (with a
 *   critical) and left alone: an address it did not hand out, a block
 *   given back twice, or a size or alignment other than the one it was
 *   handed out with
 * @idle_releases: blocks the pool gave back upstream on its own, idle for
 *   [property@Ds.PoolResource:idle-timeout] while it held more than
 *   [property@Ds.PoolResource:release-threshold] (they are counted in
 *   @upstream_deallocations too)
 *
 * Statistics of a [class@Ds.PoolResource], from
 * [method@Ds.PoolResource.get_stats].
 *
 * The pool's CUDA calls are the sum of @events_recorded, @events_created,
 * @event_queries, @stream_waits and @event_waits, plus whatever the
 * upstream resource does for @upstream_allocations and
 * @upstream_deallocations.
 */
struct _DsPoolStats
{
  guint64 upstream_allocations;
  guint64 upstream_deallocations;
  guint64 cache_hits;
  guint64 cache_misses;
  guint64 events_recorded;
  guint64 events_created;
  guint64 event_queries;
  guint64 stream_waits;
  guint64 event_waits;
  guint64 bytes_held;
  guint64 bytes_cached;
  guint64 bytes_in_use;
  guint64 peak_bytes_in_use;
  guint64 n_cached_blocks;
  guint64 bytes_pending;
  guint64 refused_deallocations;
  guint64 idle_releases;

  /*< private >*/
  guint64 _ds_reserved[5];
};

DS_AVAILABLE_IN_ALL
GType             ds_pool_stats_get_type               (void) G_GNUC_CONST;
DS_AVAILABLE_IN_ALL
DsPoolStats      *ds_pool_stats_copy                   (const DsPoolStats *self) G_GNUC_WARN_UNUSED_RESULT;
DS_AVAILABLE_IN_ALL
void              ds_pool_stats_free                   (DsPoolStats       *self);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (DsPoolStats, ds_pool_stats_free)

G_END_DECLS
