/* ds-pool-resource.c: a stream-aware caching pool over any resource
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The object: its type, properties, statistics, trim and lifecycle. A
 * pool is its shards (one thread's cache each), the registry of every
 * block it holds, and its upstream side; taking and giving back blocks is
 * in ds-pool-cache.c, growing and shrinking in ds-pool-growth.c. Upstream
 * calls run in the device and driver context the pool was bound to,
 * whichever thread makes them.
 */

#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "ds-pool-resource-private.h"
#include "ds-clock-private.h"
#include "ds-enum-types.h"
#include "ds-error.h"
#include "ds-fence-batch-private.h"
#include "ds-host-memory-resource.h"
#include "ds-pool-record-private.h"

/**
 * DsPoolResource:
 *
 * A thread-safe, stream-aware caching pool over any
 * [iface@Ds.MemoryResource]; the default resource of every kind.
 *
 * A block given back is kept and handed out again instead of going back
 * upstream, so that steady-state scratch memory costs no `cudaMalloc*`,
 * `cudaMallocHost` or `cudaFree*` call.
 *
 * Blocks given back in a stream's order
 * ([method@Ds.MemoryResource.deallocate_async]) may still be used by work
 * queued on that stream. Such a block is handed out again at once to the
 * next request in the *same* stream's order (stream order makes that safe),
 * but to a request in another stream's order or in host order only once a
 * CUDA event recorded at the release has completed; or, where the pool
 * holds more than its release threshold and one and a half times what is
 * handed out, to a request in another stream's order that would otherwise
 * take new memory, behind a wait of its stream for that event
 * (`cudaStreamWaitEvent`: the host does not wait). Streams are told apart
 * by their identity (`cudaStreamGetId`), not by their handle, so a stream
 * destroyed with blocks pending and a new stream that gets the same handle
 * are never confused; events outlive streams, so the pending blocks of a
 * destroyed stream become reusable once its work has finished.
 *
 * Sizes are rounded up to size classes: multiples of 256 bytes up to
 * 2 KiB, then four classes per power of two (at most 25% more than asked).
 * A request whose class has no cached block it may use takes one of up to
 * four classes above (from 2 KiB on, at most twice the size of its class)
 * before the pool takes a new block from upstream, so that a workload of
 * many sizes does not hold the peak of each class at once.
 * Requests larger than [property@Ds.PoolResource:max-cached-size] or
 * aligned to more than 64 KiB go straight to the upstream resource.
 *
 * The pool never holds more than twice the peak concurrent demand it has
 * seen: before it takes more from upstream, it gives cached blocks back
 * until that bound holds. Above
 * [property@Ds.PoolResource:release-threshold] (32 MiB by default), it
 * also gives back on its own the cached blocks nobody has used for
 * [property@Ds.PoolResource:idle-timeout] (5 s by default), so that a
 * burst does not keep its memory held for the life of the process.
 * [method@Ds.PoolResource.trim] gives back all the cached memory no stream
 * work uses any more (settling, with one device-wide wait, what streams
 * destroyed since left behind); finalization gives back everything,
 * waiting for pending stream work.
 *
 * The pool knows every block it holds. A block given back that it did not
 * hand out, one given back twice, or one given back with another size or
 * alignment than it was handed out with (alignment 0 counts as 16) is
 * refused with a critical that names the address, the size given and the
 * size handed out; the pool leaves such a block alone (it neither caches
 * it nor gives it upstream) and counts it in
 * [struct@Ds.PoolStats]:refused_deallocations. This check is always on.
 *
 * Each thread works on its own shard of the pool (its own lock and free
 * lists), and takes from the other shards only when its own has nothing
 * that fits, so threads that each use their own stream do not contend. A
 * block given back by another thread than the one it was handed out to
 * goes back to the shard of the latter.
 * A pool whose upstream is of host kind never calls CUDA unless blocks are
 * given back to it in a stream's order.
 */


enum
{
  PROP_0,
  PROP_UPSTREAM,
  PROP_KIND,
  PROP_MAX_CACHED_SIZE,
  PROP_RELEASE_THRESHOLD,
  PROP_IDLE_TIMEOUT,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

G_DEFINE_FINAL_TYPE_WITH_CODE (DsPoolResource, ds_pool_resource, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (DS_TYPE_MEMORY_RESOURCE,
                                                      ds_pool_resource_iface_init)
                               G_IMPLEMENT_INTERFACE (DS_TYPE_FENCED_RESOURCE,
                                                      ds_pool_resource_fenced_init))

/* GObject ------------------------------------------------------------------------- */

static void
look (gpointer owner)
{
  ds_pool_observe_event (owner, NULL, DS_OBSERVER_EVENT_LOOK, 0);
}

static void
ds_pool_resource_constructed (GObject *object)
{
  DsPoolResource *self = DS_POOL_RESOURCE (object);

  G_OBJECT_CLASS (ds_pool_resource_parent_class)->constructed (object);

  if (self->upstream == NULL)
    self->upstream = ds_host_memory_resource_new ();

  self->kind = ds_memory_resource_get_kind (self->upstream);
  self->upstream_async = ds_memory_resource_is_stream_ordered (self->upstream);

  /* From here on, an observer may look at the pool. */
  ds_observer_add_pool (self, look);
}

static void
ds_pool_resource_dispose (GObject *object)
{
  DsPoolResource *self = DS_POOL_RESOURCE (object);

  if (self->upstream != NULL)
    {
      guint64 freed;

      g_mutex_lock (&self->grow_lock);
      freed = ds_pool_evict_locked (self, G_MAXUINT64, DS_POOL_EVICT_ALL);
      g_mutex_unlock (&self->grow_lock);
      ds_pool_observe (self, NULL, DS_OBSERVER_EVENT_DISPOSE, freed);
    }

  g_clear_object (&self->upstream);

  G_OBJECT_CLASS (ds_pool_resource_parent_class)->dispose (object);
}

static void
ds_pool_resource_finalize (GObject *object)
{
  DsPoolResource *self = DS_POOL_RESOURCE (object);

  /* Before anything goes: an observer may be looking at it. */
  ds_observer_forget_pool (self);

  /* What is left was held back for good (its fence never completed). */
  for (guint i = 0; i <= self->shard_mask; i++)
    ds_pool_shard_free (self->shards[i]);
  g_free (self->shards);
  ds_pool_registry_free (self->registry);
  g_mutex_clear (&self->grow_lock);

  G_OBJECT_CLASS (ds_pool_resource_parent_class)->finalize (object);
}

static void
ds_pool_resource_get_property (GObject    *object,
                               guint       prop_id,
                               GValue     *value,
                               GParamSpec *pspec)
{
  DsPoolResource *self = DS_POOL_RESOURCE (object);

  switch (prop_id)
    {
    case PROP_UPSTREAM:
      g_value_set_object (value, self->upstream);
      break;

    case PROP_KIND:
      g_value_set_enum (value, self->kind);
      break;

    case PROP_MAX_CACHED_SIZE:
      g_value_set_uint64 (value, ds_pool_resource_get_max_cached_size (self));
      break;

    case PROP_RELEASE_THRESHOLD:
      g_value_set_uint64 (value, ds_pool_resource_get_release_threshold (self));
      break;

    case PROP_IDLE_TIMEOUT:
      g_value_set_uint (value, ds_pool_resource_get_idle_timeout (self));
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
ds_pool_resource_set_property (GObject      *object,
                               guint         prop_id,
                               const GValue *value,
                               GParamSpec   *pspec)
{
  DsPoolResource *self = DS_POOL_RESOURCE (object);

  switch (prop_id)
    {
    case PROP_UPSTREAM:
      self->upstream = g_value_dup_object (value);
      break;

    case PROP_MAX_CACHED_SIZE:
      ds_pool_resource_set_max_cached_size (self, g_value_get_uint64 (value));
      break;

    case PROP_RELEASE_THRESHOLD:
      ds_pool_resource_set_release_threshold (self, g_value_get_uint64 (value));
      break;

    case PROP_IDLE_TIMEOUT:
      ds_pool_resource_set_idle_timeout (self, g_value_get_uint (value));
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
ds_pool_resource_class_init (DsPoolResourceClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->constructed = ds_pool_resource_constructed;
  object_class->dispose = ds_pool_resource_dispose;
  object_class->finalize = ds_pool_resource_finalize;
  object_class->get_property = ds_pool_resource_get_property;
  object_class->set_property = ds_pool_resource_set_property;

  /**
   * DsPoolResource:upstream:
   *
   * The resource the pool takes memory from and gives it back to. `NULL`
   * at construction means a new [class@Ds.HostMemoryResource].
   */
  properties[PROP_UPSTREAM] =
    g_param_spec_object ("upstream", NULL, NULL,
                         DS_TYPE_MEMORY_RESOURCE,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY |
                         G_PARAM_STATIC_STRINGS);

  /**
   * DsPoolResource:kind:
   *
   * The kind of memory the pool hands out: that of its upstream.
   */
  properties[PROP_KIND] =
    g_param_spec_enum ("kind", NULL, NULL,
                       DS_TYPE_MEMORY_KIND, DS_MEMORY_KIND_HOST,
                       G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

  /**
   * DsPoolResource:max-cached-size:
   *
   * The largest block the pool caches, in bytes; larger requests go to
   * the upstream resource and back each time.
   */
  properties[PROP_MAX_CACHED_SIZE] =
    g_param_spec_uint64 ("max-cached-size", NULL, NULL,
                         0, G_MAXUINT64, DS_POOL_RESOURCE_DEFAULT_MAX_CACHED_SIZE,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT |
                         G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  /**
   * DsPoolResource:release-threshold:
   *
   * The bytes the pool may hold (in use and cached) without giving
   * anything back on its own, as `cudaMemPoolAttrReleaseThreshold` does
   * for CUDA's pools. While it holds more, cached blocks that nobody has
   * used for [property@Ds.PoolResource:idle-timeout] go back upstream
   * (largest first) until it holds no more than this. The check is made
   * inside the pool's own calls (every 256 blocks given back to a
   * thread's shard; one clock read), never by a thread of its own, so a
   * pool that nobody uses keeps what it has until its next use or
   * [method@Ds.PoolResource.trim]. Only blocks that no stream work uses
   * any more go: a block given back in a stream's order stays while an
   * event recorded on that stream after it is still running. One given
   * back on a stream that nobody has checked since (most often a stream
   * destroyed by now, whose handle cannot be used) goes too: the pool
   * synchronizes its device once for all such streams, where giving
   * blocks back upstream waits for the device anyway.
   *
   * This overrides the pool's memory bound (twice the peak demand ever
   * seen, which does not decay): after a burst, idle blocks go back
   * whatever the peak was.
   *
   * `G_MAXUINT64` turns this off (the pool then gives memory back only at
   * [method@Ds.PoolResource.trim], under its memory bound, and at
   * finalization). The default, for every pool including the default
   * resources, is [const@Ds.POOL_RESOURCE_DEFAULT_RELEASE_THRESHOLD]
   * (32 MiB).
   */
  properties[PROP_RELEASE_THRESHOLD] =
    g_param_spec_uint64 ("release-threshold", NULL, NULL,
                         0, G_MAXUINT64, DS_POOL_RESOURCE_DEFAULT_RELEASE_THRESHOLD,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT |
                         G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  /**
   * DsPoolResource:idle-timeout:
   *
   * How long, in milliseconds, a cached block must have gone unused
   * before the pool may give it back on its own (see
   * [property@Ds.PoolResource:release-threshold]). A block goes back
   * at the earliest this long after it was last given back to the pool,
   * at one of the pool's checks (one every 256 blocks given back to a
   * thread's shard, with the time measured in steps of an eighth of
   * this): with a busy pool, within about an eighth more; a pool used
   * rarely gives it back at its second check after the timeout. 0 gives
   * back unused blocks at the next check but one. The default, for every pool
   * including the default resources, is
   * [const@Ds.POOL_RESOURCE_DEFAULT_IDLE_TIMEOUT] (5 s).
   */
  properties[PROP_IDLE_TIMEOUT] =
    g_param_spec_uint ("idle-timeout", NULL, NULL,
                       0, G_MAXUINT, DS_POOL_RESOURCE_DEFAULT_IDLE_TIMEOUT,
                       G_PARAM_READWRITE | G_PARAM_CONSTRUCT |
                       G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
ds_pool_resource_init (DsPoolResource *self)
{
  guint n = 1, i;
  guint cpus = g_get_num_processors ();

  /* One shard per CPU (a power of two, at most 64), so that threads on
   * their own streams rarely share a lock. */
  while (n < cpus && n < 64)
    n *= 2;

  self->shard_mask = n - 1;
  self->shards = g_new (DsPoolShard *, n);
  for (i = 0; i < n; i++)
    self->shards[i] = ds_pool_shard_new ();

  self->registry = ds_pool_registry_new ();

  g_mutex_init (&self->grow_lock);
  ds_observer_start_from_environment ();
  self->max_cached_size = DS_POOL_RESOURCE_DEFAULT_MAX_CACHED_SIZE;
  self->release_threshold = DS_POOL_RESOURCE_DEFAULT_RELEASE_THRESHOLD;
  self->idle_timeout_ms = DS_POOL_RESOURCE_DEFAULT_IDLE_TIMEOUT;
  ds_pool_init_epochs (self);
  self->device = -1;
}

/**
 * ds_pool_resource_new:
 * @upstream: the resource to take memory from
 *
 * Creates a pool that caches the memory of @upstream.
 *
 * Returns: (transfer full): a new #DsPoolResource
 */
DsMemoryResource *
ds_pool_resource_new (DsMemoryResource *upstream)
{
  g_return_val_if_fail (DS_IS_MEMORY_RESOURCE (upstream), NULL);

  return g_object_new (DS_TYPE_POOL_RESOURCE, "upstream", upstream, NULL);
}

DsMemoryResource *
ds_pool_resource_new_for_device (DsMemoryResource *upstream,
                                 gint              device,
                                 gpointer          context)
{
  DsPoolResource *self;

  g_return_val_if_fail (DS_IS_MEMORY_RESOURCE (upstream), NULL);

  self = g_object_new (DS_TYPE_POOL_RESOURCE, "upstream", upstream, NULL);
  if (self->kind != DS_MEMORY_KIND_HOST)
    {
      self->device = device;
      self->context = context;
      self->have_context = TRUE;
    }

  return DS_MEMORY_RESOURCE (self);
}

/**
 * ds_pool_resource_get_upstream:
 * @self: a #DsPoolResource
 *
 * The resource @self takes memory from.
 *
 * Returns: (transfer none): the resource @self takes memory from
 */
DsMemoryResource *
ds_pool_resource_get_upstream (DsPoolResource *self)
{
  g_return_val_if_fail (DS_IS_POOL_RESOURCE (self), NULL);

  return self->upstream;
}

/**
 * ds_pool_resource_get_max_cached_size:
 * @self: a #DsPoolResource
 *
 * The value of [property@Ds.PoolResource:max-cached-size].
 *
 * Returns: the value of [property@Ds.PoolResource:max-cached-size]
 */
guint64
ds_pool_resource_get_max_cached_size (DsPoolResource *self)
{
  g_return_val_if_fail (DS_IS_POOL_RESOURCE (self), 0);

  return __atomic_load_n (&self->max_cached_size, __ATOMIC_RELAXED);
}

/**
 * ds_pool_resource_set_max_cached_size:
 * @self: a #DsPoolResource
 * @max_cached_size: the largest block to cache, in bytes
 *
 * Sets [property@Ds.PoolResource:max-cached-size]. Cached blocks larger
 * than the new value are given back at the next
 * [method@Ds.PoolResource.trim].
 */
void
ds_pool_resource_set_max_cached_size (DsPoolResource *self,
                                      guint64         max_cached_size)
{
  g_return_if_fail (DS_IS_POOL_RESOURCE (self));

  if (__atomic_exchange_n (&self->max_cached_size, max_cached_size,
                           __ATOMIC_RELAXED) != max_cached_size)
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_MAX_CACHED_SIZE]);
}

/**
 * ds_pool_resource_get_release_threshold:
 * @self: a #DsPoolResource
 *
 * The value of [property@Ds.PoolResource:release-threshold].
 *
 * Returns: the value of [property@Ds.PoolResource:release-threshold]
 */
guint64
ds_pool_resource_get_release_threshold (DsPoolResource *self)
{
  g_return_val_if_fail (DS_IS_POOL_RESOURCE (self), 0);

  return __atomic_load_n (&self->release_threshold, __ATOMIC_RELAXED);
}

/**
 * ds_pool_resource_set_release_threshold:
 * @self: a #DsPoolResource
 * @release_threshold: the bytes the pool may hold without giving idle
 *   blocks back on its own; `G_MAXUINT64`: never
 *
 * Sets [property@Ds.PoolResource:release-threshold].
 */
void
ds_pool_resource_set_release_threshold (DsPoolResource *self,
                                        guint64         release_threshold)
{
  g_return_if_fail (DS_IS_POOL_RESOURCE (self));

  if (__atomic_exchange_n (&self->release_threshold, release_threshold,
                           __ATOMIC_RELAXED) != release_threshold)
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_RELEASE_THRESHOLD]);
}

/**
 * ds_pool_resource_get_idle_timeout:
 * @self: a #DsPoolResource
 *
 * The value of [property@Ds.PoolResource:idle-timeout].
 *
 * Returns: the value of [property@Ds.PoolResource:idle-timeout], in
 *   milliseconds
 */
guint
ds_pool_resource_get_idle_timeout (DsPoolResource *self)
{
  g_return_val_if_fail (DS_IS_POOL_RESOURCE (self), 0);

  return __atomic_load_n (&self->idle_timeout_ms, __ATOMIC_RELAXED);
}

/**
 * ds_pool_resource_set_idle_timeout:
 * @self: a #DsPoolResource
 * @idle_timeout: how long a cached block must go unused before the pool
 *   may give it back on its own, in milliseconds
 *
 * Sets [property@Ds.PoolResource:idle-timeout].
 */
void
ds_pool_resource_set_idle_timeout (DsPoolResource *self,
                                   guint           idle_timeout)
{
  g_return_if_fail (DS_IS_POOL_RESOURCE (self));

  if (__atomic_exchange_n (&self->idle_timeout_ms, idle_timeout,
                           __ATOMIC_RELAXED) != idle_timeout)
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_IDLE_TIMEOUT]);
}

/**
 * ds_pool_resource_get_stats:
 * @self: a #DsPoolResource
 * @stats: (out caller-allocates): where to store the statistics
 *
 * Fills @stats with the pool's statistics since it was created. The
 * counters of each thread's shard are read under its lock, so with other
 * threads at work the totals are a consistent-enough snapshot, not an
 * atomic one.
 */
void
ds_pool_resource_get_stats (DsPoolResource *self,
                            DsPoolStats    *stats)
{
  gint64 demand = 0;
  guint i;

  g_return_if_fail (DS_IS_POOL_RESOURCE (self));
  g_return_if_fail (stats != NULL);

  memset (stats, 0, sizeof *stats);

  g_mutex_lock (&self->grow_lock);
  stats->upstream_allocations = self->upstream_allocations;
  stats->upstream_deallocations = self->upstream_deallocations;
  stats->bytes_held = self->held;
  stats->events_recorded = self->grow_cuda.events_recorded;
  stats->events_created = self->grow_cuda.events_created;
  stats->event_queries = self->grow_cuda.event_queries;
  stats->stream_waits = self->grow_cuda.stream_waits;
  stats->event_waits = self->grow_cuda.event_waits;
  stats->idle_releases = self->idle_releases;

  for (i = 0; i <= self->shard_mask; i++)
    {
      DsPoolShard *shard = self->shards[i];

      ds_pool_shard_lock (shard);
      stats->cache_hits += shard->hits;
      stats->cache_misses += shard->misses;
      stats->refused_deallocations += shard->refused;
      stats->events_recorded += shard->cuda.events_recorded;
      stats->events_created += shard->cuda.events_created;
      stats->event_queries += shard->cuda.event_queries;
      stats->stream_waits += shard->cuda.stream_waits;
      stats->event_waits += shard->cuda.event_waits;
      stats->bytes_cached += shard->bytes_cached;
      stats->n_cached_blocks += shard->n_cached;
      stats->bytes_pending += shard->pending;
      demand += shard->demand;
      ds_pool_shard_unlock (shard);
    }
  g_mutex_unlock (&self->grow_lock);

  if (demand > 0)
    ds_atomic_raise (&self->peak, (guint64) demand);
  demand -= (gint64) stats->bytes_pending;
  stats->bytes_in_use = demand > 0 ? (guint64) demand : 0;
  stats->peak_bytes_in_use = (guint64) __atomic_load_n (&self->peak, __ATOMIC_RELAXED);
}

guint64
ds_pool_resource_drain (DsPoolResource *self)
{
  guint64 freed;

  g_mutex_lock (&self->grow_lock);
  freed = ds_pool_evict_locked (self, G_MAXUINT64, DS_POOL_EVICT_ALL);
  g_mutex_unlock (&self->grow_lock);
  ds_pool_observe (self, NULL, DS_OBSERVER_EVENT_TRIM, freed);

  return freed;
}

/**
 * ds_pool_resource_trim:
 * @self: a #DsPoolResource
 *
 * Gives every cached block that no stream work uses any more back to the
 * upstream resource; where blocks given back on a stream without an event
 * are cached (most often left by streams destroyed since), it first
 * synchronizes their device, once.
 *
 * A block given back in a stream's order under an event (the pool checked
 * that stream and found it busy) stays while that event is still running.
 * A block given back in a stream's order without an event (the lazy
 * release policy checks a stream only when others want its blocks; see
 * [struct@Ds.PoolStats]:bytes_pending) can be known complete only by
 * waiting, since its stream may have been destroyed since and its handle
 * must not be used: when there are such blocks, trim synchronizes the
 * device of their streams once for all of them (one
 * `cudaDeviceSynchronize ()` per device and context, which waits for
 * everything that device is running, as giving device or pinned memory
 * back upstream with `cudaFree ()` or `cudaFreeHost ()` does anyway), then
 * gives them back. So memory that streams a program has destroyed left
 * behind is always within reach of a trim, whatever the pool's
 * [property@Ds.PoolResource:release-threshold]. Without such blocks,
 * nothing waits.
 *
 * Returns: the number of bytes given back
 */
guint64
ds_pool_resource_trim (DsPoolResource *self)
{
  guint64 freed;

  g_return_val_if_fail (DS_IS_POOL_RESOURCE (self), 0);

  g_mutex_lock (&self->grow_lock);
  freed = ds_pool_evict_locked (self, G_MAXUINT64, DS_POOL_EVICT_STALE);
  g_mutex_unlock (&self->grow_lock);
  ds_pool_observe (self, NULL, DS_OBSERVER_EVENT_TRIM, freed);

  return freed;
}
