/* ds-pool-resource.c: a stream-aware caching pool over any resource
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A pool is its shards (ds-pool-shard-private.h: one thread's cache
 * each), the registry of every block it holds (ds-pool-registry-private.h)
 * and its upstream side. Upstream calls run in the device and driver
 * context the pool was bound to, whichever thread makes them. In this
 * file: the object's type, growing and shrinking, taking and giving back
 * blocks, its properties, statistics, trim and lifecycle.
 *
 * Taking and giving back: the pool's DsMemoryResource and
 * DsFencedResource functions.
 * A request is
 * filed by its classes (ds-size-class-private.h) and looks first in the
 * calling thread's shard (ds-pool-shard-private.h), then in the other
 * shards; only when none has a block it may use does the pool grow
 *. A block given back is found in the registry, which
 * refuses what the pool did not hand out, and goes into its home shard
 * under the fence of its release (a release batch's, one per stream; or
 * none, in host order).
 *
 * Growing and shrinking:
 * the shards count demand (the bytes their threads took and
 * did not give back clean; see ds-pool-shard-private.h) and the pool keeps
 * the peak of their sum, looked at only when a shard's demand passes its
 * mark. A cache miss takes a new block from upstream (in the pool's own
 * device and context) once what the pool holds would stay within twice
 * that peak; otherwise it first reuses a pending block of the class asked
 * for (behind a stream wait), or gives cached blocks back upstream, oldest
 * and largest first. Blocks too large to cache go straight back upstream
 * once their stream work is done.
 *
 * Well before that bound, a miss in a stream's order first reuses what
 * another stream gave back once the pool holds more than its release
 * threshold and 1.5 times the bytes in use (handed out; pending releases
 * not counted): a cached block of its classes whose fence has an event,
 * behind a stream wait for it. Demand counts the releases nobody checked
 * yet, so on two streams that give back blocks while their kernels run it
 * stays far above what is in use, and twice its peak never binds: without
 * this, each stream's releases would grow the pool toward a peak of its
 * own. The host never waits here, and a release without an event (whose
 * stream may be gone) is left alone.
 *
 * Giving memory back on its own: every DS_POOL_RELEASE_CHECK_EVERY blocks
 * given back to a shard, the thread that gave the last one reads the
 * clock. The pool counts epochs, each at least an eighth of its idle
 * timeout long, and remembers when the last DS_POOL_EPOCH_RING began; a
 * block is stamped with the epoch it was cached in (a relaxed load, no
 * clock read). A block stamped e was cached after epoch e began and so
 * has been idle at least since epoch e + 1 began: when that is longer ago
 * than the idle timeout, and the pool holds more than its release
 * threshold, the block goes back upstream (largest classes, oldest blocks
 * first, until the threshold holds). Blocks whose fence is known or
 * found complete (a query, no wait) go first; blocks whose fence has an
 * event still running stay (their stream is busy). Blocks given back on
 * a stream without an event (a stream that takes its own blocks back
 * never needs one) are found complete by checking the
 * stream the block just given back came on, which is alive then. Those
 * left by a stream nobody gives back on any more (most often a stream
 * since destroyed: its handle must not be used) go too once they have
 * been idle as long: one device-wide synchronize covers every such
 * stream of the device, at a point where giving blocks back upstream
 * (cudaFree, cudaFreeHost) waits for the device anyway. Without that, a
 * program that makes and destroys streams would leave a few releases'
 * blocks behind with each, counted as demand, and the pool would grow
 * with the number of streams. Nothing runs while the pool is not used: a
 * pool idle as a whole keeps what it has until its next use or a trim.
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
#include "ds-observer-private.h"
#include "ds-pool-eviction-private.h"

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
 * eight classes above (from 2 KiB on, at most four times the size of its
 * class)
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
/* Every this many blocks given back to a shard, the pool looks for idle
 * blocks to give back upstream. */
#define DS_POOL_RELEASE_CHECK_EVERY 256

static void ds_pool_resource_iface_init (DsMemoryResourceInterface *iface);
static void ds_pool_resource_fenced_init (DsFencedResourceInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (DsPoolResource, ds_pool_resource, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (DS_TYPE_MEMORY_RESOURCE,
                                                      ds_pool_resource_iface_init)
                               G_IMPLEMENT_INTERFACE (DS_TYPE_FENCED_RESOURCE,
                                                      ds_pool_resource_fenced_init))

/* Growing and shrinking ---------------------------------------------------------- */

/* Raises the recorded peak to @demand if it is higher. */
static inline void
raise_peak (DsPoolResource *self,
            gint64          demand)
{
  if (demand > 0)
    ds_atomic_raise (&self->peak, (guint64) demand);
}

static gint64
ds_pool_total_demand (DsPoolResource *self)
{
  gint64 total = 0;
  guint i;

  for (i = 0; i <= self->shard_mask; i++)
    total += __atomic_load_n (&self->shards[i]->demand, __ATOMIC_RELAXED);

  return total;
}

/* Called with @shard locked after its demand grew past its mark. With
 * one thread (or threads that free what they allocate) this sees every
 * new peak; when blocks are freed by other threads than the ones that
 * took them, marks move geometrically so that a producer thread does not
 * add up all shards on every request. */
static void
ds_pool_observe_demand (DsPoolResource *self,
                        DsPoolShard    *shard)
{
  gint64 total = ds_pool_total_demand (self);

  raise_peak (self, total);
  if (total >= shard->demand)
    shard->demand_mark = shard->demand;
  else
    shard->demand_mark = shard->demand + shard->demand / 8;
}

/* What a pool tells the observer: its cache hits and frees (frequent: the
 * observer may drop them before the figures are read), its misses,
 * upstream calls, evictions, trims and disposal, and a look when the
 * observer asks for one (ds_observer_look_at_pools ()). Each observation
 * reads where the pool stands (what it holds, has in use and keeps
 * pending), each figure on its own without a lock: a sequence of
 * observations is a picture over time, not a consistent snapshot. */

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

/* Tells @event, which moved @bytes, to the observer with where the pool
 * stands now; @shard: the shard it happened on (a frequent event), or
 * NULL. */
DS_OBSERVER_COLD static void
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

/* What the pool's paths call: one load and a branch while nothing
 * observes. */
static inline void
ds_pool_observe (DsPoolResource  *self,
                 DsPoolShard     *shard,
                 DsObserverEvent  event,
                 guint64          bytes)
{
  if (DS_OBSERVING ())
    ds_pool_observe_event (self, shard, event, bytes);
}

void
ds_pool_resource_set_record_label (DsPoolResource *self,
                                   const char     *label)
{
  __atomic_store_n (&self->record_label, label, __ATOMIC_RELAXED);
}

/* Enters the device and context upstream calls run in (nothing for an
 * unbound or host pool). */
static gboolean
ds_pool_enter_scope (DsPoolResource *self,
                     DsCudaScope    *scope)
{
  if (self->kind == DS_MEMORY_KIND_HOST || !self->have_context)
    {
      memset (scope, 0, sizeof *scope);
      return TRUE;
    }

  /* Bound to a device's primary context: that one exactly, even where the
   * calling thread has another context of the same device current. */
  return ds_cuda_scope_enter (scope, self->device,
                              self->context != NULL ? self->context :
                              ds_cuda_get_primary_context (self->device),
                              NULL);
}

/* Remembers the device and context upstream calls run in, from the first
 * upstream allocation (made by a caller that has them current). Called
 * with grow_lock held. */
static void
pool_capture_context (DsPoolResource *self)
{
  gint current;

  if (self->have_context || self->kind == DS_MEMORY_KIND_HOST)
    return;
  current = ds_cuda_get_device ();
  if (current < 0 || (self->device >= 0 && current != self->device))
    return;

  self->device = current;
  self->context = ds_cuda_get_current_context ();
  /* Read without the lock by the binding (get_binding ()). */
  g_atomic_int_set (&self->have_context, TRUE);
}

/* Gives back upstream what @e collected, after waiting for the fences of
 * its blocks; returns the bytes freed. Called with grow_lock held. */
static guint64
give_back_victims (DsPoolResource *self,
                   DsPoolEviction *e)
{
  GPtrArray *unfenced = NULL;
  guint64 freed = e->taken;
  DsCudaScope scope;
  gboolean scoped = ds_pool_enter_scope (self, &scope);

  /* Releases with no event to wait for: one device-wide wait covers all
   * of a device's streams, rather than one per stream. */
  for (guint i = 0; i < e->victims->len; i++)
    {
      DsPoolVictim *v = &g_array_index (e->victims, DsPoolVictim, i);

      if (v->ss != NULL && v->seq != DS_FENCE_LOST &&
          !ds_stream_state_known_complete (v->ss, v->seq) &&
          !ds_stream_state_is_fenced (v->ss, v->seq))
        {
          if (unfenced == NULL)
            unfenced = g_ptr_array_new ();
          g_ptr_array_add (unfenced, v->ss);
        }
    }
  if (unfenced != NULL)
    {
      ds_stream_state_drain ((DsStreamState **) unfenced->pdata, unfenced->len,
                             &self->grow_cuda);
      g_ptr_array_free (unfenced, TRUE);
    }

  for (guint i = 0; i < e->victims->len; i++)
    {
      DsPoolVictim *v = &g_array_index (e->victims, DsPoolVictim, i);
      DsPoolBlock *b = v->block;
      gpointer ptr = b->ptr;
      gsize up_size = b->up_size, up_align = b->up_align;
      gboolean done = v->ss == NULL || ds_stream_state_wait (v->ss, v->seq, &self->grow_cuda);

      if (v->ss != NULL)
        ds_stream_state_unref (v->ss);
      /* Out of the registry first: once upstream has the block back,
       * another thread may get the same address from it and register it
       * (upstream allocations take no pool lock). */
      ds_pool_registry_remove (self->registry, b);
      if (!done)
        {
          /* Its work may never finish: hold it back for good. */
          freed -= up_size;
          continue;
        }
      ds_memory_resource_deallocate (self->upstream, ptr, up_size, up_align);
      __atomic_store_n (&self->held, self->held - up_size, __ATOMIC_RELAXED);
      self->upstream_deallocations++;
    }

  if (scoped)
    ds_cuda_scope_leave (&scope);

  return freed;
}

/* Gives cached blocks cached in epoch @max_stamp or before back upstream
 * until @need bytes are freed: first those known reusable, then, as
 * @mode allows, those whose fence has completed by now, then the rest,
 * waiting for their fences. Called with grow_lock held. */
static guint64
evict_locked (DsPoolResource  *self,
              guint64          need,
              DsPoolEvictMode  mode,
              guint            max_stamp)
{
  DsPoolEviction e = { need, 0, DS_POOL_EVICT_READY, max_stamp, &self->grow_cuda, NULL };
  guint64 freed = 0;

  e.victims = g_array_new (FALSE, FALSE, sizeof (DsPoolVictim));
  for (; e.mode <= mode && e.taken < need; e.mode++)
    for (guint i = 0; i <= self->shard_mask && e.taken < need; i++)
      {
        DsPoolShard *shard = self->shards[i];

        if (ds_pool_shard_peek_n_cached (shard) == 0)
          continue;

        ds_pool_shard_lock (shard);
        ds_pool_eviction_collect (&e, shard);
        ds_pool_shard_unlock (shard);
      }

  if (e.victims->len > 0)
    freed = give_back_victims (self, &e);
  g_array_free (e.victims, TRUE);

  return freed;
}

/* Gives cached blocks back upstream until @need bytes are freed, as far
 * as @mode allows; called with grow_lock held; the bytes freed. */
static guint64
ds_pool_evict_locked (DsPoolResource  *self,
                      guint64          need,
                      DsPoolEvictMode  mode)
{
  return evict_locked (self, need, mode, G_MAXUINT);
}

/* Adds the fence CUDA calls counted in @c to @shard's statistics. */
static void
ds_pool_add_counters (DsPoolShard           *shard,
                      const DsFenceCounters *c)
{
  if (c->events_recorded + c->events_created + c->event_queries +
      c->stream_waits + c->event_waits == 0)
    return;

  ds_pool_shard_lock (shard);
  shard->cuda.events_recorded += c->events_recorded;
  shard->cuda.events_created += c->events_created;
  shard->cuda.event_queries += c->event_queries;
  shard->cuda.stream_waits += c->stream_waits;
  shard->cuda.event_waits += c->event_waits;
  ds_pool_shard_unlock (shard);
}

/* At the memory bound: rather than give cached blocks back (a device-wide
 * cudaFree) and take a new one from upstream, reuse a pending block of the
 * class asked for: the requesting stream is made to wait for its fence
 * (host order: the host waits). Called with grow_lock held. */
static DsPoolBlock *
take_pending_locked (DsPoolResource      *self,
                     const DsPoolRequest *request)
{
  const DsAccessOrder *order = request->order;

  for (guint i = 0; i <= self->shard_mask; i++)
    {
      DsPoolShard *shard = self->shards[i];
      DsStreamState *ss = NULL;
      DsPoolBlock *b;
      guint64 seq = 0;

      if (ds_pool_shard_peek_n_cached (shard) == 0)
        continue;

      ds_pool_shard_lock (shard);
      b = ds_pool_shard_take_any_locked (shard, request, &ss, &seq);
      if (b != NULL)
        ds_pool_block_hand_out (b, request->size, request->alignment, request->home);
      ds_pool_shard_unlock (shard);

      if (b == NULL)
        continue;
      if (ss == NULL ||
          (order != NULL && ds_stream_state_matches (ss, order)) ||
          (order != NULL ? ds_stream_state_make_wait (ss, seq, order, &self->grow_cuda)
                         : ds_stream_state_wait (ss, seq, &self->grow_cuda)))
        {
          if (ss != NULL)
            ds_stream_state_unref (ss);
          return b;
        }

      /* Its work will never finish (a failed device): hold it back. */
      ds_stream_state_unref (ss);
      ds_pool_registry_remove (self->registry, b);
    }

  return NULL;
}

/* What the pool holds (beyond its release threshold: below, memory is
 * cheaper than a stream waiting for another), beyond which a miss in a
 * stream's order reuses a block another stream gave back (behind a stream
 * wait) rather than take a new one from upstream: this many eighths of the
 * bytes in use (handed out, pending releases not counted) with the
 * request. */
#define DS_POOL_REUSE_EIGHTHS 12

/* The oldest block of @bin that @order's stream may use behind a stream
 * wait, without the host waiting: its fence known complete or with an
 * event (the releasing stream's handle is not used: it may be gone). */
static DsPoolBlock *
oldest_waitable (DsPoolBin *bin)
{
  guint n = 0;

  if (bin->tail != NULL)
    return bin->tail;
  for (DsPoolBlock *b = bin->fenced_tail; b != NULL && n < 32; b = b->prev, n++)
    if (b->seq != DS_FENCE_LOST && ds_stream_state_is_fenced (b->ss, b->seq))
      return b;

  return NULL;
}

/* Before the pool grows past DS_POOL_REUSE_EIGHTHS of what is in use: a
 * cached block of @request's classes (or the DS_POOL_FIT_CLASSES above)
 * that another stream gave back and whose fence has an event, taken out;
 * the requesting stream is made to wait for that event (on the GPU: the
 * host never waits here). Called with grow_lock held. */
static DsPoolBlock *
take_waitable_locked (DsPoolResource      *self,
                      const DsPoolRequest *request)
{
  guint last = MIN (request->cls + DS_POOL_FIT_CLASSES, DS_POOL_N_SIZE_CLASSES - 1);

  for (guint i = 0; i <= self->shard_mask; i++)
    {
      DsPoolShard *shard = self->shards[(request->home + i) & self->shard_mask];
      DsStreamState *ss = NULL;
      DsPoolBlock *b = NULL;
      guint64 seq = 0;

      if (ds_pool_shard_peek_n_cached (shard) == 0 || shard->bins[request->ac] == NULL)
        continue;

      ds_pool_shard_lock (shard);
      for (guint cls = request->cls; cls <= last && b == NULL; cls++)
        {
          DsPoolBin *bin = &shard->bins[request->ac][cls];

          b = oldest_waitable (bin);
          if (b != NULL)
            {
              seq = b->seq;
              ds_pool_shard_take_block_locked (shard, bin, b, &ss);
              ds_pool_block_hand_out (b, request->size, request->alignment, request->home);
            }
        }
      ds_pool_shard_unlock (shard);

      if (b == NULL)
        continue;
      if (ss == NULL || ds_stream_state_matches (ss, request->order) ||
          ds_stream_state_make_wait (ss, seq, request->order, &self->grow_cuda))
        {
          if (ss != NULL)
            ds_stream_state_unref (ss);
          return b;
        }

      /* Its work will never finish (a failed device): hold it back. */
      ds_stream_state_unref (ss);
      ds_pool_registry_remove (self->registry, b);
    }

  return NULL;
}

/* Takes a block for @request from upstream, in the pool's device and
 * context; once more after giving back everything cached if upstream is
 * out of memory. */
static gpointer
take_upstream (DsPoolResource       *self,
               const DsPoolRequest  *request,
               GError              **error)
{
  GError *local_error = NULL;
  gpointer ptr = NULL;
  guint64 freed = 0;

  for (guint attempt = 0; attempt < 2 && ptr == NULL; attempt++)
    {
      DsCudaScope scope;
      gboolean scoped;

      if (attempt == 1)
        {
          if (!g_error_matches (local_error, DS_ERROR, DS_ERROR_OUT_OF_MEMORY))
            break;
          g_mutex_lock (&self->grow_lock);
          freed = ds_pool_evict_locked (self, G_MAXUINT64, DS_POOL_EVICT_ALL);
          g_mutex_unlock (&self->grow_lock);
          if (freed == 0)
            break;
          g_clear_error (&local_error);
        }

      scoped = ds_pool_enter_scope (self, &scope);
      if (self->upstream_async && request->order != NULL)
        ptr = ds_memory_resource_allocate_async (self->upstream, request->up_size,
                                                 request->up_align, request->order,
                                                 &local_error);
      else
        ptr = ds_memory_resource_allocate (self->upstream, request->up_size,
                                           request->up_align, &local_error);
      if (scoped)
        ds_cuda_scope_leave (&scope);
    }

  if (freed != 0)
    ds_pool_observe (self, NULL, DS_OBSERVER_EVENT_EVICT, freed);
  if (ptr == NULL)
    g_propagate_error (error, local_error);
  return ptr;
}

/* A cache miss: a new block for @request, handed out to its thread,
 * keeping what the pool holds within twice its peak demand. *@reused: a
 * pending block of the class was reused instead (behind a stream wait). */
static DsPoolBlock *
ds_pool_grow (DsPoolResource       *self,
              const DsPoolRequest  *request,
              gboolean             *reused,
              GError              **error)
{
  guint64 up_size = request->up_size;
  guint64 evicted = 0;
  gint64 wanted;
  guint64 bound;
  gpointer ptr;

  *reused = FALSE;

  g_mutex_lock (&self->grow_lock);
  pool_capture_context (self);
  /* The peak this request makes, if it succeeds. */
  wanted = ds_pool_total_demand (self) + (gint64) request->demand;
  bound = 2 * MAX (__atomic_load_n (&self->peak, __ATOMIC_RELAXED), (guint64) MAX (wanted, 0));
  if (request->order != NULL && request->cls != DS_POOL_NO_CLASS &&
      self->kind != DS_MEMORY_KIND_HOST)
    {
      gint64 in_use = (gint64) request->demand;
      DsPoolBlock *b;

      for (guint i = 0; i <= self->shard_mask; i++)
        in_use += __atomic_load_n (&self->shards[i]->demand, __ATOMIC_RELAXED) -
                  (gint64) __atomic_load_n (&self->shards[i]->pending, __ATOMIC_RELAXED);
      if (self->held + up_size > __atomic_load_n (&self->release_threshold, __ATOMIC_RELAXED) &&
          (self->held + up_size) * 8 > (guint64) MAX (in_use, 0) * DS_POOL_REUSE_EIGHTHS &&
          (b = take_waitable_locked (self, request)) != NULL)
        {
          g_mutex_unlock (&self->grow_lock);
          *reused = TRUE;
          return b;
        }
    }
  if (self->held + up_size > bound)
    {
      DsPoolBlock *b;

      /* For CUDA kinds, giving a block back (cudaFree, cudaFreeHost) waits
       * for the whole device anyway; for host memory it is cheap. */
      if (request->cls != DS_POOL_NO_CLASS && self->kind != DS_MEMORY_KIND_HOST &&
          (b = take_pending_locked (self, request)) != NULL)
        {
          g_mutex_unlock (&self->grow_lock);
          *reused = TRUE;
          return b;
        }
      evicted = ds_pool_evict_locked (self, self->held + up_size - bound, DS_POOL_EVICT_ALL);
    }
  __atomic_store_n (&self->held, self->held + up_size, __ATOMIC_RELAXED);
  self->upstream_allocations++;
  g_mutex_unlock (&self->grow_lock);
  if (evicted != 0)
    ds_pool_observe (self, NULL, DS_OBSERVER_EVENT_EVICT, evicted);

  ptr = take_upstream (self, request, error);
  if (ptr == NULL)
    {
      g_mutex_lock (&self->grow_lock);
      __atomic_store_n (&self->held, self->held - up_size, __ATOMIC_RELAXED);
      self->upstream_allocations--;
      g_mutex_unlock (&self->grow_lock);
      return NULL;
    }

  raise_peak (self, wanted);
  ds_pool_observe (self, NULL, DS_OBSERVER_EVENT_UPSTREAM_ALLOC, up_size);
  return ds_pool_registry_add (self->registry, ptr, request);
}

/* Gives @b, just taken back and not to be cached, upstream once the
 * fence it was given back under (b->ss, lent for the call, and b->seq, in
 * @order) has completed (b->ss NULL: at once); its @demand leaves
 * @shard, its home. */
static void
ds_pool_give_back (DsPoolResource      *self,
                   DsPoolShard         *shard,
                   DsPoolBlock         *b,
                   gsize                demand,
                   const DsAccessOrder *order)
{
  DsFenceCounters counters = { 0, };
  DsStreamState *ss = b->ss;
  guint64 seq = b->seq;
  gpointer ptr = b->ptr;
  gsize up_size = b->up_size, up_align = b->up_align;
  gboolean scoped, freed = TRUE;
  DsCudaScope scope;

  b->ss = NULL;
  /* Out of the registry before upstream has it back: another thread may
   * get the same address from upstream at once and register it. */
  ds_pool_registry_remove (self->registry, b);

  scoped = ds_pool_enter_scope (self, &scope);
  if (ss != NULL && self->upstream_async)
    ds_memory_resource_deallocate_async (self->upstream, ptr, up_size, up_align, order, NULL);
  else if (ss == NULL || ds_stream_state_wait (ss, seq, &counters))
    ds_memory_resource_deallocate (self->upstream, ptr, up_size, up_align);
  else
    freed = FALSE;   /* held back for good */
  if (scoped)
    ds_cuda_scope_leave (&scope);

  ds_pool_add_counters (shard, &counters);
  ds_pool_shard_lock (shard);
  if (ds_pool_shard_add_demand_locked (shard, -(gint64) demand))
    ds_pool_observe_demand (self, shard);
  ds_pool_shard_unlock (shard);

  if (freed)
    {
      g_mutex_lock (&self->grow_lock);
      __atomic_store_n (&self->held, self->held - up_size, __ATOMIC_RELAXED);
      self->upstream_deallocations++;
      g_mutex_unlock (&self->grow_lock);
      ds_pool_observe (self, NULL, DS_OBSERVER_EVENT_UPSTREAM_FREE, up_size);
    }
}

/* Idle release -------------------------------------------------------------------- */

/* The pool's current epoch, to stamp a block cached now. */
static inline guint
ds_pool_epoch (DsPoolResource *self)
{
  return (guint) g_atomic_int_get (&self->epoch);
}

/* Starts the epochs at construction. */
static void
ds_pool_init_epochs (DsPoolResource *self)
{
  /* Epoch 0 is never used: a block stamped e needs epoch e + 1's start. */
  self->epoch = 1;
  self->epoch_start[1] = ds_clock_now ();
}

/* Called every DS_POOL_RELEASE_CHECK_EVERY blocks given back to a shard:
 * advances the epoch when its time has come and, while the pool holds
 * more than its release threshold, gives back upstream the cached blocks
 * idle for longer than its idle timeout. @ss, @seq and @order (or NULL):
 * the fence the last block was given back under, on a stream alive now,
 * which is checked first so that blocks it gave back without an event can
 * be found complete and go too. Never waits for another thread. */
static void
ds_pool_release_idle (DsPoolResource      *self,
                      DsStreamState       *ss,
                      guint64              seq,
                      const DsAccessOrder *order)
{
  guint64 threshold = __atomic_load_n (&self->release_threshold, __ATOMIC_RELAXED);
  gint64 timeout = (gint64) (guint) g_atomic_int_get (&self->idle_timeout_ms) * 1000;
  gint64 now, tick;
  guint epoch, cut = 0;
  guint64 released = 0;

  if (!g_mutex_trylock (&self->grow_lock))
    return;

  now = ds_clock_now ();
  if (threshold == G_MAXUINT64)
    {
      g_mutex_unlock (&self->grow_lock);
      return;
    }

  /* A new epoch once an eighth of the timeout (at least 1 ms) has
   * passed. */
  tick = MAX (timeout / 8, 1000);
  epoch = self->epoch;
  if (now - self->epoch_start[epoch % DS_POOL_EPOCH_RING] >= tick)
    {
      epoch++;
      self->epoch_start[epoch % DS_POOL_EPOCH_RING] = now;
      g_atomic_int_set (&self->epoch, epoch);
    }

  if (self->held > threshold && self->upstream != NULL)
    {
      /* The newest epoch e whose successor began at least @timeout ago:
       * blocks stamped e or before have been idle that long. */
      for (guint k = epoch; k >= 2 && k + DS_POOL_EPOCH_RING > epoch; k--)
        if (now - self->epoch_start[k % DS_POOL_EPOCH_RING] >= timeout)
          {
            cut = k - 1;
            break;
          }
      if (cut != 0)
        {
          guint64 before = self->upstream_deallocations;

          if (ss != NULL && order != NULL)
            {
              /* Blocks given back on a stream without an event are known
               * complete only once someone checks that stream; the one
               * the caller gave back on is alive now. One query per
               * DS_POOL_RELEASE_CHECK_EVERY frees, and only while over the
               * threshold: none in a steady state below it. */
              ds_stream_state_check (ss, seq, order, &self->grow_cuda);
            }

          released = evict_locked (self, self->held - threshold, DS_POOL_EVICT_STALE, cut);
          self->idle_releases += self->upstream_deallocations - before;
        }
    }

  g_mutex_unlock (&self->grow_lock);
  if (released != 0)
    ds_pool_observe (self, NULL, DS_OBSERVER_EVENT_IDLE_RELEASE, released);
}

/* Taking and giving back --------------------------------------------------------- */

/* The calling thread's slot, which picks its shard. A __thread variable
 * rather than a GPrivate, as are libds's other per-thread caches that the
 * hot paths read (the scratchpad's thread token, the default resources'
 * cache, the arenas' memos): a GPrivate is a call to read, and here cost
 * 0.8-1.5 ns more per host pool round trip of 43 ns (bench-host, same
 * run, alternating builds, development machine). */
static __thread guint slot_plus_one;

static inline guint
thread_slot (void)
{
  static gint next_slot;

  if (G_UNLIKELY (slot_plus_one == 0))
    slot_plus_one = (guint) g_atomic_int_add (&next_slot, 1) + 1;

  return slot_plus_one - 1;
}

static inline DsPoolShard *
current_shard (DsPoolResource *self)
{
  return self->shards[thread_slot () & self->shard_mask];
}

/* Adds @delta to @shard's demand, and the peak if need be. Called with
 * its lock held. */
static inline void
add_demand (DsPoolResource *self,
            DsPoolShard    *shard,
            gint64          delta)
{
  if (G_UNLIKELY (ds_pool_shard_add_demand_locked (shard, delta)))
    ds_pool_observe_demand (self, shard);
}

/* Files a request of @size bytes aligned to @alignment (0: 16) in @order
 * (NULL or host order: by anyone, at once) by the pool's classes. */
static void
file_request (DsPoolResource      *self,
              DsPoolRequest       *request,
              gsize                size,
              gsize                alignment,
              const DsAccessOrder *order)
{
  gsize class_bytes = 0;

  request->size = size;
  request->alignment = alignment != 0 ? alignment : 16;
  request->order = order != NULL && order->type == DS_ACCESS_ORDER_TYPE_DEVICE ? order : NULL;
  request->demand = ds_pool_demand_of (size);
  request->home = thread_slot () & self->shard_mask;
  request->ac = ds_pool_align_class (request->alignment);
  request->cls = ds_pool_size_class (size, &class_bytes);
  if (G_UNLIKELY (request->ac == DS_POOL_NO_CLASS || request->cls == DS_POOL_NO_CLASS))
    {
      /* Beyond every class: the exact request, never cached. */
      request->ac = request->cls = DS_POOL_NO_CLASS;
      request->up_size = size;
      request->up_align = request->alignment;
    }
  else
    {
      request->up_size = class_bytes;
      request->up_align = DS_POOL_GRANULE << request->ac;
    }
}

/* A cached block for @request from another thread's shard, or NULL. */
static DsPoolBlock *
take_from_others (DsPoolResource      *self,
                  const DsPoolRequest *request)
{
  DsPoolBlock *b = NULL;

  for (guint i = 1; i <= self->shard_mask && b == NULL; i++)
    {
      DsPoolShard *other = self->shards[(request->home + i) & self->shard_mask];
      DsStreamState *ss = NULL;

      if (ds_pool_shard_peek_n_cached (other) == 0)
        continue;

      ds_pool_shard_lock (other);
      b = ds_pool_shard_take_locked (other, request, &ss);
      /* Its new home, under the old home's lock. */
      if (b != NULL)
        ds_pool_block_hand_out (b, request->size, request->alignment, request->home);
      ds_pool_shard_unlock (other);
      ds_stream_state_unref (ss);
    }

  return b;
}

/* Hands out a block of @size (> 0) bytes aligned to @alignment
 * (validated) for use in @order (NULL or host order: by anyone, at once):
 * its record, or NULL with @error set. */
static inline DsPoolBlock *
pool_take (DsPoolResource       *self,
           gsize                 size,
           gsize                 alignment,
           const DsAccessOrder  *order,
           GError              **error)
{
  DsPoolRequest request;
  DsPoolShard *shard;
  DsPoolBlock *b = NULL;
  gboolean hit = FALSE;

  file_request (self, &request, size, alignment, order);
  shard = self->shards[request.home];

  if (G_LIKELY (request.cls != DS_POOL_NO_CLASS &&
                request.up_size <= __atomic_load_n (&self->max_cached_size, __ATOMIC_RELAXED)))
    {
      DsStreamState *ss = NULL;

      ds_pool_shard_lock (shard);
      b = ds_pool_shard_take_locked (shard, &request, &ss);
      if (G_LIKELY (b != NULL))
        {
          ds_pool_block_hand_out (b, size, request.alignment, request.home);
          shard->hits++;
          add_demand (self, shard, (gint64) request.demand);
          ss = ds_pool_shard_keep_ref_locked (shard, ss);
          ds_pool_shard_unlock (shard);
          if (ss != NULL)
            ds_stream_state_unref (ss);
          ds_pool_observe (self, shard, DS_OBSERVER_EVENT_HIT, b->up_size);
          return b;
        }
      ds_pool_shard_unlock (shard);

      /* Another thread's shard may have what this one lacks. */
      b = take_from_others (self, &request);
      hit = b != NULL;
    }

  if (b == NULL)
    b = ds_pool_grow (self, &request, &hit, error);
  if (b == NULL)
    return NULL;

  ds_pool_shard_lock (shard);
  if (hit)
    shard->hits++;
  else
    shard->misses++;
  add_demand (self, shard, (gint64) request.demand);
  ds_pool_shard_unlock (shard);
  /* A miss is rare enough to be kept always. */
  ds_pool_observe (self, hit ? shard : NULL,
                  hit ? DS_OBSERVER_EVENT_HIT : DS_OBSERVER_EVENT_MISS, b->up_size);

  return b;
}

/* pool_take () for a caller that knows the address only. */
static gpointer
pool_alloc (DsPoolResource       *self,
            gsize                 size,
            gsize                 alignment,
            const DsAccessOrder  *order,
            GError              **error)
{
  DsPoolBlock *b;

  if (G_UNLIKELY (size == 0))
    return NULL;

  b = pool_take (self, size, alignment, order, error);
  return b != NULL ? b->ptr : NULL;
}

/* Locks the shard @b belongs to: its home, which changes only under the
 * home's lock. */
static inline DsPoolShard *
lock_home (DsPoolResource *self,
           DsPoolBlock    *b)
{
  for (;;)
    {
      guint home = (guint) g_atomic_int_get (&b->home);
      DsPoolShard *shard = self->shards[home & self->shard_mask];

      ds_pool_shard_lock (shard);
      if (G_LIKELY ((guint) g_atomic_int_get (&b->home) == home))
        return shard;
      ds_pool_shard_unlock (shard);
    }
}

/* Takes back @b, handed out with @size and @alignment in state @state,
 * into its home shard (that of the thread it was handed out to), if it
 * is still in that state (else a critical: it was given back twice).
 * @ss (borrowed) and @seq: the fence it was given back under, or NULL
 * when it is reusable by anyone at once. */
static inline void
pool_put (DsPoolResource      *self,
          DsPoolBlock         *b,
          guint64              state,
          gsize                size,
          gsize                alignment,
          DsStreamState       *ss,
          guint64              seq,
          const DsAccessOrder *order)
{
  DsPoolShard *shard;
  gsize pending, demand, up_size;
  gboolean check;

  if (ss != NULL && ds_stream_state_known_complete (ss, seq))
    ss = NULL;
  demand = ds_pool_demand_of (size);
  /* Pending on a stream without an event: the block stays in the demand
   * until taken out (see ds-pool-shard-private.h). */
  pending = ss != NULL && !ds_stream_state_is_fenced (ss, seq) ? demand : 0;

  shard = lock_home (self, b);
  if (G_UNLIKELY (!ds_pool_block_take_back_locked (b, state)))
    {
      shard->refused++;
      ds_pool_shard_unlock (shard);
      ds_pool_block_refuse_twice (self, b->ptr, size, alignment);
      return;
    }

  if (G_UNLIKELY (b->cls == DS_POOL_NO_CLASS ||
                  b->up_size > __atomic_load_n (&self->max_cached_size, __ATOMIC_RELAXED)))
    {
      ds_pool_shard_unlock (shard);
      b->ss = ss;
      b->seq = seq;
      ds_pool_give_back (self, shard, b, demand, order);
      return;
    }

  up_size = b->up_size;
  ds_pool_shard_put_locked (shard, b, ss, seq, pending, ds_pool_epoch (self));
  if (pending == 0)
    add_demand (self, shard, -(gint64) demand);
  check = ++shard->frees % DS_POOL_RELEASE_CHECK_EVERY == 0;
  ds_pool_shard_unlock (shard);
  ds_pool_observe (self, shard, DS_OBSERVER_EVENT_FREE, up_size);

  if (G_UNLIKELY (check))
    ds_pool_release_idle (self, ss, seq, order);
}

/* pool_put () for a caller that knows the address only: the block the
 * pool handed out at @ptr with @size and @alignment (else a critical, and
 * nothing changes). */
static void
pool_free (DsPoolResource      *self,
           gpointer             ptr,
           gsize                size,
           gsize                alignment,
           DsStreamState       *ss,
           guint64              seq,
           const DsAccessOrder *order)
{
  DsPoolBlock *b;
  guint64 state = 0;

  if (G_UNLIKELY (alignment == 0))
    alignment = 16;
  b = ds_pool_registry_find_fast (self->registry, ptr, size, alignment, &state);
  if (G_UNLIKELY (b == NULL))
    b = ds_pool_registry_find (self->registry, self, ptr, size, alignment, &state);
  if (G_UNLIKELY (b == NULL))
    {
      DsPoolShard *shard = current_shard (self);

      ds_pool_shard_lock (shard);
      shard->refused++;
      ds_pool_shard_unlock (shard);
      return;
    }

  pool_put (self, b, state, size, alignment, ss, seq, order);
}

/* DsMemoryResource and release batches ---------------------------------------------- */

static DsMemoryKind
ds_pool_resource_get_kind (DsMemoryResource *resource)
{
  return ((DsPoolResource *) resource)->kind;
}

static gpointer
ds_pool_resource_allocate (DsMemoryResource  *resource,
                           gsize              size,
                           gsize              alignment,
                           GError           **error)
{
  return pool_alloc ((DsPoolResource *) resource, size, alignment, NULL, error);
}

static void
ds_pool_resource_deallocate (DsMemoryResource *resource,
                             gpointer          ptr,
                             gsize             size,
                             gsize             alignment)
{
  if (ptr != NULL)
    pool_free ((DsPoolResource *) resource, ptr, size, alignment, NULL, 0, NULL);
}

static gpointer
ds_pool_resource_allocate_async (DsMemoryResource     *resource,
                                 gsize                 size,
                                 gsize                 alignment,
                                 const DsAccessOrder  *order,
                                 GError              **error)
{
  return pool_alloc ((DsPoolResource *) resource, size, alignment, order, error);
}

/* A block of this many bytes or more given back alone, by address, in a
 * stream's order (deallocate_async (): a framework's tensor, through
 * libds-alloc) has the stream checked at once (a query; an event if the
 * stream is busy) rather than at the stream's next due check (every 8th
 * release while other streams want its blocks): it is worth far more than
 * the query, and the next request from any stream can take it (known
 * complete, or behind a stream wait) instead of memory from upstream. An
 * arena's blocks go back many per release under one fence, and keep the
 * rule of ds_stream_state_record (). */
#define DS_POOL_CHECK_AT_ONCE_SIZE ((gsize) 1 << 20)

/* The fence of @batch in @order's stream (a device order), checked now if
 * @at_once, counting the CUDA calls that made it in the calling thread's
 * shard. */
static inline guint64
batch_fence (DsPoolResource      *self,
             DsFenceBatch        *batch,
             const DsAccessOrder *order,
             gboolean             at_once,
             DsStreamState      **ss)
{
  DsFenceCounters counters;
  guint64 seq;

  memset (&counters, 0, sizeof counters);
  seq = ds_fence_batch_get_fence (batch, order, &counters, ss);
  if (G_UNLIKELY (at_once))
    seq = ds_stream_state_check_now (*ss, seq, order, &counters);
  if (G_UNLIKELY (counters.events_recorded + counters.events_created + counters.event_queries +
                  counters.stream_waits + counters.event_waits != 0))
    ds_pool_add_counters (current_shard (self), &counters);

  return seq;
}

/* An arena's block (DsFencedResource): handed out with its record, which
 * takes it back without a lookup by address. */
static gpointer
ds_pool_resource_take_block (DsFencedResource     *resource,
                             gsize                 size,
                             gsize                 alignment,
                             const DsAccessOrder  *order,
                             gpointer             *handle,
                             GError              **error)
{
  DsPoolBlock *b = pool_take ((DsPoolResource *) resource, size, alignment, order, error);

  *handle = b;
  return b != NULL ? b->ptr : NULL;
}

/* A block given back by address as part of @batch: under the batch's
 * fence in @order's stream (one per stream per batch), or at once in host
 * order. */
static void
ds_pool_resource_deallocate_fenced (DsFencedResource    *resource,
                                    gpointer             ptr,
                                    gsize                size,
                                    gsize                alignment,
                                    const DsAccessOrder *order,
                                    DsFenceBatch        *batch)
{
  DsPoolResource *self = (DsPoolResource *) resource;
  DsStreamState *ss;
  guint64 seq;

  if (order == NULL || order->type != DS_ACCESS_ORDER_TYPE_DEVICE)
    {
      pool_free (self, ptr, size, alignment, NULL, 0, NULL);
      return;
    }

  seq = batch_fence (self, batch, order, size >= DS_POOL_CHECK_AT_ONCE_SIZE, &ss);
  pool_free (self, ptr, size, alignment, ss, seq, order);
}

/* The block of @handle given back as part of @batch: under the batch's
 * fence in @order's stream (one per stream per batch), or at once in host
 * order. */
static void
ds_pool_resource_give_back_block (DsFencedResource    *resource,
                                  gpointer             handle,
                                  const DsAccessOrder *order,
                                  DsFenceBatch        *batch)
{
  DsPoolResource *self = (DsPoolResource *) resource;
  DsPoolBlock *b = handle;
  guint64 state = __atomic_load_n (&b->state, __ATOMIC_RELAXED);
  gsize size = __atomic_load_n (&b->size, __ATOMIC_RELAXED);
  gsize alignment = __atomic_load_n (&b->alignment, __ATOMIC_RELAXED);
  DsStreamState *ss;
  guint64 seq;

  if (order == NULL || order->type != DS_ACCESS_ORDER_TYPE_DEVICE)
    {
      pool_put (self, b, state, size, alignment, NULL, 0, NULL);
      return;
    }

  seq = batch_fence (self, batch, order, FALSE, &ss);
  pool_put (self, b, state, size, alignment, ss, seq, order);
}

static void
ds_pool_resource_deallocate_async (DsMemoryResource    *resource,
                                   gpointer             ptr,
                                   gsize                size,
                                   gsize                alignment,
                                   const DsAccessOrder *order)
{
  DsFenceBatch batch;

  ds_fence_batch_init (&batch);
  ds_pool_resource_deallocate_fenced ((DsFencedResource *) resource, ptr, size, alignment,
                                      order, &batch);
  ds_fence_batch_finish (&batch);
}

static void
ds_pool_resource_iface_init (DsMemoryResourceInterface *iface)
{
  iface->get_kind = ds_pool_resource_get_kind;
  iface->allocate = ds_pool_resource_allocate;
  iface->deallocate = ds_pool_resource_deallocate;
  iface->allocate_async = ds_pool_resource_allocate_async;
  iface->deallocate_async = ds_pool_resource_deallocate_async;
}

/* Whether upstream calls run on @device in @context by themselves: once
 * the pool is bound (pool_capture_context (), or made for a device). */
static DsScopeBinding
ds_pool_resource_get_binding (DsFencedResource *resource,
                              gint              device,
                              gpointer          context)
{
  DsPoolResource *self = (DsPoolResource *) resource;
  gpointer primary;

  if (self->kind == DS_MEMORY_KIND_HOST)
    return DS_SCOPE_BINDING_OTHER;
  /* Set once, after the device and context. */
  if (!g_atomic_int_get (&self->have_context))
    return DS_SCOPE_BINDING_NOT_YET;
  if (self->device != device)
    return DS_SCOPE_BINDING_OTHER;
  if (self->context == context)
    return DS_SCOPE_BINDING_SAME;

  /* NULL on one side only: the same if the other is the primary. */
  primary = ds_cuda_get_primary_context (device);
  if (primary != NULL &&
      (self->context != NULL ? self->context : primary) == (context != NULL ? context : primary))
    return DS_SCOPE_BINDING_SAME;

  return DS_SCOPE_BINDING_OTHER;
}

static void
ds_pool_resource_fenced_init (DsFencedResourceInterface *iface)
{
  iface->deallocate_fenced = ds_pool_resource_deallocate_fenced;
  iface->take_block = ds_pool_resource_take_block;
  iface->give_back_block = ds_pool_resource_give_back_block;
  iface->get_binding = ds_pool_resource_get_binding;
}

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

  return (guint) g_atomic_int_get (&self->idle_timeout_ms);
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

  if ((guint) g_atomic_int_exchange (&self->idle_timeout_ms, idle_timeout) != idle_timeout)
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
