/* ds-pool-shard-private.h: size classes and the per-thread shards of a pool
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * How it works: a DsPoolResource keeps the blocks given back to it in
 * shards, one per CPU (a power of two), each with its own lock; a thread
 * works on the shard its slot picks, so threads on their own streams
 * rarely share a lock. A block given back goes to its home shard, that
 * of the thread it was handed out to (ds-pool-registry-private.h). A
 * shard files blocks by (alignment class, size
 * class) in bins; each block remembers the fence it was given back under
 * (ds-fence-private.h). A bin has two lists, newest first: the ready one
 * (blocks anyone may take now: given back without a fence, or under one
 * known complete then) and the fenced one (given back under a fence not
 * known complete). A request takes the newest block of its own stream's
 * from the fenced list (a stream order's steady state), else the newest
 * ready one; only when the ready list is empty does it look through the
 * fenced list (ds_pool_shard_scan_locked ()), and it then moves every
 * block found complete to the ready list at once, so that a request in
 * host order (pinned staging) does not walk past the blocks still
 * pending at every take.
 * Size classes are multiples of 256 bytes up to 2 KiB, then four per power
 * of two, so a block is at most 25% larger than asked for.
 *
 * Demand: each shard counts the bytes its thread took, minus those given
 * back (by whichever thread). A block given back under a fence that has no event yet (a lazy
 * fence, not checked) stays counted: its stream's work may still use it,
 * and only a device-wide wait could tell otherwise; it leaves the demand
 * when it is taken again or given back upstream. The pool's memory bound
 * (twice the peak demand) thus covers the blocks in flight that it cannot
 * wait for cheaply.
 */

#pragma once

#include "ds-pool-registry-private.h"

G_BEGIN_DECLS

#define DS_POOL_GRANULE_SHIFT   8
#define DS_POOL_GRANULE         ((gsize) 1 << DS_POOL_GRANULE_SHIFT)
/* Classes cover sizes up to 2^41 bytes. */
#define DS_POOL_N_SIZE_CLASSES  128
/* Alignment classes: 256 B (and less), 512 B, ..., 64 KiB. */
#define DS_POOL_N_ALIGN_CLASSES 9
#define DS_POOL_MAX_ALIGN       (DS_POOL_GRANULE << (DS_POOL_N_ALIGN_CLASSES - 1))
#define DS_POOL_NO_CLASS        G_MAXUINT

/* The size class of @size; its size in *@class_bytes. DS_POOL_NO_CLASS
 * when too large for any. */
static inline guint
ds_pool_size_class (gsize  size,
                    gsize *class_bytes)
{
  guint64 g = ((guint64) size + DS_POOL_GRANULE - 1) >> DS_POOL_GRANULE_SHIFT;
  guint64 n;
  guint msb, shift, top, idx;

  if (g <= 8)
    {
      *class_bytes = (gsize) (g << DS_POOL_GRANULE_SHIFT);
      return (guint) g - 1;
    }

  n = g - 1;
  msb = 63 - (guint) __builtin_clzll (n);         /* >= 3 */
  shift = msb - 2;
  top = (guint) (n >> shift);                      /* 4 .. 7 */
  idx = 8 + (msb - 3) * 4 + (top - 4);
  if (idx >= DS_POOL_N_SIZE_CLASSES)
    return DS_POOL_NO_CLASS;

  *class_bytes = (gsize) (((guint64) (top + 1) << shift) << DS_POOL_GRANULE_SHIFT);
  return idx;
}

/* The size in bytes of class @cls (the inverse of ds_pool_size_class ()). */
gsize ds_pool_class_size (guint cls);

static inline guint
ds_pool_align_class (gsize alignment)
{
  if (alignment <= DS_POOL_GRANULE)
    return 0;
  if (alignment > DS_POOL_MAX_ALIGN)
    return DS_POOL_NO_CLASS;

  return (guint) (63 - __builtin_clzll ((guint64) alignment)) - DS_POOL_GRANULE_SHIFT;
}

/* What a request of @size bytes adds to the demand: its granules. */
static inline gsize
ds_pool_demand_of (gsize size)
{
  return size > G_MAXSIZE - (DS_POOL_GRANULE - 1) ?
         size : (size + DS_POOL_GRANULE - 1) & ~(DS_POOL_GRANULE - 1);
}

typedef struct
{
  DsPoolBlock *head;         /* ready: newest */
  DsPoolBlock *tail;         /* ready: oldest */
  DsPoolBlock *fenced_head;  /* fenced: newest */
  DsPoolBlock *fenced_tail;  /* fenced: oldest */
} DsPoolBin;

/* A shard's lock: test-and-set, taken with one atomic exchange and given
 * back with a release store, both inlined; a waiter spins a little, then
 * yields. A shard is nearly always locked by its own thread, for a few
 * dozen instructions, twice per block taken and given back. */
typedef struct
{
  gint held;   /* atomic */
} DsPoolLock;

typedef struct
{
  DsPoolLock       lock;
  DsPoolBin       *bins[DS_POOL_N_ALIGN_CLASSES];   /* DS_POOL_N_SIZE_CLASSES each, lazily */
  guint64          n_cached;                       /* atomic reads */
  guint64          bytes_cached;
  gint64           demand;                         /* may go below 0 (atomic reads) */
  gint64           demand_mark;                    /* see ds-pool-growth.c */
  guint64          pending;                        /* of the demand: cached blocks' */
  guint64          hits;
  guint64          misses;
  guint64          refused;                        /* deallocations refused */
  guint            frees;                          /* counts to the next release check */
  DsFenceCounters  cuda;
  /* A stream reference kept from the last block taken out, for the next
   * one filed under that stream: a block that goes round on one stream
   * costs no reference count change (two atomic operations) per trip. */
  DsStreamState   *spare_ss;
} DsPoolShard;

/* The slow path of ds_pool_shard_lock (): the lock was held. Out of line
 * (one copy per file that locks shards), so that the lock itself stays
 * an exchange and a branch. */
G_GNUC_NO_INLINE G_GNUC_UNUSED static void
ds_pool_lock_wait (DsPoolLock *lock)
{
  for (guint spins = 0;; spins++)
    {
      if (!__atomic_load_n (&lock->held, __ATOMIC_RELAXED) &&
          !__atomic_exchange_n (&lock->held, 1, __ATOMIC_ACQUIRE))
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
  if (G_UNLIKELY (__atomic_exchange_n (&shard->lock.held, 1, __ATOMIC_ACQUIRE)))
    ds_pool_lock_wait (&shard->lock);
}

static inline void
ds_pool_shard_unlock (DsPoolShard *shard)
{
  __atomic_store_n (&shard->lock.held, 0, __ATOMIC_RELEASE);
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

/* The hot half of a shard is inline, below: a block's round trip through
 * a pool is a few dozen instructions in each of these, and the calls were
 * a fifth of them (issue 9). None of them calls out of the shard; the
 * pool composes them with the out-of-line halves further down
 * (ds-pool-resource.c). */

/* The bin of class (@ac, @cls); NULL while its alignment class has none
 * (ds_pool_shard_make_bin ()). */
static inline DsPoolBin *
ds_pool_shard_bin (DsPoolShard *shard,
                   guint        ac,
                   guint        cls)
{
  DsPoolBin *bins = shard->bins[ac];

  return G_LIKELY (bins != NULL) ? &bins[cls] : NULL;
}

/* Unlinks @b from whichever list of @bin it is in. */
static inline void
ds_pool_bin_unlink (DsPoolBin   *bin,
                    DsPoolBlock *b)
{
  DsPoolBlock **head = b->fenced ? &bin->fenced_head : &bin->head;
  DsPoolBlock **tail = b->fenced ? &bin->fenced_tail : &bin->tail;

  if (b->prev != NULL)
    b->prev->next = b->next;
  else
    *head = b->next;
  if (b->next != NULL)
    b->next->prev = b->prev;
  else
    *tail = b->prev;
}

/* Links @b in at the head (newest) of @bin's ready list, or of its
 * fenced list with @fenced. */
static inline void
ds_pool_bin_push (DsPoolBin   *bin,
                  DsPoolBlock *b,
                  gboolean     fenced)
{
  DsPoolBlock **head = fenced ? &bin->fenced_head : &bin->head;
  DsPoolBlock **tail = fenced ? &bin->fenced_tail : &bin->tail;

  b->fenced = fenced;
  b->prev = NULL;
  b->next = *head;
  if (*head != NULL)
    (*head)->prev = b;
  else
    *tail = b;
  *head = b;
}

/* Takes @b out of @bin of @shard; returns it and hands its stream
 * reference to *@ss_out. Called with the lock held. */
static inline DsPoolBlock *
ds_pool_shard_take_block_locked (DsPoolShard    *shard,
                                 DsPoolBin      *bin,
                                 DsPoolBlock    *b,
                                 gsize           class_bytes,
                                 DsStreamState **ss_out)
{
  ds_pool_bin_unlink (bin, b);
  *ss_out = b->ss;
  b->ss = NULL;
  if (b->pending != 0)
    {
      __atomic_store_n (&shard->demand, shard->demand - (gint64) b->pending, __ATOMIC_RELAXED);
      shard->pending -= b->pending;
      b->pending = 0;
    }
  b->prev = b->next = NULL;
  __atomic_store_n (&shard->n_cached, shard->n_cached - 1, __ATOMIC_RELAXED);
  shard->bytes_cached -= class_bytes;

  return b;
}

/* Files @b (of class (@b->ac, @b->cls), @class_bytes) in @bin, its bin,
 * newest first, given back under the fence (@ss, @seq) (@ss NULL: none,
 * and the block is ready; else it goes to the fenced list, and the shard
 * takes a reference, its spare one if that is @ss's), in the pool's epoch
 * @stamp. @pending: the demand that stays counted for it in
 * this shard until it is taken out again. Called with the lock held. */
static inline void
ds_pool_shard_put_locked (DsPoolShard   *shard,
                          DsPoolBin     *bin,
                          DsPoolBlock   *b,
                          gsize          class_bytes,
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
  shard->pending += pending;
  ds_pool_bin_push (bin, b, ss != NULL);

  __atomic_store_n (&shard->n_cached, shard->n_cached + 1, __ATOMIC_RELAXED);
  shard->bytes_cached += class_bytes;
}

/* Adds @delta to @shard's demand; TRUE when that raised it past the
 * shard's mark, and the pool must look at its peak
 * (ds_pool_observe_demand ()). Called with the lock held. */
static inline gboolean
ds_pool_shard_add_demand_locked (DsPoolShard *shard,
                                 gint64       delta)
{
  gint64 demand = shard->demand + delta;

  __atomic_store_n (&shard->demand, demand, __ATOMIC_RELAXED);
  return delta > 0 && demand > shard->demand_mark;
}

/* The bin of class (@ac, @cls), making its alignment class's bins. */
DsPoolBin   *ds_pool_shard_make_bin     (DsPoolShard         *shard,
                                         guint                ac,
                                         guint                cls);

/* A block of @bin, whose ready list is empty and whose newest fenced
 * block is not of @order's stream, that a request in @order (NULL: host
 * order) may use now, or NULL; its fence's stream reference goes to
 * *@ss_out. Looks at the newest fenced blocks (at most 32) and moves
 * those known complete to the ready list first. Where the request wanted
 * a block given back under another stream's fence (or, for a host-order
 * request, any fence), that stream's demand is noted: one was taken
 * because its fence was known complete, or one was there but still
 * pending (see ds_stream_state_note_demand ()). Called with the lock
 * held. */
DsPoolBlock *ds_pool_shard_scan_locked  (DsPoolShard         *shard,
                                         DsPoolBin           *bin,
                                         gsize                class_bytes,
                                         const DsAccessOrder *order,
                                         DsStreamState      **ss_out);

/* The block of @bin a request in @order (NULL: host order) takes without
 * looking at fences, or NULL: the newest one its own stream gave back (a
 * stream order's steady state), else the newest ready one, noting the
 * demand for its stream's blocks if another stream gave it back (see
 * ds_pool_shard_scan_locked ()). With NULL and a fenced list, the caller
 * looks further with ds_pool_shard_scan_locked (). Called with the lock
 * held. */
static inline DsPoolBlock *
ds_pool_shard_at_hand_locked (DsPoolBin           *bin,
                              const DsAccessOrder *order)
{
  DsPoolBlock *b = bin->fenced_head;

  if (order != NULL && b != NULL && ds_stream_state_matches (b->ss, order))
    return b;
  b = bin->head;
  /* One moved here once its fence was known complete: the request wants
   * blocks of that stream, which must go on being checked. */
  if (b != NULL && b->ss != NULL && (order == NULL || !ds_stream_state_matches (b->ss, order)))
    ds_stream_state_note_demand (b->ss);

  return b;
}

/* The oldest block of class (@ac, @cls) whatever its fence (except one
 * that never completes), for a caller that will wait for the fence; NULL
 * if none. Called with the lock held. */
DsPoolBlock *ds_pool_shard_take_any_locked (DsPoolShard      *shard,
                                         guint                ac,
                                         guint                cls,
                                         gsize                class_bytes,
                                         DsStreamState      **ss_out,
                                         guint64             *seq_out);

typedef enum
{
  DS_POOL_EVICT_READY,      /* only blocks known to be reusable */
  DS_POOL_EVICT_POLL,       /* also blocks whose fence has completed by now */
  DS_POOL_EVICT_STALE,      /* also blocks whose fence has no event: the caller
                             * waits for their devices (their streams may be
                             * gone, so only a device-wide wait can tell) */
  DS_POOL_EVICT_ALL,        /* everything; the caller waits for the fences */
} DsPoolEvictMode;

/* A block taken out to be given back upstream. */
typedef struct
{
  DsPoolBlock   *block;
  gsize          class_bytes;
  DsStreamState *ss;
  guint64        seq;
} DsPoolVictim;

/* Takes blocks (largest classes, oldest first) that @mode allows out of
 * @shard into @victims until @need bytes are taken, only blocks cached in
 * epoch @max_stamp or before (G_MAXUINT: any); returns the bytes taken.
 * Called with the lock held. */
guint64      ds_pool_shard_evict_locked (DsPoolShard         *shard,
                                         guint64              need,
                                         DsPoolEvictMode      mode,
                                         guint                max_stamp,
                                         DsFenceCounters     *counters,
                                         GArray              *victims);

G_END_DECLS
