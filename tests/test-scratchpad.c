/* test-scratchpad.c: DsScratchpad, construction and the allocation rules
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The cases give the scratchpad recording upstream resources (host memory
 * whatever their kind: DsTestScratchpadFixture) and a host device order,
 * so the rules of every kind are checked without a GPU. Growth and release
 * are in test-scratchpad-blocks.c, the properties in -settings.c, the
 * interface in -iface.c; the GPU cases in test-scratchpad-gpu.c and
 * test-scratchpad-upload-gpu.c.
 */

#include "config.h"

#include <string.h>

#include "ds-test-fixtures.h"

typedef DsTestScratchpadFixture Fixture;

/* Construction ------------------------------------------------------------- */

static void
test_construct_nothing (Fixture       *f,
                        gconstpointer  user_data)
{
  guint kind;

  g_test_summary ("Constructing a scratchpad allocates nothing and touches no "
                  "upstream resource");

  g_assert_cmpuint (ds_test_scratchpad_total_calls (f), ==, 0);
  for (kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
    {
      g_assert_cmpuint (ds_scratchpad_get_reserved (f->sp, kind), ==, 0);
      g_assert_cmpuint (ds_scratchpad_get_allocated (f->sp, kind), ==, 0);
      g_assert_cmpuint (ds_scratchpad_get_n_blocks (f->sp, kind), ==, 0);
      g_assert_cmpuint (ds_scratchpad_get_n_allocations (f->sp, kind), ==, 0);
    }

  /* Finalizing an unused scratchpad gives nothing back either. */
  g_assert_finalize_object (g_steal_pointer (&f->sp));
  g_assert_cmpuint (ds_test_scratchpad_total_calls (f), ==, 0);
}

static void
test_construct_no_cuda (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(DsAccessOrder) host = ds_access_order_new_host ();
  DsScratchpad *sp;
  gsize sizes[DS_N_MEMORY_KINDS] = { 1024, 0, 0, 0 };
  gpointer p;

  g_test_summary ("ds_scratchpad_new (NULL), new_full, host allocations, "
                  "release and finalize make no CUDA call: the default "
                  "device order is resolved lazily");

  /* The default host resource may be created here for the first time:
   * that must not call CUDA either. */
#if HAVE_CUDA
  g_assert_true (ds_test_cuda_spy_works ());
#endif
  ds_test_cuda_spy_reset ();

  sp = ds_scratchpad_new (NULL);
  p = ds_scratchpad_alloc (sp, DS_MEMORY_KIND_HOST, 100, 0, &error);
  g_assert_no_error (error);
  g_assert_nonnull (p);
  memset (p, 1, 100);
  g_assert_null (ds_scratchpad_alloc (sp, DS_MEMORY_KIND_DEVICE, 0, 0, &error));
  g_assert_no_error (error);
  ds_scratchpad_release (sp);
  p = ds_scratchpad_alloc (sp, DS_MEMORY_KIND_HOST, 100000, 64, &error);
  g_assert_no_error (error);
  g_assert_finalize_object (sp);

  sp = ds_scratchpad_new_full (NULL, NULL, NULL, sizes);
  g_assert_nonnull (ds_scratchpad_alloc (sp, DS_MEMORY_KIND_HOST, 100, 0, &error));
  g_assert_finalize_object (sp);

  sp = ds_scratchpad_new (host);
  g_assert_nonnull (ds_scratchpad_alloc (sp, DS_MEMORY_KIND_HOST, 100, 0, &error));
  g_assert_finalize_object (sp);

  ds_test_assert_no_cuda_calls ();
}

/* Allocation rules --------------------------------------------------------- */

static void
test_lazy_per_kind (Fixture       *f,
                    gconstpointer  user_data)
{
  guint kind, other;

  g_test_summary ("Each kind is set up on its first non-zero request, and "
                  "only that kind");

  for (kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
    {
      ds_test_scratchpad_alloc_ok (f, kind, 100, 16);
      for (other = 0; other < DS_N_MEMORY_KINDS; other++)
        {
          g_assert_cmpuint (ds_test_resource_count_allocs (f->res[other]), ==,
                            other <= kind ? 1 : 0);
          g_assert_cmpuint (ds_scratchpad_get_n_blocks (f->sp, other), ==,
                            other <= kind ? 1 : 0);
        }
    }
}

static void
test_zero_size (Fixture       *f,
                gconstpointer  user_data)
{
  guint kind;

  g_test_summary ("Size 0 returns NULL with no error and sets nothing up, "
                  "whatever the alignment");

  for (kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
    {
      g_autoptr(GError) error = NULL;

      g_assert_null (ds_scratchpad_alloc (f->sp, kind, 0, 0, &error));
      g_assert_no_error (error);
      g_assert_null (ds_scratchpad_alloc (f->sp, kind, 0, 4096, &error));
      g_assert_no_error (error);
      g_assert_null (ds_scratchpad_iface_alloc (DS_SCRATCHPAD_IFACE (f->sp), kind, 0, 16, &error));
      g_assert_no_error (error);
      g_assert_cmpuint (ds_scratchpad_get_n_blocks (f->sp, kind), ==, 0);
      g_assert_cmpuint (ds_scratchpad_get_n_allocations (f->sp, kind), ==, 0);
    }
  g_assert_cmpuint (ds_test_scratchpad_total_calls (f), ==, 0);

  /* Also once a kind is set up: nothing counted. */
  ds_test_scratchpad_alloc_ok (f, DS_MEMORY_KIND_HOST, 10, 16);
  g_assert_null (ds_scratchpad_alloc (f->sp, DS_MEMORY_KIND_HOST, 0, 16, NULL));
  g_assert_cmpuint (ds_scratchpad_get_n_allocations (f->sp, DS_MEMORY_KIND_HOST), ==, 1);
}

static void
test_zero_size_default_resources (void)
{
  g_autoptr(DsScratchpad) sp = ds_scratchpad_new (NULL);
  guint kind;

  g_test_summary ("Size 0 of a GPU kind with default resources and the "
                  "default device order needs no device: NULL, no error");

  for (kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
    {
      g_autoptr(GError) error = NULL;

      g_assert_null (ds_scratchpad_alloc (sp, kind, 0, 0, &error));
      g_assert_no_error (error);
    }
}

static void
test_default_alignment (Fixture       *f,
                        gconstpointer  user_data)
{
  guint kind, i;

  g_test_summary ("Alignment 0 means 16");

  for (kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
    for (i = 0; i < 8; i++)
      {
        gpointer p = ds_test_scratchpad_alloc_ok (f, kind, 1 + i, 0);

        ds_test_assert_aligned (p, 16);
      }
}

static void
test_alignment (Fixture       *f,
                gconstpointer  user_data)
{
  guint kind;

  g_test_summary ("Every power-of-two alignment is honoured, up to 1 MiB, "
                  "after unaligned allocations too");

  for (kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
    {
      gsize alignment;

      for (alignment = 1; alignment <= (1 << 20); alignment <<= 1)
        {
          ds_test_scratchpad_alloc_ok (f, kind, 3, 1);
          ds_test_scratchpad_alloc_ok (f, kind, 100, alignment);
        }
    }
}

static void
test_bad_alignment (Fixture       *f,
                    gconstpointer  user_data)
{
  static const gsize bad[] = { 3, 5, 6, 7, 12, 24, 48, 96, 100, 1000, 4097, G_MAXSIZE };
  guint kind, i;

  g_test_summary ("A non-power-of-two alignment is DS_ERROR_INVALID_ARGUMENT "
                  "and changes nothing: no upstream call, same statistics, "
                  "same bump pointer");

  for (kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
    {
      DsTestKindState before;
      guint8 *a, *b;

      /* On a kind not set up yet. */
      for (i = 0; i < G_N_ELEMENTS (bad); i++)
        {
          g_autoptr(GError) error = NULL;

          g_assert_null (ds_scratchpad_alloc (f->sp, kind, 64, bad[i], &error));
          g_assert_error (error, DS_ERROR, DS_ERROR_INVALID_ARGUMENT);
        }
      g_assert_cmpuint (ds_test_resource_get_n_calls (f->res[kind]), ==, 0);
      g_assert_cmpuint (ds_scratchpad_get_n_blocks (f->sp, kind), ==, 0);

      /* On a kind in use. */
      a = ds_test_scratchpad_alloc_ok (f, kind, 10, 16);
      before = ds_test_scratchpad_kind_state (f, kind);
      for (i = 0; i < G_N_ELEMENTS (bad); i++)
        {
          g_autoptr(GError) error = NULL;

          g_assert_null (ds_scratchpad_alloc (f->sp, kind, 64, bad[i], &error));
          g_assert_error (error, DS_ERROR, DS_ERROR_INVALID_ARGUMENT);
          g_assert_null (ds_scratchpad_iface_alloc (DS_SCRATCHPAD_IFACE (f->sp),
                                                    kind, 64, bad[i], NULL));
        }
      ds_test_assert_kind_state_equal (before, ds_test_scratchpad_kind_state (f, kind));
      g_assert_cmpuint (ds_test_resource_get_n_calls (f->res[kind]), ==, before.n_calls);
      b = ds_test_scratchpad_alloc_ok (f, kind, 10, 16);
      g_assert_true (b == a + 16);
    }
}

static void
test_overflow (Fixture       *f,
               gconstpointer  user_data)
{
  static const struct { gsize size, alignment; } bad[] = {
    { G_MAXSIZE, 0 },
    { G_MAXSIZE, 1 },
    { G_MAXSIZE, 16 },
    { G_MAXSIZE - 1, 16 },
    { G_MAXSIZE - 15, 16 },
    { G_MAXSIZE - 100, 4096 },
    { G_MAXSIZE / 2 + 1, (gsize) 1 << (GLIB_SIZEOF_SIZE_T * 8 - 1) },
  };
  static const struct { gsize size, alignment; } huge[] = {
    { G_MAXSIZE / 2 + 2, 16 },
    { 1, (gsize) 1 << (GLIB_SIZEOF_SIZE_T * 8 - 1) },
    { (gsize) 1 << 40, 16 },
  };
  guint kind, i;

  g_test_summary ("A size whose padded total overflows is "
                  "DS_ERROR_INVALID_ARGUMENT and changes nothing; a huge "
                  "representable size fails cleanly too");

  for (kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
    {
      DsTestKindState before;
      guint8 *a, *b;

      a = ds_test_scratchpad_alloc_ok (f, kind, 10, 16);
      before = ds_test_scratchpad_kind_state (f, kind);

      for (i = 0; i < G_N_ELEMENTS (bad); i++)
        {
          g_autoptr(GError) error = NULL;

          g_assert_null (ds_scratchpad_alloc (f->sp, kind, bad[i].size, bad[i].alignment, &error));
          g_assert_error (error, DS_ERROR, DS_ERROR_INVALID_ARGUMENT);
        }
      ds_test_assert_kind_state_equal (before, ds_test_scratchpad_kind_state (f, kind));
      g_assert_cmpuint (ds_test_resource_get_n_calls (f->res[kind]), ==, before.n_calls);

      /* Representable, but more than any upstream can provide: an error
       * (the upstream's or ours), no crash, nothing kept. */
      for (i = 0; i < G_N_ELEMENTS (huge); i++)
      {
        g_autoptr(GError) error = NULL;

        g_assert_null (ds_scratchpad_alloc (f->sp, kind, huge[i].size, huge[i].alignment, &error));
        g_assert_nonnull (error);
        g_assert_true (error->domain == DS_ERROR);
        g_assert_true (error->code == DS_ERROR_INVALID_ARGUMENT ||
                       error->code == DS_ERROR_OUT_OF_MEMORY);
        ds_test_assert_kind_state_equal (before, ds_test_scratchpad_kind_state (f, kind));
        g_assert_cmpuint (ds_test_resource_get_n_live (f->res[kind]), ==, 1);
      }

      b = ds_test_scratchpad_alloc_ok (f, kind, 10, 16);
      g_assert_true (b == a + 16);
    }
}

static void
test_unknown_kind (Fixture       *f,
                   gconstpointer  user_data)
{
  static const gint bad[] = { 4, 7, -1, 100, G_MAXINT, G_MININT };
  guint i;

  g_test_summary ("An unknown kind value is DS_ERROR_INVALID_ARGUMENT with no "
                  "state change, through every entry point");

  for (i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autoptr(GError) error = NULL;

      g_assert_null (ds_scratchpad_alloc (f->sp, (DsMemoryKind) bad[i], 64, 16, &error));
      g_assert_error (error, DS_ERROR, DS_ERROR_INVALID_ARGUMENT);
      g_clear_error (&error);

      g_assert_null (ds_scratchpad_iface_alloc (DS_SCRATCHPAD_IFACE (f->sp),
                                                (DsMemoryKind) bad[i], 64, 16, &error));
      g_assert_error (error, DS_ERROR, DS_ERROR_INVALID_ARGUMENT);
      g_clear_error (&error);

      g_assert_null (ds_scratchpad_alloc_array (f->sp, (DsMemoryKind) bad[i], 4, 4, 16, &error));
      g_assert_error (error, DS_ERROR, DS_ERROR_INVALID_ARGUMENT);
      g_clear_error (&error);

      g_assert_null (ds_scratchpad_alloc_block (f->sp, (DsMemoryKind) bad[i], 64, 16, &error));
      g_assert_error (error, DS_ERROR, DS_ERROR_INVALID_ARGUMENT);
      g_clear_error (&error);

      /* Size 0 with a bad kind: still an error, not a silent NULL. */
      g_assert_null (ds_scratchpad_alloc (f->sp, (DsMemoryKind) bad[i], 0, 16, &error));
      g_assert_error (error, DS_ERROR, DS_ERROR_INVALID_ARGUMENT);
    }

  g_assert_cmpuint (ds_test_scratchpad_total_calls (f), ==, 0);
}

static void
test_no_overlap (Fixture       *f,
                 gconstpointer  user_data)
{
  g_autoptr(GArray) ranges = g_array_new (FALSE, FALSE, sizeof (DsTestRange));
  guint i;

  g_test_summary ("Random requests over all kinds: each pointer aligned as "
                  "asked, inside a live block of its kind's upstream, and no "
                  "two allocations overlap");

  for (i = 0; i < 1500; i++)
    {
      DsTestRange r;
      gsize alignment = (gsize) 1 << g_test_rand_int_range (0, 12);
      guint kind;
      gpointer p;

      kind = g_test_rand_int_range (0, DS_N_MEMORY_KINDS);
      r.size = 1 + (g_test_rand_bit () ? g_test_rand_int_range (0, 64) :
                                         g_test_rand_int_range (0, 50000));
      p = ds_test_scratchpad_alloc_ok (f, kind, r.size, alignment);
      memset (p, i & 0xff, r.size);
      r.start = (guintptr) p;
      g_array_append_val (ranges, r);
    }

  ds_test_assert_disjoint (ranges);
}

/* Without CUDA ---------------------------------------------------------------------- */

static void
test_no_device (void)
{
  g_autoptr(DsScratchpad) sp = ds_scratchpad_new (NULL);
  g_autoptr(GError) error = NULL;
  guint8 data[64] = { 0, };
  guint kind;
  gpointer p;

  DS_TEST_REQUIRE_NO_CUDA ();

  g_test_summary ("Without a device, host memory works fully; the GPU kinds "
                  "and the upload helpers fail with DS_ERROR_NO_DEVICE and "
                  "say why; the scratchpad stays usable");

  for (kind = DS_MEMORY_KIND_PINNED; kind <= DS_MEMORY_KIND_MANAGED; kind++)
    {
      g_assert_null (ds_scratchpad_alloc (sp, kind, 100, 0, &error));
      g_assert_error (error, DS_ERROR, DS_TEST_NO_DEVICE_ERROR);
      g_assert_nonnull (strstr (error->message, "CUDA"));
      g_clear_error (&error);
      g_assert_cmpuint (ds_scratchpad_get_n_blocks (sp, kind), ==, 0);
    }

  g_assert_null (ds_scratchpad_to_device (sp, data, sizeof data, 0, &error));
  g_assert_error (error, DS_ERROR, DS_TEST_NO_DEVICE_ERROR);
  g_clear_error (&error);

  p = ds_scratchpad_alloc (sp, DS_MEMORY_KIND_HOST, 100000, 0, &error);
  g_assert_no_error (error);
  memset (p, 0, 100000);
  ds_scratchpad_release (sp);
  p = ds_scratchpad_alloc (sp, DS_MEMORY_KIND_HOST, 10, 0, &error);
  g_assert_no_error (error);
  g_assert_nonnull (p);
}

static void
test_no_device_stream_order (void)
{
  g_autoptr(DsAccessOrder) order = ds_access_order_new_stream (NULL, -1);
  g_autoptr(GError) error = NULL;
  DsScratchpad *sp;

  DS_TEST_REQUIRE_NO_CUDA ();

  g_test_summary ("Without a device, a scratchpad on a stream order is still "
                  "constructed; host memory works, device memory fails with "
                  "an error");

  sp = ds_scratchpad_new (order);
  g_assert_nonnull (ds_scratchpad_alloc (sp, DS_MEMORY_KIND_HOST, 10, 0, &error));
  g_assert_no_error (error);
  g_assert_null (ds_scratchpad_alloc (sp, DS_MEMORY_KIND_DEVICE, 10, 0, &error));
  g_assert_error (error, DS_ERROR, DS_TEST_NO_DEVICE_ERROR);
  g_assert_finalize_object (sp);
}

static void
test_to_contiguous_bad_input (Fixture       *f,
                              gconstpointer  user_data)
{
  guint8 a[16] = { 0, }, b[16] = { 0, };
  gconstpointer arrays[2] = { a, b };
  gsize overflow[2] = { G_MAXSIZE - 8, 16 };
  gsize zeros[2] = { 0, 0 };
  gpointer ptrs[2] = { (gpointer) 1, (gpointer) 1 };
  g_autoptr(GError) error = NULL;

  g_test_summary ("ds_scratchpad_to_contiguous_device: an overflowing total "
                  "or a bad alignment is DS_ERROR_INVALID_ARGUMENT before any "
                  "allocation; all sizes 0 is NULL without error");

  g_assert_null (ds_scratchpad_to_contiguous_device (f->sp, 2, arrays, overflow, 16, NULL, &error));
  g_assert_error (error, DS_ERROR, DS_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);

  g_assert_null (ds_scratchpad_to_contiguous_device (f->sp, 2, arrays, zeros, 12, NULL, &error));
  g_assert_error (error, DS_ERROR, DS_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);

  g_assert_null (ds_scratchpad_to_contiguous_device (f->sp, 2, arrays, zeros, 0, ptrs, &error));
  g_assert_no_error (error);
  g_assert_null (ptrs[0]);
  g_assert_null (ptrs[1]);

  g_assert_null (ds_scratchpad_to_contiguous_device (f->sp, 0, NULL, NULL, 0, NULL, &error));
  g_assert_no_error (error);

  g_assert_null (ds_scratchpad_to_device (f->sp, a, 0, 0, &error));
  g_assert_no_error (error);

  g_assert_cmpuint (ds_test_scratchpad_total_calls (f), ==, 0);
}

static void
test_preconditions (Fixture       *f,
                    gconstpointer  user_data)
{
  g_autoptr(GObject) not_a_scratchpad = g_object_new (G_TYPE_OBJECT, NULL);

  g_test_summary ("NULL and non-scratchpad arguments are programmer errors: "
                  "a critical, a harmless return value, no state change");

  if (!g_test_undefined ())
    return;

  g_test_expect_message ("Ds", G_LOG_LEVEL_CRITICAL, "*assertion*failed*");
  g_assert_null (ds_scratchpad_alloc (NULL, DS_MEMORY_KIND_HOST, 10, 0, NULL));
  g_test_assert_expected_messages ();

  g_test_expect_message ("Ds", G_LOG_LEVEL_CRITICAL, "*assertion*failed*");
  g_assert_null (ds_scratchpad_iface_alloc (NULL, DS_MEMORY_KIND_HOST, 10, 0, NULL));
  g_test_assert_expected_messages ();

  g_test_expect_message ("Ds", G_LOG_LEVEL_CRITICAL, "*assertion*failed*");
  g_assert_null (ds_scratchpad_iface_alloc ((DsScratchpadIface *) not_a_scratchpad,
                                            DS_MEMORY_KIND_HOST, 10, 0, NULL));
  g_test_assert_expected_messages ();

  g_test_expect_message ("Ds", G_LOG_LEVEL_CRITICAL, "*assertion*failed*");
  ds_scratchpad_release (NULL);
  g_test_assert_expected_messages ();

  g_test_expect_message ("Ds", G_LOG_LEVEL_CRITICAL, "*assertion*failed*");
  ds_scratchpad_release ((DsScratchpad *) not_a_scratchpad);
  g_test_assert_expected_messages ();

  g_test_expect_message ("Ds", G_LOG_LEVEL_CRITICAL, "*assertion*failed*");
  g_assert_null (ds_scratchpad_alloc_block (NULL, DS_MEMORY_KIND_HOST, 10, 0, NULL));
  g_test_assert_expected_messages ();

  g_test_expect_message ("Ds", G_LOG_LEVEL_CRITICAL, "*assertion*failed*");
  g_assert_null (ds_scratchpad_to_device (f->sp, NULL, 10, 0, NULL));
  g_test_assert_expected_messages ();

  g_test_expect_message ("Ds", G_LOG_LEVEL_CRITICAL, "*assertion*failed*");
  g_assert_null (ds_scratchpad_to_contiguous_device (f->sp, 2, NULL, NULL, 0, NULL, NULL));
  g_test_assert_expected_messages ();

  g_test_expect_message ("Ds", G_LOG_LEVEL_CRITICAL, "*assertion*failed*");
  g_assert_null (ds_scratchpad_get_device_order (NULL));
  g_test_assert_expected_messages ();

  g_test_expect_message ("Ds", G_LOG_LEVEL_CRITICAL, "*assertion*failed*");
  g_assert_null (ds_scratchpad_get_dealloc_order (f->sp, (DsMemoryKind) 7));
  g_test_assert_expected_messages ();

  g_test_expect_message ("Ds", G_LOG_LEVEL_CRITICAL, "*assertion*failed*");
  g_assert_cmpuint (ds_scratchpad_get_reserved (f->sp, (DsMemoryKind) 7), ==, 0);
  g_test_assert_expected_messages ();

  g_test_expect_message ("Ds", G_LOG_LEVEL_CRITICAL, "*assertion*failed*");
  g_assert_cmpuint (ds_scratchpad_get_n_blocks (NULL, DS_MEMORY_KIND_HOST), ==, 0);
  g_test_assert_expected_messages ();

  g_assert_cmpuint (ds_test_scratchpad_total_calls (f), ==, 0);
}

int
main (int    argc,
      char **argv)
{
  ds_test_init (&argc, &argv);

#define ADD(path, func) ds_test_add_scratchpad ("/Ds/Scratchpad/" path, 0, func)

  ADD ("construct/allocates-nothing", test_construct_nothing);
  g_test_add_func ("/Ds/Scratchpad/construct/no-cuda-calls", test_construct_no_cuda);
  ADD ("alloc/lazy-per-kind", test_lazy_per_kind);
  ADD ("alloc/zero-size", test_zero_size);
  g_test_add_func ("/Ds/Scratchpad/alloc/zero-size-default-resources", test_zero_size_default_resources);
  ADD ("alloc/default-alignment", test_default_alignment);
  ADD ("alloc/alignment", test_alignment);
  ADD ("alloc/bad-alignment", test_bad_alignment);
  ADD ("alloc/overflow", test_overflow);
  ADD ("alloc/unknown-kind", test_unknown_kind);
  ADD ("alloc/no-overlap", test_no_overlap);
  g_test_add_func ("/Ds/Scratchpad/no-device/gpu-kinds", test_no_device);
  g_test_add_func ("/Ds/Scratchpad/no-device/stream-order", test_no_device_stream_order);
  ADD ("to-contiguous/bad-input", test_to_contiguous_bad_input);
  ADD ("preconditions", test_preconditions);

#undef ADD

  return g_test_run ();
}
