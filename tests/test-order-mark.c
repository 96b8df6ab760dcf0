/* test-order-mark.c: DsOrderMark without a GPU
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "ds-test-utils.h"

static void
test_host (void)
{
  g_autoptr(DsAccessOrder) host = ds_access_order_new_host ();
  g_autoptr(DsOrderMark) mark = NULL;
  g_autoptr(GError) error = NULL;
  DsOrderMark *ref;

  g_test_summary ("A mark of host order is complete at once: made, waited for by host "
                  "order and copied (boxed) without a CUDA call");

  ds_test_cuda_spy_reset ();
  mark = ds_order_mark_new (host, &error);
  g_assert_no_error (error);
  g_assert_nonnull (mark);
  g_assert_true (ds_access_order_equal (ds_order_mark_get_order (mark), host));
  g_assert_true (ds_order_mark_wait (mark, host, &error));
  g_assert_no_error (error);

  ref = g_boxed_copy (DS_TYPE_ORDER_MARK, mark);
  g_assert_true (ref == mark);
  g_boxed_free (DS_TYPE_ORDER_MARK, ref);
  ds_test_assert_no_cuda_calls ();
}

static void
test_unset (void)
{
  g_autoptr(DsScratchpad) sp = ds_scratchpad_new (NULL);
  g_autoptr(DsAccessOrder) host = ds_access_order_new_host ();
  g_autoptr(DsOrderMark) mark = ds_order_mark_new (host, NULL);
  g_autoptr(GError) error = NULL;
  const DsAccessOrder *unset = ds_scratchpad_get_device_order (sp);

  g_test_summary ("An unset order (a scratchpad's device order before it is resolved) "
                  "can neither be marked nor wait: DS_ERROR_INVALID_ARGUMENT");

  g_assert_false (ds_access_order_is_host (unset));
  g_assert_false (ds_access_order_is_device (unset));
  g_assert_null (ds_order_mark_new (unset, &error));
  g_assert_error (error, DS_ERROR, DS_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  g_assert_false (ds_order_mark_wait (mark, unset, &error));
  g_assert_error (error, DS_ERROR, DS_ERROR_INVALID_ARGUMENT);
}

static void
test_no_device (void)
{
  g_autoptr(DsAccessOrder) order = NULL;
  g_autoptr(GError) error = NULL;

  g_test_summary ("Without a usable device, marking a device order fails with the "
                  "no-device error and leaves nothing behind");
  DS_TEST_REQUIRE_NO_CUDA ();

  order = ds_access_order_new_stream (ds_test_stream_handle (0), 0);
  g_assert_null (ds_order_mark_new (order, &error));
  g_assert_error (error, DS_ERROR, DS_TEST_NO_DEVICE_ERROR);
}

static void
test_preconditions (void)
{
  g_autoptr(DsAccessOrder) host = ds_access_order_new_host ();
  g_autoptr(DsOrderMark) mark = ds_order_mark_new (host, NULL);

  g_test_summary ("NULL marks and orders are programmer errors");

  if (!g_test_undefined ())
    return;

  g_test_expect_message ("Ds", G_LOG_LEVEL_CRITICAL, "*order != NULL*");
  g_assert_null (ds_order_mark_new (NULL, NULL));
  g_test_assert_expected_messages ();
  g_test_expect_message ("Ds", G_LOG_LEVEL_CRITICAL, "*order != NULL*");
  g_assert_false (ds_order_mark_wait (mark, NULL, NULL));
  g_test_assert_expected_messages ();
  g_test_expect_message ("Ds", G_LOG_LEVEL_CRITICAL, "*self != NULL*");
  g_assert_false (ds_order_mark_wait (NULL, host, NULL));
  g_test_assert_expected_messages ();
  g_test_expect_message ("Ds", G_LOG_LEVEL_CRITICAL, "*self != NULL*");
  g_assert_null (ds_order_mark_get_order (NULL));
  g_test_assert_expected_messages ();
}

int
main (int    argc,
      char **argv)
{
  ds_test_init (&argc, &argv);

  g_test_add_func ("/Ds/OrderMark/host", test_host);
  g_test_add_func ("/Ds/OrderMark/unset", test_unset);
  g_test_add_func ("/Ds/OrderMark/no-device", test_no_device);
  g_test_add_func ("/Ds/OrderMark/preconditions", test_preconditions);

  return g_test_run ();
}
