/* ds-pool-block-private.h: a pool's record of one block, and a request
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Every block a pool takes from upstream has a DsPoolBlock for as long as
 * the pool holds it (the registry owns it: ds-pool-registry-private.h):
 * its address, what it was taken with, its classes, and whether it is
 * handed out (with the size and alignment it was handed out with) or back
 * in the pool, cached in a bin (ds-pool-bin-private.h) under the fence it
 * was given back under. Its state is one word: bit 0 says "handed out",
 * the rest counts its hand-outs. It names its home: the shard of the
 * thread it was last handed out to; every change of its state or home is
 * made under its home shard's lock (ds-pool-shard-private.h).
 *
 * A DsPoolRequest is a request to a pool as its classes file it.
 */

#pragma once

#include "ds-fence-private.h"
#include "ds-size-class-private.h"

G_BEGIN_DECLS

/* Bit 0 of a record's state: handed out (else back in the pool: cached,
 * or on its way upstream). The other bits count hand-outs and reuses. */
#define DS_POOL_BLOCK_OUT 1

typedef struct _DsPoolBlock DsPoolBlock;

/* A block the pool holds; the registry owns it. Two cache lines: what
 * giving it back reads first, then what caching it writes. */
struct _DsPoolBlock
{
  /* Fixed while the pool holds it (@ptr is read by lock-free lookups). */
  gpointer       ptr;
  gsize          up_size;   /* what it was taken from upstream with */
  guint          ac;        /* its (alignment, size) class; DS_POOL_NO_CLASS: */
  guint          cls;       /* never cached */

  /* While handed out (atomic): what it was handed out with. */
  guint64        state;     /* see above */
  gsize          size;
  gsize          alignment;
  guint          home;      /* its home shard's index */

  /* While cached, in a shard's bin (under the shard's lock). */
  guint          stamp;     /* the pool's epoch when it was cached (idle release) */
  gboolean       fenced;    /* in its bin's fenced list (ds-pool-shard-private.h) */
  DsPoolBlock   *prev;
  DsPoolBlock   *next;
  DsStreamState *ss;        /* NULL: reusable by anyone (one reference) */
  guint64        seq;       /* with @ss: the fence it was given back under */
  gsize          pending;   /* demand still counted for it (ds-pool-shard-private.h) */

  gsize          up_align;
  DsPoolBlock   *next_free; /* the registry's list of unused records */
} __attribute__ ((aligned (64)));

/* Marks @b handed out for @size bytes aligned to @alignment to the thread
 * of shard @home; called with the lock of @b's home shard held (for a
 * block just taken out of the cache: that of the shard it was in). */
static inline void
ds_pool_block_hand_out (DsPoolBlock *b,
                        gsize        size,
                        gsize        alignment,
                        guint        home)
{
  guint64 state = __atomic_load_n (&b->state, __ATOMIC_RELAXED);

  __atomic_store_n (&b->size, size, __ATOMIC_RELAXED);
  __atomic_store_n (&b->alignment, alignment, __ATOMIC_RELAXED);
  __atomic_store_n (&b->state, (state | DS_POOL_BLOCK_OUT) + 2, __ATOMIC_RELEASE);
  __atomic_store_n (&b->home, home, __ATOMIC_RELEASE);
}

/* Marks @b back in the pool if its state is still @state (as read by
 * ds_pool_registry_find ()); else FALSE: it was given back twice (the
 * caller refuses it with ds_pool_block_refuse_twice ()). Called with the
 * lock of @b's home shard held. */
static inline gboolean
ds_pool_block_take_back_locked (DsPoolBlock *b,
                                guint64      state)
{
  if (G_UNLIKELY (__atomic_load_n (&b->state, __ATOMIC_RELAXED) != state))
    return FALSE;

  __atomic_store_n (&b->state, state & ~(guint64) DS_POOL_BLOCK_OUT, __ATOMIC_RELAXED);
  return TRUE;
}

/* The critical for a block found given back twice by
 * ds_pool_block_take_back_locked (). */
void ds_pool_block_refuse_twice (gpointer owner,
                                 gpointer ptr,
                                 gsize    size,
                                 gsize    alignment);

typedef struct
{
  gsize                size;        /* as asked */
  gsize                alignment;   /* as asked (0 counts as 16) */
  guint                ac;          /* its classes; DS_POOL_NO_CLASS: */
  guint                cls;         /*   never cached */
  gsize                up_size;     /* what a new block for it takes from upstream */
  gsize                up_align;
  gsize                demand;      /* what it adds to the pool's demand */
  guint                home;        /* the shard of the asking thread */
  const DsAccessOrder *order;       /* NULL: host order */
} DsPoolRequest;

G_END_DECLS
