/* ds-clock-private.h: the one clock of ds's timed decisions
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * How long a stream's blocks stay in demand (fences) and when a pool's
 * cached blocks count as idle (pools) are read from this clock:
 * g_get_monotonic_time () in microseconds, or a test's own clock.
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

gint64 ds_clock_now                (void);

/* For tests: makes ds_clock_now () call @func instead (NULL: the real
 * clock again). */
void   ds_clock_set_for_testing    (gint64 (*func) (void));

/* Raises *@value to @candidate if that is larger: atomic, and a release
 * of what the caller wrote before, for readers that acquire *@value. */
static inline void
ds_atomic_raise (guint64 *value,
                 guint64  candidate)
{
  guint64 seen = __atomic_load_n (value, __ATOMIC_RELAXED);

  while (candidate > seen &&
         !__atomic_compare_exchange_n (value, &seen, candidate, TRUE,
                                       __ATOMIC_RELEASE, __ATOMIC_RELAXED))
    ;
}

G_END_DECLS
