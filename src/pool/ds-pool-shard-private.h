/* ds-pool-shard-private.h: one thread's cache in a pool
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A DsPoolResource keeps the blocks given back to it in shards, one per
 * CPU (a power of two), each with its own lock; a thread works on the
 * shard its slot picks, so threads on their own streams rarely share a
 * lock. A block given back goes to its home shard, that of the thread it
 * was handed out to. A shard files blocks in bins (ds-pool-bin-private.h)
 * and counts what it holds and its demand.
 *
 * Demand: each shard counts the bytes its thread took, minus those given
 * back (by whichever thread). A block given back under a fence that has
 * no event yet (not checked) stays counted: its stream's work may still
 * use it, and only a device-wide wait could tell otherwise; it leaves the
 * demand when it is taken again or given back upstream. The pool's
 * memory bound (twice the peak demand) thus covers the blocks in flight
 * that it cannot wait for cheaply.
 */

#pragma once

#include "ds-pool-bin-private.h"

G_BEGIN_DECLS

typedef struct
{
  gint             lock;                           /* atomic: see ds_pool_shard_lock () */
  DsPoolBin       *bins[DS_POOL_N_ALIGN_CLASSES];   /* DS_POOL_N_SIZE_CLASSES each, lazily */
  guint64          n_cached;                       /* atomic reads */
  guint64          bytes_cached;
  gint64           demand;                         /* may go below 0 (atomic reads) */
  gint64           demand_mark;                    /* see ds-pool-resource.c */
  guint64          pending;                        /* of the demand: cached blocks' (atomic reads) */
  guint64          hits;
  guint64          misses;
  guint64          refused;                        /* deallocations refused */
  guint            frees;                          /* counts to the next idle check */
  DsFenceCounters  cuda;
  /* A stream reference kept from the last block taken out, for the next
   * one filed under that stream: a block that goes round on one stream
   * costs no reference count change per trip. */
  DsStreamState   *spare_ss;
} DsPoolShard;

/* The shard's lock: test-and-set, taken with one atomic exchange and given
 * back with a release store, both inlined; a waiter spins a little, then
 * yields (ds_pool_shard_lock_wait ()). A shard is nearly always locked by
 * its own thread, for a few dozen instructions, twice per block taken and
 * given back. GLib's locks cost a call each way here: in the same
 * bench-host run (development machine, pinned to one core, alternating
 * builds), g_bit_lock () made a host pool round trip 43 -> 52 ns and a
 * reused host lifecycle 60 -> 67 ns; a GMutex 43 -> 50 ns and 59 -> 72 ns. */

/* The lock was held: out of line, so that the lock itself stays an
 * exchange and a branch. */
static G_GNUC_NO_INLINE G_GNUC_UNUSED void
ds_pool_shard_lock_wait (DsPoolShard *shard)
{
  for (guint spins = 0;; spins++)
    {
      if (!g_atomic_int_get (&shard->lock) && !g_atomic_int_exchange (&shard->lock, 1))
        return;

      /* The holder is most likely running: wait a little on the cache
       * line; then it may have been preempted (or be in a CUDA call):
       * give it the CPU. */
      if (spins < 100)
        {
#if defined(__x86_64__) || defined(__i386__)
          __builtin_ia32_pause ();
#elif defined(__aarch64__)
          __asm__ __volatile__ ("yield");
#endif
        }
      else
        g_thread_yield ();
    }
}

static inline void
ds_pool_shard_lock (DsPoolShard *shard)
{
  if (G_UNLIKELY (g_atomic_int_exchange (&shard->lock, 1)))
    ds_pool_shard_lock_wait (shard);
}

/* A release store: g_atomic_int_set () would be a full barrier (an
 * exchange on x86) on every unlock. */
static inline void
ds_pool_shard_unlock (DsPoolShard *shard)
{
  __atomic_store_n (&shard->lock, 0, __ATOMIC_RELEASE);
}

DsPoolShard *ds_pool_shard_new          (void);
/* Frees the shard; the records of the blocks still in it (held back for
 * good: their fences never completed) belong to the pool's registry. */
void         ds_pool_shard_free         (DsPoolShard         *shard);

static inline guint64
ds_pool_shard_peek_n_cached (DsPoolShard *shard)
{
  return __atomic_load_n (&shard->n_cached, __ATOMIC_RELAXED);
}

/* The bin of class (@ac, @cls), made if need be. */
static inline DsPoolBin *
ds_pool_shard_bin (DsPoolShard *shard,
                   guint        ac,
                   guint        cls)
{
  if (G_UNLIKELY (shard->bins[ac] == NULL))
    shard->bins[ac] = g_new0 (DsPoolBin, DS_POOL_N_SIZE_CLASSES);

  return &shard->bins[ac][cls];
}

/* Takes @b out of @bin and the shard's counts; its stream reference goes
 * to *@ss_out. Called with the lock held. */
static inline DsPoolBlock *
ds_pool_shard_take_block_locked (DsPoolShard    *shard,
                                 DsPoolBin      *bin,
                                 DsPoolBlock    *b,
                                 DsStreamState **ss_out)
{
  ds_pool_bin_unlink (bin, b);
  *ss_out = b->ss;
  b->ss = NULL;
  if (b->pending != 0)
    {
      __atomic_store_n (&shard->demand, shard->demand - (gint64) b->pending, __ATOMIC_RELAXED);
      __atomic_store_n (&shard->pending, shard->pending - b->pending, __ATOMIC_RELAXED);
      b->pending = 0;
    }
  __atomic_store_n (&shard->n_cached, shard->n_cached - 1, __ATOMIC_RELAXED);
  shard->bytes_cached -= b->up_size;

  return b;
}

/* A block of @bin that @request's order may use now, or NULL. */
static inline DsPoolBlock *
ds_pool_shard_pick_locked (DsPoolShard         *shard,
                           DsPoolBin           *bin,
                           const DsPoolRequest *request)
{
  DsPoolBlock *b = ds_pool_bin_at_hand (bin, request->order);

  if (G_UNLIKELY (b == NULL) && bin->fenced_head != NULL)
    b = ds_pool_bin_scan (bin, request->order, &shard->cuda);

  return b;
}

/* A block of @request's classes that its order may use now, taken out of
 * the shard, or NULL; its stream reference goes to *@ss_out. When its
 * size class has none, a block of one of the DS_POOL_FIT_CLASSES classes
 * above (of the smallest class that has one) rather than a new one from
 * upstream. Called with the lock held. Inlined always, so that the
 * request stays in registers: a call cost 30 instructions per block
 * (callgrind, reused four-kind lifecycle). */
G_ALWAYS_INLINE static inline DsPoolBlock *
ds_pool_shard_take_locked (DsPoolShard          *shard,
                           const DsPoolRequest  *request,
                           DsStreamState       **ss_out)
{
  DsPoolBin *bins = shard->bins[request->ac];
  DsPoolBlock *b;
  guint cls, last;

  if (bins == NULL)
    return NULL;
  b = ds_pool_shard_pick_locked (shard, &bins[request->cls], request);
  if (G_LIKELY (b != NULL))
    return ds_pool_shard_take_block_locked (shard, &bins[request->cls], b, ss_out);

  last = MIN (request->cls + DS_POOL_FIT_CLASSES, DS_POOL_N_SIZE_CLASSES - 1);
  for (cls = request->cls + 1; cls <= last; cls++)
    if ((bins[cls].head != NULL || bins[cls].fenced_head != NULL) &&
        (b = ds_pool_shard_pick_locked (shard, &bins[cls], request)) != NULL)
      return ds_pool_shard_take_block_locked (shard, &bins[cls], b, ss_out);

  return NULL;
}

/* Files @b in its bin, newest first, given back under the fence (@ss,
 * @seq) (@ss NULL: none, and the block is ready; else the shard takes a
 * reference, its spare one if that is @ss's), stamped with the pool's
 * epoch @stamp. @pending: the demand that stays counted for it until it
 * is taken out again. Called with the lock held. */
static inline void
ds_pool_shard_put_locked (DsPoolShard   *shard,
                          DsPoolBlock   *b,
                          DsStreamState *ss,
                          guint64        seq,
                          gsize          pending,
                          guint          stamp)
{
  if (ss != NULL && ss == shard->spare_ss)
    {
      b->ss = ss;
      shard->spare_ss = NULL;
    }
  else
    {
      b->ss = ss != NULL ? ds_stream_state_ref (ss) : NULL;
    }
  b->seq = seq;
  b->pending = pending;
  b->stamp = stamp;
  __atomic_store_n (&shard->pending, shard->pending + pending, __ATOMIC_RELAXED);
  ds_pool_bin_push (ds_pool_shard_bin (shard, b->ac, b->cls), b, ss != NULL);

  __atomic_store_n (&shard->n_cached, shard->n_cached + 1, __ATOMIC_RELAXED);
  shard->bytes_cached += b->up_size;
}

/* Keeps @ss (a reference the caller got with a block taken out, or NULL)
 * as the shard's spare; returns the reference the caller must drop after
 * unlocking: the spare it replaces, or NULL. Called with the lock held. */
static inline DsStreamState *
ds_pool_shard_keep_ref_locked (DsPoolShard   *shard,
                               DsStreamState *ss)
{
  DsStreamState *old = shard->spare_ss;

  if (ss == NULL)
    return NULL;

  shard->spare_ss = ss;
  return old;
}

/* Adds @delta to @shard's demand; TRUE when that raised it past the
 * shard's mark, and the pool must look at its peak. Called with the lock
 * held. */
static inline gboolean
ds_pool_shard_add_demand_locked (DsPoolShard *shard,
                                 gint64       delta)
{
  gint64 demand = shard->demand + delta;

  __atomic_store_n (&shard->demand, demand, __ATOMIC_RELAXED);
  return delta > 0 && demand > shard->demand_mark;
}

/* The oldest block of @request's classes whatever its fence (except one
 * that never completes), taken out, for a caller that will wait for the
 * fence (*@ss_out, *@seq_out); NULL if none. Called with the lock held. */
DsPoolBlock *ds_pool_shard_take_any_locked (DsPoolShard         *shard,
                                            const DsPoolRequest *request,
                                            DsStreamState      **ss_out,
                                            guint64             *seq_out);

G_END_DECLS
