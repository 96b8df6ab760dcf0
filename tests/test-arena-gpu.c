/* test-arena-gpu.c: the internal arena with a busy CUDA stream
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Every case needs a CUDA device and skips without one.
 */

#include "config.h"

#include "ds-test-fixtures.h"

#define KiB ((gsize) 1024)

typedef DsTestArenaFixture Fixture;

#if HAVE_CUDA

static void
test_gpu_sync_upstream_waits (Fixture       *f,
                              gconstpointer  user_data)
{
  DsMemoryResource *up = DS_MEMORY_RESOURCE (f->sync);
  g_autoptr(DsAccessOrder) order = NULL;
  g_autoptr(GError) error = NULL;
  cudaStream_t s;
  gint slept = 0;
  guint i, n;

  DS_TEST_REQUIRE_CUDA ();

  g_test_summary ("With a busy device stream and an upstream that is not "
                  "stream-ordered, no block goes back before the stream has "
                  "passed the release point");

  s = ds_test_stream_new ();
  order = ds_access_order_new_stream (s, -1);
  ds_test_resource_set_probe (f->sync, &slept);

  ds_test_arena_grow_or_bump (f, up, 100, 16);
  ds_test_arena_grow_or_bump (f, up, 100 * KiB, 16);

  ds_test_stream_sleep (s, 200, &slept);
  g_assert_true (ds_test_arena_release (f, up, order, &error));
  g_assert_no_error (error);

  g_assert_true (ds_test_wait_until (ds_test_resource_count_deallocs (f->sync) == 2, 5000));
  n = ds_test_resource_get_n_calls (f->sync);
  for (i = 0; i < n; i++)
    {
      DsTestCall call = ds_test_resource_get_call (f->sync, i);

      if (call.op == DS_TEST_OP_DEALLOCATE)
        g_assert_cmpint (call.probe, ==, 1);
    }
  ds_test_resource_assert_clean (f->sync);
  ds_test_stream_free (s);
}
#endif /* HAVE_CUDA */

int
main (int    argc,
      char **argv)
{
  ds_test_init (&argc, &argv);

  ds_test_add_gpu_arena ("/Ds/Arena/gpu/device-sync-upstream-waits", 0, test_gpu_sync_upstream_waits);

  return g_test_run ();
}
