/* test-multi-gpu.c: scratchpads, orders and default pools across devices
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Every case needs two CUDA devices and skips (saying so) with fewer; the
 * device-index checks also run with one device.
 */

#include "ds-test-utils.h"

#if HAVE_CUDA

#define REQUIRE_TWO_DEVICES() \
  G_STMT_START { \
    int n_ = 0; \
    DS_TEST_REQUIRE_CUDA (); \
    if (cudaGetDeviceCount (&n_) != cudaSuccess || n_ < 2) \
      { \
        g_test_skip ("needs two CUDA devices"); \
        return; \
      } \
  } G_STMT_END

static int
pointer_device (gconstpointer ptr)
{
  struct cudaPointerAttributes attrs;

  DS_TEST_CUDA_CHECK (cudaPointerGetAttributes (&attrs, ptr));
  return attrs.device;
}

static int
current_device (void)
{
  int d = -1;

  DS_TEST_CUDA_CHECK (cudaGetDevice (&d));
  return d;
}

/* A scratchpad on @target's stream while @current is current: device
 * memory lands on @target, the current device is left alone, and release
 * (on this thread and from finalize) works in @target's context. */
static void
check_scratchpad_on (int current,
                     int target)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(DsAccessOrder) order = NULL;
  DsScratchpad *sp;
  cudaStream_t stream;
  gpointer dev, managed;
  guint8 value = 0;

  DS_TEST_CUDA_CHECK (cudaSetDevice (target));
  stream = ds_test_stream_new ();
  DS_TEST_CUDA_CHECK (cudaSetDevice (current));

  order = ds_access_order_new_stream (stream, -1);
  g_assert_cmpint (ds_access_order_get_device (order), ==, target);

  sp = ds_scratchpad_new (order);
  dev = ds_scratchpad_alloc (sp, DS_MEMORY_KIND_DEVICE, 1 << 20, 0, &error);
  g_assert_no_error (error);
  g_assert_cmpint (pointer_device (dev), ==, target);
  managed = ds_scratchpad_alloc (sp, DS_MEMORY_KIND_MANAGED, 4096, 0, &error);
  g_assert_no_error (error);
  g_assert_nonnull (managed);
  g_assert_cmpint (current_device (), ==, current);

  /* Work on the target device's stream sees the memory. */
  DS_TEST_CUDA_CHECK (cudaSetDevice (target));
  DS_TEST_CUDA_CHECK (cudaMemsetAsync (dev, 0x3c, 1 << 20, stream));
  DS_TEST_CUDA_CHECK (cudaMemcpyAsync (&value, (guint8 *) dev + 12345, 1,
                                       cudaMemcpyDeviceToHost, stream));
  DS_TEST_CUDA_CHECK (cudaStreamSynchronize (stream));
  DS_TEST_CUDA_CHECK (cudaSetDevice (current));
  g_assert_cmpuint (value, ==, 0x3c);

  ds_scratchpad_release (sp);
  g_assert_cmpint (current_device (), ==, current);

  /* Again, and this time give it back from finalize. */
  dev = ds_scratchpad_alloc (sp, DS_MEMORY_KIND_DEVICE, 4096, 0, &error);
  g_assert_no_error (error);
  g_assert_cmpint (pointer_device (dev), ==, target);
  g_assert_finalize_object (sp);
  g_assert_cmpint (current_device (), ==, current);

  DS_TEST_CUDA_CHECK (cudaSetDevice (target));
  ds_test_stream_free (stream);
  DS_TEST_CUDA_CHECK (cudaSetDevice (current));
}

static void
test_scratchpad_other_device (void)
{
  REQUIRE_TWO_DEVICES ();

  check_scratchpad_on (0, 1);
  check_scratchpad_on (1, 0);
  DS_TEST_CUDA_CHECK (cudaSetDevice (0));
}

/* @waiter waits for @first, where either may be the legacy default stream
 * of a device that is not current: data written on @first after a delay
 * must be what @waiter copies out. */
static void
check_wait (int       current,
            int       first_device,
            gboolean  first_default,
            int       waiter_device,
            gboolean  waiter_default)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(DsAccessOrder) first = NULL;
  g_autoptr(DsAccessOrder) waiter = NULL;
  cudaStream_t first_stream = NULL, waiter_stream = NULL;
  guint32 *src, *dst, got = 0, pattern = 0xC0FFEE00u + (guint32) first_device;
  guint32 *pinned;
  gint slept = 0;

  DS_TEST_CUDA_CHECK (cudaSetDevice (first_device));
  if (!first_default)
    first_stream = ds_test_stream_new ();
  DS_TEST_CUDA_CHECK (cudaMalloc ((void **) &src, sizeof *src));
  DS_TEST_CUDA_CHECK (cudaMemset (src, 0, sizeof *src));
  DS_TEST_CUDA_CHECK (cudaMallocHost ((void **) &pinned, sizeof *pinned));
  *pinned = pattern;
  DS_TEST_CUDA_CHECK (cudaDeviceSynchronize ());

  DS_TEST_CUDA_CHECK (cudaSetDevice (waiter_device));
  if (!waiter_default)
    waiter_stream = ds_test_stream_new ();
  DS_TEST_CUDA_CHECK (cudaMalloc ((void **) &dst, sizeof *dst));
  DS_TEST_CUDA_CHECK (cudaDeviceSynchronize ());

  DS_TEST_CUDA_CHECK (cudaSetDevice (current));
  first = ds_access_order_new_stream (first_stream, first_device);
  waiter = ds_access_order_new_stream (waiter_stream, waiter_device);

  /* first: sleep 150 ms, then write the pattern. */
  DS_TEST_CUDA_CHECK (cudaSetDevice (first_device));
  ds_test_stream_sleep (first_stream, 150, &slept);
  DS_TEST_CUDA_CHECK (cudaMemcpyAsync (src, pinned, sizeof *src,
                                       cudaMemcpyHostToDevice, first_stream));
  DS_TEST_CUDA_CHECK (cudaSetDevice (current));

  g_assert_true (ds_access_order_wait (waiter, first, &error));
  g_assert_no_error (error);
  g_assert_cmpint (current_device (), ==, current);

  /* waiter: copy across devices, then back to the host. */
  DS_TEST_CUDA_CHECK (cudaSetDevice (waiter_device));
  DS_TEST_CUDA_CHECK (cudaMemcpyPeerAsync (dst, waiter_device, src, first_device,
                                           sizeof *dst, waiter_stream));
  DS_TEST_CUDA_CHECK (cudaMemcpyAsync (&got, dst, sizeof got,
                                       cudaMemcpyDeviceToHost, waiter_stream));
  DS_TEST_CUDA_CHECK (cudaStreamSynchronize (waiter_stream));
  g_assert_cmpint (g_atomic_int_get (&slept), ==, 1);
  g_assert_cmphex (got, ==, pattern);

  DS_TEST_CUDA_CHECK (cudaFree (dst));
  if (waiter_stream != NULL)
    ds_test_stream_free (waiter_stream);
  DS_TEST_CUDA_CHECK (cudaSetDevice (first_device));
  DS_TEST_CUDA_CHECK (cudaDeviceSynchronize ());
  DS_TEST_CUDA_CHECK (cudaFree (src));
  DS_TEST_CUDA_CHECK (cudaFreeHost (pinned));
  if (first_stream != NULL)
    ds_test_stream_free (first_stream);
  DS_TEST_CUDA_CHECK (cudaSetDevice (current));
}

static void
test_wait_across_devices (void)
{
  REQUIRE_TWO_DEVICES ();

  /* Streams on both devices, from either current device. */
  check_wait (0, 1, FALSE, 0, FALSE);
  check_wait (1, 0, FALSE, 1, FALSE);
  /* The default stream of the device that is not current, in both roles
   * (DALI needed a device switch for this). */
  check_wait (0, 1, TRUE, 0, FALSE);
  check_wait (0, 0, FALSE, 1, TRUE);
  check_wait (1, 0, TRUE, 1, TRUE);
  DS_TEST_CUDA_CHECK (cudaSetDevice (0));
}

static void
test_host_waits_for_other_device (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(DsAccessOrder) host = ds_access_order_new_host ();
  g_autoptr(DsAccessOrder) other = NULL;
  gint slept = 0;

  REQUIRE_TWO_DEVICES ();

  DS_TEST_CUDA_CHECK (cudaSetDevice (0));
  other = ds_access_order_new_stream (NULL, 1);
  DS_TEST_CUDA_CHECK (cudaSetDevice (1));
  ds_test_stream_sleep (NULL, 150, &slept);
  DS_TEST_CUDA_CHECK (cudaSetDevice (0));

  g_assert_true (ds_access_order_wait (host, other, &error));
  g_assert_no_error (error);
  g_assert_cmpint (g_atomic_int_get (&slept), ==, 1);
  g_assert_cmpint (current_device (), ==, 0);
}

static void
test_default_resources_per_device (void)
{
  g_autoptr(GError) error = NULL;
  DsMemoryResource *r0, *r1;
  gpointer p0, p1;

  REQUIRE_TWO_DEVICES ();

  DS_TEST_CUDA_CHECK (cudaSetDevice (0));
  r0 = ds_memory_resource_get_default (DS_MEMORY_KIND_DEVICE, 0, &error);
  g_assert_no_error (error);
  r1 = ds_memory_resource_get_default (DS_MEMORY_KIND_DEVICE, 1, &error);
  g_assert_no_error (error);
  g_assert_true (r0 != r1);
  g_assert_true (ds_memory_resource_get_default (DS_MEMORY_KIND_DEVICE, -1, &error) == r0);

  /* Memory freed to device 0's pool is never handed to a device 1 order. */
  for (guint i = 0; i < 8; i++)
    {
      g_autoptr(DsAccessOrder) o0 = ds_access_order_new_stream (NULL, 0);
      g_autoptr(DsAccessOrder) o1 = ds_access_order_new_stream (NULL, 1);
      DsScratchpad *a = ds_scratchpad_new (o0);
      DsScratchpad *b;

      p0 = ds_scratchpad_alloc (a, DS_MEMORY_KIND_DEVICE, 100000, 0, &error);
      g_assert_no_error (error);
      g_assert_cmpint (pointer_device (p0), ==, 0);
      g_object_unref (a);

      b = ds_scratchpad_new (o1);
      p1 = ds_scratchpad_alloc (b, DS_MEMORY_KIND_DEVICE, 100000, 0, &error);
      g_assert_no_error (error);
      g_assert_cmpint (pointer_device (p1), ==, 1);
      g_object_unref (b);
    }

  g_assert_cmpint (current_device (), ==, 0);
}

#endif /* HAVE_CUDA */

static void
test_device_out_of_range (void)
{
  g_autoptr(GError) error = NULL;
  DsMemoryResource *r;

#if HAVE_CUDA
  DS_TEST_REQUIRE_CUDA ();
  r = ds_memory_resource_get_default (DS_MEMORY_KIND_DEVICE, 4096, &error);
  g_assert_error (error, DS_ERROR, DS_ERROR_INVALID_ARGUMENT);
  g_assert_null (r);
  g_assert_nonnull (strstr (error->message, "4096"));
#else
  r = ds_memory_resource_get_default (DS_MEMORY_KIND_DEVICE, 4096, &error);
  g_assert_error (error, DS_ERROR, DS_ERROR_NOT_SUPPORTED);
  g_assert_null (r);
#endif
}

int
main (int    argc,
      char **argv)
{
  ds_test_init (&argc, &argv);

  g_test_add_func ("/Ds/MultiGpu/device-out-of-range", test_device_out_of_range);
#if HAVE_CUDA
  g_test_add_func ("/Ds/MultiGpu/scratchpad-on-other-device", test_scratchpad_other_device);
  g_test_add_func ("/Ds/MultiGpu/wait-across-devices", test_wait_across_devices);
  g_test_add_func ("/Ds/MultiGpu/host-waits-for-other-device", test_host_waits_for_other_device);
  g_test_add_func ("/Ds/MultiGpu/default-resources-per-device", test_default_resources_per_device);
#endif

  return g_test_run ();
}
