/* ds-pool-resource-private.h: the pool's insides, for ds-pool-*.c, and
 * what the default registry calls
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "ds-pool-resource.h"
#include "ds-pool-shard-private.h"

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

  /* Every block held, handed out or cached (ds-pool-registry-private.h). */
  DsPoolRegistry   *registry;

  /* Giving idle blocks back (ds-pool-growth.c). */
  guint64           release_threshold; /* atomic */
  guint             idle_timeout_ms;   /* atomic */
  guint             epoch;             /* atomic; advanced under grow_lock */
  gint64            epoch_start[DS_POOL_EPOCH_RING];   /* under grow_lock */
  guint64           idle_releases;     /* under grow_lock */

  /* Growth and shrinking: held bytes, the peak and the upstream calls. */
  GMutex            grow_lock;
  guint64           held;
  guint64           upstream_allocations;
  guint64           upstream_deallocations;
  gint64            peak;              /* atomic */
  DsFenceCounters   grow_cuda;

  /* Where upstream calls made from any thread must run. */
  gint              device;
  gpointer          context;
  gboolean          have_context;
};

/* Growth and shrinking (ds-pool-growth.c) ---------------------------------------- */

gint64   ds_pool_total_demand   (DsPoolResource      *self);
/* Raises the recorded peak to @demand if it is higher. */
void     ds_pool_update_peak    (DsPoolResource      *self,
                                 gint64               demand);
/* Called after @shard's demand grew past its mark
 * (ds_pool_shard_add_demand_locked ()): adds up all shards and raises
 * the peak. Called with @shard locked. */
void     ds_pool_observe_demand (DsPoolResource      *self,
                                 DsPoolShard         *shard);

/* Adds the fence CUDA calls counted in @c to @shard's statistics. */
void     ds_pool_add_counters   (DsPoolShard           *shard,
                                 const DsFenceCounters *c);

/* Enters the device and context upstream calls run in (nothing for an
 * unbound or host pool). */
gboolean ds_pool_enter_scope    (DsPoolResource      *self,
                                 DsCudaScope         *scope);

/* Gives cached blocks back upstream until @need bytes are freed; called
 * with grow_lock held; the bytes freed. */
guint64  ds_pool_evict_locked   (DsPoolResource      *self,
                                 guint64              need,
                                 DsPoolEvictMode      mode);

/* A cache miss: a block of class (@ac, @cls) (DS_POOL_NO_CLASS: not
 * cacheable), @up_size bytes aligned to @up_align, for a request of @size
 * bytes aligned to @alignment in @order by the thread of shard @home,
 * adding @demand; the block comes back handed out. *@reused: a pending
 * block was reused instead of a new one. */
DsPoolBlock *ds_pool_grow       (DsPoolResource      *self,
                                 guint                ac,
                                 guint                cls,
                                 gsize                up_size,
                                 gsize                up_align,
                                 gsize                size,
                                 gsize                alignment,
                                 gsize                demand,
                                 guint                home,
                                 const DsAccessOrder *order,
                                 gboolean            *reused,
                                 GError             **error);

/* Gives a block that is not to be cached (just taken back) upstream once
 * the fence (@ss, @seq) has completed (@ss NULL: at once); @shard is its
 * home, where its @demand is counted. */
void     ds_pool_give_back      (DsPoolResource      *self,
                                 DsPoolShard         *shard,
                                 DsPoolBlock         *b,
                                 gsize                demand,
                                 DsStreamState       *ss,
                                 guint64              seq,
                                 const DsAccessOrder *order);

/* Idle release ------------------------------------------------------------------ */

/* The pool's coarse clock, in microseconds: g_get_monotonic_time (), or a
 * test's. */
gint64   ds_pool_clock          (void);
/* For tests: makes ds_pool_clock () call @func (NULL: the real clock). */
void     ds_pool_set_clock_for_testing (gint64 (*func) (void));

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
 * the fence the last block was given back under, on a stream alive now;
 * while the pool is over its threshold that stream is checked first
 * (ds_stream_state_check ()), so that blocks it gave back without an
 * event can be found complete and go too. Never waits: skips the check if
 * another thread is growing or shrinking the pool. */
void     ds_pool_release_idle   (DsPoolResource      *self,
                                 DsStreamState       *ss,
                                 guint64              seq,
                                 const DsAccessOrder *order);

/* The default registry ---------------------------------------------------------- */

/* Gives every cached block back upstream, waiting for the stream work that
 * may still use them; for a pool whose context is about to go. */
void              ds_pool_resource_drain          (DsPoolResource   *self);

typedef enum
{
  DS_POOL_BINDING_OTHER,
  DS_POOL_BINDING_SAME,
  DS_POOL_BINDING_NOT_YET,
} DsPoolBinding;

/* Whether @resource is a pool whose upstream calls run on @device (>= 0)
 * in @context (NULL: the device's primary context) whatever the calling
 * thread has current, as the default pools' do: SAME; NOT_YET for a pool
 * that takes its device and context from its first upstream allocation
 * and has made none (ask again later); OTHER for anything else (another
 * device or context, a host pool, not a pool). Its hits make no CUDA call
 * that needs a context current, so a scratchpad that draws from it need
 * not enter one. Any thread. */
DsPoolBinding     ds_pool_resource_get_binding    (DsMemoryResource *resource,
                                                   gint              device,
                                                   gpointer          context);

/* A pool over @upstream whose upstream calls, from any thread, run on
 * @device (>= 0) in the driver context @context (NULL: the device's
 * primary context); both are ignored for host memory. */
DsMemoryResource *ds_pool_resource_new_for_device (DsMemoryResource *upstream,
                                                   gint              device,
                                                   gpointer          context);

G_END_DECLS
