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
test_handle_without_driver (void)
{
  static const guint64 handles[] = { 0, 1, 2, 3, 42, 0x7f00deadbe00, G_MAXUINT64 };

  DS_TEST_REQUIRE_NO_CUDA ();

  g_test_summary ("Without a CUDA driver an integer stream handle is taken as "
                  "given (nothing can check it, and nothing dereferences it): the "
                  "order keeps it, and device work in it fails with NO_DEVICE");

  for (guint i = 0; i < G_N_ELEMENTS (handles); i++)
    {
      g_autoptr(DsAccessOrder) order = ds_access_order_new_for_handle (handles[i], 0);
      g_autoptr(GError) error = NULL;

      g_assert_nonnull (order);
      g_assert_true (ds_access_order_is_device (order));
      g_assert_cmpuint (ds_access_order_get_stream_handle (order), ==, handles[i]);
      g_assert_cmpint (ds_access_order_get_device (order), ==, 0);
      g_assert_false (ds_access_order_synchronize (order, &error));
      g_assert_error (error, DS_ERROR, DS_TEST_NO_DEVICE_ERROR);
    }
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

int
main (int    argc,
      char **argv)
{
  ds_test_init (&argc, &argv);

  g_test_add_func ("/Ds/AccessOrder/host", test_host_order);
  g_test_add_func ("/Ds/AccessOrder/unset", test_unset_order);
  g_test_add_func ("/Ds/AccessOrder/host-no-cuda", test_host_order_no_cuda);
  g_test_add_func ("/Ds/AccessOrder/stream-values", test_stream_order_values);
  g_test_add_func ("/Ds/AccessOrder/handle-without-driver", test_handle_without_driver);
  g_test_add_func ("/Ds/AccessOrder/no-device/default-stream", test_default_stream_no_device);
  g_test_add_func ("/Ds/AccessOrder/no-device/wait", test_wait_no_device);
  g_test_add_func ("/Ds/AccessOrder/wait-unset", test_wait_unset);
  g_test_add_func ("/Ds/AccessOrder/preconditions", test_preconditions);

  return g_test_run ();
}
