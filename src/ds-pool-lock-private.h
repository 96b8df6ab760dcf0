/* ds-pool-lock-private.h: the lock of a pool's shard
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Test-and-set, taken with one atomic exchange and given back with a
 * release store, both inlined; a waiter spins a little, then yields. A
 * shard is nearly always locked by its own thread, for a few dozen
 * instructions, twice per block taken and given back.
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct
{
  gint held;   /* atomic */
} DsPoolLock;

/* The slow path of ds_pool_lock (): out of line, so that the lock itself
 * stays an exchange and a branch. */
void ds_pool_lock_wait (DsPoolLock *lock);

static inline void
ds_pool_lock (DsPoolLock *lock)
{
  if (G_UNLIKELY (__atomic_exchange_n (&lock->held, 1, __ATOMIC_ACQUIRE)))
    ds_pool_lock_wait (lock);
}

static inline void
ds_pool_unlock (DsPoolLock *lock)
{
  __atomic_store_n (&lock->held, 0, __ATOMIC_RELEASE);
}

G_END_DECLS
