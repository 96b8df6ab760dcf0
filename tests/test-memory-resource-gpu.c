/* test-memory-resource-gpu.c: the raw CUDA resources and the defaults on a
 * CUDA device
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Every case needs a CUDA device and skips without one.
 */

#include "config.h"

#include <string.h>

#include "ds-test-resource.h"
#include "ds-test-utils.h"

#if HAVE_CUDA

static void
test_gpu_raw (void)
{
  DsMemoryKind kind;

  DS_TEST_REQUIRE_CUDA ();

  g_test_summary ("The raw CUDA resources hand out memory of their kind, "
                  "aligned as asked (also beyond what CUDA guarantees)");

  for (kind = DS_MEMORY_KIND_PINNED; kind <= DS_MEMORY_KIND_MANAGED; kind++)
    {
      g_autoptr(DsMemoryResource) res = ds_test_raw_resource_new (kind);
      static const gsize alignments[] = { 0, 16, 256, 4096, 65536 };
      guint i;

      for (i = 0; i < G_N_ELEMENTS (alignments); i++)
        {
          g_autoptr(GError) error = NULL;
          struct cudaPointerAttributes attr;
          gsize a = alignments[i];
          gpointer p = ds_memory_resource_allocate (res, 100000, a, &error);

          g_assert_no_error (error);
          g_assert_nonnull (p);
          ds_test_assert_aligned (p, a != 0 ? a : 16);

          DS_TEST_CUDA_CHECK (cudaPointerGetAttributes (&attr, p));
          g_assert_cmpint (attr.type, ==,
                           kind == DS_MEMORY_KIND_PINNED ? cudaMemoryTypeHost :
                           kind == DS_MEMORY_KIND_DEVICE ? cudaMemoryTypeDevice :
                           cudaMemoryTypeManaged);
          DS_TEST_CUDA_CHECK (cudaMemset (p, 0x42, 100000));
          DS_TEST_CUDA_CHECK (cudaDeviceSynchronize ());
          if (kind != DS_MEMORY_KIND_DEVICE)
            g_assert_cmpint (((guint8 *) p)[99999], ==, 0x42);
          ds_memory_resource_deallocate (res, p, 100000, a);
        }
      g_assert_finalize_object (g_steal_pointer (&res));
    }
}

static void
test_gpu_defaults (void)
{
  DsMemoryKind kind;

  DS_TEST_REQUIRE_CUDA ();

  g_test_summary ("On a GPU every kind has a default, of that kind; pinned "
                  "and device defaults are stream-ordered pools");

  for (kind = DS_MEMORY_KIND_HOST; kind <= DS_MEMORY_KIND_MANAGED; kind++)
    {
      g_autoptr(GError) error = NULL;
      DsMemoryResource *res = ds_memory_resource_get_default (kind, -1, &error);
      gpointer p;

      g_assert_no_error (error);
      g_assert_nonnull (res);
      g_assert_cmpint (ds_memory_resource_get_kind (res), ==, kind);
      g_assert_true (ds_memory_resource_get_default (kind, 0, NULL) == res);
      if (kind == DS_MEMORY_KIND_PINNED || kind == DS_MEMORY_KIND_DEVICE)
        g_assert_true (ds_memory_resource_is_stream_ordered (res));

      p = ds_memory_resource_allocate (res, 65536, 256, &error);
      g_assert_no_error (error);
      ds_test_assert_aligned (p, 256);
      if (kind != DS_MEMORY_KIND_DEVICE)
        memset (p, 7, 65536);
      ds_memory_resource_deallocate (res, p, 65536, 256);
    }

  {
    g_autoptr(GError) error = NULL;

    g_assert_null (ds_memory_resource_get_default (DS_MEMORY_KIND_DEVICE, 4096, &error));
    g_assert_error (error, DS_ERROR, DS_ERROR_INVALID_ARGUMENT);
  }
}

static void
test_gpu_sync_resource_waits (void)
{
  g_autoptr(DsTestResource) rec = ds_test_resource_new (DS_MEMORY_KIND_DEVICE, FALSE);
  g_autoptr(DsAccessOrder) order = NULL;
  g_autoptr(GError) error = NULL;
  cudaStream_t s;
  gint slept = 0;
  gpointer p;
  DsTestCall call;

  DS_TEST_REQUIRE_CUDA ();

  g_test_summary ("deallocate_async on a resource that is not stream-ordered "
                  "hands the block back only after the stream has passed "
                  "the release point");

  s = ds_test_stream_new ();
  order = ds_access_order_new_stream (s, -1);
  ds_test_resource_set_probe (rec, &slept);

  p = ds_memory_resource_allocate (DS_MEMORY_RESOURCE (rec), 64, 16, &error);
  g_assert_no_error (error);
  ds_test_stream_sleep (s, 200, &slept);
  g_assert_true (ds_memory_resource_deallocate_async (DS_MEMORY_RESOURCE (rec),
                                                      p, 64, 16, order, &error));
  g_assert_no_error (error);

  g_assert_true (ds_test_wait_until (ds_test_resource_count_deallocs (rec) == 1, 5000));
  call = ds_test_resource_get_call (rec, 1);
  g_assert_cmpint (call.op, ==, DS_TEST_OP_DEALLOCATE);
  g_assert_cmpint (call.probe, ==, 1);
  ds_test_resource_assert_clean (rec);

  ds_test_stream_free (s);
}

#endif /* HAVE_CUDA */

int
main (int    argc,
      char **argv)
{
  ds_test_init (&argc, &argv);

  ds_test_add_gpu_func ("/Ds/MemoryResource/gpu/raw", test_gpu_raw);
  ds_test_add_gpu_func ("/Ds/MemoryResource/gpu/defaults", test_gpu_defaults);
  ds_test_add_gpu_func ("/Ds/MemoryResource/gpu/sync-resource-waits", test_gpu_sync_resource_waits);

  return g_test_run ();
}
