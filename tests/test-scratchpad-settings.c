/* test-scratchpad-settings.c: DsScratchpad, its properties and orders
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>

#include "ds-test-resource.h"
#include "ds-test-utils.h"

static const char * const kind_names[] = { "host", "pinned", "device", "managed" };

/* Properties ------------------------------------------------------------------- */

static void
test_properties_list (void)
{
  GObjectClass *klass = g_type_class_ref (DS_TYPE_SCRATCHPAD);
  static const char * const orders[] = {
    "device-order", "pinned-dealloc-order", "managed-dealloc-order"
  };
  guint i;

  g_test_summary ("All fixed properties exist with their types and defaults, "
                  "as plain read-write properties with explicit notification "
                  "(not construct properties: g_object_new () sets none)");

  for (i = 0; i < G_N_ELEMENTS (orders); i++)
    {
      GParamSpec *pspec = g_object_class_find_property (klass, orders[i]);

      g_assert_nonnull (pspec);
      g_assert_true (G_IS_PARAM_SPEC_BOXED (pspec));
      g_assert_true (pspec->value_type == DS_TYPE_ACCESS_ORDER);
      g_assert_cmpuint (pspec->flags & (G_PARAM_READWRITE | G_PARAM_CONSTRUCT |
                                        G_PARAM_CONSTRUCT_ONLY | G_PARAM_EXPLICIT_NOTIFY), ==,
                        G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY);
    }

  for (i = 0; i < DS_N_MEMORY_KINDS; i++)
    {
      g_autofree char *size_name = g_strdup_printf ("initial-size-%s", kind_names[i]);
      g_autofree char *res_name = g_strdup_printf ("%s-resource", kind_names[i]);
      GParamSpec *pspec = g_object_class_find_property (klass, size_name);
      GParamSpecUInt64 *u;

      g_assert_nonnull (pspec);
      g_assert_true (G_IS_PARAM_SPEC_UINT64 (pspec));
      u = G_PARAM_SPEC_UINT64 (pspec);
      g_assert_cmpuint (u->default_value, ==, 65536);
      g_assert_cmpuint (u->minimum, ==, 0);
      g_assert_cmpuint (pspec->flags & (G_PARAM_READWRITE | G_PARAM_CONSTRUCT |
                                        G_PARAM_CONSTRUCT_ONLY | G_PARAM_EXPLICIT_NOTIFY), ==,
                        G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY);

      pspec = g_object_class_find_property (klass, res_name);
      g_assert_nonnull (pspec);
      g_assert_true (G_IS_PARAM_SPEC_OBJECT (pspec));
      g_assert_true (pspec->value_type == DS_TYPE_MEMORY_RESOURCE);
      g_assert_cmpuint (pspec->flags & (G_PARAM_READWRITE | G_PARAM_CONSTRUCT |
                                        G_PARAM_CONSTRUCT_ONLY | G_PARAM_EXPLICIT_NOTIFY), ==,
                        G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY);
    }

  g_assert_true (g_type_is_a (DS_TYPE_SCRATCHPAD, DS_TYPE_SCRATCHPAD_IFACE));
  g_assert_true (G_TYPE_IS_FINAL (DS_TYPE_SCRATCHPAD));

  g_type_class_unref (klass);
}

static void
test_properties_g_object_new (void)
{
  g_autoptr(DsTestResource) r = ds_test_resource_new (DS_MEMORY_KIND_HOST, FALSE);
  g_autoptr(DsAccessOrder) o = ds_access_order_new_host ();
  g_autoptr(DsAccessOrder) got = NULL;
  g_autoptr(DsMemoryResource) got_res = NULL;
  g_autoptr(GError) error = NULL;
  DsScratchpad *sp;
  gpointer p;

  g_test_summary ("g_object_new (DS_TYPE_SCRATCHPAD, \"device-order\", o, "
                  "\"host-resource\", r, NULL) works: the order reads back "
                  "and host memory comes from r");

  sp = g_object_new (DS_TYPE_SCRATCHPAD, "device-order", o, "host-resource", r, NULL);
  g_assert_true (DS_IS_SCRATCHPAD (sp));
  g_assert_true (DS_IS_SCRATCHPAD_IFACE (sp));

  g_object_get (sp, "device-order", &got, "host-resource", &got_res, NULL);
  g_assert_nonnull (got);
  g_assert_true (ds_access_order_equal (got, o));
  g_assert_true (got_res == DS_MEMORY_RESOURCE (r));
  g_assert_true (ds_access_order_equal (ds_scratchpad_get_device_order (sp), o));

  p = ds_scratchpad_alloc (sp, DS_MEMORY_KIND_HOST, 123, 0, &error);
  g_assert_no_error (error);
  g_assert_true (ds_test_resource_owns (r, p, 123));

  g_clear_object (&got_res);
  g_assert_finalize_object (sp);
  ds_test_resource_assert_clean (r);
  g_assert_cmpuint (ds_test_resource_count_deallocs (r), ==, 1);
}

static void
test_properties_until_first_alloc (void)
{
  g_autoptr(DsTestResource) r = ds_test_resource_new (DS_MEMORY_KIND_HOST, FALSE);
  g_autoptr(DsTestResource) other = ds_test_resource_new (DS_MEMORY_KIND_HOST, FALSE);
  g_autoptr(DsAccessOrder) host = ds_access_order_new_host ();
  g_autoptr(DsMemoryResource) got = NULL;
  guint64 size = 0;
  guint n_notify = 0;
  DsScratchpad *sp;

  g_test_summary ("The settings can be set after construction until the first "
                  "allocation, notifying only on a change; from then until the "
                  "next release setting one is a critical and changes nothing");

  sp = ds_scratchpad_new (host);
  g_signal_connect (sp, "notify", G_CALLBACK (ds_test_count_notify), &n_notify);

  g_object_set (sp, "host-resource", r, "initial-size-host", (guint64) 4096, NULL);
  g_assert_cmpuint (n_notify, ==, 2);
  g_object_set (sp, "host-resource", r, "initial-size-host", (guint64) 4096, NULL);
  g_assert_cmpuint (n_notify, ==, 2);
  g_object_set (sp, "device-order", host, NULL);
  g_assert_cmpuint (n_notify, ==, 2);
  g_assert_cmpuint (ds_scratchpad_get_initial_size (sp, DS_MEMORY_KIND_HOST), ==, 4096);

  g_assert_nonnull (ds_scratchpad_alloc (sp, DS_MEMORY_KIND_HOST, 10, 0, NULL));
  g_assert_cmpuint (ds_test_resource_get_call (r, 0).size, ==, 4096);

  if (g_test_undefined ())
    {
      g_test_expect_message ("Ds", G_LOG_LEVEL_CRITICAL, "*host-resource*cannot change*");
      g_object_set (sp, "host-resource", other, NULL);
      g_test_assert_expected_messages ();

      g_test_expect_message ("Ds", G_LOG_LEVEL_CRITICAL, "*initial-size-host*cannot change*");
      g_object_set (sp, "initial-size-host", (guint64) 65536, NULL);
      g_test_assert_expected_messages ();

    }

  g_object_get (sp, "host-resource", &got, "initial-size-host", &size, NULL);
  g_assert_true (got == DS_MEMORY_RESOURCE (r));
  g_assert_cmpuint (size, ==, 4096);
  g_assert_cmpuint (n_notify, ==, 2);
  g_assert_nonnull (ds_scratchpad_alloc (sp, DS_MEMORY_KIND_HOST, 10, 0, NULL));
  g_assert_cmpuint (ds_test_resource_get_n_calls (other), ==, 0);

  g_clear_object (&got);
  g_assert_finalize_object (sp);
  ds_test_resource_assert_clean (r);
}

static void
test_properties_after_release (void)
{
  g_autoptr(DsTestResource) r = ds_test_resource_new (DS_MEMORY_KIND_HOST, FALSE);
  g_autoptr(DsTestResource) other = ds_test_resource_new (DS_MEMORY_KIND_HOST, FALSE);
  g_autoptr(DsAccessOrder) host = ds_access_order_new_host ();
  g_autoptr(DsAccessOrder) stream = ds_access_order_new_stream (ds_test_stream_handle (0), 0);
  DsScratchpad *sp;
  guint n_notify = 0;

  g_test_summary ("After a release the settings may change again: blocks kept "
                  "for the next unit go back to the resource they came from "
                  "first, and the next allocation draws from the new one");

  sp = ds_scratchpad_new (host);
  ds_scratchpad_set_resource (sp, DS_MEMORY_KIND_HOST, DS_MEMORY_RESOURCE (r));
  ds_scratchpad_set_keep_blocks (sp, TRUE);
  g_signal_connect (sp, "notify", G_CALLBACK (ds_test_count_notify), &n_notify);

  g_assert_nonnull (ds_scratchpad_alloc (sp, DS_MEMORY_KIND_HOST, 100, 0, NULL));
  ds_scratchpad_release (sp);
  /* Kept for the next unit. */
  g_assert_cmpuint (ds_scratchpad_get_n_blocks (sp, DS_MEMORY_KIND_HOST), ==, 1);
  g_assert_cmpuint (ds_test_resource_count_deallocs (r), ==, 0);

  /* The same value changes nothing and keeps the block. */
  ds_scratchpad_set_resource (sp, DS_MEMORY_KIND_HOST, DS_MEMORY_RESOURCE (r));
  g_assert_cmpuint (n_notify, ==, 0);
  g_assert_cmpuint (ds_scratchpad_get_n_blocks (sp, DS_MEMORY_KIND_HOST), ==, 1);

  g_object_set (sp, "host-resource", other, "device-order", stream, NULL);
  g_assert_cmpuint (n_notify, ==, 2);
  g_assert_cmpuint (ds_scratchpad_get_n_blocks (sp, DS_MEMORY_KIND_HOST), ==, 0);
  ds_test_resource_assert_clean (r);
  g_assert_true (ds_access_order_equal (ds_scratchpad_get_device_order (sp), stream));
  g_assert_true (ds_access_order_equal (ds_scratchpad_get_dealloc_order (sp, DS_MEMORY_KIND_PINNED),
                                        stream));

  g_assert_nonnull (ds_scratchpad_alloc (sp, DS_MEMORY_KIND_HOST, 100, 0, NULL));
  g_assert_cmpuint (ds_test_resource_count_allocs (other), ==, 1);
  g_assert_cmpuint (ds_test_resource_count_allocs (r), ==, 1);

  g_assert_finalize_object (sp);
  ds_test_resource_assert_clean (other);
}

static void
test_properties_wrong_kind (void)
{
  g_autoptr(DsTestResource) pinned = ds_test_resource_new (DS_MEMORY_KIND_PINNED, FALSE);
  g_autoptr(DsAccessOrder) o = ds_access_order_new_host ();
  g_autoptr(GError) error = NULL;
  DsScratchpad *sp;

  g_test_summary ("A resource of the wrong kind for a *-resource property is "
                  "an error at the first allocation of that kind, naming the "
                  "property and both kinds; it is never called, and nothing "
                  "falls back to the default resource");

  sp = g_object_new (DS_TYPE_SCRATCHPAD, "device-order", o, "host-resource", pinned, NULL);

  g_assert_null (ds_scratchpad_alloc (sp, DS_MEMORY_KIND_HOST, 10, 0, &error));
  g_assert_error (error, DS_ERROR, DS_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "host-resource"));
  g_assert_nonnull (strstr (error->message, "pinned"));
  g_assert_cmpuint (ds_scratchpad_get_reserved (sp, DS_MEMORY_KIND_HOST), ==, 0);
  g_clear_error (&error);

  /* Asked again, the same answer: no partial state was left. */
  g_assert_null (ds_scratchpad_alloc (sp, DS_MEMORY_KIND_HOST, 10, 0, &error));
  g_assert_error (error, DS_ERROR, DS_ERROR_INVALID_ARGUMENT);
  g_assert_cmpuint (ds_test_resource_get_n_calls (pinned), ==, 0);
  g_assert_finalize_object (sp);
}

static void
test_set_resource (void)
{
  g_autoptr(DsTestResource) host = ds_test_resource_new (DS_MEMORY_KIND_HOST, FALSE);
  g_autoptr(DsTestResource) pinned = ds_test_resource_new (DS_MEMORY_KIND_PINNED, FALSE);
  g_autoptr(DsTestResource) other = ds_test_resource_new (DS_MEMORY_KIND_HOST, FALSE);
  g_autoptr(DsAccessOrder) order = ds_access_order_new_host ();
  g_autoptr(GError) error = NULL;
  g_autoptr(DsMemoryResource) got = NULL;
  guint n_notify = 0;
  DsScratchpad *sp;

  g_test_summary ("ds_scratchpad_set_resource () is the *-resource property "
                  "without the property machinery: it reads back through both, "
                  "notifies the property on a change only, a resource of another "
                  "kind is an error at that kind's first allocation, and once "
                  "the scratchpad allocated it is a critical and changes nothing");

  sp = ds_scratchpad_new (order);
  g_signal_connect (sp, "notify::host-resource", G_CALLBACK (ds_test_count_notify), &n_notify);
  ds_scratchpad_set_resource (sp, DS_MEMORY_KIND_HOST, DS_MEMORY_RESOURCE (host));
  g_assert_cmpuint (n_notify, ==, 1);
  ds_scratchpad_set_resource (sp, DS_MEMORY_KIND_HOST, DS_MEMORY_RESOURCE (host));
  g_assert_cmpuint (n_notify, ==, 1);
  g_assert_true (ds_scratchpad_get_resource (sp, DS_MEMORY_KIND_HOST) == DS_MEMORY_RESOURCE (host));
  g_object_get (sp, "host-resource", &got, NULL);
  g_assert_true (got == DS_MEMORY_RESOURCE (host));

  /* NULL is the default again, and back. */
  ds_scratchpad_set_resource (sp, DS_MEMORY_KIND_HOST, NULL);
  g_assert_cmpuint (n_notify, ==, 2);
  g_assert_true (ds_scratchpad_get_resource (sp, DS_MEMORY_KIND_HOST) != DS_MEMORY_RESOURCE (host));
  ds_scratchpad_set_resource (sp, DS_MEMORY_KIND_HOST, DS_MEMORY_RESOURCE (host));
  g_assert_cmpuint (n_notify, ==, 3);

  /* The wrong kind: the same error as through the property. */
  ds_scratchpad_set_resource (sp, DS_MEMORY_KIND_DEVICE, DS_MEMORY_RESOURCE (pinned));
  g_assert_true (ds_scratchpad_get_resource (sp, DS_MEMORY_KIND_DEVICE) == DS_MEMORY_RESOURCE (pinned));

  g_assert_nonnull (ds_scratchpad_alloc (sp, DS_MEMORY_KIND_HOST, 10, 0, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (ds_test_resource_get_n_calls (host), ==, 1);
  g_assert_null (ds_scratchpad_alloc (sp, DS_MEMORY_KIND_DEVICE, 10, 0, &error));
  g_assert_error (error, DS_ERROR, DS_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "device-resource"));
  g_assert_cmpuint (ds_test_resource_get_n_calls (pinned), ==, 0);

  if (g_test_undefined ())
    {
      g_test_expect_message ("Ds", G_LOG_LEVEL_CRITICAL, "*host-resource*cannot change*");
      ds_scratchpad_set_resource (sp, DS_MEMORY_KIND_HOST, DS_MEMORY_RESOURCE (other));
      g_test_assert_expected_messages ();

      g_test_expect_message ("Ds", G_LOG_LEVEL_CRITICAL, "*DS_MEMORY_KIND_IS_VALID*");
      ds_scratchpad_set_resource (sp, (DsMemoryKind) 7, NULL);
      g_test_assert_expected_messages ();
      g_test_expect_message ("Ds", G_LOG_LEVEL_CRITICAL, "*DS_MEMORY_KIND_IS_VALID*");
      g_assert_null (ds_scratchpad_get_resource (sp, (DsMemoryKind) 7));
      g_test_assert_expected_messages ();
    }
  g_assert_true (ds_scratchpad_get_resource (sp, DS_MEMORY_KIND_HOST) == DS_MEMORY_RESOURCE (host));
  g_assert_cmpuint (n_notify, ==, 3);
  g_assert_cmpuint (ds_test_resource_get_n_calls (other), ==, 0);

  g_assert_finalize_object (sp);
  ds_test_resource_assert_clean (host);
}

static void
test_properties_read_back (void)
{
  g_autoptr(DsAccessOrder) host = ds_access_order_new_host ();
  g_autoptr(DsAccessOrder) got = NULL;
  g_autoptr(DsMemoryResource) got_res = NULL;
  DsScratchpad *sp;

  g_test_summary ("Defaulted properties read back the values in effect: the "
                  "dealloc orders the device order, host-resource the "
                  "default host resource");

  sp = g_object_new (DS_TYPE_SCRATCHPAD, "device-order", host, NULL);
  g_object_get (sp, "pinned-dealloc-order", &got, NULL);
  g_assert_nonnull (got);
  g_assert_true (ds_access_order_is_host (got));
  g_clear_pointer (&got, ds_access_order_free);
  g_object_get (sp, "managed-dealloc-order", &got, NULL);
  g_assert_nonnull (got);
  g_assert_true (ds_access_order_is_host (got));
  g_clear_pointer (&got, ds_access_order_free);

  g_object_get (sp, "host-resource", &got_res, NULL);
  g_assert_true (got_res == ds_memory_resource_get_default (DS_MEMORY_KIND_HOST, -1, NULL));
  g_clear_object (&got_res);
  g_assert_finalize_object (sp);

  /* No device order yet: nothing to read back for the orders. */
  sp = ds_scratchpad_new (NULL);
  g_object_get (sp, "pinned-dealloc-order", &got, NULL);
  g_assert_null (got);
  g_assert_finalize_object (sp);
}

static void
test_max_block_size_property (void)
{
  g_autoptr(DsScratchpad) sp = ds_scratchpad_new (NULL);
  GParamSpec *pspec = g_object_class_find_property (G_OBJECT_GET_CLASS (sp), "max-block-size");
  guint notified = 0;
  guint64 value = 0;

  g_test_summary ("max-block-size: a plain read-write "
                  "guint64 setting, default 64 MiB, 0 for the default, "
                  "notified once per change; the getter and setter agree");

  g_assert_nonnull (pspec);
  g_assert_true (G_IS_PARAM_SPEC_UINT64 (pspec));
  g_assert_cmpuint (G_PARAM_SPEC_UINT64 (pspec)->default_value, ==, 64 << 20);
  g_assert_cmpuint (pspec->flags & (G_PARAM_READWRITE | G_PARAM_CONSTRUCT |
                                    G_PARAM_CONSTRUCT_ONLY | G_PARAM_EXPLICIT_NOTIFY), ==,
                    G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY);

  g_signal_connect (sp, "notify::max-block-size", G_CALLBACK (ds_test_count_notify), &notified);
  g_object_get (sp, "max-block-size", &value, NULL);
  g_assert_cmpuint (value, ==, DS_SCRATCHPAD_DEFAULT_MAX_BLOCK_SIZE);

  ds_scratchpad_set_max_block_size (sp, 1 << 20);
  ds_scratchpad_set_max_block_size (sp, 1 << 20);
  g_assert_cmpuint (notified, ==, 1);
  g_object_get (sp, "max-block-size", &value, NULL);
  g_assert_cmpuint (value, ==, 1 << 20);

  g_object_set (sp, "max-block-size", (guint64) 0, NULL);
  g_assert_cmpuint (notified, ==, 2);
  g_assert_cmpuint (ds_scratchpad_get_max_block_size (sp), ==, DS_SCRATCHPAD_DEFAULT_MAX_BLOCK_SIZE);
}

static void
test_getters (void)
{
  g_autoptr(DsAccessOrder) host = ds_access_order_new_host ();
  g_autoptr(DsAccessOrder) dev = ds_access_order_new_stream (ds_test_stream_handle (0), 0);
  g_autoptr(DsAccessOrder) pin = ds_access_order_new_stream (ds_test_stream_handle (1), 0);
  g_autoptr(DsAccessOrder) man = ds_access_order_new_stream (ds_test_stream_handle (2), 0);
  g_autoptr(DsAccessOrder) got = NULL;
  DsScratchpad *sp;

  g_test_summary ("get_device_order / get_dealloc_order: host memory needs "
                  "no order, device memory goes back in the device order, "
                  "pinned and managed in their own or (unset) the device "
                  "order; constructing with stream orders touches nothing");

  sp = ds_scratchpad_new_full (dev, pin, man, NULL);
  g_assert_true (ds_access_order_equal (ds_scratchpad_get_device_order (sp), dev));
  g_assert_null (ds_scratchpad_get_dealloc_order (sp, DS_MEMORY_KIND_HOST));
  g_assert_true (ds_access_order_equal (ds_scratchpad_get_dealloc_order (sp, DS_MEMORY_KIND_DEVICE), dev));
  g_assert_true (ds_access_order_equal (ds_scratchpad_get_dealloc_order (sp, DS_MEMORY_KIND_PINNED), pin));
  g_assert_true (ds_access_order_equal (ds_scratchpad_get_dealloc_order (sp, DS_MEMORY_KIND_MANAGED), man));
  g_object_get (sp, "pinned-dealloc-order", &got, NULL);
  g_assert_true (ds_access_order_equal (got, pin));
  g_clear_pointer (&got, ds_access_order_free);
  g_object_get (sp, "managed-dealloc-order", &got, NULL);
  g_assert_true (ds_access_order_equal (got, man));
  g_clear_pointer (&got, ds_access_order_free);
  g_assert_finalize_object (sp);

  sp = ds_scratchpad_new_full (dev, NULL, NULL, NULL);
  g_assert_true (ds_access_order_equal (ds_scratchpad_get_dealloc_order (sp, DS_MEMORY_KIND_PINNED), dev));
  g_assert_true (ds_access_order_equal (ds_scratchpad_get_dealloc_order (sp, DS_MEMORY_KIND_MANAGED), dev));
  g_assert_finalize_object (sp);

  sp = ds_scratchpad_new_full (host, NULL, NULL, NULL);
  g_assert_true (ds_access_order_is_host (ds_scratchpad_get_dealloc_order (sp, DS_MEMORY_KIND_PINNED)));
  g_assert_true (ds_access_order_is_host (ds_scratchpad_get_dealloc_order (sp, DS_MEMORY_KIND_DEVICE)));
  g_assert_finalize_object (sp);
}

int
main (int    argc,
      char **argv)
{
  ds_test_init (&argc, &argv);

  g_test_add_func ("/Ds/Scratchpad/properties/list", test_properties_list);
  g_test_add_func ("/Ds/Scratchpad/properties/g-object-new", test_properties_g_object_new);
  g_test_add_func ("/Ds/Scratchpad/properties/until-first-alloc", test_properties_until_first_alloc);
  g_test_add_func ("/Ds/Scratchpad/properties/after-release", test_properties_after_release);
  g_test_add_func ("/Ds/Scratchpad/properties/wrong-kind", test_properties_wrong_kind);
  g_test_add_func ("/Ds/Scratchpad/properties/read-back", test_properties_read_back);
  g_test_add_func ("/Ds/Scratchpad/properties/set-resource", test_set_resource);
  g_test_add_func ("/Ds/Scratchpad/properties/max-block-size", test_max_block_size_property);
  g_test_add_func ("/Ds/Scratchpad/orders/getters", test_getters);

  return g_test_run ();
}
