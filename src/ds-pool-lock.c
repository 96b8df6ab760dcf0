/* ds-pool-lock.c: the lock of a pool's shard
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "ds-pool-lock-private.h"

void
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
