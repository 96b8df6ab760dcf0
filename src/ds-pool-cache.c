/* ds-pool-cache.c: DsPoolResource, continued: taking and giving back blocks
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The pool's DsMemoryResource and DsFencedResource functions. A request is
 * filed by its classes (ds-size-class-private.h) and looks first in the
 * calling thread's shard (ds-pool-shard-private.h), then in the other
 * shards; only when none has a block it may use does the pool grow
 * (ds-pool-growth.c). A block given back is found in the registry, which
 * refuses what the pool did not hand out, and goes into its home shard
 * under the fence of its release (a release batch's, one per stream; or
 * none, in host order). The object itself is in ds-pool-resource.c.
 */

#include "config.h"

#include "ds-pool-resource-private.h"
#include "ds-pool-record-private.h"
#include "ds-fence-batch-private.h"

/* The calling thread's slot, which picks its shard. */
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

/* Takes a block of @size bytes aligned to @alignment (validated) for use
 * in @order (NULL or host order: by anyone, at once). */
static gpointer
pool_alloc (DsPoolResource       *self,
            gsize                 size,
            gsize                 alignment,
            const DsAccessOrder  *order,
            GError              **error)
{
  DsPoolRequest request;
  DsPoolShard *shard;
  DsPoolBlock *b = NULL;
  gboolean hit = FALSE;

  if (G_UNLIKELY (size == 0))
    return NULL;

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
          return b->ptr;
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

  return b->ptr;
}

/* Locks the shard @b belongs to: its home, which changes only under the
 * home's lock. */
static inline DsPoolShard *
lock_home (DsPoolResource *self,
           DsPoolBlock    *b)
{
  for (;;)
    {
      guint home = __atomic_load_n (&b->home, __ATOMIC_ACQUIRE);
      DsPoolShard *shard = self->shards[home & self->shard_mask];

      ds_pool_shard_lock (shard);
      if (G_LIKELY (__atomic_load_n (&b->home, __ATOMIC_RELAXED) == home))
        return shard;
      ds_pool_shard_unlock (shard);
    }
}

/* Takes back a block given back, if the pool handed it out with @size and
 * @alignment (else a critical, and nothing changes), into its home shard
 * (that of the thread it was handed out to). @ss (borrowed) and @seq: the
 * fence it was given back under, or NULL when it is reusable by anyone at
 * once. */
static void
pool_free (DsPoolResource      *self,
           gpointer             ptr,
           gsize                size,
           gsize                alignment,
           DsStreamState       *ss,
           guint64              seq,
           const DsAccessOrder *order)
{
  DsPoolShard *shard;
  DsPoolBlock *b;
  guint64 state = 0;
  gsize pending, demand, up_size;
  gboolean check;

  if (G_UNLIKELY (alignment == 0))
    alignment = 16;
  b = ds_pool_registry_find_fast (self->registry, ptr, size, alignment, &state);
  if (G_UNLIKELY (b == NULL))
    b = ds_pool_registry_find (self->registry, self, ptr, size, alignment, &state);
  if (G_UNLIKELY (b == NULL))
    {
      shard = current_shard (self);
      ds_pool_shard_lock (shard);
      shard->refused++;
      ds_pool_shard_unlock (shard);
      return;
    }

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
      ds_pool_block_refuse_twice (self, ptr, size, alignment);
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

/* A block given back as part of @batch: under the batch's fence in
 * @order's stream (one per stream per batch), or at once in host order. */
static void
ds_pool_resource_deallocate_fenced (DsFencedResource    *resource,
                                    gpointer             ptr,
                                    gsize                size,
                                    gsize                alignment,
                                    const DsAccessOrder *order,
                                    DsFenceBatch        *batch)
{
  DsPoolResource *self = (DsPoolResource *) resource;
  DsFenceCounters counters;
  DsStreamState *ss;
  guint64 seq;

  if (order == NULL || order->type != DS_ACCESS_ORDER_TYPE_DEVICE)
    {
      pool_free (self, ptr, size, alignment, NULL, 0, NULL);
      return;
    }

  memset (&counters, 0, sizeof counters);
  seq = ds_fence_batch_get_fence (batch, order, &counters, &ss);
  if (G_UNLIKELY (counters.events_recorded + counters.events_created + counters.event_queries +
                  counters.stream_waits + counters.event_waits != 0))
    ds_pool_add_counters (current_shard (self), &counters);
  pool_free (self, ptr, size, alignment, ss, seq, order);
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

void
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
  if (!__atomic_load_n (&self->have_context, __ATOMIC_ACQUIRE))
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

void
ds_pool_resource_fenced_init (DsFencedResourceInterface *iface)
{
  iface->deallocate_fenced = ds_pool_resource_deallocate_fenced;
  iface->get_binding = ds_pool_resource_get_binding;
}
