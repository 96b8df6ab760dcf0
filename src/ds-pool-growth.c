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
 * a stream without an event (the lazy policy: a stream that takes its
 * own blocks back never needs one) are found complete by checking the
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
#include "ds-error.h"

/* Raises the recorded peak to @demand if it is higher. */
void
ds_pool_update_peak (DsPoolResource *self,
                     gint64          demand)
{
  gint64 peak = __atomic_load_n (&self->peak, __ATOMIC_RELAXED);

  while (demand > peak &&
         !__atomic_compare_exchange_n (&self->peak, &peak, demand, TRUE,
                                       __ATOMIC_RELAXED, __ATOMIC_RELAXED))
    ;
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

  ds_pool_update_peak (self, total);
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
  /* Read without the lock by ds_pool_resource_get_binding (). */
  __atomic_store_n (&self->have_context, TRUE, __ATOMIC_RELEASE);
}

/* Gives cached blocks cached in epoch @max_stamp or before back upstream
 * until @need bytes are freed (largest classes, oldest blocks first):
 * first those known reusable, then, as @mode allows, those whose fence
 * has completed by now, then the rest, waiting for their fences. Called
 * with grow_lock held. Returns the bytes freed. */
static guint64
evict_locked (DsPoolResource  *self,
              guint64          need,
              DsPoolEvictMode  mode,
              guint            max_stamp)
{
  GArray *victims = g_array_new (FALSE, FALSE, sizeof (DsPoolVictim));
  guint64 freed = 0;
  guint i;

  for (DsPoolEvictMode pass = DS_POOL_EVICT_READY; pass <= mode && freed < need; pass++)
    for (i = 0; i <= self->shard_mask && freed < need; i++)
      {
        DsPoolShard *shard = self->shards[i];

        if (ds_pool_shard_peek_n_cached (shard) == 0)
          continue;

        ds_pool_shard_lock (shard);
        freed += ds_pool_shard_evict_locked (shard, need - freed, pass, max_stamp,
                                             &self->grow_cuda, victims);
        ds_pool_shard_unlock (shard);
      }

  if (victims->len > 0)
    {
      DsCudaScope scope;
      gboolean scoped = ds_pool_enter_scope (self, &scope);
      gpointer ptr;
      gsize up_size, up_align;
      GPtrArray *unfenced = NULL;

      /* Releases with no event to wait for: one device-wide wait covers
       * all of a device's streams, rather than one per stream. */
      for (i = 0; i < victims->len; i++)
        {
          DsPoolVictim *v = &g_array_index (victims, DsPoolVictim, i);

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

      for (i = 0; i < victims->len; i++)
        {
          DsPoolVictim *v = &g_array_index (victims, DsPoolVictim, i);

          if (v->ss != NULL && !ds_stream_state_wait (v->ss, v->seq, &self->grow_cuda))
            {
              /* Its work may never finish: hold it back for good. */
              freed -= v->class_bytes;
              ds_stream_state_unref (v->ss);
              ds_pool_registry_remove (self->registry, v->block);
              continue;
            }
          ds_stream_state_unref (v->ss);

          /* Out of the registry first: once upstream has the block back,
           * another thread may get the same address from it and register
           * it (upstream allocations take no pool lock). */
          ptr = v->block->ptr;
          up_size = v->block->up_size;
          up_align = v->block->up_align;
          ds_pool_registry_remove (self->registry, v->block);
          ds_memory_resource_deallocate (self->upstream, ptr, up_size, up_align);
          self->held -= v->class_bytes;
          self->upstream_deallocations++;
        }

      if (scoped)
        ds_cuda_scope_leave (&scope);
    }
  g_array_free (victims, TRUE);

  return freed;
}

/* Gives cached blocks back upstream until @need bytes are freed (largest
 * classes, oldest blocks first): first those known reusable, then, as
 * @mode allows, those whose fence has completed by now, then the rest,
 * waiting for their fences. Called with grow_lock held. Returns the bytes
 * freed. */
guint64
ds_pool_evict_locked (DsPoolResource  *self,
                      guint64          need,
                      DsPoolEvictMode  mode)
{
  return evict_locked (self, need, mode, G_MAXUINT);
}

static gpointer
upstream_alloc (DsPoolResource       *self,
                gsize                 size,
                gsize                 alignment,
                const DsAccessOrder  *order,
                GError              **error)
{
  if (self->upstream_async && order != NULL)
    return ds_memory_resource_allocate_async (self->upstream, size, alignment, order, error);

  return ds_memory_resource_allocate (self->upstream, size, alignment, error);
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
                     guint                ac,
                     guint                cls,
                     gsize                class_bytes,
                     gsize                size,
                     gsize                alignment,
                     guint                home,
                     const DsAccessOrder *order)
{
  for (guint i = 0; i <= self->shard_mask; i++)
    {
      DsPoolShard *shard = self->shards[i];
      DsStreamState *ss = NULL;
      DsPoolBlock *b;
      guint64 seq = 0;

      if (ds_pool_shard_peek_n_cached (shard) == 0)
        continue;

      ds_pool_shard_lock (shard);
      b = ds_pool_shard_take_any_locked (shard, ac, cls, class_bytes, &ss, &seq);
      if (b != NULL)
        ds_pool_block_hand_out (b, size, alignment, home);
      ds_pool_shard_unlock (shard);

      if (b == NULL)
        continue;
      /* Whatever the cross-stream policy: here the alternative is a
       * blocking wait and a device-wide cudaFree. */
      if (ss == NULL ||
          (order != NULL && ds_stream_state_matches (ss, order)) ||
          (order != NULL ? ds_stream_state_make_wait (ss, seq, order, &self->grow_cuda)
                         : ds_stream_state_wait (ss, seq, &self->grow_cuda)))
        {
          ds_stream_state_unref (ss);
          return b;
        }

      /* Its work will never finish (a failed device): hold it back. */
      ds_stream_state_unref (ss);
      ds_pool_registry_remove (self->registry, b);
    }

  return NULL;
}

/* A cache miss: takes a new block of @up_size bytes aligned to @up_align
 * from upstream, first making sure that what the pool holds stays within
 * twice the peak demand. *@reused: a pending block was reused instead. */
DsPoolBlock *
ds_pool_grow (DsPoolResource       *self,
              guint                 ac,
              guint                 cls,
              gsize                 up_size,
              gsize                 up_align,
              gsize                 size,
              gsize                 alignment,
              gsize                 demand,
              guint                 home,
              const DsAccessOrder  *order,
              gboolean             *reused,
              GError              **error)
{
  GError *local_error = NULL;
  DsPoolBlock *b;
  gpointer ptr;
  gint64 wanted, peak;

  *reused = FALSE;

  g_mutex_lock (&self->grow_lock);
  pool_capture_context (self);
  /* The peak this request makes, if it succeeds. */
  wanted = ds_pool_total_demand (self) + (gint64) demand;
  peak = MAX (__atomic_load_n (&self->peak, __ATOMIC_RELAXED), wanted);
  if (self->held + up_size > 2 * (guint64) peak)
    {
      /* For CUDA kinds, giving a block back (cudaFree, cudaFreeHost) waits
       * for the whole device anyway; for host memory it is cheap. */
      if (cls != DS_POOL_NO_CLASS && self->kind != DS_MEMORY_KIND_HOST &&
          (b = take_pending_locked (self, ac, cls, up_size, size, alignment, home, order)) != NULL)
        {
          g_mutex_unlock (&self->grow_lock);
          *reused = TRUE;
          return b;
        }
      ds_pool_evict_locked (self, self->held + up_size - 2 * (guint64) peak, DS_POOL_EVICT_ALL);
    }
  self->held += up_size;
  self->upstream_allocations++;
  g_mutex_unlock (&self->grow_lock);

  {
    DsCudaScope scope;
    gboolean scoped = ds_pool_enter_scope (self, &scope);

    ptr = upstream_alloc (self, up_size, up_align, order, &local_error);
    if (scoped)
      ds_cuda_scope_leave (&scope);
  }
  if (ptr == NULL && local_error != NULL &&
      g_error_matches (local_error, DS_ERROR, DS_ERROR_OUT_OF_MEMORY))
    {
      guint64 freed;

      /* Out of memory: give back everything cached and try once more. */
      g_mutex_lock (&self->grow_lock);
      freed = ds_pool_evict_locked (self, G_MAXUINT64, DS_POOL_EVICT_ALL);
      g_mutex_unlock (&self->grow_lock);

      if (freed > 0)
        {
          DsCudaScope scope;
          gboolean scoped = ds_pool_enter_scope (self, &scope);

          g_clear_error (&local_error);
          ptr = upstream_alloc (self, up_size, up_align, order, &local_error);
          if (scoped)
            ds_cuda_scope_leave (&scope);
        }
    }

  if (ptr == NULL)
    {
      g_mutex_lock (&self->grow_lock);
      self->held -= up_size;
      self->upstream_allocations--;
      g_mutex_unlock (&self->grow_lock);
      g_propagate_error (error, local_error);
      return NULL;
    }

  ds_pool_update_peak (self, wanted);
  return ds_pool_registry_add (self->registry, ptr, up_size, up_align, ac, cls, size, alignment,
                               home);
}

/* Gives a block that is not to be cached straight back upstream, once the
 * stream work that may use it has finished. */
void
ds_pool_give_back (DsPoolResource      *self,
                   DsPoolShard         *shard,
                   DsPoolBlock         *b,
                   gsize                demand,
                   DsStreamState       *ss,
                   guint64              seq,
                   const DsAccessOrder *order)
{
  DsFenceCounters counters = { 0, };
  DsCudaScope scope;
  gpointer ptr = b->ptr;
  gsize up_size = b->up_size, up_align = b->up_align;
  gboolean scoped, freed = TRUE;

  /* Out of the registry before upstream has it back: another thread may
   * get the same address from upstream at once and register it. */
  ds_pool_registry_remove (self->registry, b);

  scoped = ds_pool_enter_scope (self, &scope);
  if (ss != NULL)
    {
      if (self->upstream_async)
        ds_memory_resource_deallocate_async (self->upstream, ptr, up_size, up_align, order, NULL);
      else if (ds_stream_state_wait (ss, seq, &counters))
        ds_memory_resource_deallocate (self->upstream, ptr, up_size, up_align);
      else
        freed = FALSE;   /* held back for good */
    }
  else
    {
      ds_memory_resource_deallocate (self->upstream, ptr, up_size, up_align);
    }
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
      self->held -= up_size;
      self->upstream_deallocations++;
      g_mutex_unlock (&self->grow_lock);
    }
}

/* Idle release -------------------------------------------------------------------- */

static gint64 (*pool_clock_func) (void) = g_get_monotonic_time;

gint64
ds_pool_clock (void)
{
  gint64 (*func) (void) = __atomic_load_n (&pool_clock_func, __ATOMIC_RELAXED);

  return func ();
}

void
ds_pool_set_clock_for_testing (gint64 (*func) (void))
{
  __atomic_store_n (&pool_clock_func, func != NULL ? func : g_get_monotonic_time,
                    __ATOMIC_RELAXED);
}

void
ds_pool_init_epochs (DsPoolResource *self)
{
  /* Epoch 0 is never used: a block stamped e needs epoch e + 1's start. */
  self->epoch = 1;
  self->epoch_start[1] = ds_pool_clock ();
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

  if (!g_mutex_trylock (&self->grow_lock))
    return;

  now = ds_pool_clock ();
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
              /* Blocks given back on a stream without an event (the lazy
               * release policy) are known complete only once someone checks
               * that stream; the one the caller gave back on is alive now.
               * One query per DS_POOL_RELEASE_CHECK_EVERY frees, and only
               * while over the threshold: none in a steady state below it. */
              ds_stream_state_check (ss, seq, order, &self->grow_cuda);
            }

          evict_locked (self, self->held - threshold, DS_POOL_EVICT_STALE, cut);
          self->idle_releases += self->upstream_deallocations - before;
        }
    }

  g_mutex_unlock (&self->grow_lock);
}
