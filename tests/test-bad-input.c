/* test-bad-input.c: what each misuse of the public API gets
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * One table, one case per row: the call, and what it must get
 * — NULL without an error (size 0), a GError in DS_ERROR with its code and
 * a message that names the caller's own values, or a critical (programmer
 * errors: NULL objects, an error already set, settings once fixed). Every
 * row runs on a fresh scratchpad over recording upstreams of every kind
 * (host memory, so no GPU is needed) and a pool over a recording host
 * upstream; teardown asserts that every upstream got every block back
 * exactly once. The README's "Errors" section is this table in prose.
 */

#include "config.h"

#include <string.h>

#include "ds-test-resource.h"
#include "ds-test-utils.h"

typedef struct
{
  DsTestResource   *res[DS_N_MEMORY_KINDS];
  DsAccessOrder    *host;
  DsScratchpad     *sp;
  DsTestResource   *pool_upstream;
  DsMemoryResource *pool;
} Ctx;

typedef enum
{
  NULL_NO_ERROR,        /* NULL, no error */
  GERROR,               /* NULL with a DS_ERROR of the row's code */
  CRITICAL,             /* a critical in the Ds log domain, a dummy return */
} Outcome;

typedef struct
{
  const char *name;
  gpointer  (*call) (Ctx *c, GError **error);
  Outcome     outcome;
  DsError     code;
  /* For GERROR: what the message must contain (the caller's values). For
   * CRITICAL: the pattern of the critical. */
  const char *says[2];
} Row;

#define MAX_STR   "18446744073709551615"
#define MAX1_STR  "18446744073709551614"
#define DEFAULT_A "alignment 0 (the default, 16)"

static gpointer
alloc_error_set (Ctx     *c,
                 gsize    size)
{
  GError *set = g_error_new_literal (G_FILE_ERROR, G_FILE_ERROR_FAILED, "earlier");
  GError *error = set;
  gpointer p;

  p = ds_scratchpad_alloc (c->sp, DS_MEMORY_KIND_HOST, size, 0, &error);
  g_assert_true (error == set);
  g_error_free (set);
  return p;
}

/* A first allocation that must work: the settings are fixed from then on. */
static void
alloc_ok (DsScratchpad *sp,
          DsMemoryKind  kind)
{
  g_autoptr(GError) error = NULL;

  g_assert_nonnull (ds_scratchpad_alloc (sp, kind, 16, 0, &error));
  g_assert_no_error (error);
}

/* The calls ----------------------------------------------------------------- */

#define ALLOC(fn, kind, size, alignment) \
  static gpointer fn (Ctx *c, GError **error) \
  { return ds_scratchpad_alloc (c->sp, (kind), (size), (alignment), error); }

ALLOC (size_zero, DS_MEMORY_KIND_HOST, 0, 0)
ALLOC (size_zero_device, DS_MEMORY_KIND_DEVICE, 0, 64)
ALLOC (size_max, DS_MEMORY_KIND_HOST, G_MAXSIZE, 0)
ALLOC (size_max_minus_1, DS_MEMORY_KIND_HOST, G_MAXSIZE - 1, 0)
ALLOC (size_max_minus_100, DS_MEMORY_KIND_PINNED, G_MAXSIZE - 100, 0)
ALLOC (size_max_minus_100_a64, DS_MEMORY_KIND_DEVICE, G_MAXSIZE - 100, 64)
ALLOC (size_huge, DS_MEMORY_KIND_HOST, (gsize) 1 << 40, 0)
ALLOC (size_huge_managed, DS_MEMORY_KIND_MANAGED, (gsize) 1 << 40, 128)
ALLOC (align_3, DS_MEMORY_KIND_HOST, 16, 3)
ALLOC (align_48, DS_MEMORY_KIND_DEVICE, 16, 48)
ALLOC (align_max, DS_MEMORY_KIND_HOST, 16, G_MAXSIZE)
ALLOC (align_2_63, DS_MEMORY_KIND_HOST, 16, (gsize) 1 << 63)
ALLOC (align_2_40_size_max, DS_MEMORY_KIND_HOST, G_MAXSIZE - 4096, (gsize) 1 << 40)
ALLOC (kind_42, (DsMemoryKind) 42, 16, 0)
ALLOC (kind_minus_1, (DsMemoryKind) -1, 16, 0)
ALLOC (kind_n_kinds, (DsMemoryKind) DS_N_MEMORY_KINDS, 16, 0)

static gpointer
alloc_function_bad_align (Ctx *c, GError **error)
{
  return (ds_scratchpad_alloc) (c->sp, DS_MEMORY_KIND_HOST, 16, 24, error);
}

static gpointer
array_overflow (Ctx *c, GError **error)
{
  return ds_scratchpad_alloc_array (c->sp, DS_MEMORY_KIND_HOST, (gsize) 1 << 31,
                                    (gsize) 1 << 33, 0, error);
}

static gpointer
array_overflow_function (Ctx *c, GError **error)
{
  return (ds_scratchpad_alloc_array) (c->sp, DS_MEMORY_KIND_DEVICE, 3, G_MAXSIZE / 2, 0, error);
}

static gpointer
alloc_n_overflow (Ctx *c, GError **error)
{
  return DS_SCRATCHPAD_ALLOC_N (c->sp, DS_MEMORY_KIND_PINNED, guint64, G_MAXSIZE / 4, error);
}

static gpointer
block_size_max (Ctx *c, GError **error)
{
  return ds_scratchpad_alloc_block (c->sp, DS_MEMORY_KIND_HOST, G_MAXSIZE, 0, error);
}

static gpointer
block_align_5 (Ctx *c, GError **error)
{
  return ds_scratchpad_alloc_block (c->sp, DS_MEMORY_KIND_MANAGED, 64, 5, error);
}

static gpointer
iface_kind_42 (Ctx *c, GError **error)
{
  return ds_scratchpad_iface_alloc (DS_SCRATCHPAD_IFACE (c->sp), (DsMemoryKind) 42, 16, 0, error);
}

static gpointer
iface_align_7 (Ctx *c, GError **error)
{
  return (ds_scratchpad_iface_alloc) (DS_SCRATCHPAD_IFACE (c->sp), DS_MEMORY_KIND_HOST, 16, 7, error);
}

static gpointer
wrong_kind_resource (Ctx *c, GError **error)
{
  g_object_set (c->sp, "host-resource", c->res[DS_MEMORY_KIND_PINNED], NULL);
  return ds_scratchpad_alloc (c->sp, DS_MEMORY_KIND_HOST, 16, 0, error);
}

static gpointer
contiguous_overflow (Ctx *c, GError **error)
{
  static const guint8 data[1];
  const gconstpointer arrays[2] = { data, data };
  const gsize sizes[2] = { G_MAXSIZE / 2, G_MAXSIZE / 2 };

  return ds_scratchpad_to_contiguous_device (c->sp, 2, arrays, sizes, 16, NULL, error);
}

static gpointer
contiguous_align_12 (Ctx *c, GError **error)
{
  static const guint8 data[8];
  const gconstpointer arrays[1] = { data };
  const gsize sizes[1] = { 8 };

  return ds_scratchpad_to_contiguous_device (c->sp, 1, arrays, sizes, 12, NULL, error);
}

static gpointer
resource_align_3 (Ctx *c, GError **error)
{
  return ds_memory_resource_allocate (DS_MEMORY_RESOURCE (c->res[DS_MEMORY_KIND_HOST]), 16, 3, error);
}

static gpointer
pool_size_max_minus_1 (Ctx *c, GError **error)
{
  return ds_memory_resource_allocate (c->pool, G_MAXSIZE - 1, 0, error);
}

static gpointer
pool_size_huge (Ctx *c, GError **error)
{
  return ds_memory_resource_allocate (c->pool, ((gsize) 1 << 40) + 1000, 0, error);
}

static gpointer
default_resource_kind_42 (Ctx *c, GError **error)
{
  return ds_memory_resource_get_default ((DsMemoryKind) 42, -1, error);
}

static gpointer
block_write_out_of_range (Ctx *c, GError **error)
{
  g_autoptr(GBytes) bytes = g_bytes_new_static ("12345678", 8);
  DsBlock *block = ds_scratchpad_alloc_block (c->sp, DS_MEMORY_KIND_HOST, 64, 0, NULL);
  gboolean ok;

  ok = ds_block_write (block, 60, bytes, error);
  ds_block_unref (block);
  return ok ? GINT_TO_POINTER (1) : NULL;
}

static gpointer
block_read_after_release (Ctx *c, GError **error)
{
  DsBlock *block = ds_scratchpad_alloc_block (c->sp, DS_MEMORY_KIND_HOST, 64, 0, NULL);
  GBytes *bytes;

  ds_scratchpad_release (c->sp);
  bytes = ds_block_read (block, 0, 8, error);
  ds_block_unref (block);
  return bytes;
}

static gpointer
after_dispose (Ctx *c, GError **error)
{
  alloc_ok (c->sp, DS_MEMORY_KIND_HOST);
  g_object_run_dispose (G_OBJECT (c->sp));
  return ds_scratchpad_alloc (c->sp, DS_MEMORY_KIND_HOST, 16, 0, error);
}

static gpointer
after_dispose_size_zero (Ctx *c, GError **error)
{
  g_object_run_dispose (G_OBJECT (c->sp));
  return ds_scratchpad_alloc (c->sp, DS_MEMORY_KIND_DEVICE, 0, 32, error);
}

static gpointer
after_dispose_iface (Ctx *c, GError **error)
{
  g_object_run_dispose (G_OBJECT (c->sp));
  return ds_scratchpad_iface_alloc (DS_SCRATCHPAD_IFACE (c->sp), DS_MEMORY_KIND_PINNED, 100, 0, error);
}

/* Programmer errors: criticals. */

static gpointer
setting_after_alloc (Ctx *c, GError **error)
{
  alloc_ok (c->sp, DS_MEMORY_KIND_HOST);
  g_object_set (c->sp, "initial-size-host", (guint64) 4096, NULL);
  g_assert_cmpuint (ds_scratchpad_get_initial_size (c->sp, DS_MEMORY_KIND_HOST), ==, 65536);
  return NULL;
}

static gpointer
max_block_size_after_alloc (Ctx *c, GError **error)
{
  alloc_ok (c->sp, DS_MEMORY_KIND_DEVICE);
  ds_scratchpad_set_max_block_size (c->sp, 1 << 20);
  g_assert_cmpuint (ds_scratchpad_get_max_block_size (c->sp), ==, DS_SCRATCHPAD_DEFAULT_MAX_BLOCK_SIZE);
  return NULL;
}

static gpointer
order_after_alloc (Ctx *c, GError **error)
{
  alloc_ok (c->sp, DS_MEMORY_KIND_HOST);
  g_object_set (c->sp, "device-order", NULL, NULL);
  return NULL;
}

static gpointer
setting_after_dispose (Ctx *c, GError **error)
{
  g_object_run_dispose (G_OBJECT (c->sp));
  g_object_set (c->sp, "host-resource", c->res[DS_MEMORY_KIND_HOST], NULL);
  return NULL;
}

static gpointer
alloc_null (Ctx *c, GError **error)
{
  return ds_scratchpad_alloc (NULL, DS_MEMORY_KIND_HOST, 16, 0, error);
}

static gpointer
iface_not_a_scratchpad (Ctx *c, GError **error)
{
  g_autoptr(GObject) object = g_object_new (G_TYPE_OBJECT, NULL);

  return ds_scratchpad_iface_alloc ((DsScratchpadIface *) object, DS_MEMORY_KIND_HOST, 16, 0, error);
}

static gpointer
release_null (Ctx *c, GError **error)
{
  ds_scratchpad_release (NULL);
  return NULL;
}

static gpointer
error_set_fits (Ctx *c, GError **error)
{
  alloc_ok (c->sp, DS_MEMORY_KIND_HOST);
  return alloc_error_set (c, 16);
}

static gpointer
error_set_new_block (Ctx *c, GError **error)
{
  return alloc_error_set (c, 1 << 20);
}

static gpointer
error_set_size_zero (Ctx *c, GError **error)
{
  return alloc_error_set (c, 0);
}

static gpointer
resource_null (Ctx *c, GError **error)
{
  return ds_memory_resource_allocate (NULL, 16, 0, error);
}

static gpointer
getter_bad_kind (Ctx *c, GError **error)
{
  g_assert_cmpuint (ds_scratchpad_get_reserved (c->sp, (DsMemoryKind) 7), ==, 0);
  return NULL;
}

static const Row rows[] = {
  /* size 0 */
  { "size-0", size_zero, NULL_NO_ERROR },
  { "size-0-device", size_zero_device, NULL_NO_ERROR },
  /* sizes that overflow once padded, or that no upstream can give */
  { "size-max", size_max, GERROR, DS_ERROR_INVALID_ARGUMENT, { "Size " MAX_STR, DEFAULT_A } },
  { "size-max-minus-1", size_max_minus_1, GERROR, DS_ERROR_INVALID_ARGUMENT, { "Size " MAX1_STR, DEFAULT_A } },
  { "size-max-minus-100", size_max_minus_100, GERROR, DS_ERROR_INVALID_ARGUMENT, { "Size 18446744073709551515", DEFAULT_A } },
  { "size-max-minus-100-align-64", size_max_minus_100_a64, GERROR, DS_ERROR_INVALID_ARGUMENT, { "Size 18446744073709551515", "alignment 64 " } },
  { "size-huge", size_huge, GERROR, DS_ERROR_OUT_OF_MEMORY, { "1099511627776 bytes of host memory", DEFAULT_A } },
  { "size-huge-managed", size_huge_managed, GERROR, DS_ERROR_OUT_OF_MEMORY, { "1099511627776 bytes of managed memory", "alignment 128:" } },
  /* alignments */
  { "align-3", align_3, GERROR, DS_ERROR_INVALID_ARGUMENT, { "Alignment 3 is not a power of two" } },
  { "align-48", align_48, GERROR, DS_ERROR_INVALID_ARGUMENT, { "Alignment 48 " } },
  { "align-max", align_max, GERROR, DS_ERROR_INVALID_ARGUMENT, { "Alignment " MAX_STR " " } },
  { "align-24-function", alloc_function_bad_align, GERROR, DS_ERROR_INVALID_ARGUMENT, { "Alignment 24 " } },
  { "align-2^63", align_2_63, GERROR, DS_ERROR_OUT_OF_MEMORY, { "16 bytes of host memory", "alignment 9223372036854775808:" } },
  { "align-2^40-size-overflows", align_2_40_size_max, GERROR, DS_ERROR_INVALID_ARGUMENT, { "Size 18446744073709547519", "alignment 1099511627776 " } },
  /* kinds */
  { "kind-42", kind_42, GERROR, DS_ERROR_INVALID_ARGUMENT, { "Unknown memory kind 42" } },
  { "kind-minus-1", kind_minus_1, GERROR, DS_ERROR_INVALID_ARGUMENT, { "Unknown memory kind -1" } },
  { "kind-n-kinds", kind_n_kinds, GERROR, DS_ERROR_INVALID_ARGUMENT, { "Unknown memory kind 4" } },
  { "iface-kind-42", iface_kind_42, GERROR, DS_ERROR_INVALID_ARGUMENT, { "Unknown memory kind 42" } },
  { "iface-align-7", iface_align_7, GERROR, DS_ERROR_INVALID_ARGUMENT, { "Alignment 7 " } },
  { "default-resource-kind-42", default_resource_kind_42, GERROR, DS_ERROR_INVALID_ARGUMENT, { "Unknown memory kind 42" } },
  /* array helpers */
  { "array-overflow", array_overflow, GERROR, DS_ERROR_INVALID_ARGUMENT, { "8589934592 elements of 2147483648 bytes overflow" } },
  { "array-overflow-function", array_overflow_function, GERROR, DS_ERROR_INVALID_ARGUMENT, { "9223372036854775807 elements of 3 bytes" } },
  { "alloc-n-overflow", alloc_n_overflow, GERROR, DS_ERROR_INVALID_ARGUMENT, { "4611686018427387903 elements of 8 bytes" } },
  { "contiguous-overflow", contiguous_overflow, GERROR, DS_ERROR_INVALID_ARGUMENT, { "2 arrays with alignment 16 overflows", "array 1 (9223372036854775807 bytes)" } },
  { "contiguous-align-12", contiguous_align_12, GERROR, DS_ERROR_INVALID_ARGUMENT, { "Alignment 12 " } },
  /* blocks */
  { "block-size-max", block_size_max, GERROR, DS_ERROR_INVALID_ARGUMENT, { "Size " MAX_STR, DEFAULT_A } },
  { "block-align-5", block_align_5, GERROR, DS_ERROR_INVALID_ARGUMENT, { "Alignment 5 " } },
  { "block-write-out-of-range", block_write_out_of_range, GERROR, DS_ERROR_INVALID_ARGUMENT, { "Range 60+8", "64 bytes" } },
  { "block-read-after-release", block_read_after_release, GERROR, DS_ERROR_INVALID_ARGUMENT, { "was released" } },
  /* resources */
  { "wrong-kind-resource", wrong_kind_resource, GERROR, DS_ERROR_INVALID_ARGUMENT, { "16 bytes of host memory", "host-resource property holds a pinned resource" } },
  { "resource-align-3", resource_align_3, GERROR, DS_ERROR_INVALID_ARGUMENT, { "Alignment 3 " } },
  { "pool-size-max-minus-1", pool_size_max_minus_1, GERROR, DS_ERROR_INVALID_ARGUMENT, { "Size " MAX1_STR, DEFAULT_A } },
  { "pool-size-huge", pool_size_huge, GERROR, DS_ERROR_OUT_OF_MEMORY, { "DsPoolResource could not allocate 1099511628776 bytes", DEFAULT_A } },
  /* use after dispose */
  { "after-dispose", after_dispose, GERROR, DS_ERROR_DISPOSED, { "16 bytes of host memory", DEFAULT_A } },
  { "after-dispose-size-0", after_dispose_size_zero, GERROR, DS_ERROR_DISPOSED, { "0 bytes of device memory", "alignment 32:" } },
  { "after-dispose-iface", after_dispose_iface, GERROR, DS_ERROR_DISPOSED, { "100 bytes of pinned memory", "was disposed" } },
  /* programmer errors */
  { "setting-after-alloc", setting_after_alloc, CRITICAL, 0, { "*initial-size-host*cannot change while it holds allocations*" } },
  { "max-block-size-after-alloc", max_block_size_after_alloc, CRITICAL, 0, { "*max-block-size*cannot change while it holds allocations*" } },
  { "order-after-alloc", order_after_alloc, CRITICAL, 0, { "*device-order*cannot change*" } },
  { "setting-after-dispose", setting_after_dispose, CRITICAL, 0, { "*host-resource*cannot change: it was disposed*" } },
  { "alloc-null", alloc_null, CRITICAL, 0, { "*assertion*DS_IS_SCRATCHPAD*failed*" } },
  { "iface-not-a-scratchpad", iface_not_a_scratchpad, CRITICAL, 0, { "*assertion*DS_IS_SCRATCHPAD_IFACE*failed*" } },
  { "release-null", release_null, CRITICAL, 0, { "*assertion*DS_IS_SCRATCHPAD*failed*" } },
  { "error-set-fits", error_set_fits, CRITICAL, 0, { "*assertion*error == NULL*failed*" } },
  { "error-set-new-block", error_set_new_block, CRITICAL, 0, { "*assertion*error == NULL*failed*" } },
  { "error-set-size-0", error_set_size_zero, CRITICAL, 0, { "*assertion*error == NULL*failed*" } },
  { "resource-null", resource_null, CRITICAL, 0, { "*assertion*DS_IS_MEMORY_RESOURCE*failed*" } },
  { "getter-bad-kind", getter_bad_kind, CRITICAL, 0, { "*assertion*DS_MEMORY_KIND_IS_VALID*failed*" } },
};

/* The harness --------------------------------------------------------------- */

static void
ctx_init (Ctx *c)
{
  for (guint kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
    c->res[kind] = ds_test_resource_new (kind, FALSE);
  c->host = ds_access_order_new_host ();
  c->sp = g_object_new (DS_TYPE_SCRATCHPAD,
                        "device-order", c->host,
                        "host-resource", c->res[DS_MEMORY_KIND_HOST],
                        "pinned-resource", c->res[DS_MEMORY_KIND_PINNED],
                        "device-resource", c->res[DS_MEMORY_KIND_DEVICE],
                        "managed-resource", c->res[DS_MEMORY_KIND_MANAGED],
                        NULL);
  c->pool_upstream = ds_test_resource_new (DS_MEMORY_KIND_HOST, FALSE);
  c->pool = ds_pool_resource_new (DS_MEMORY_RESOURCE (c->pool_upstream));
}

static void
ctx_clear (Ctx *c)
{
  g_assert_finalize_object (g_steal_pointer (&c->sp));
  g_assert_finalize_object (g_steal_pointer (&c->pool));
  for (guint kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
    {
      ds_test_resource_assert_clean (c->res[kind]);
      g_assert_finalize_object (g_steal_pointer (&c->res[kind]));
    }
  ds_test_resource_assert_clean (c->pool_upstream);
  g_assert_finalize_object (g_steal_pointer (&c->pool_upstream));
  ds_access_order_free (c->host);
}

static void
test_row (gconstpointer data)
{
  const Row *row = data;
  g_autoptr(GError) error = NULL;
  gpointer result;
  Ctx c;

  if (GLIB_SIZEOF_SIZE_T != 8)
    {
      g_test_skip ("the table's values and messages are written for a 64-bit gsize");
      return;
    }
  if (row->outcome == CRITICAL && !g_test_undefined ())
    {
      g_test_skip ("criticals are undefined behaviour (-m no-undefined)");
      return;
    }

  ctx_init (&c);

  if (row->outcome == CRITICAL)
    g_test_expect_message ("Ds", G_LOG_LEVEL_CRITICAL, row->says[0]);
  result = row->call (&c, &error);
  if (row->outcome == CRITICAL)
    g_test_assert_expected_messages ();

  g_assert_null (result);
  switch (row->outcome)
    {
    case NULL_NO_ERROR:
    case CRITICAL:
      g_assert_no_error (error);
      break;
    case GERROR:
      g_assert_error (error, DS_ERROR, (gint) row->code);
      for (guint i = 0; i < G_N_ELEMENTS (row->says) && row->says[i] != NULL; i++)
        if (strstr (error->message, row->says[i]) == NULL)
          g_error ("%s: the message \"%s\" does not say \"%s\"", row->name,
                   error->message, row->says[i]);
      break;
    default:
      g_assert_not_reached ();
    }

  ctx_clear (&c);
}

int
main (int    argc,
      char **argv)
{
  ds_test_init (&argc, &argv);

  for (guint i = 0; i < G_N_ELEMENTS (rows); i++)
    {
      g_autofree char *path = g_strdup_printf ("/Ds/BadInput/%s", rows[i].name);

      g_test_add_data_func (path, &rows[i], test_row);
    }

  return g_test_run ();
}
