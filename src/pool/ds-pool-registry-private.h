/* ds-pool-registry-private.h: the blocks a pool holds, found by address
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * How it works: every block a pool takes from upstream gets a record
 * (DsPoolBlock) for as long as the pool holds it: its address, what it
 * was taken with, its size class, and whether it is handed out (with the
 * size and alignment it was handed out with) or back in the pool. The
 * registry finds a record by address in an open-addressing table. Records
 * are added and removed only when blocks come from upstream or go back
 * there (rare; under the registry's own lock, bumping a sequence number
 * around each change); finding one takes no lock: a lookup that overlaps
 * a change sees the sequence number move and looks again (a seqlock).
 * Records and old tables are never freed while the registry lives
 * (records are reused), so a lookup never touches freed memory.
 *
 * A record's state is one word: bit 0 says "handed out", the rest counts
 * its hand-outs (and reuses). A record also names its home: the shard of
 * the thread it was last handed out to. Every change of a record's state
 * or home is made under its home shard's lock (a block taken from another
 * shard's bin gets its new home under the old home's lock), so:
 *  - handing out (ds_pool_block_hand_out) stores the size, the alignment,
 *    the home and the state with the count raised;
 *  - giving back finds the record without a lock
 *    (ds_pool_registry_find: refused, with a critical, if the pool does
 *    not hold the address, if the block is back already, or if the size
 *    or alignment is not the one it was handed out with), then takes the
 *    home shard's lock (the lock it files the block under anyway) and
 *    swaps the state to "back" only if it is still exactly the state it
 *    read (ds_pool_block_take_back_locked), else refuses it as given back
 *    twice.
 * So of two threads that give the same block back at once one wins and
 * the other is refused, a check that read an older hand-out cannot
 * succeed, and a block is given back once per hand-out, only with what it
 * was handed out with, whichever entry point (public or a release batch)
 * gives it back. What this adds to giving a block back is a lock-free
 * lookup and no atomic read-modify-write; the block goes to its home
 * shard, which is the caller's own unless another thread took it.
 */

#pragma once

#include "ds-pool-block-private.h"

G_BEGIN_DECLS

typedef struct _DsPoolRegistryTable DsPoolRegistryTable;

/* Linear probing, at most half full, no tombstones (removal shifts the
 * run back; lookups that overlap it retry). */
struct _DsPoolRegistryTable
{
  guint                mask;      /* capacity - 1 */
  guint                shift;     /* 64 - log2 (capacity) */
  DsPoolRegistryTable *retired;   /* older tables, kept for lookups still in them */
  DsPoolBlock         *slots[];
};

typedef struct _DsPoolRegistry DsPoolRegistry;

struct _DsPoolRegistry
{
  /* Read by every lookup; written only by changes. */
  guint                seq;       /* odd while a change is under way (atomic) */
  DsPoolRegistryTable *table;     /* atomic */

  /* Changes only, on another cache line. */
  GMutex               lock __attribute__ ((aligned (64)));
  guint                n;
  DsPoolBlock         *free_records;
  GPtrArray           *records;   /* every record ever made */
};

/* Where @ptr's probe starts in @t: Fibonacci hashing (the top bits of the
 * address times 2^64 / phi). */
static inline guint
ds_pool_registry_slot (const DsPoolRegistryTable *t,
                       gconstpointer              ptr)
{
  return (guint) (((guint64) (guintptr) ptr * G_GUINT64_CONSTANT (0x9e3779b97f4a7c15)) >> t->shift);
}

/* One lock-free lookup of @ptr: FALSE if a change overlapped it (look
 * again); else TRUE, with its record (NULL if none) in *@b and the
 * state, size and alignment read from it. */
static inline gboolean
ds_pool_registry_try_lookup (DsPoolRegistry  *self,
                             gconstpointer    ptr,
                             DsPoolBlock    **b,
                             guint64         *state,
                             gsize           *size,
                             gsize           *alignment)
{
  guint seq = (guint) g_atomic_int_get (&self->seq);
  DsPoolRegistryTable *t;
  DsPoolBlock *found = NULL;

  if (G_UNLIKELY (seq & 1))
    return FALSE;

  t = g_atomic_pointer_get (&self->table);
  if (G_LIKELY (t != NULL))
    {
      guint mask = t->mask, i = ds_pool_registry_slot (t, ptr);

      for (guint n = 0; n <= mask; n++, i = (i + 1) & mask)
        {
          DsPoolBlock *c = g_atomic_pointer_get (&t->slots[i]);

          if (c == NULL)
            break;
          if (G_LIKELY (g_atomic_pointer_get (&c->ptr) == ptr))
            {
              found = c;
              *state = __atomic_load_n (&c->state, __ATOMIC_ACQUIRE);
              *size = g_atomic_pointer_get (&c->size);
              *alignment = g_atomic_pointer_get (&c->alignment);
              break;
            }
        }
    }

  /* Every read above is at least an acquire load (GLib's atomic loads,
   * and the state's 64 bits, which g_atomic_* do not cover), so the check
   * of the sequence number below cannot be made before them: the
   * seqlock's read side without a fence (ThreadSanitizer does not support
   * fences; on x86 and arm64 such a load is a plain or acquire load). */
  *b = found;
  return (guint) g_atomic_int_get (&self->seq) == seq;
}

/* The fast path of ds_pool_registry_find (): the record of @ptr if it is
 * handed out with exactly @size and @alignment and no change got in the
 * way, with its state in *@state; else NULL, and the caller calls
 * ds_pool_registry_find (). */
static inline DsPoolBlock *
ds_pool_registry_find_fast (DsPoolRegistry *self,
                            gpointer        ptr,
                            gsize           size,
                            gsize           alignment,
                            guint64        *state)
{
  DsPoolBlock *b;
  gsize out_size = 0, out_align = 0;

  if (G_UNLIKELY (!ds_pool_registry_try_lookup (self, ptr, &b, state, &out_size, &out_align) ||
                  b == NULL || (*state & DS_POOL_BLOCK_OUT) == 0 ||
                  size != out_size || alignment != out_align))
    return NULL;

  return b;
}

/* A block given back to @owner (named in the critical): its record and,
 * in *@state, its state as read, if @ptr is handed out with exactly @size
 * and @alignment; else NULL, after a critical that names @ptr, the size
 * and alignment given and those it was handed out with. Takes no lock
 * (looks again while changes get in the way); the caller then takes the
 * block back under its home shard's lock with
 * ds_pool_block_take_back_locked (). */
DsPoolBlock    *ds_pool_registry_find   (DsPoolRegistry *self,
                                         gpointer        owner,
                                         gpointer        ptr,
                                         gsize           size,
                                         gsize           alignment,
                                         guint64        *state);

DsPoolRegistry *ds_pool_registry_new    (void);
/* Frees the registry and every record still in it (dropping the fence
 * references of those still cached); gives nothing back upstream. */
void            ds_pool_registry_free   (DsPoolRegistry *self);

/* Records @ptr, a block just taken from upstream for @request, handed out
 * to its thread; returns its record. */
DsPoolBlock    *ds_pool_registry_add    (DsPoolRegistry      *self,
                                         gpointer             ptr,
                                         const DsPoolRequest *request);

/* Forgets the record (for reuse) of a block that is back in the pool and
 * goes upstream now, or is held back for good. */
void            ds_pool_registry_remove (DsPoolRegistry *self,
                                         DsPoolBlock    *b);

/* The number of blocks recorded (held by the pool). */
guint64         ds_pool_registry_count  (DsPoolRegistry *self);

G_END_DECLS
