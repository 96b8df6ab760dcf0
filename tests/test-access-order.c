/* test-access-order.c: DsAccessOrder
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>

#include "ds-test-utils.h"

/* Made-up handles without CUDA, real streams with it. */
#define STREAM_A (ds_test_stream_handle (0))
#define STREAM_B (ds_test_stream_handle (1))

static void
test_host_order (void)
{
  g_autoptr(DsAccessOrder) host = ds_access_order_new_host ();
  g_autoptr(DsAccessOrder) copy = NULL;
  DsAccessOrder stack;
  DsAccessOrder *boxed;

  g_test_summary ("A host order is host, not device, has no stream, compares "
                  "equal to other host orders and copies as a boxed value");

  g_assert_true (ds_access_order_is_host (host));
  g_assert_false (ds_access_order_is_device (host));
  g_assert_null (ds_access_order_get_stream (host));
  g_assert_cmpuint (ds_access_order_get_stream_handle (host), ==, 0);
  g_assert_cmpint (ds_access_order_get_device (host), ==, -1);

  copy = ds_access_order_copy (host);
  g_assert_true (copy != host);
  g_assert_true (ds_access_order_is_host (copy));
  g_assert_true (ds_access_order_equal (host, copy));

  ds_access_order_init_host (&stack);
  g_assert_true (ds_access_order_is_host (&stack));
  g_assert_true (ds_access_order_equal (&stack, host));

  boxed = g_boxed_copy (DS_TYPE_ACCESS_ORDER, host);
  g_assert_true (ds_access_order_equal (boxed, host));
  g_boxed_free (DS_TYPE_ACCESS_ORDER, boxed);

  /* free accepts NULL. */
  ds_access_order_free (NULL);
}

static void
test_unset_order (void)
{
  DsAccessOrder unset;
  g_autoptr(DsAccessOrder) host = ds_access_order_new_host ();
  g_autoptr(GError) error = NULL;

  g_test_summary ("A zero-filled order is neither host nor device and "
                  "cannot wait for a device order");

  memset (&unset, 0, sizeof unset);
  g_assert_false (ds_access_order_is_host (&unset));
  g_assert_false (ds_access_order_is_device (&unset));
  g_assert_false (ds_access_order_equal (&unset, host));

  /* Waiting for host order is a no-op even for an unset order. */
  g_assert_true (ds_access_order_wait (&unset, host, &error));
  g_assert_no_error (error);
}

static void
test_host_order_no_cuda (void)
{
  g_autoptr(DsAccessOrder) host = NULL;
  g_autoptr(DsAccessOrder) host2 = NULL;
  g_autoptr(DsAccessOrder) copy = NULL;
  g_autoptr(DsAccessOrder) device = NULL;
  g_autoptr(GError) error = NULL;
  DsAccessOrder stack;

  g_test_summary ("Host-order operations (new, init, copy, equal, is_*, "
                  "wait, synchronize, free) never call into CUDA, and work "
                  "on a machine without a driver (DALI issue 6361)");

  /* Built before the spy is reset: creating a device order may ask CUDA. */
  device = ds_access_order_new_stream (STREAM_A, 0);

#if HAVE_CUDA
  g_assert_true (ds_test_cuda_spy_works ());
#endif
  ds_test_cuda_spy_reset ();

  host = ds_access_order_new_host ();
  host2 = ds_access_order_new_host ();
  ds_access_order_init_host (&stack);
  copy = ds_access_order_copy (host);
  g_assert_true (ds_access_order_is_host (host));
  g_assert_false (ds_access_order_is_device (host));
  g_assert_true (ds_access_order_equal (host, copy));
  g_assert_true (ds_access_order_equal (&stack, host2));
  g_assert_false (ds_access_order_equal (host, device));
  g_assert_cmpint (ds_access_order_get_device (host), ==, -1);
  g_assert_null (ds_access_order_get_stream (host));

  g_assert_true (ds_access_order_wait (host, host2, &error));
  g_assert_no_error (error);
  g_assert_true (ds_access_order_wait (host, &stack, &error));
  g_assert_no_error (error);
  g_assert_true (ds_access_order_wait (host, host, &error));
  g_assert_no_error (error);
  /* Any order waiting for host order: nothing to do. */
  g_assert_true (ds_access_order_wait (device, host, &error));
  g_assert_no_error (error);
  g_assert_true (ds_access_order_synchronize (host, &error));
  g_assert_no_error (error);
  g_assert_true (ds_access_order_synchronize (&stack, NULL));
  g_assert_true (ds_access_order_wait (host, host2, NULL));

  g_clear_pointer (&copy, ds_access_order_free);

  ds_test_assert_no_cuda_calls ();
}

static void
test_stream_order_values (void)
{
  g_autoptr(DsAccessOrder) a = ds_access_order_new_stream (STREAM_A, 3);
  g_autoptr(DsAccessOrder) b = ds_access_order_new_for_handle ((guint64) (guintptr) STREAM_A, 3);
  g_autoptr(DsAccessOrder) other_device = ds_access_order_new_stream (STREAM_A, 2);
  g_autoptr(DsAccessOrder) other_stream = ds_access_order_new_stream (STREAM_B, 3);
  g_autoptr(DsAccessOrder) host = ds_access_order_new_host ();
  g_autoptr(DsAccessOrder) copy = NULL;
  DsAccessOrder stack;

  g_test_summary ("A stream order keeps its stream and device (given "
                  "explicitly, no CUDA needed), compares by stream and "
                  "device, and copies");

  g_assert_true (ds_access_order_is_device (a));
  g_assert_false (ds_access_order_is_host (a));
  g_assert_true (ds_access_order_get_stream (a) == STREAM_A);
  g_assert_cmpuint (ds_access_order_get_stream_handle (a), ==, (guint64) (guintptr) STREAM_A);
  g_assert_cmpint (ds_access_order_get_device (a), ==, 3);

  g_assert_true (ds_access_order_get_stream (b) == STREAM_A);
  g_assert_cmpint (ds_access_order_get_device (b), ==, 3);
  g_assert_true (ds_access_order_equal (a, b));
  g_assert_true (ds_access_order_equal (b, a));

  g_assert_false (ds_access_order_equal (a, other_device));
  g_assert_false (ds_access_order_equal (a, other_stream));
  g_assert_false (ds_access_order_equal (a, host));
  g_assert_false (ds_access_order_equal (host, a));

  copy = ds_access_order_copy (a);
  g_assert_true (ds_access_order_equal (a, copy));
  g_assert_true (ds_access_order_is_device (copy));

  ds_access_order_init_stream (&stack, STREAM_A, 3);
  g_assert_true (ds_access_order_equal (&stack, a));
}

static void
test_default_stream_no_device (void)
{
  g_autoptr(DsAccessOrder) order = NULL;

  DS_TEST_REQUIRE_NO_CUDA ();

  g_test_summary ("Without a CUDA device, a default-stream order can still "
                  "be made (device -1): constructing orders never fails");

  order = ds_access_order_new_stream (NULL, -1);
  g_assert_nonnull (order);
  g_assert_true (ds_access_order_is_device (order));
  g_assert_null (ds_access_order_get_stream (order));
  g_assert_cmpint (ds_access_order_get_device (order), ==, -1);
}

static void
test_wait_no_device (void)
{
  g_autoptr(DsAccessOrder) host = ds_access_order_new_host ();
  g_autoptr(DsAccessOrder) a = NULL;
  g_autoptr(DsAccessOrder) b = NULL;
  g_autoptr(GError) error = NULL;

  DS_TEST_REQUIRE_NO_CUDA ();

  g_test_summary ("Without a CUDA device, waiting for a device order fails "
                  "with DS_ERROR_NO_DEVICE and a message (no crash)");

  a = ds_access_order_new_stream (STREAM_A, 0);
  b = ds_access_order_new_stream (STREAM_B, 0);

  g_assert_false (ds_access_order_wait (host, a, &error));
  g_assert_error (error, DS_ERROR, DS_TEST_NO_DEVICE_ERROR);
  g_assert_cmpstr (error->message, !=, "");
  g_clear_error (&error);

  g_assert_false (ds_access_order_wait (b, a, &error));
  g_assert_error (error, DS_ERROR, DS_TEST_NO_DEVICE_ERROR);
  g_clear_error (&error);

  g_assert_false (ds_access_order_synchronize (a, &error));
  g_assert_error (error, DS_ERROR, DS_TEST_NO_DEVICE_ERROR);
  g_clear_error (&error);

  /* Equal orders: nothing to wait for, no device needed. */
  g_assert_true (ds_access_order_wait (a, a, &error));
  g_assert_no_error (error);
}

static void
test_wait_unset (void)
{
  DsAccessOrder unset;
  g_autoptr(DsAccessOrder) a = ds_access_order_new_stream (STREAM_A, 0);
  g_autoptr(GError) error = NULL;

  g_test_summary ("An unset order waiting for a device order is "
                  "DS_ERROR_INVALID_ARGUMENT");

  memset (&unset, 0, sizeof unset);
  g_assert_false (ds_access_order_wait (&unset, a, &error));
  g_assert_error (error, DS_ERROR, DS_ERROR_INVALID_ARGUMENT);
}

static void
test_preconditions (void)
{
  g_autoptr(DsAccessOrder) host = ds_access_order_new_host ();

  g_test_summary ("NULL orders and bad device numbers are programmer errors: "
                  "a critical and a harmless return value");

  if (!g_test_undefined ())
    return;

  g_test_expect_message ("Ds", G_LOG_LEVEL_CRITICAL, "*assertion*failed*");
  g_assert_null (ds_access_order_copy (NULL));
  g_test_assert_expected_messages ();

  g_test_expect_message ("Ds", G_LOG_LEVEL_CRITICAL, "*assertion*failed*");
  g_assert_false (ds_access_order_is_host (NULL));
  g_test_assert_expected_messages ();

  g_test_expect_message ("Ds", G_LOG_LEVEL_CRITICAL, "*assertion*failed*");
  g_assert_false (ds_access_order_is_device (NULL));
  g_test_assert_expected_messages ();

  g_test_expect_message ("Ds", G_LOG_LEVEL_CRITICAL, "*assertion*failed*");
  g_assert_false (ds_access_order_equal (NULL, host));
  g_test_assert_expected_messages ();

  g_test_expect_message ("Ds", G_LOG_LEVEL_CRITICAL, "*assertion*failed*");
  g_assert_false (ds_access_order_equal (host, NULL));
  g_test_assert_expected_messages ();

  g_test_expect_message ("Ds", G_LOG_LEVEL_CRITICAL, "*assertion*failed*");
  g_assert_false (ds_access_order_wait (NULL, host, NULL));
  g_test_assert_expected_messages ();

  g_test_expect_message ("Ds", G_LOG_LEVEL_CRITICAL, "*assertion*failed*");
  g_assert_false (ds_access_order_wait (host, NULL, NULL));
  g_test_assert_expected_messages ();

  g_test_expect_message ("Ds", G_LOG_LEVEL_CRITICAL, "*assertion*failed*");
  g_assert_false (ds_access_order_synchronize (NULL, NULL));
  g_test_assert_expected_messages ();

  g_test_expect_message ("Ds", G_LOG_LEVEL_CRITICAL, "*assertion*failed*");
  g_assert_cmpint (ds_access_order_get_device (NULL), ==, -1);
  g_test_assert_expected_messages ();

  g_test_expect_message ("Ds", G_LOG_LEVEL_CRITICAL, "*assertion*failed*");
  g_assert_null (ds_access_order_get_stream (NULL));
  g_test_assert_expected_messages ();

  g_test_expect_message ("Ds", G_LOG_LEVEL_CRITICAL, "*assertion*failed*");
  g_assert_null (ds_access_order_new_stream (NULL, -2));
  g_test_assert_expected_messages ();

  g_test_expect_message ("Ds", G_LOG_LEVEL_CRITICAL, "*assertion*failed*");
  ds_access_order_init_host (NULL);
  g_test_assert_expected_messages ();
}

/* GPU cases ----------------------------------------------------------------- */

#if HAVE_CUDA

static void
test_gpu_stream_order (void)
{
  cudaStream_t s;
  int current = -1;
  g_autoptr(DsAccessOrder) a = NULL;
  g_autoptr(DsAccessOrder) b = NULL;
  g_autoptr(DsAccessOrder) def = NULL;
  g_autoptr(GError) error = NULL;

  DS_TEST_REQUIRE_CUDA ();

  g_test_summary ("On a GPU, device -1 resolves to the stream's (or the "
                  "current) device, and synchronize drains the stream");

  DS_TEST_CUDA_CHECK (cudaGetDevice (&current));
  s = ds_test_stream_new ();

  a = ds_access_order_new_stream (s, -1);
  g_assert_cmpint (ds_access_order_get_device (a), ==, current);
  g_assert_true (ds_access_order_get_stream (a) == (gpointer) s);
  b = ds_access_order_new_for_handle ((guint64) (guintptr) s, current);
  g_assert_true (ds_access_order_equal (a, b));

  def = ds_access_order_new_stream (NULL, -1);
  g_assert_cmpint (ds_access_order_get_device (def), ==, current);
  g_assert_null (ds_access_order_get_stream (def));
  g_assert_false (ds_access_order_equal (a, def));

  {
    gint done = 0;

    ds_test_stream_sleep (s, 100, &done);
    g_assert_true (ds_access_order_synchronize (a, &error));
    g_assert_no_error (error);
    g_assert_cmpint (g_atomic_int_get (&done), ==, 1);
  }

  ds_test_stream_free (s);
}

static void
test_gpu_stream_reuse (void)
{
  cudaStream_t s1, s2 = NULL;
  g_autoptr(DsAccessOrder) a = NULL;
  g_autoptr(DsAccessOrder) b = NULL;
  guint i;

  DS_TEST_REQUIRE_CUDA ();

  g_test_summary ("A destroyed stream whose handle is reused by a new "
                  "stream is not the same order (DALI PR 5348)");

  s1 = ds_test_stream_new ();
  a = ds_access_order_new_stream (s1, -1);
  DS_TEST_CUDA_CHECK (cudaStreamDestroy (s1));

  /* The runtime usually hands the same handle out again soon. */
  for (i = 0; i < 16; i++)
    {
      s2 = ds_test_stream_new ();
      if (s2 == s1)
        break;
      ds_test_stream_free (s2);
      s2 = NULL;
    }

  if (s2 == NULL)
    {
      g_test_skip ("the CUDA runtime did not reuse the stream handle");
      return;
    }

  b = ds_access_order_new_stream (s2, -1);
  g_assert_false (ds_access_order_equal (a, b));
  ds_test_stream_free (s2);
}

static void
check_bytes (const guint8 *data,
             gsize         size,
             guint8        expected)
{
  gsize i;

  for (i = 0; i < size; i++)
    if (data[i] != expected)
      g_error ("byte %" G_GSIZE_FORMAT " is 0x%02x, expected 0x%02x",
               i, data[i], expected);
}

static void
wait_device_device (gboolean default_stream_waits)
{
  const gsize size = 4 << 20;
  cudaStream_t a, b;
  guint8 *buf = NULL, *out = NULL;
  gint slept = 0;
  g_autoptr(DsAccessOrder) oa = NULL;
  g_autoptr(DsAccessOrder) ob = NULL;
  g_autoptr(GError) error = NULL;

  a = ds_test_stream_new ();
  b = default_stream_waits ? NULL : ds_test_stream_new ();

  DS_TEST_CUDA_CHECK (cudaMalloc ((void **) &buf, size));
  DS_TEST_CUDA_CHECK (cudaMemset (buf, 0, size));
  DS_TEST_CUDA_CHECK (cudaMallocHost ((void **) &out, size));
  memset (out, 0xff, size);
  DS_TEST_CUDA_CHECK (cudaDeviceSynchronize ());

  /* A: sleep 200 ms on the host, then write 0x5a. */
  ds_test_stream_sleep (a, 200, &slept);
  DS_TEST_CUDA_CHECK (cudaMemsetAsync (buf, 0x5a, size, a));

  oa = ds_access_order_new_stream (a, -1);
  ob = ds_access_order_new_stream (b, -1);
  g_assert_true (ds_access_order_wait (ob, oa, &error));
  g_assert_no_error (error);
  /* The host did not block. */
  g_assert_cmpint (g_atomic_int_get (&slept), ==, 0);

  /* B: read it back. Without the wait this copy runs at once and reads
   * zeros. */
  DS_TEST_CUDA_CHECK (cudaMemcpyAsync (out, buf, size, cudaMemcpyDeviceToHost, b));
  DS_TEST_CUDA_CHECK (cudaStreamSynchronize (b));

  check_bytes (out, size, 0x5a);

  ds_test_stream_free (a);
  if (b != NULL)
    ds_test_stream_free (b);
  DS_TEST_CUDA_CHECK (cudaFree (buf));
  DS_TEST_CUDA_CHECK (cudaFreeHost (out));
}

static void
test_gpu_wait_device_device (void)
{
  DS_TEST_REQUIRE_CUDA ();

  g_test_summary ("ds_access_order_wait (B, A) makes work queued on stream B "
                  "after the call run after the work queued on A before it");

  wait_device_device (FALSE);
}

static void
test_gpu_wait_default_stream (void)
{
  DS_TEST_REQUIRE_CUDA ();

  g_test_summary ("The legacy default stream can wait for a non-blocking "
                  "stream through ds_access_order_wait");

  wait_device_device (TRUE);
}

static void
test_gpu_wait_host_device (void)
{
  cudaStream_t a;
  gint slept = 0;
  g_autoptr(DsAccessOrder) oa = NULL;
  g_autoptr(DsAccessOrder) host = ds_access_order_new_host ();
  g_autoptr(GError) error = NULL;

  DS_TEST_REQUIRE_CUDA ();

  g_test_summary ("ds_access_order_wait (host, A) blocks until A has drained");

  a = ds_test_stream_new ();
  oa = ds_access_order_new_stream (a, -1);

  ds_test_stream_sleep (a, 200, &slept);
  g_assert_true (ds_access_order_wait (host, oa, &error));
  g_assert_no_error (error);
  g_assert_cmpint (g_atomic_int_get (&slept), ==, 1);
  g_assert_cmpint (cudaStreamQuery (a), ==, cudaSuccess);

  ds_test_stream_free (a);
}

static void
test_gpu_wait_equal (void)
{
  cudaStream_t a;
  gint slept = 0;
  gint64 start;
  g_autoptr(DsAccessOrder) oa = NULL;
  g_autoptr(DsAccessOrder) oa2 = NULL;
  g_autoptr(GError) error = NULL;

  DS_TEST_REQUIRE_CUDA ();

  g_test_summary ("Waiting for an equal order returns at once, with the "
                  "stream still busy");

  a = ds_test_stream_new ();
  oa = ds_access_order_new_stream (a, -1);
  oa2 = ds_access_order_copy (oa);

  ds_test_stream_sleep (a, 300, &slept);
  start = g_get_monotonic_time ();
  g_assert_true (ds_access_order_wait (oa, oa2, &error));
  g_assert_no_error (error);
  g_assert_cmpint (g_get_monotonic_time () - start, <, 150 * 1000);
  g_assert_cmpint (g_atomic_int_get (&slept), ==, 0);

  ds_test_stream_free (a);
}

#endif

int
main (int    argc,
      char **argv)
{
  ds_test_init (&argc, &argv);

  g_test_add_func ("/Ds/AccessOrder/host", test_host_order);
  g_test_add_func ("/Ds/AccessOrder/unset", test_unset_order);
  g_test_add_func ("/Ds/AccessOrder/host-no-cuda", test_host_order_no_cuda);
  g_test_add_func ("/Ds/AccessOrder/stream-values", test_stream_order_values);
  g_test_add_func ("/Ds/AccessOrder/no-device/default-stream", test_default_stream_no_device);
  g_test_add_func ("/Ds/AccessOrder/no-device/wait", test_wait_no_device);
  g_test_add_func ("/Ds/AccessOrder/wait-unset", test_wait_unset);
  g_test_add_func ("/Ds/AccessOrder/preconditions", test_preconditions);
#if HAVE_CUDA
  g_test_add_func ("/Ds/AccessOrder/gpu/stream", test_gpu_stream_order);
  g_test_add_func ("/Ds/AccessOrder/gpu/stream-reuse", test_gpu_stream_reuse);
  g_test_add_func ("/Ds/AccessOrder/gpu/wait-device-device", test_gpu_wait_device_device);
  g_test_add_func ("/Ds/AccessOrder/gpu/wait-default-stream", test_gpu_wait_default_stream);
  g_test_add_func ("/Ds/AccessOrder/gpu/wait-host-device", test_gpu_wait_host_device);
  g_test_add_func ("/Ds/AccessOrder/gpu/wait-equal", test_gpu_wait_equal);
#endif

  return g_test_run ();
}
