/* test-block-gpu.c: DsBlock over device and pinned memory
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Every case needs a CUDA device and skips without one.
 */

#include "config.h"

#include "ds-test-utils.h"

#if HAVE_CUDA

static void
test_gpu_device_block (void)
{
  cudaStream_t s;
  g_autoptr(DsAccessOrder) order = NULL;
  g_autoptr(GError) error = NULL;
  DsScratchpad *sp;
  DsBlock *block;
  g_autoptr(GBytes) in = NULL;
  g_autoptr(GBytes) out = NULL;
  guint8 pattern[4096];
  const guint8 *bytes;
  gsize i, len;

  DS_TEST_REQUIRE_CUDA ();

  g_test_summary ("A device block: fill, write and read go through the "
                  "scratchpad's stream and read returns what was written");

  s = ds_test_stream_new ();
  order = ds_access_order_new_stream (s, -1);
  sp = ds_scratchpad_new (order);
  block = ds_scratchpad_alloc_block (sp, DS_MEMORY_KIND_DEVICE, 8192, 0, &error);
  g_assert_no_error (error);
  g_object_unref (sp);

  for (i = 0; i < sizeof pattern; i++)
    pattern[i] = (guint8) (i * 7);
  in = g_bytes_new (pattern, sizeof pattern);

  g_assert_true (ds_block_fill (block, 0x42, &error));
  g_assert_no_error (error);
  g_assert_true (ds_block_write (block, 4096, in, &error));
  g_assert_no_error (error);
  out = ds_block_read (block, 0, 8192, &error);
  g_assert_no_error (error);
  bytes = g_bytes_get_data (out, &len);
  g_assert_cmpuint (len, ==, 8192);
  for (i = 0; i < 4096; i++)
    g_assert_cmpint (bytes[i], ==, 0x42);
  g_assert_cmpmem (bytes + 4096, 4096, pattern, 4096);

  ds_block_unref (block);
  ds_test_stream_free (s);
}

static void
test_gpu_pinned_read_waits (void)
{
  cudaStream_t s;
  g_autoptr(DsAccessOrder) order = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) out = NULL;
  DsScratchpad *sp;
  DsBlock *block;
  const guint8 *bytes;
  gint slept = 0;
  gsize i, len;

  DS_TEST_REQUIRE_CUDA ();

  g_test_summary ("Reading a pinned block first waits for the work queued "
                  "on the scratchpad's stream that writes it");

  s = ds_test_stream_new ();
  order = ds_access_order_new_stream (s, -1);
  sp = ds_scratchpad_new (order);
  block = ds_scratchpad_alloc_block (sp, DS_MEMORY_KIND_PINNED, 4096, 0, &error);
  g_assert_no_error (error);
  g_assert_true (ds_block_fill (block, 0, &error));

  ds_test_stream_sleep (s, 200, &slept);
  DS_TEST_CUDA_CHECK (cudaMemsetAsync (ds_block_get_pointer (block), 0x77, 4096, s));

  out = ds_block_read (block, 0, 4096, &error);
  g_assert_no_error (error);
  bytes = g_bytes_get_data (out, &len);
  for (i = 0; i < len; i++)
    g_assert_cmpint (bytes[i], ==, 0x77);

  ds_block_unref (block);
  g_assert_finalize_object (sp);
  ds_test_stream_free (s);
}

static void
test_gpu_to_device_block (void)
{
  g_autoptr(DsAccessOrder) order = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) out = NULL;
  g_autoptr(GPtrArray) blocks = NULL;
  g_autoptr(GBytes) a = g_bytes_new_static ("abc", 3);
  g_autoptr(GBytes) b = g_bytes_new_static ("defgh", 5);
  GBytes *arrays[2];
  DsScratchpad *sp;
  DsBlock *block, *whole;
  static const guint8 data[] = "0123456789";

  DS_TEST_REQUIRE_CUDA ();

  g_test_summary ("to_device_block and to_contiguous_device_block upload "
                  "into device blocks that read back what was uploaded");

  order = ds_access_order_new_stream (NULL, -1);
  sp = ds_scratchpad_new (order);
  block = ds_scratchpad_to_device_block (sp, data, 10, 0, &error);
  g_assert_no_error (error);
  g_assert_cmpint (ds_block_get_kind (block), ==, DS_MEMORY_KIND_DEVICE);
  out = ds_block_read (block, 0, 10, &error);
  g_assert_no_error (error);
  g_assert_cmpmem (g_bytes_get_data (out, NULL), 10, data, 10);
  g_clear_pointer (&out, g_bytes_unref);

  arrays[0] = a;
  arrays[1] = b;
  whole = ds_scratchpad_to_contiguous_device_block (sp, arrays, 2, 256, &blocks, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (ds_block_get_size (whole), ==, 256 + 5);
  out = ds_block_read (g_ptr_array_index (blocks, 1), 0, 5, &error);
  g_assert_no_error (error);
  g_assert_cmpmem (g_bytes_get_data (out, NULL), 5, "defgh", 5);

  ds_block_unref (block);
  ds_block_unref (whole);
  g_clear_pointer (&blocks, g_ptr_array_unref);
  g_assert_finalize_object (sp);
}

#endif /* HAVE_CUDA */

int
main (int    argc,
      char **argv)
{
  ds_test_init (&argc, &argv);

  ds_test_add_gpu_func ("/Ds/Block/gpu/to-device-block", test_gpu_to_device_block);
  ds_test_add_gpu_func ("/Ds/Block/gpu/device", test_gpu_device_block);
  ds_test_add_gpu_func ("/Ds/Block/gpu/pinned-read-waits", test_gpu_pinned_read_waits);

  return g_test_run ();
}
