/* ds-clock.c: the one clock of ds's timed decisions
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "ds-clock-private.h"

static gint64 (*clock_func) (void) = g_get_monotonic_time;

gint64
ds_clock_now (void)
{
  gint64 (*func) (void) = g_atomic_pointer_get (&clock_func);

  return func ();
}

void
ds_clock_set_for_testing (gint64 (*func) (void))
{
  g_atomic_pointer_set (&clock_func, func != NULL ? func : g_get_monotonic_time);
}
