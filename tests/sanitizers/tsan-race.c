/* tsan-race.c: a deliberate data race, for ThreadSanitizer to catch
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Two threads allocate from one scratchpad without a lock, which the
 * contract forbids (a scratchpad belongs to one thread at a time). Both
 * bump the same window (the inline fast path, ds-bump.h), with no
 * synchronisation between them that TSan could see. The test tsan-race
 * (suite tsan, TSan builds only) runs this through expect-report.py and
 * passes only when TSan reports "data race" with a scratchpad allocation
 * on the stack: proof that the TSan run would catch such a bug in ds.
 * Without TSan it just runs (and exits 0; the allocations fit).
 */

#include "config.h"

#include <ds.h>

static DsScratchpad *shared_sp;

static gpointer
racer (gpointer data)
{
  guint i;

  for (i = 0; i < 1000; i++)
    {
      g_autoptr(GError) error = NULL;
      gpointer p = ds_scratchpad_alloc (shared_sp, DS_MEMORY_KIND_HOST, 8, 8, &error);

      g_assert_no_error (error);
      g_assert_nonnull (p);
    }
  return NULL;
}

int
main (void)
{
  g_autoptr(DsAccessOrder) host = ds_access_order_new_host ();
  GThread *a, *b;

  shared_sp = g_object_new (DS_TYPE_SCRATCHPAD, "device-order", host,
                            "initial-size-host", (guint64) 1 << 20, NULL);
  /* The first block, made here, before the threads exist. */
  ds_scratchpad_alloc (shared_sp, DS_MEMORY_KIND_HOST, 8, 8, NULL);

  a = g_thread_new ("racer-a", racer, NULL);
  b = g_thread_new ("racer-b", racer, NULL);
  g_thread_join (a);
  g_thread_join (b);

  g_object_unref (shared_sp);
  return 0;
}
