/* asan-leak.c: a deliberate leak, for LeakSanitizer to catch
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A scratchpad with a host allocation that is never unreferenced. The test
 * asan-leak (suite asan, ASan builds only) runs this through
 * expect-report.py under the asan setup's environment and passes only
 * when LeakSanitizer reports the leak with ds_scratchpad_new on the stack:
 * proof that the ASan run fails on a leaked ds object (G_SLICE=always-malloc
 * matters: GLib 2.74's slice allocator would keep the object reachable).
 */

#include "config.h"

#include <ds.h>

const char *__asan_default_options (void);

/* Full stacks for this program (ASAN_OPTIONS from the setup still apply):
 * GLib has no frame pointers, so the fast unwinder stops at g_malloc and
 * the report would not name the ds function that leaked. */
const char *
__asan_default_options (void)
{
  return "fast_unwind_on_malloc=0";
}

int
main (void)
{
  DsScratchpad *sp = ds_scratchpad_new (NULL);
  g_autoptr(GError) error = NULL;

  ds_scratchpad_alloc (sp, DS_MEMORY_KIND_HOST, 100, 16, &error);
  g_assert_no_error (error);
  sp = NULL;   /* the only reference, dropped: leaked */
  return 0;
}
