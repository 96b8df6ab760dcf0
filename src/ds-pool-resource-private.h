/* ds-pool-resource-private.h: the pool's insides, for ds-pool-*.c, and
 * what the default registry calls
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A DsPoolResource is its shards (ds-pool-shard-private.h: one thread's
 * cache each), the registry of every block it holds
 * (ds-pool-registry-private.h) and its upstream side (ds-pool-growth.c:
 * what it holds, the bound of twice the peak demand, new blocks, giving
 * blocks back, idle release).
 */

#pragma once

#include "ds-pool-resource.h"
#include "ds-pool-eviction-private.h"
#include "ds-pool-registry-private.h"
#include "ds-fenced-resource-private.h"

G_BEGIN_DECLS

/* The epochs remembered for idle release (see ds-pool-growth.c). */
#define DS_POOL_EPOCH_RING 16
/* Every this many blocks given back to a shard, the pool looks for idle
 * blocks to give back upstream. */
#define DS_POOL_RELEASE_CHECK_EVERY 256

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

  /* Giving idle blocks back (ds-pool-growth.c). */
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

  /* Its label in observations (ds-pool-record-private.h). */
  const char       *record_label;      /* atomic; interned */
};

/* Taking and giving back (ds-pool-cache.c) ------------------------------------------ */

void     ds_pool_resource_iface_init  (DsMemoryResourceInterface *iface);
void     ds_pool_resource_fenced_init (DsFencedResourceInterface *iface);

/* Growth and shrinking (ds-pool-growth.c) ------------------------------------------ */

gint64   ds_pool_total_demand   (DsPoolResource      *self);
/* Called after @shard's demand grew past its mark: adds up all shards and
 * raises the peak. Called with @shard locked. */
void     ds_pool_observe_demand (DsPoolResource      *self,
                                 DsPoolShard         *shard);

/* Adds the fence CUDA calls counted in @c to @shard's statistics. */
void     ds_pool_add_counters   (DsPoolShard           *shard,
                                 const DsFenceCounters *c);

/* Enters the device and context upstream calls run in (nothing for an
 * unbound or host pool). */
gboolean ds_pool_enter_scope    (DsPoolResource      *self,
                                 DsCudaScope         *scope);

/* Gives cached blocks back upstream until @need bytes are freed, as far
 * as @mode allows; called with grow_lock held; the bytes freed. */
guint64  ds_pool_evict_locked   (DsPoolResource      *self,
                                 guint64              need,
                                 DsPoolEvictMode      mode);

/* A cache miss: a new block for @request, handed out to its thread,
 * keeping what the pool holds within twice its peak demand. *@reused: a
 * pending block of the class was reused instead (behind a stream wait). */
DsPoolBlock *ds_pool_grow       (DsPoolResource      *self,
                                 const DsPoolRequest *request,
                                 gboolean            *reused,
                                 GError             **error);

/* Gives @b, just taken back and not to be cached, upstream once the
 * fence it was given back under (b->ss, lent for the call, and b->seq, in
 * @order) has completed (b->ss NULL: at once); its @demand leaves
 * @shard, its home. */
void     ds_pool_give_back      (DsPoolResource      *self,
                                 DsPoolShard         *shard,
                                 DsPoolBlock         *b,
                                 gsize                demand,
                                 const DsAccessOrder *order);

/* Idle release -------------------------------------------------------------------- */

/* The pool's current epoch, to stamp a block cached now. */
static inline guint
ds_pool_epoch (DsPoolResource *self)
{
  return __atomic_load_n (&self->epoch, __ATOMIC_RELAXED);
}

/* Starts the epochs at construction. */
void     ds_pool_init_epochs    (DsPoolResource      *self);

/* Called every DS_POOL_RELEASE_CHECK_EVERY blocks given back to a shard:
 * advances the epoch when its time has come and, while the pool holds
 * more than its release threshold, gives back upstream the cached blocks
 * idle for longer than its idle timeout. @ss, @seq and @order (or NULL):
 * the fence the last block was given back under, on a stream alive now,
 * which is checked first so that blocks it gave back without an event can
 * be found complete and go too. Never waits for another thread. */
void     ds_pool_release_idle   (DsPoolResource      *self,
                                 DsStreamState       *ss,
                                 guint64              seq,
                                 const DsAccessOrder *order);

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

G_END_DECLS
