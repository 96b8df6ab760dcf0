/* test-error.c: the DS_ERROR domain, DsMemoryKind and the version macros
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "ds-test-utils.h"

static void
test_error_domain (void)
{
  g_autoptr(GError) error = NULL;

  g_test_summary ("DS_ERROR is a registered quark named ds-error-quark and "
                  "GErrors in it match by domain and code");

  g_assert_cmpuint (DS_ERROR, !=, 0);
  g_assert_cmpuint (DS_ERROR, ==, ds_error_quark ());
  g_assert_cmpstr (g_quark_to_string (DS_ERROR), ==, "ds-error-quark");

  g_set_error_literal (&error, DS_ERROR, DS_ERROR_OUT_OF_MEMORY, "oom");
  g_assert_error (error, DS_ERROR, DS_ERROR_OUT_OF_MEMORY);
  g_assert_false (g_error_matches (error, DS_ERROR, DS_ERROR_CUDA));
  g_assert_false (g_error_matches (error, G_FILE_ERROR, DS_ERROR_OUT_OF_MEMORY));
}

static void
test_error_codes (void)
{
  GEnumClass *klass;
  static const struct
  {
    gint        value;
    const char *name;
  } codes[] = {
    { DS_ERROR_INVALID_ARGUMENT, "DS_ERROR_INVALID_ARGUMENT" },
    { DS_ERROR_NOT_SUPPORTED, "DS_ERROR_NOT_SUPPORTED" },
    { DS_ERROR_NO_DEVICE, "DS_ERROR_NO_DEVICE" },
    { DS_ERROR_OUT_OF_MEMORY, "DS_ERROR_OUT_OF_MEMORY" },
    { DS_ERROR_CUDA, "DS_ERROR_CUDA" },
    { DS_ERROR_DISPOSED, "DS_ERROR_DISPOSED" },
    { DS_ERROR_BUSY, "DS_ERROR_BUSY" },
  };
  guint i;

  g_test_summary ("The fixed error codes exist, are distinct, and have a "
                  "GEnum type for bindings");

  klass = g_type_class_ref (DS_TYPE_ERROR);
  g_assert_true (G_IS_ENUM_CLASS (klass));
  g_assert_cmpuint (klass->n_values, ==, G_N_ELEMENTS (codes));

  for (i = 0; i < G_N_ELEMENTS (codes); i++)
    {
      GEnumValue *value = g_enum_get_value (klass, codes[i].value);

      g_assert_nonnull (value);
      g_assert_cmpstr (value->value_name, ==, codes[i].name);
      g_assert_cmpint (codes[i].value, ==, (gint) i);
    }

  g_type_class_unref (klass);
}

static void
test_memory_kind (void)
{
  GEnumClass *klass;
  static const char * const nicks[] = { "host", "pinned", "device", "managed" };
  guint i;

  g_test_summary ("DsMemoryKind: fixed values 0..3, DS_N_MEMORY_KINDS = 4, "
                  "GEnum nicks host/pinned/device/managed, IS_VALID macro");

  g_assert_cmpint (DS_MEMORY_KIND_HOST, ==, 0);
  g_assert_cmpint (DS_MEMORY_KIND_PINNED, ==, 1);
  g_assert_cmpint (DS_MEMORY_KIND_DEVICE, ==, 2);
  g_assert_cmpint (DS_MEMORY_KIND_MANAGED, ==, 3);
  g_assert_cmpint (DS_N_MEMORY_KINDS, ==, 4);

  klass = g_type_class_ref (DS_TYPE_MEMORY_KIND);
  g_assert_cmpuint (klass->n_values, ==, DS_N_MEMORY_KINDS);
  for (i = 0; i < DS_N_MEMORY_KINDS; i++)
    {
      GEnumValue *value = g_enum_get_value (klass, i);

      g_assert_nonnull (value);
      g_assert_cmpstr (value->value_nick, ==, nicks[i]);
      g_assert_true (DS_MEMORY_KIND_IS_VALID (i));
    }
  g_type_class_unref (klass);

  g_assert_false (DS_MEMORY_KIND_IS_VALID (4));
  g_assert_false (DS_MEMORY_KIND_IS_VALID (7));
  g_assert_false (DS_MEMORY_KIND_IS_VALID (-1));
  g_assert_false (DS_MEMORY_KIND_IS_VALID ((DsMemoryKind) G_MAXINT));
}

static void
test_version (void)
{
  g_test_summary ("The version macros agree with each other");

  g_assert_cmpstr (DS_VERSION_S, ==, PACKAGE_VERSION);
  g_assert_true (DS_CHECK_VERSION (0, 0, 0));
  g_assert_true (DS_CHECK_VERSION (DS_MAJOR_VERSION, DS_MINOR_VERSION, DS_MICRO_VERSION));
  g_assert_false (DS_CHECK_VERSION (DS_MAJOR_VERSION, DS_MINOR_VERSION, DS_MICRO_VERSION + 1));
  g_assert_false (DS_CHECK_VERSION (DS_MAJOR_VERSION + 1, 0, 0));
  g_assert_cmpint (DS_HAVE_CUDA, ==, HAVE_CUDA);
}

int
main (int    argc,
      char **argv)
{
  ds_test_init (&argc, &argv);

  g_test_add_func ("/Ds/Error/domain", test_error_domain);
  g_test_add_func ("/Ds/Error/codes", test_error_codes);
  g_test_add_func ("/Ds/MemoryKind/values", test_memory_kind);
  g_test_add_func ("/Ds/Version/macros", test_version);

  return g_test_run ();
}
