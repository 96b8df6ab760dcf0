/* ds-pool-growth.c: how a pool grows and shrinks
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * How it works: the shards count demand (the bytes their threads took and
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

#include "ds-pool-resource-private.h"
#include "ds-pool-record-private.h"
#include "ds-clock-private.h"
#include "ds-error.h"

/* Raises the recorded peak to @demand if it is higher. */
static inline void
raise_peak (DsPoolResource *self,
            gint64          demand)
{
  if (demand > 0)
    ds_atomic_raise (&self->peak, (guint64) demand);
}

gint64
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
void
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

gboolean
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
  __atomic_store_n (&self->have_context, TRUE, __ATOMIC_RELEASE);
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

guint64
ds_pool_evict_locked (DsPoolResource  *self,
                      guint64          need,
                      DsPoolEvictMode  mode)
{
  return evict_locked (self, need, mode, G_MAXUINT);
}

void
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

DsPoolBlock *
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

void
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

void
ds_pool_init_epochs (DsPoolResource *self)
{
  /* Epoch 0 is never used: a block stamped e needs epoch e + 1's start. */
  self->epoch = 1;
  self->epoch_start[1] = ds_clock_now ();
}

void
ds_pool_release_idle (DsPoolResource      *self,
                      DsStreamState       *ss,
                      guint64              seq,
                      const DsAccessOrder *order)
{
  guint64 threshold = __atomic_load_n (&self->release_threshold, __ATOMIC_RELAXED);
  gint64 timeout = (gint64) __atomic_load_n (&self->idle_timeout_ms, __ATOMIC_RELAXED) * 1000;
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
      __atomic_store_n (&self->epoch, epoch, __ATOMIC_RELAXED);
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
