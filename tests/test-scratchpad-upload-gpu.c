/* test-scratchpad-upload-gpu.c: DsScratchpad's uploads to a CUDA device
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * ds_scratchpad_to_device and ds_scratchpad_to_contiguous_device with real
 * streams and memory. Every case needs a CUDA device and skips without one.
 */

#include "config.h"

#include <string.h>

#include "ds-test-utils.h"

#if HAVE_CUDA

static void
test_gpu_to_device (void)
{
  cudaStream_t s;
  g_autoptr(DsAccessOrder) order = NULL;
  g_autoptr(GError) error = NULL;
  DsScratchpad *sp;
  guint8 *host, *out = NULL, *dev;
  gsize size = 3 << 20;
  gint slept = 0;

  DS_TEST_REQUIRE_CUDA ();

  g_test_summary ("ds_scratchpad_to_device uploads a copy on the device "
                  "order's stream; the host data may change right after");

  s = ds_test_stream_new ();
  order = ds_access_order_new_stream (s, -1);
  host = g_malloc (size);
  ds_test_fill_pattern (host, size, 5);
  DS_TEST_CUDA_CHECK (cudaMallocHost ((void **) &out, size));

  sp = ds_scratchpad_new (order);
  ds_test_stream_sleep (s, 100, &slept);
  dev = ds_scratchpad_to_device (sp, host, size, 256, &error);
  g_assert_no_error (error);
  ds_test_assert_aligned (dev, 256);
  /* The caller's buffer is free again at once. */
  memset (host, 0, size);

  DS_TEST_CUDA_CHECK (cudaMemcpyAsync (out, dev, size, cudaMemcpyDeviceToHost, s));
  DS_TEST_CUDA_CHECK (cudaStreamSynchronize (s));
  ds_test_check_pattern (out, size, 5);

  g_assert_finalize_object (sp);
  g_free (host);
  DS_TEST_CUDA_CHECK (cudaFreeHost (out));
  ds_test_stream_free (s);
}

static void
test_gpu_to_contiguous_device (void)
{
  cudaStream_t s;
  g_autoptr(DsAccessOrder) order = NULL;
  g_autoptr(GError) error = NULL;
  DsScratchpad *sp;
  const gsize sizes[] = { 100, 0, 4096, 1, 70000 };
  gconstpointer arrays[G_N_ELEMENTS (sizes)];
  gpointer ptrs[G_N_ELEMENTS (sizes)];
  guint8 *hosts[G_N_ELEMENTS (sizes)];
  guint8 *base, *out = NULL;
  gsize total_span, i;

  DS_TEST_REQUIRE_CUDA ();

  g_test_summary ("ds_scratchpad_to_contiguous_device packs host arrays into "
                  "one device block, each at an aligned offset, in order, "
                  "with the data intact");

  s = ds_test_stream_new ();
  order = ds_access_order_new_stream (s, -1);
  for (i = 0; i < G_N_ELEMENTS (sizes); i++)
    {
      hosts[i] = g_malloc (MAX (sizes[i], 1));
      ds_test_fill_pattern (hosts[i], sizes[i], 20 + i);
      arrays[i] = hosts[i];
    }

  sp = ds_scratchpad_new (order);
  base = ds_scratchpad_to_contiguous_device (sp, G_N_ELEMENTS (sizes), arrays, sizes,
                                             128, ptrs, &error);
  g_assert_no_error (error);
  g_assert_nonnull (base);
  ds_test_assert_aligned (base, 128);
  g_assert_true (ptrs[0] == (gpointer) base);
  g_assert_null (ptrs[1]);

  for (i = 0; i < G_N_ELEMENTS (sizes); i++)
    {
      if (sizes[i] == 0)
        continue;
      ds_test_assert_aligned (ptrs[i], 128);
      memset (hosts[i], 0, sizes[i]);
    }
  /* In order, contiguous (only alignment gaps), not overlapping. */
  g_assert_true ((guint8 *) ptrs[2] == base + 128);
  g_assert_true ((guint8 *) ptrs[3] == base + 128 + 4096);
  g_assert_true ((guint8 *) ptrs[4] == base + 128 + 4096 + 128);
  total_span = 128 + 4096 + 128 + 70000;

  DS_TEST_CUDA_CHECK (cudaMallocHost ((void **) &out, total_span));
  DS_TEST_CUDA_CHECK (cudaMemcpyAsync (out, base, total_span, cudaMemcpyDeviceToHost, s));
  DS_TEST_CUDA_CHECK (cudaStreamSynchronize (s));
  for (i = 0; i < G_N_ELEMENTS (sizes); i++)
    if (sizes[i] > 0)
      ds_test_check_pattern (out + ((guint8 *) ptrs[i] - base), sizes[i], 20 + i);

  g_assert_finalize_object (sp);
  for (i = 0; i < G_N_ELEMENTS (sizes); i++)
    g_free (hosts[i]);
  DS_TEST_CUDA_CHECK (cudaFreeHost (out));
  ds_test_stream_free (s);
}

static void
test_gpu_to_device_host_order (void)
{
  const gsize size = 32 << 20;
  g_autoptr(DsAccessOrder) host = ds_access_order_new_host ();
  g_autoptr(GError) error = NULL;
  DsScratchpad *sp;
  guint8 *data, *dev, *out = NULL;
  gint slept = 0;

  DS_TEST_REQUIRE_CUDA ();

  g_test_summary ("ds_scratchpad_to_device on a scratchpad in host order: "
                  "the upload is complete before the staging memory can be "
                  "reused (host order is synchronous)");

  data = g_malloc (size);
  ds_test_fill_pattern (data, size, 9);
  DS_TEST_CUDA_CHECK (cudaMallocHost ((void **) &out, size));

  sp = ds_scratchpad_new (host);
  /* Keep the legacy default stream busy, so an asynchronous upload would
   * still be queued when the staging block is reused below. */
  ds_test_stream_sleep (NULL, 500, &slept);
  dev = ds_scratchpad_to_device (sp, data, size, 0, &error);
  g_assert_no_error (error);
  /* Read the result back behind the upload, on the same (legacy) stream. */
  DS_TEST_CUDA_CHECK (cudaMemcpyAsync (out, dev, size, cudaMemcpyDeviceToHost, NULL));

  /* Give everything back and scribble over any pinned memory we get. */
  ds_scratchpad_release (sp);
  {
    guint8 *p = ds_scratchpad_alloc (sp, DS_MEMORY_KIND_PINNED, size, 0, &error);

    g_assert_no_error (error);
    memset (p, 0xee, size);
  }

  DS_TEST_CUDA_CHECK (cudaStreamSynchronize (NULL));
  ds_test_check_pattern (out, size, 9);

  g_assert_finalize_object (sp);
  g_free (data);
  DS_TEST_CUDA_CHECK (cudaFreeHost (out));
}

#endif /* HAVE_CUDA */

int
main (int    argc,
      char **argv)
{
  ds_test_init (&argc, &argv);

  ds_test_add_gpu_func ("/Ds/Scratchpad/gpu/to-device", test_gpu_to_device);
  ds_test_add_gpu_func ("/Ds/Scratchpad/gpu/to-contiguous-device", test_gpu_to_contiguous_device);
  ds_test_add_gpu_func ("/Ds/Scratchpad/gpu/to-device-host-order", test_gpu_to_device_host_order);

  return g_test_run ();
}
