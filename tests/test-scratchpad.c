/* test-scratchpad.c: DsScratchpad and DsScratchpadIface
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The CPU cases give the scratchpad recording upstream resources (host
 * memory whatever their kind) and a host device order, so the allocation,
 * growth, accounting and release rules of every kind are checked without a
 * GPU. The /gpu/ cases need a CUDA device and skip without one.
 */

#include "config.h"

#include <string.h>

#include "ds-test-resource.h"
#include "ds-test-utils.h"

#define KiB ((gsize) 1024)

static const char * const kind_names[] = { "host", "pinned", "device", "managed" };

enum
{
  FIXTURE_STREAM_ORDERED = 1 << 0,
};

typedef struct
{
  DsTestResource *res[DS_N_MEMORY_KINDS];
  DsAccessOrder  *host;
  DsScratchpad   *sp;
} Fixture;

static DsScratchpad *
new_scratchpad (Fixture             *f,
                const DsAccessOrder *device_order)
{
  return g_object_new (DS_TYPE_SCRATCHPAD,
                       "device-order", device_order,
                       "host-resource", f->res[DS_MEMORY_KIND_HOST],
                       "pinned-resource", f->res[DS_MEMORY_KIND_PINNED],
                       "device-resource", f->res[DS_MEMORY_KIND_DEVICE],
                       "managed-resource", f->res[DS_MEMORY_KIND_MANAGED],
                       NULL);
}

static void
fixture_setup (Fixture       *f,
               gconstpointer  user_data)
{
  guint flags = GPOINTER_TO_UINT (user_data);
  guint kind;

  for (kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
    f->res[kind] = ds_test_resource_new (kind, (flags & FIXTURE_STREAM_ORDERED) != 0);
  f->host = ds_access_order_new_host ();
  f->sp = new_scratchpad (f, f->host);
}

static void
fixture_teardown (Fixture       *f,
                  gconstpointer  user_data)
{
  guint kind;

  if (f->sp != NULL)
    g_assert_finalize_object (g_steal_pointer (&f->sp));

  for (kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
    {
      ds_test_resource_assert_clean (f->res[kind]);
      g_assert_finalize_object (g_steal_pointer (&f->res[kind]));
    }
  g_clear_pointer (&f->host, ds_access_order_free);
}

static guint
total_calls (Fixture *f)
{
  guint kind, n = 0;

  for (kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
    n += ds_test_resource_get_n_calls (f->res[kind]);
  return n;
}

static gpointer
alloc_ok (Fixture      *f,
          DsMemoryKind  kind,
          gsize         size,
          gsize         alignment)
{
  g_autoptr(GError) error = NULL;
  gpointer p = ds_scratchpad_alloc (f->sp, kind, size, alignment, &error);

  g_assert_no_error (error);
  g_assert_nonnull (p);
  ds_test_assert_aligned (p, alignment != 0 ? alignment : 16);
  g_assert_true (ds_test_resource_owns (f->res[kind], p, size));

  return p;
}

typedef struct
{
  guint64 reserved, allocated, n_allocations;
  guint   n_blocks;
  guint   n_calls;
} KindState;

static KindState
kind_state (Fixture      *f,
            DsMemoryKind  kind)
{
  KindState s;

  s.reserved = ds_scratchpad_get_reserved (f->sp, kind);
  s.allocated = ds_scratchpad_get_allocated (f->sp, kind);
  s.n_allocations = ds_scratchpad_get_n_allocations (f->sp, kind);
  s.n_blocks = ds_scratchpad_get_n_blocks (f->sp, kind);
  s.n_calls = ds_test_resource_get_n_calls (f->res[kind]);
  return s;
}

#define assert_state_equal(a, b) \
  G_STMT_START { \
    g_assert_cmpuint ((a).reserved, ==, (b).reserved); \
    g_assert_cmpuint ((a).allocated, ==, (b).allocated); \
    g_assert_cmpuint ((a).n_allocations, ==, (b).n_allocations); \
    g_assert_cmpuint ((a).n_blocks, ==, (b).n_blocks); \
  } G_STMT_END

/* Construction ------------------------------------------------------------- */

static void
test_construct_nothing (Fixture       *f,
                        gconstpointer  user_data)
{
  guint kind;

  g_test_summary ("Constructing a scratchpad allocates nothing and touches no "
                  "upstream resource");

  g_assert_cmpuint (total_calls (f), ==, 0);
  for (kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
    {
      g_assert_cmpuint (ds_scratchpad_get_reserved (f->sp, kind), ==, 0);
      g_assert_cmpuint (ds_scratchpad_get_allocated (f->sp, kind), ==, 0);
      g_assert_cmpuint (ds_scratchpad_get_n_blocks (f->sp, kind), ==, 0);
      g_assert_cmpuint (ds_scratchpad_get_n_allocations (f->sp, kind), ==, 0);
    }

  /* Finalizing an unused scratchpad gives nothing back either. */
  g_assert_finalize_object (g_steal_pointer (&f->sp));
  g_assert_cmpuint (total_calls (f), ==, 0);
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
      alloc_ok (f, kind, 100, 16);
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
  g_assert_cmpuint (total_calls (f), ==, 0);

  /* Also once a kind is set up: nothing counted. */
  alloc_ok (f, DS_MEMORY_KIND_HOST, 10, 16);
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
        gpointer p = alloc_ok (f, kind, 1 + i, 0);

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
          alloc_ok (f, kind, 3, 1);
          alloc_ok (f, kind, 100, alignment);
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
      KindState before;
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
      a = alloc_ok (f, kind, 10, 16);
      before = kind_state (f, kind);
      for (i = 0; i < G_N_ELEMENTS (bad); i++)
        {
          g_autoptr(GError) error = NULL;

          g_assert_null (ds_scratchpad_alloc (f->sp, kind, 64, bad[i], &error));
          g_assert_error (error, DS_ERROR, DS_ERROR_INVALID_ARGUMENT);
          g_assert_null (ds_scratchpad_iface_alloc (DS_SCRATCHPAD_IFACE (f->sp),
                                                    kind, 64, bad[i], NULL));
        }
      assert_state_equal (before, kind_state (f, kind));
      g_assert_cmpuint (ds_test_resource_get_n_calls (f->res[kind]), ==, before.n_calls);
      b = alloc_ok (f, kind, 10, 16);
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
      KindState before;
      guint8 *a, *b;

      a = alloc_ok (f, kind, 10, 16);
      before = kind_state (f, kind);

      for (i = 0; i < G_N_ELEMENTS (bad); i++)
        {
          g_autoptr(GError) error = NULL;

          g_assert_null (ds_scratchpad_alloc (f->sp, kind, bad[i].size, bad[i].alignment, &error));
          g_assert_error (error, DS_ERROR, DS_ERROR_INVALID_ARGUMENT);
        }
      assert_state_equal (before, kind_state (f, kind));
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
        assert_state_equal (before, kind_state (f, kind));
        g_assert_cmpuint (ds_test_resource_get_n_live (f->res[kind]), ==, 1);
      }

      b = alloc_ok (f, kind, 10, 16);
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

  g_assert_cmpuint (total_calls (f), ==, 0);
}

typedef struct
{
  guintptr start;
  gsize    size;
  guint    kind;
} Range;

static gint
compare_ranges (gconstpointer a,
                gconstpointer b)
{
  const Range *ra = a, *rb = b;

  return ra->start < rb->start ? -1 : ra->start > rb->start ? 1 : 0;
}

static void
test_no_overlap (Fixture       *f,
                 gconstpointer  user_data)
{
  g_autoptr(GArray) ranges = g_array_new (FALSE, FALSE, sizeof (Range));
  guint i;

  g_test_summary ("Random requests over all kinds: each pointer aligned as "
                  "asked, inside a live block of its kind's upstream, and no "
                  "two allocations overlap");

  for (i = 0; i < 1500; i++)
    {
      Range r;
      gsize alignment = (gsize) 1 << g_test_rand_int_range (0, 12);
      gpointer p;

      r.kind = g_test_rand_int_range (0, DS_N_MEMORY_KINDS);
      r.size = 1 + (g_test_rand_bit () ? g_test_rand_int_range (0, 64) :
                                         g_test_rand_int_range (0, 50000));
      p = alloc_ok (f, r.kind, r.size, alignment);
      memset (p, i & 0xff, r.size);
      r.start = (guintptr) p;
      g_array_append_val (ranges, r);
    }

  g_array_sort (ranges, compare_ranges);
  for (i = 1; i < ranges->len; i++)
    {
      Range *prev = &g_array_index (ranges, Range, i - 1);
      Range *cur = &g_array_index (ranges, Range, i);

      g_assert_cmpuint (prev->start + prev->size, <=, cur->start);
    }
}

/* Growth --------------------------------------------------------------------- */

static void
test_growth (Fixture       *f,
             gconstpointer  user_data)
{
  guint kind;

  g_test_summary ("First block 64 KiB, then ×2; a request larger than the "
                  "next block gets the smallest doubling that fits; an exact "
                  "fit takes no larger block; the old tail is abandoned");

  for (kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
    {
      DsTestResource *r = f->res[kind];
      DsTestCall call;
      gpointer p;

      g_assert_cmpuint (ds_scratchpad_get_initial_size (f->sp, kind), ==, 64 * KiB);

      alloc_ok (f, kind, 1, 16);
      call = ds_test_resource_get_call (r, 0);
      g_assert_cmpuint (call.size, ==, 64 * KiB);

      alloc_ok (f, kind, 64 * KiB, 16);
      call = ds_test_resource_get_call (r, 1);
      g_assert_cmpuint (call.size, ==, 128 * KiB);

      /* The tail of the first block is not reused. */
      p = alloc_ok (f, kind, 16, 16);
      g_assert_true ((guintptr) p >= (guintptr) call.ptr &&
                     (guintptr) p < (guintptr) call.ptr + call.size);

      alloc_ok (f, kind, 300000, 16);
      call = ds_test_resource_get_call (r, 2);
      g_assert_cmpuint (call.size, ==, 512 * KiB);

      alloc_ok (f, kind, 512 * KiB, 16);
      call = ds_test_resource_get_call (r, 3);
      g_assert_cmpuint (call.size, ==, 1024 * KiB);

      alloc_ok (f, kind, 2048 * KiB, 16);
      call = ds_test_resource_get_call (r, 4);
      g_assert_cmpuint (call.size, ==, 2048 * KiB);

      g_assert_cmpuint (ds_test_resource_get_n_calls (r), ==, 5);
      g_assert_cmpuint (ds_scratchpad_get_n_blocks (f->sp, kind), ==, 5);
      g_assert_cmpuint (ds_scratchpad_get_reserved (f->sp, kind), ==,
                        (64 + 128 + 512 + 1024 + 2048) * KiB);
    }
}

static void
test_bump_no_upstream (Fixture       *f,
                       gconstpointer  user_data)
{
  guint kind, i;

  g_test_summary ("Allocations that fit the current block make no upstream "
                  "call (and no CUDA call)");

  for (kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
    {
      alloc_ok (f, kind, 8, 16);
      g_assert_cmpuint (ds_test_resource_get_n_calls (f->res[kind]), ==, 1);

      ds_test_cuda_spy_reset ();
      for (i = 0; i < 1000; i++)
        {
          g_autoptr(GError) error = NULL;

          g_assert_nonnull (ds_scratchpad_alloc (f->sp, kind, 32, 16, &error));
          g_assert_nonnull (ds_scratchpad_iface_alloc (DS_SCRATCHPAD_IFACE (f->sp),
                                                       kind, 16, 16, &error));
        }
      ds_test_assert_no_cuda_calls ();
      g_assert_cmpuint (ds_test_resource_get_n_calls (f->res[kind]), ==, 1);
      g_assert_cmpuint (ds_scratchpad_get_n_allocations (f->sp, kind), ==, 2001);
    }
}

static void
check_initial_sizes (DsScratchpad   *sp,
                     DsTestResource *res[],
                     const gsize     expected[])
{
  guint kind;

  for (kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
    {
      g_autoptr(GError) error = NULL;
      g_autofree char *name = g_strdup_printf ("initial-size-%s", kind_names[kind]);
      guint64 value = 0;

      g_assert_cmpuint (ds_scratchpad_get_initial_size (sp, kind), ==, expected[kind]);
      g_object_get (sp, name, &value, NULL);
      g_assert_cmpuint (value, ==, expected[kind]);

      if (res == NULL)
        continue;

      g_assert_nonnull (ds_scratchpad_alloc (sp, kind, 1, 1, &error));
      g_assert_no_error (error);
      g_assert_nonnull (ds_scratchpad_alloc (sp, kind, expected[kind], 1, &error));
      g_assert_no_error (error);
      g_assert_cmpuint (ds_test_resource_get_n_calls (res[kind]), ==, 2);
      g_assert_cmpuint (ds_test_resource_get_call (res[kind], 0).size, ==, expected[kind]);
      g_assert_cmpuint (ds_test_resource_get_call (res[kind], 1).size, ==, 2 * expected[kind]);
    }
}

static void
test_initial_sizes_properties (Fixture       *f,
                               gconstpointer  user_data)
{
  DsScratchpad *sp;
  static const gsize expected[] = { 4 * KiB, 8 * KiB, 65536, 1000 };

  g_test_summary ("initial-size-* properties set the first block of each "
                  "kind; 0 means 64 KiB; the property reads back the size "
                  "in use");

  g_clear_object (&f->sp);
  sp = g_object_new (DS_TYPE_SCRATCHPAD,
                     "device-order", f->host,
                     "host-resource", f->res[0],
                     "pinned-resource", f->res[1],
                     "device-resource", f->res[2],
                     "managed-resource", f->res[3],
                     "initial-size-host", (guint64) 4 * KiB,
                     "initial-size-pinned", (guint64) 8 * KiB,
                     "initial-size-device", (guint64) 0,
                     "initial-size-managed", (guint64) 1000,
                     NULL);
  check_initial_sizes (sp, f->res, expected);
  g_assert_finalize_object (sp);
}

static void
test_initial_sizes_new_full (void)
{
  g_autoptr(DsTestResource) host = ds_test_resource_new (DS_MEMORY_KIND_HOST, FALSE);
  g_autoptr(DsAccessOrder) order = ds_access_order_new_host ();
  static const gsize sizes[] = { 2 * KiB, 3 * KiB, 5 * KiB, 7 * KiB };
  static const gsize zeros[] = { 0, 0, 0, 0 };
  static const gsize defaults[] = { 65536, 65536, 65536, 65536 };
  DsScratchpad *sp;
  gpointer p;
  g_autoptr(GError) error = NULL;

  g_test_summary ("ds_scratchpad_new_full's initial_sizes set each kind's "
                  "first block (0 or NULL = 64 KiB); host memory comes from "
                  "the default host resource");

  ds_memory_resource_set_default (DS_MEMORY_KIND_HOST, -1, DS_MEMORY_RESOURCE (host));

  sp = ds_scratchpad_new_full (order, NULL, NULL, sizes);
  check_initial_sizes (sp, NULL, sizes);
  p = ds_scratchpad_alloc (sp, DS_MEMORY_KIND_HOST, 1, 1, &error);
  g_assert_no_error (error);
  g_assert_true (ds_test_resource_owns (host, p, 1));
  g_assert_cmpuint (ds_test_resource_get_call (host, 0).size, ==, 2 * KiB);
  g_assert_finalize_object (sp);

  sp = ds_scratchpad_new_full (order, NULL, NULL, zeros);
  check_initial_sizes (sp, NULL, defaults);
  g_assert_finalize_object (sp);

  sp = ds_scratchpad_new_full (order, NULL, NULL, NULL);
  check_initial_sizes (sp, NULL, defaults);
  g_assert_finalize_object (sp);

  sp = ds_scratchpad_new (NULL);
  check_initial_sizes (sp, NULL, defaults);
  g_assert_finalize_object (sp);

  ds_memory_resource_set_default (DS_MEMORY_KIND_HOST, -1, NULL);
  ds_test_resource_assert_clean (host);
}

/* Release -------------------------------------------------------------------- */

/* Fills every kind with several blocks. Returns the pointers of the blocks,
 * per kind, in the order they were taken. */
static void
fill_all_kinds (Fixture *f,
                guint    n_blocks)
{
  guint kind, i;

  for (kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
    for (i = 0; i < n_blocks; i++)
      alloc_ok (f, kind, (64 * KiB) << i, 16);

  for (kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
    g_assert_cmpuint (ds_scratchpad_get_n_blocks (f->sp, kind), ==, n_blocks);
}

static void
check_released (Fixture  *f,
                guint     n_blocks,
                gboolean  expect_async,
                const DsAccessOrder *orders[DS_N_MEMORY_KINDS])
{
  guint kind, i;
  guint64 last_seq_of_kind[DS_N_MEMORY_KINDS] = { 0, };
  guint64 first_seq_of_kind[DS_N_MEMORY_KINDS] = { 0, };

  for (kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
    {
      DsTestResource *r = f->res[kind];
      guint n = ds_test_resource_get_n_calls (r);

      /* Each block back once, exactly as taken, newest first. */
      ds_test_resource_assert_clean (r);
      g_assert_cmpuint (n, ==, 2 * n_blocks);
      for (i = 0; i < n_blocks; i++)
        {
          DsTestCall alloc = ds_test_resource_get_call (r, n_blocks - 1 - i);
          DsTestCall dealloc = ds_test_resource_get_call (r, n_blocks + i);
          gboolean async = expect_async && kind != DS_MEMORY_KIND_HOST;

          g_assert_true (dealloc.ptr == alloc.ptr);
          g_assert_cmpuint (dealloc.size, ==, alloc.size);
          g_assert_cmpuint (dealloc.alignment, ==, alloc.alignment);
          g_assert_cmpint (dealloc.op, ==, async ? DS_TEST_OP_DEALLOCATE_ASYNC
                                                 : DS_TEST_OP_DEALLOCATE);
          if (async)
            {
              g_assert_true (dealloc.has_order);
              g_assert_true (ds_access_order_equal (&dealloc.order, orders[kind]));
            }
          if (i == 0)
            first_seq_of_kind[kind] = dealloc.seq;
          last_seq_of_kind[kind] = dealloc.seq;
        }

      g_assert_cmpuint (ds_scratchpad_get_n_blocks (f->sp, kind), ==, 0);
      g_assert_cmpuint (ds_scratchpad_get_reserved (f->sp, kind), ==, 0);
      g_assert_cmpuint (ds_scratchpad_get_allocated (f->sp, kind), ==, 0);
      g_assert_cmpuint (ds_scratchpad_get_n_allocations (f->sp, kind), ==, 0);
    }

  /* Kinds in the order host → pinned → device → managed. */
  for (kind = 1; kind < DS_N_MEMORY_KINDS; kind++)
    g_assert_cmpuint (last_seq_of_kind[kind - 1], <, first_seq_of_kind[kind]);
}

static void
test_release_all (Fixture       *f,
                  gconstpointer  user_data)
{
  g_test_summary ("ds_scratchpad_release gives every block back to its "
                  "upstream once, with its size and alignment, newest first, "
                  "kinds host → pinned → device → managed; host order means "
                  "plain deallocate even for a stream-ordered upstream");

  fill_all_kinds (f, 4);
  ds_scratchpad_release (f->sp);
  check_released (f, 4, FALSE, NULL);

  /* Nothing is given back twice. */
  ds_scratchpad_release (f->sp);
  g_assert_cmpuint (total_calls (f), ==, 4 * 8);
}

static void
test_finalize_releases (Fixture       *f,
                        gconstpointer  user_data)
{
  DsTestResource *res[DS_N_MEMORY_KINDS];
  guint kind, i;

  g_test_summary ("Finalizing a scratchpad releases exactly as "
                  "ds_scratchpad_release does, and drops its references on "
                  "the upstream resources");

  fill_all_kinds (f, 3);
  for (kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
    res[kind] = f->res[kind];

  g_assert_finalize_object (g_steal_pointer (&f->sp));

  /* check_released reads statistics: use a fresh scratchpad for those. */
  for (kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
    {
      guint n = ds_test_resource_get_n_calls (res[kind]);

      ds_test_resource_assert_clean (res[kind]);
      g_assert_cmpuint (n, ==, 6);
      for (i = 0; i < 3; i++)
        g_assert_true (ds_test_resource_get_call (res[kind], 3 + i).ptr ==
                       ds_test_resource_get_call (res[kind], 2 - i).ptr);
      /* Only the fixture's reference is left. */
      g_assert_cmpuint (G_OBJECT (res[kind])->ref_count, ==, 1);
    }
  for (kind = 1; kind < DS_N_MEMORY_KINDS; kind++)
    g_assert_cmpuint (ds_test_resource_get_call (res[kind - 1], 5).seq, <,
                      ds_test_resource_get_call (res[kind], 3).seq);
}

static void
test_release_usable_again (Fixture       *f,
                           gconstpointer  user_data)
{
  guint cycle, kind;

  g_test_summary ("After ds_scratchpad_release the scratchpad is empty and "
                  "usable again; across many release/alloc cycles no pointer "
                  "into a released block is handed out (DALI's stale bump "
                  "pointer), and nothing accumulates");

  for (cycle = 0; cycle < 200; cycle++)
    {
      guint n = 1 + cycle % 9;

      for (kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
        {
          guint i, allocs_before = ds_test_resource_count_allocs (f->res[kind]);
          guint64 sum = 0;

          for (i = 0; i < n; i++)
            {
              gsize size = 1 + g_test_rand_int_range (0, 30000);
              gpointer p = alloc_ok (f, kind, size, 1 << g_test_rand_int_range (0, 9));

              memset (p, cycle & 0xff, size);
              sum += size;
            }
          /* A released scratchpad takes fresh blocks. */
          g_assert_cmpuint (ds_test_resource_count_allocs (f->res[kind]), >, allocs_before);
          g_assert_cmpuint (ds_scratchpad_get_allocated (f->sp, kind), ==, sum);
          g_assert_cmpuint (ds_scratchpad_get_n_allocations (f->sp, kind), ==, n);
          g_assert_cmpuint (ds_scratchpad_get_reserved (f->sp, kind), ==,
                            ds_test_resource_get_live_bytes (f->res[kind]));
          g_assert_cmpuint (ds_scratchpad_get_n_blocks (f->sp, kind), ==,
                            ds_test_resource_get_n_live (f->res[kind]));
        }

      ds_scratchpad_release (f->sp);

      for (kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
        {
          ds_test_resource_assert_clean (f->res[kind]);
          g_assert_cmpuint (ds_scratchpad_get_n_blocks (f->sp, kind), ==, 0);
          g_assert_cmpuint (ds_scratchpad_get_reserved (f->sp, kind), ==, 0);
          g_assert_cmpuint (ds_scratchpad_get_allocated (f->sp, kind), ==, 0);
          g_assert_cmpuint (ds_scratchpad_get_n_allocations (f->sp, kind), ==, 0);
        }
    }
}

static void
test_stats (Fixture       *f,
            gconstpointer  user_data)
{
  guint kind;

  g_test_summary ("Statistics: reserved = upstream bytes held, allocated = "
                  "requested bytes, n_blocks, n_allocations (size 0 and "
                  "failures not counted)");

  for (kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
    {
      alloc_ok (f, kind, 10, 0);
      alloc_ok (f, kind, 20, 64);
      g_assert_null (ds_scratchpad_alloc (f->sp, kind, 0, 0, NULL));
      g_assert_null (ds_scratchpad_alloc (f->sp, kind, 10, 3, NULL));
      alloc_ok (f, kind, 100 * KiB, 16);

      g_assert_cmpuint (ds_scratchpad_get_allocated (f->sp, kind), ==, 10 + 20 + 100 * KiB);
      g_assert_cmpuint (ds_scratchpad_get_n_allocations (f->sp, kind), ==, 3);
      g_assert_cmpuint (ds_scratchpad_get_n_blocks (f->sp, kind), ==, 2);
      g_assert_cmpuint (ds_scratchpad_get_reserved (f->sp, kind), ==, (64 + 128) * KiB);
      g_assert_cmpuint (ds_scratchpad_get_reserved (f->sp, kind), ==,
                        ds_test_resource_get_live_bytes (f->res[kind]));
    }
}

static void
test_upstream_failure (Fixture       *f,
                       gconstpointer  user_data)
{
  guint kind;

  g_test_summary ("An upstream failure is a GError (DS_ERROR_OUT_OF_MEMORY "
                  "here); the scratchpad keeps what it had, its current "
                  "block still serves, and release returns each block once");

  for (kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
    {
      DsTestResource *r = f->res[kind];
      g_autoptr(GError) error = NULL;
      KindState before;
      guint8 *a, *b;

      /* First block. */
      ds_test_resource_fail_next (r, 1);
      g_assert_null (ds_scratchpad_alloc (f->sp, kind, 100, 16, &error));
      g_assert_error (error, DS_ERROR, DS_ERROR_OUT_OF_MEMORY);
      g_assert_cmpstr (error->message, !=, "");
      g_clear_error (&error);
      g_assert_cmpuint (ds_scratchpad_get_n_blocks (f->sp, kind), ==, 0);
      g_assert_cmpuint (ds_scratchpad_get_n_allocations (f->sp, kind), ==, 0);
      g_assert_cmpuint (ds_scratchpad_get_reserved (f->sp, kind), ==, 0);

      a = alloc_ok (f, kind, 100, 16);
      before = kind_state (f, kind);

      /* A new block. */
      ds_test_resource_fail_next (r, 2);
      g_assert_null (ds_scratchpad_alloc (f->sp, kind, 1 << 20, 16, &error));
      g_assert_error (error, DS_ERROR, DS_ERROR_OUT_OF_MEMORY);
      g_clear_error (&error);
      g_assert_null (ds_scratchpad_iface_alloc (DS_SCRATCHPAD_IFACE (f->sp), kind,
                                                1 << 20, 16, &error));
      g_assert_error (error, DS_ERROR, DS_ERROR_OUT_OF_MEMORY);
      g_clear_error (&error);
      assert_state_equal (before, kind_state (f, kind));

      /* The current block still serves, right after the last allocation. */
      b = alloc_ok (f, kind, 100, 16);
      g_assert_true (b == a + 112);
      g_assert_cmpuint (ds_test_resource_count_allocs (r), ==, 1);

      /* And growth goes on once the upstream recovers. */
      alloc_ok (f, kind, 1 << 20, 16);
      g_assert_cmpuint (ds_test_resource_count_allocs (r), ==, 2);
    }

  ds_scratchpad_release (f->sp);
  for (kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
    {
      ds_test_resource_assert_clean (f->res[kind]);
      g_assert_cmpuint (ds_test_resource_count_deallocs (f->res[kind]), ==, 2);
    }
}

typedef struct
{
  DsScratchpad *sp;
  guint         n_deallocs_seen;
} FinalizeData;

static gpointer
finalize_in_thread (gpointer user_data)
{
  FinalizeData *data = user_data;

  g_assert_finalize_object (data->sp);
  return NULL;
}

static void
test_finalize_other_thread (Fixture       *f,
                            gconstpointer  user_data)
{
  FinalizeData data;
  guint kind;

  g_test_summary ("A scratchpad may be finalized on another thread than the "
                  "one that used it: every block still goes back once");

  fill_all_kinds (f, 2);
  data.sp = g_steal_pointer (&f->sp);
  g_thread_join (g_thread_new ("finalizer", finalize_in_thread, &data));

  for (kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
    {
      DsTestCall call = ds_test_resource_get_call (f->res[kind], 2);

      ds_test_resource_assert_clean (f->res[kind]);
      g_assert_cmpuint (ds_test_resource_count_deallocs (f->res[kind]), ==, 2);
      g_assert_true (call.thread != g_thread_self ());
    }
}

#define N_WORKERS 8

typedef struct
{
  guint    id;
  guint    n_bad;
} WorkerData;

static gpointer
worker_thread (gpointer user_data)
{
  WorkerData *data = user_data;
  g_autoptr(DsAccessOrder) host = ds_access_order_new_host ();
  GRand *rand = g_rand_new_with_seed (data->id);
  guint cycle;

  for (cycle = 0; cycle < 200; cycle++)
    {
      DsScratchpad *sp = ds_scratchpad_new (cycle % 2 ? host : NULL);
      guint8 *ptrs[16];
      gsize sizes[16];
      guint i, n = 1 + g_rand_int_range (rand, 0, 16);

      for (i = 0; i < n; i++)
        {
          sizes[i] = 1 + g_rand_int_range (rand, 0, 40000);
          ptrs[i] = ds_scratchpad_alloc (sp, DS_MEMORY_KIND_HOST, sizes[i], 0, NULL);
          memset (ptrs[i], (guint8) (data->id * 16 + i), sizes[i]);
        }
      g_thread_yield ();
      for (i = 0; i < n; i++)
        {
          gsize j;

          for (j = 0; j < sizes[i]; j++)
            if (ptrs[i][j] != (guint8) (data->id * 16 + i))
              {
                data->n_bad++;
                break;
              }
        }

      if (cycle % 3 == 0)
        ds_scratchpad_release (sp);
      g_object_unref (sp);
    }

  g_rand_free (rand);
  return NULL;
}

static void
test_threads (void)
{
  GThread *threads[N_WORKERS];
  WorkerData data[N_WORKERS];
  guint i;

  g_test_summary ("Many scratchpads on many threads share the default host "
                  "resource: no memory is handed to two of them at once");

  for (i = 0; i < N_WORKERS; i++)
    {
      data[i].id = i;
      data[i].n_bad = 0;
      threads[i] = g_thread_new ("worker", worker_thread, &data[i]);
    }
  for (i = 0; i < N_WORKERS; i++)
    {
      g_thread_join (threads[i]);
      g_assert_cmpuint (data[i].n_bad, ==, 0);
    }
}

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
count_notify (GObject    *object,
              GParamSpec *pspec,
              gpointer    user_data)
{
  (*(guint *) user_data)++;
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
                  "allocation, notifying only on a change; afterwards setting "
                  "one is a critical and changes nothing");

  sp = ds_scratchpad_new (host);
  g_signal_connect (sp, "notify", G_CALLBACK (count_notify), &n_notify);

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

      /* Still after a release: the scratchpad keeps its settings. */
      ds_scratchpad_release (sp);
      g_test_expect_message ("Ds", G_LOG_LEVEL_CRITICAL, "*device-order*cannot change*");
      g_object_set (sp, "device-order", NULL, NULL);
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

/* The interface and the typed helpers -------------------------------------------- */

/* A second implementation of DsScratchpadIface: a fixed buffer. */
#define TEST_TYPE_FIXED_SCRATCHPAD (test_fixed_scratchpad_get_type ())
G_DECLARE_FINAL_TYPE (TestFixedScratchpad, test_fixed_scratchpad, TEST, FIXED_SCRATCHPAD, GObject)

struct _TestFixedScratchpad
{
  GObject      parent_instance;
  guint8       buffer[256];
  gsize        used;
  DsMemoryKind last_kind;
  guint        n_calls;
};

static gpointer
test_fixed_scratchpad_alloc (DsScratchpadIface  *iface,
                             DsMemoryKind        kind,
                             gsize               size,
                             gsize               alignment,
                             GError            **error)
{
  TestFixedScratchpad *self = (TestFixedScratchpad *) iface;
  gpointer p;

  self->n_calls++;
  self->last_kind = kind;
  if (size > sizeof self->buffer - self->used)
    {
      g_set_error_literal (error, DS_ERROR, DS_ERROR_OUT_OF_MEMORY, "full");
      return NULL;
    }
  p = self->buffer + self->used;
  self->used += size;
  return p;
}

static void
test_fixed_scratchpad_iface_init (DsScratchpadIfaceInterface *iface)
{
  iface->alloc = test_fixed_scratchpad_alloc;
}

G_DEFINE_FINAL_TYPE_WITH_CODE (TestFixedScratchpad, test_fixed_scratchpad, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (DS_TYPE_SCRATCHPAD_IFACE,
                                                      test_fixed_scratchpad_iface_init))

static void
test_fixed_scratchpad_class_init (TestFixedScratchpadClass *klass)
{
}

static void
test_fixed_scratchpad_init (TestFixedScratchpad *self)
{
}

static void
test_iface_dispatch (Fixture       *f,
                     gconstpointer  user_data)
{
  g_autoptr(TestFixedScratchpad) fixed = g_object_new (TEST_TYPE_FIXED_SCRATCHPAD, NULL);
  g_autoptr(GError) error = NULL;
  DsScratchpadIface *iface;
  gpointer p;

  g_test_summary ("ds_scratchpad_iface_alloc dispatches to the "
                  "implementation: DsScratchpad's arenas, or another class");

  iface = DS_SCRATCHPAD_IFACE (f->sp);
  p = ds_scratchpad_iface_alloc (iface, DS_MEMORY_KIND_PINNED, 77, 32, &error);
  g_assert_no_error (error);
  ds_test_assert_aligned (p, 32);
  g_assert_true (ds_test_resource_owns (f->res[DS_MEMORY_KIND_PINNED], p, 77));
  g_assert_cmpuint (ds_scratchpad_get_allocated (f->sp, DS_MEMORY_KIND_PINNED), ==, 77);

  iface = DS_SCRATCHPAD_IFACE (fixed);
  p = ds_scratchpad_iface_alloc (iface, DS_MEMORY_KIND_MANAGED, 10, 0, &error);
  g_assert_no_error (error);
  g_assert_true (p == fixed->buffer);
  g_assert_cmpint (fixed->last_kind, ==, DS_MEMORY_KIND_MANAGED);
  g_assert_null (ds_scratchpad_iface_alloc (iface, DS_MEMORY_KIND_HOST, 1000, 0, &error));
  g_assert_error (error, DS_ERROR, DS_ERROR_OUT_OF_MEMORY);
  g_assert_cmpuint (fixed->n_calls, ==, 2);
}

typedef struct
{
  guint8 bytes[64];
} __attribute__ ((aligned (64))) Aligned64;

static void
test_typed_macros (Fixture       *f,
                   gconstpointer  user_data)
{
  g_autoptr(GError) error = NULL;
  double *d;
  gint32 *ints;
  guint64 *dev;
  Aligned64 *big;
  guint8 *pinned, *managed;
  KindState before;
  guint kind;

  g_test_summary ("DS_SCRATCHPAD_ALLOC_N and the per-kind macros allocate n "
                  "elements of the type, aligned for it; n * sizeof overflow "
                  "is DS_ERROR_INVALID_ARGUMENT with no state change");

  d = DS_SCRATCHPAD_ALLOC_N (f->sp, DS_MEMORY_KIND_HOST, double, 10, &error);
  g_assert_no_error (error);
  ds_test_assert_aligned (d, 16);
  g_assert_cmpuint (ds_scratchpad_get_allocated (f->sp, DS_MEMORY_KIND_HOST), ==, 80);
  d[9] = 1.5;

  ints = DS_SCRATCHPAD_ALLOC_HOST (f->sp, gint32, 5, &error);
  g_assert_no_error (error);
  g_assert_true (ds_test_resource_owns (f->res[DS_MEMORY_KIND_HOST], ints, 20));
  g_assert_cmpuint (ds_scratchpad_get_allocated (f->sp, DS_MEMORY_KIND_HOST), ==, 100);

  dev = DS_SCRATCHPAD_ALLOC_DEVICE (f->sp, guint64, 3, &error);
  g_assert_no_error (error);
  g_assert_true (ds_test_resource_owns (f->res[DS_MEMORY_KIND_DEVICE], dev, 24));
  g_assert_cmpuint (ds_scratchpad_get_allocated (f->sp, DS_MEMORY_KIND_DEVICE), ==, 24);

  pinned = DS_SCRATCHPAD_ALLOC_PINNED (f->sp, guint8, 7, &error);
  g_assert_no_error (error);
  g_assert_true (ds_test_resource_owns (f->res[DS_MEMORY_KIND_PINNED], pinned, 7));
  managed = DS_SCRATCHPAD_ALLOC_MANAGED (f->sp, guint8, 9, &error);
  g_assert_no_error (error);
  g_assert_true (ds_test_resource_owns (f->res[DS_MEMORY_KIND_MANAGED], managed, 9));

  big = DS_SCRATCHPAD_ALLOC_N (f->sp, DS_MEMORY_KIND_HOST, Aligned64, 2, &error);
  g_assert_no_error (error);
  ds_test_assert_aligned (big, 64);
  big[1].bytes[63] = 1;

  /* n = 0: NULL, no error. */
  g_assert_null (DS_SCRATCHPAD_ALLOC_HOST (f->sp, double, 0, &error));
  g_assert_no_error (error);

  for (kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
    {
      before = kind_state (f, kind);

      g_assert_null (DS_SCRATCHPAD_ALLOC_N (f->sp, kind, guint64, G_MAXSIZE / 4, &error));
      g_assert_error (error, DS_ERROR, DS_ERROR_INVALID_ARGUMENT);
      g_clear_error (&error);
      g_assert_null (DS_SCRATCHPAD_ALLOC_N (f->sp, kind, Aligned64, G_MAXSIZE / 32, &error));
      g_assert_error (error, DS_ERROR, DS_ERROR_INVALID_ARGUMENT);
      g_clear_error (&error);
      g_assert_null (ds_scratchpad_alloc_array (f->sp, kind, G_MAXSIZE / 2, 3, 0, &error));
      g_assert_error (error, DS_ERROR, DS_ERROR_INVALID_ARGUMENT);
      g_clear_error (&error);
      g_assert_null (ds_scratchpad_alloc_array (f->sp, kind, 8, 8, 3, &error));
      g_assert_error (error, DS_ERROR, DS_ERROR_INVALID_ARGUMENT);
      g_clear_error (&error);

      assert_state_equal (before, kind_state (f, kind));
      g_assert_cmpuint (ds_test_resource_get_n_calls (f->res[kind]), ==, before.n_calls);
    }
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

  g_assert_cmpuint (total_calls (f), ==, 0);
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

  g_assert_cmpuint (total_calls (f), ==, 0);
}

/* GPU cases --------------------------------------------------------------------------- */

#if HAVE_CUDA

static void
test_gpu_default_device_order (void)
{
  g_autoptr(GError) error = NULL;
  DsScratchpad *sp;
  const DsAccessOrder *order;
  int current = -1;
  gpointer p;

  DS_TEST_REQUIRE_CUDA ();

  g_test_summary ("A NULL device order becomes the legacy default stream of "
                  "the current device at the first GPU allocation");

  DS_TEST_CUDA_CHECK (cudaGetDevice (&current));
  sp = ds_scratchpad_new (NULL);
  g_assert_false (ds_access_order_is_device (ds_scratchpad_get_device_order (sp)));
  p = ds_scratchpad_alloc (sp, DS_MEMORY_KIND_DEVICE, 1000, 0, &error);
  g_assert_no_error (error);
  DS_TEST_CUDA_CHECK (cudaMemset (p, 0, 1000));
  order = ds_scratchpad_get_device_order (sp);
  g_assert_true (ds_access_order_is_device (order));
  g_assert_null (ds_access_order_get_stream (order));
  g_assert_cmpint (ds_access_order_get_device (order), ==, current);
  g_assert_finalize_object (sp);
}

static void
orders_to_upstream (gboolean own_dealloc_orders)
{
  DsTestResource *res[DS_N_MEMORY_KINDS];
  cudaStream_t s_dev, s_pin, s_man;
  g_autoptr(DsAccessOrder) dev = NULL;
  g_autoptr(DsAccessOrder) pin = NULL;
  g_autoptr(DsAccessOrder) man = NULL;
  g_autoptr(GError) error = NULL;
  DsScratchpad *sp;
  guint kind, i;

  s_dev = ds_test_stream_new ();
  s_pin = ds_test_stream_new ();
  s_man = ds_test_stream_new ();
  dev = ds_access_order_new_stream (s_dev, -1);
  pin = ds_access_order_new_stream (s_pin, -1);
  man = ds_access_order_new_stream (s_man, -1);

  for (kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
    res[kind] = ds_test_resource_new (kind, TRUE);

  sp = g_object_new (DS_TYPE_SCRATCHPAD,
                     "device-order", dev,
                     "pinned-dealloc-order", own_dealloc_orders ? pin : NULL,
                     "managed-dealloc-order", own_dealloc_orders ? man : NULL,
                     "host-resource", res[0], "pinned-resource", res[1],
                     "device-resource", res[2], "managed-resource", res[3],
                     NULL);

  for (kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
    for (i = 0; i < 3; i++)
      {
        g_assert_nonnull (ds_scratchpad_alloc (sp, kind, (64 * KiB) << i, 0, &error));
        g_assert_no_error (error);
      }

  for (kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
    for (i = 0; i < 3; i++)
      {
        DsTestCall call = ds_test_resource_get_call (res[kind], i);

        if (kind == DS_MEMORY_KIND_DEVICE)
          {
            g_assert_cmpint (call.op, ==, DS_TEST_OP_ALLOCATE_ASYNC);
            g_assert_true (ds_access_order_equal (&call.order, dev));
          }
        else if (call.op == DS_TEST_OP_ALLOCATE_ASYNC)
          {
            /* Filled by the CPU: allocated in host order. */
            g_assert_true (ds_access_order_is_host (&call.order));
          }
        else
          {
            g_assert_cmpint (call.op, ==, DS_TEST_OP_ALLOCATE);
          }
      }

  g_assert_finalize_object (sp);

  for (kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
    {
      const DsAccessOrder *expected = !own_dealloc_orders ? dev :
                                      kind == DS_MEMORY_KIND_PINNED ? pin :
                                      kind == DS_MEMORY_KIND_DEVICE ? dev : man;

      ds_test_resource_assert_clean (res[kind]);
      for (i = 0; i < 3; i++)
        {
          DsTestCall call = ds_test_resource_get_call (res[kind], 3 + i);

          g_assert_true (call.ptr == ds_test_resource_get_call (res[kind], 2 - i).ptr);
          if (kind == DS_MEMORY_KIND_HOST)
            {
              g_assert_cmpint (call.op, ==, DS_TEST_OP_DEALLOCATE);
              continue;
            }
          g_assert_cmpint (call.op, ==, DS_TEST_OP_DEALLOCATE_ASYNC);
          g_assert_true (ds_access_order_equal (&call.order, expected));
        }
      g_assert_finalize_object (res[kind]);
    }

  ds_test_stream_free (s_dev);
  ds_test_stream_free (s_pin);
  ds_test_stream_free (s_man);
}

static void
test_gpu_orders_to_upstream (void)
{
  DS_TEST_REQUIRE_CUDA ();

  g_test_summary ("Device memory is allocated in the device order; pinned "
                  "and managed in host order; on release a stream-ordered "
                  "upstream gets deallocate_async in device-order, "
                  "pinned-dealloc-order and managed-dealloc-order");

  orders_to_upstream (TRUE);
}

static void
test_gpu_default_dealloc_orders (void)
{
  DS_TEST_REQUIRE_CUDA ();

  g_test_summary ("Without pinned/managed dealloc orders, pinned and managed "
                  "blocks go back in the device order");

  orders_to_upstream (FALSE);
}

static void
sync_upstream_waits (gboolean use_release)
{
  DsTestResource *res[DS_N_MEMORY_KINDS];
  g_autoptr(DsAccessOrder) order = NULL;
  g_autoptr(GError) error = NULL;
  cudaStream_t s;
  DsScratchpad *sp;
  gint slept = 0;
  guint kind;

  s = ds_test_stream_new ();
  order = ds_access_order_new_stream (s, -1);
  for (kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
    {
      res[kind] = ds_test_resource_new (kind, FALSE);
      ds_test_resource_set_probe (res[kind], &slept);
    }

  sp = g_object_new (DS_TYPE_SCRATCHPAD, "device-order", order,
                     "host-resource", res[0], "pinned-resource", res[1],
                     "device-resource", res[2], "managed-resource", res[3],
                     NULL);
  for (kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
    {
      g_assert_nonnull (ds_scratchpad_alloc (sp, kind, 100, 0, &error));
      g_assert_nonnull (ds_scratchpad_alloc (sp, kind, 100 * KiB, 0, &error));
      g_assert_no_error (error);
    }

  /* The stream is busy for 200 ms after the release point. */
  ds_test_stream_sleep (s, 200, &slept);
  if (use_release)
    ds_scratchpad_release (sp);
  g_assert_finalize_object (sp);

  /* Host memory may go back at once; every other block only after the
   * stream got past the sleep. */
  for (kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
    {
      guint i, n;

      g_assert_true (ds_test_wait_until (ds_test_resource_count_deallocs (res[kind]) == 2, 5000));
      n = ds_test_resource_get_n_calls (res[kind]);
      for (i = 0; i < n; i++)
        {
          DsTestCall call = ds_test_resource_get_call (res[kind], i);

          if (kind != DS_MEMORY_KIND_HOST && call.op == DS_TEST_OP_DEALLOCATE)
            g_assert_cmpint (call.probe, ==, 1);
        }
      ds_test_resource_assert_clean (res[kind]);
      g_assert_finalize_object (res[kind]);
    }

  ds_test_stream_free (s);
}

static void
test_gpu_sync_upstream_finalize (void)
{
  DS_TEST_REQUIRE_CUDA ();

  g_test_summary ("DALI's gap closed: an upstream that is not stream-ordered "
                  "gets no block back (finalize) before the busy device "
                  "stream has passed the release point");

  sync_upstream_waits (FALSE);
}

static void
test_gpu_sync_upstream_release (void)
{
  DS_TEST_REQUIRE_CUDA ();

  g_test_summary ("DALI's gap closed, through ds_scratchpad_release");

  sync_upstream_waits (TRUE);
}

static void
fill_pattern (guint8 *p,
              gsize   size,
              guint   seed)
{
  gsize i;

  for (i = 0; i < size; i++)
    p[i] = (guint8) (i * 31 + seed);
}

static void
check_pattern (const guint8 *p,
               gsize         size,
               guint         seed)
{
  gsize i;

  for (i = 0; i < size; i++)
    if (p[i] != (guint8) (i * 31 + seed))
      g_error ("byte %" G_GSIZE_FORMAT " is 0x%02x, expected 0x%02x",
               i, p[i], (guint8) (i * 31 + seed));
}

static void
test_gpu_pinned_in_flight (void)
{
  const gsize size = 8 << 20;
  cudaStream_t s, other;
  g_autoptr(DsAccessOrder) order = NULL;
  g_autoptr(DsAccessOrder) other_order = NULL;
  g_autoptr(GError) error = NULL;
  DsScratchpad *sp;
  guint8 *pinned, *device = NULL, *out = NULL;
  gint slept = 0, copied = 0;
  guint i, n_overlaps_early = 0, n_allocs = 0;

  DS_TEST_REQUIRE_CUDA ();

  g_test_summary ("Pinned scratch read by an in-flight cudaMemcpyAsync when "
                  "its scratchpad is finalized: no new pinned allocation "
                  "overlaps it until the copy is done, and the data arrives "
                  "intact");

  s = ds_test_stream_new ();
  other = ds_test_stream_new ();
  order = ds_access_order_new_stream (s, -1);
  other_order = ds_access_order_new_stream (other, -1);
  DS_TEST_CUDA_CHECK (cudaMalloc ((void **) &device, size));
  DS_TEST_CUDA_CHECK (cudaMallocHost ((void **) &out, size));

  sp = ds_scratchpad_new (order);
  pinned = ds_scratchpad_alloc (sp, DS_MEMORY_KIND_PINNED, size, 0, &error);
  g_assert_no_error (error);
  fill_pattern (pinned, size, 7);

  /* s: sleep, then read the pinned scratch, then mark the copy done. */
  ds_test_stream_sleep (s, 1000, &slept);
  DS_TEST_CUDA_CHECK (cudaMemcpyAsync (device, pinned, size, cudaMemcpyHostToDevice, s));
  ds_test_stream_set_flag (s, &copied);

  g_assert_finalize_object (sp);

  /* Others take pinned scratch and scribble on it at once. */
  for (i = 0; i < 8; i++)
    {
      const DsAccessOrder *orders[] = { other_order, NULL };
      DsScratchpad *sp2 = ds_scratchpad_new (orders[i % 2]);
      gsize sizes[] = { size, 64 << 10, size / 2, 2 * size };
      guint j;

      for (j = 0; j < G_N_ELEMENTS (sizes); j++)
        {
          guint8 *p = ds_scratchpad_alloc (sp2, DS_MEMORY_KIND_PINNED, sizes[j], 0, &error);

          g_assert_no_error (error);
          n_allocs++;
          if (ds_test_ranges_overlap (p, sizes[j], pinned, size) &&
              !g_atomic_int_get (&copied))
            n_overlaps_early++;
          memset (p, 0xee, sizes[j]);
        }
      g_assert_finalize_object (sp2);
    }

  g_assert_cmpuint (n_overlaps_early, ==, 0);
  g_assert_cmpint (g_atomic_int_get (&slept), ==, 0);

  DS_TEST_CUDA_CHECK (cudaStreamSynchronize (s));
  DS_TEST_CUDA_CHECK (cudaMemcpy (out, device, size, cudaMemcpyDeviceToHost));
  check_pattern (out, size, 7);

  DS_TEST_CUDA_CHECK (cudaFree (device));
  DS_TEST_CUDA_CHECK (cudaFreeHost (out));
  ds_test_stream_free (s);
  ds_test_stream_free (other);
}

static void
test_gpu_device_cross_stream (void)
{
  const gsize size = 8 << 20;
  cudaStream_t a, b;
  g_autoptr(DsAccessOrder) oa = NULL;
  g_autoptr(DsAccessOrder) ob = NULL;
  g_autoptr(GError) error = NULL;
  DsScratchpad *sp;
  guint8 *src = NULL, *out = NULL, *scratch;
  gint slept = 0;
  guint i;

  DS_TEST_REQUIRE_CUDA ();

  g_test_summary ("Device scratch still in use on stream A when its "
                  "scratchpad dies is not clobbered by a scratchpad on "
                  "stream B");

  a = ds_test_stream_new ();
  b = ds_test_stream_new ();
  oa = ds_access_order_new_stream (a, -1);
  ob = ds_access_order_new_stream (b, -1);
  DS_TEST_CUDA_CHECK (cudaMallocHost ((void **) &src, size));
  DS_TEST_CUDA_CHECK (cudaMallocHost ((void **) &out, size));
  fill_pattern (src, size, 3);
  memset (out, 0, size);

  sp = ds_scratchpad_new (oa);
  scratch = ds_scratchpad_alloc (sp, DS_MEMORY_KIND_DEVICE, size, 0, &error);
  g_assert_no_error (error);

  /* A: fill the scratch, sleep, then read it back. */
  DS_TEST_CUDA_CHECK (cudaMemcpyAsync (scratch, src, size, cudaMemcpyHostToDevice, a));
  ds_test_stream_sleep (a, 1000, &slept);
  DS_TEST_CUDA_CHECK (cudaMemcpyAsync (out, scratch, size, cudaMemcpyDeviceToHost, a));

  g_assert_finalize_object (sp);

  /* B: new scratchpads overwrite whatever device scratch they get. */
  for (i = 0; i < 10; i++)
    {
      DsScratchpad *sp2 = ds_scratchpad_new (ob);
      guint8 *p = ds_scratchpad_alloc (sp2, DS_MEMORY_KIND_DEVICE, size, 0, &error);

      g_assert_no_error (error);
      DS_TEST_CUDA_CHECK (cudaMemsetAsync (p, 0xee, size, b));
      p = ds_scratchpad_alloc (sp2, DS_MEMORY_KIND_DEVICE, size / 4, 0, &error);
      g_assert_no_error (error);
      DS_TEST_CUDA_CHECK (cudaMemsetAsync (p, 0xdd, size / 4, b));
      g_assert_finalize_object (sp2);
    }
  g_assert_cmpint (g_atomic_int_get (&slept), ==, 0);

  DS_TEST_CUDA_CHECK (cudaStreamSynchronize (a));
  DS_TEST_CUDA_CHECK (cudaStreamSynchronize (b));
  check_pattern (out, size, 3);

  DS_TEST_CUDA_CHECK (cudaFreeHost (src));
  DS_TEST_CUDA_CHECK (cudaFreeHost (out));
  ds_test_stream_free (a);
  ds_test_stream_free (b);
}

static void
test_gpu_managed (void)
{
  const gsize size = 4 << 20;
  cudaStream_t s;
  g_autoptr(DsAccessOrder) order = NULL;
  g_autoptr(GError) error = NULL;
  DsScratchpad *sp;
  guint8 *managed, *managed2, *device, *out = NULL;

  DS_TEST_REQUIRE_CUDA ();

  g_test_summary ("Managed scratch written by the CPU is read by the GPU, "
                  "and written by the GPU is read by the CPU");

  s = ds_test_stream_new ();
  order = ds_access_order_new_stream (s, -1);
  DS_TEST_CUDA_CHECK (cudaMallocHost ((void **) &out, size));

  sp = ds_scratchpad_new (order);
  managed = ds_scratchpad_alloc (sp, DS_MEMORY_KIND_MANAGED, size, 0, &error);
  g_assert_no_error (error);
  device = ds_scratchpad_alloc (sp, DS_MEMORY_KIND_DEVICE, size, 0, &error);
  g_assert_no_error (error);

  fill_pattern (managed, size, 11);
  DS_TEST_CUDA_CHECK (cudaMemcpyAsync (device, managed, size, cudaMemcpyDefault, s));
  DS_TEST_CUDA_CHECK (cudaMemcpyAsync (out, device, size, cudaMemcpyDeviceToHost, s));
  DS_TEST_CUDA_CHECK (cudaStreamSynchronize (s));
  check_pattern (out, size, 11);

  managed2 = ds_scratchpad_alloc (sp, DS_MEMORY_KIND_MANAGED, size, 0, &error);
  g_assert_no_error (error);
  DS_TEST_CUDA_CHECK (cudaMemsetAsync (managed2, 0x3c, size, s));
  DS_TEST_CUDA_CHECK (cudaStreamSynchronize (s));
  {
    gsize i;

    for (i = 0; i < size; i++)
      g_assert_cmpint (managed2[i], ==, 0x3c);
  }

  g_assert_finalize_object (sp);
  DS_TEST_CUDA_CHECK (cudaFreeHost (out));
  ds_test_stream_free (s);
}

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
  fill_pattern (host, size, 5);
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
  check_pattern (out, size, 5);

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
      fill_pattern (hosts[i], sizes[i], 20 + i);
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
      check_pattern (out + ((guint8 *) ptrs[i] - base), sizes[i], 20 + i);

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
  fill_pattern (data, size, 9);
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
  check_pattern (out, size, 9);

  g_assert_finalize_object (sp);
  g_free (data);
  DS_TEST_CUDA_CHECK (cudaFreeHost (out));
}

typedef struct
{
  DsScratchpad *sp;
  gboolean      use_own_context;
  gboolean      context_restored;
} ThreadData;

/* Driver functions, asked for by version: cuCtxCreate at 4.0, which is
 * cuCtxCreate_v2 (ctx, flags, dev) — at 12.0 the driver hands out
 * cuCtxCreate_v3, which takes exec-affinity parameters first — and the
 * others at 12.0. */
typedef int (*CuDeviceGetFn) (int *device, int ordinal);
typedef int (*CuCtxCreateFn) (gpointer *ctx, unsigned int flags, int device);
typedef int (*CuCtxDestroyFn) (gpointer ctx);
typedef int (*CuCtxGetCurrentFn) (gpointer *ctx);
typedef int (*CuCtxSetCurrentFn) (gpointer ctx);

static gpointer
driver_fn (const char *name)
{
  void *fn = NULL;
  enum cudaDriverEntryPointQueryResult status;
  unsigned int version = g_str_equal (name, "cuCtxCreate") ? 4000 : 12000;

  DS_TEST_CUDA_CHECK (cudaGetDriverEntryPointByVersion (name, &fn, version, cudaEnableDefault, &status));
  g_assert_cmpint (status, ==, cudaDriverEntryPointSuccess);
  g_assert_nonnull (fn);
  return fn;
}

static gpointer
finalize_thread (gpointer user_data)
{
  ThreadData *data = user_data;
  gpointer ctx = NULL, current = NULL;
  int current_device = -1;

  if (data->use_own_context)
    {
      /* A non-primary context current on this thread, as a GStreamer
       * streaming thread has. */
      CuCtxCreateFn create = driver_fn ("cuCtxCreate");
      CuDeviceGetFn device_get = driver_fn ("cuDeviceGet");
      int dev = 0;

      g_assert_cmpint (device_get (&dev, 0), ==, 0);
      g_assert_cmpint (create (&ctx, 0, dev), ==, 0);
    }

  g_assert_finalize_object (data->sp);

  if (data->use_own_context)
    {
      CuCtxGetCurrentFn get_current = driver_fn ("cuCtxGetCurrent");
      CuCtxDestroyFn destroy = driver_fn ("cuCtxDestroy");

      g_assert_cmpint (get_current (&current), ==, 0);
      data->context_restored = current == ctx;
      g_assert_cmpint (destroy (ctx), ==, 0);
    }
  else
    {
      DS_TEST_CUDA_CHECK (cudaGetDevice (&current_device));
      data->context_restored = current_device == 0;
    }

  return NULL;
}

static void
finalize_on_thread (gboolean use_own_context)
{
  const gsize size = 4 << 20;
  cudaStream_t s;
  g_autoptr(DsAccessOrder) order = NULL;
  g_autoptr(GError) error = NULL;
  ThreadData data = { NULL, use_own_context, FALSE };
  GThread *thread;
  guint8 *dev, *pinned, *out = NULL;
  gint slept = 0;
  guint kind;

  s = ds_test_stream_new ();
  order = ds_access_order_new_stream (s, -1);
  DS_TEST_CUDA_CHECK (cudaMallocHost ((void **) &out, size));

  data.sp = ds_scratchpad_new (order);
  pinned = ds_scratchpad_alloc (data.sp, DS_MEMORY_KIND_PINNED, size, 0, &error);
  g_assert_no_error (error);
  dev = ds_scratchpad_alloc (data.sp, DS_MEMORY_KIND_DEVICE, size, 0, &error);
  g_assert_no_error (error);
  g_assert_nonnull (ds_scratchpad_alloc (data.sp, DS_MEMORY_KIND_MANAGED, 1000, 0, &error));
  g_assert_nonnull (ds_scratchpad_alloc (data.sp, DS_MEMORY_KIND_HOST, 1000, 0, &error));
  fill_pattern (pinned, size, 13);

  ds_test_stream_sleep (s, 200, &slept);
  DS_TEST_CUDA_CHECK (cudaMemcpyAsync (dev, pinned, size, cudaMemcpyHostToDevice, s));
  DS_TEST_CUDA_CHECK (cudaMemcpyAsync (out, dev, size, cudaMemcpyDeviceToHost, s));

  thread = g_thread_new ("finalizer", finalize_thread, &data);
  g_thread_join (thread);
  g_assert_true (data.context_restored);

  /* Memory is still handed out correctly on this thread. */
  for (kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
    {
      DsScratchpad *sp = ds_scratchpad_new (order);
      guint8 *p = ds_scratchpad_alloc (sp, kind, size, 0, &error);

      g_assert_no_error (error);
      if (kind == DS_MEMORY_KIND_HOST)
        memset (p, 0xee, size);
      else
        DS_TEST_CUDA_CHECK (cudaMemsetAsync (p, 0xee, size, s));
      g_assert_finalize_object (sp);
    }

  DS_TEST_CUDA_CHECK (cudaStreamSynchronize (s));
  check_pattern (out, size, 13);

  DS_TEST_CUDA_CHECK (cudaFreeHost (out));
  ds_test_stream_free (s);
}

static void
test_gpu_finalize_other_thread (void)
{
  DS_TEST_REQUIRE_CUDA ();

  g_test_summary ("A scratchpad finalized on another thread gives its "
                  "memory back in stream order");

  finalize_on_thread (FALSE);
}

static void
test_gpu_finalize_other_context (void)
{
  DS_TEST_REQUIRE_CUDA ();

  g_test_summary ("A scratchpad finalized on a thread that has another "
                  "(non-primary) CUDA context current switches to its own "
                  "context and puts the thread's back");

  finalize_on_thread (TRUE);
}

#endif

int
main (int    argc,
      char **argv)
{
  ds_test_init (&argc, &argv);

#define ADD(path, func) \
  g_test_add ("/Ds/Scratchpad/" path, Fixture, NULL, fixture_setup, func, fixture_teardown)
#define ADD_BOTH(path, func) \
  G_STMT_START { \
    g_test_add ("/Ds/Scratchpad/" path "/sync-upstream", Fixture, NULL, \
                fixture_setup, func, fixture_teardown); \
    g_test_add ("/Ds/Scratchpad/" path "/stream-ordered-upstream", Fixture, \
                GUINT_TO_POINTER (FIXTURE_STREAM_ORDERED), \
                fixture_setup, func, fixture_teardown); \
  } G_STMT_END

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
  ADD ("growth/doubling", test_growth);
  ADD ("growth/bump-no-upstream", test_bump_no_upstream);
  ADD ("growth/initial-size-properties", test_initial_sizes_properties);
  g_test_add_func ("/Ds/Scratchpad/growth/initial-sizes-new-full", test_initial_sizes_new_full);
  ADD_BOTH ("release/all", test_release_all);
  ADD_BOTH ("release/finalize", test_finalize_releases);
  ADD_BOTH ("release/usable-again", test_release_usable_again);
  ADD ("release/finalize-other-thread", test_finalize_other_thread);
  g_test_add_func ("/Ds/Scratchpad/threads/many-scratchpads", test_threads);
  ADD ("stats", test_stats);
  ADD_BOTH ("upstream-failure", test_upstream_failure);
  g_test_add_func ("/Ds/Scratchpad/properties/list", test_properties_list);
  g_test_add_func ("/Ds/Scratchpad/properties/g-object-new", test_properties_g_object_new);
  g_test_add_func ("/Ds/Scratchpad/properties/until-first-alloc", test_properties_until_first_alloc);
  g_test_add_func ("/Ds/Scratchpad/properties/wrong-kind", test_properties_wrong_kind);
  g_test_add_func ("/Ds/Scratchpad/properties/read-back", test_properties_read_back);
  g_test_add_func ("/Ds/Scratchpad/orders/getters", test_getters);
  ADD ("iface/dispatch", test_iface_dispatch);
  ADD ("typed-macros", test_typed_macros);
  g_test_add_func ("/Ds/Scratchpad/no-device/gpu-kinds", test_no_device);
  g_test_add_func ("/Ds/Scratchpad/no-device/stream-order", test_no_device_stream_order);
  ADD ("to-contiguous/bad-input", test_to_contiguous_bad_input);
  ADD ("preconditions", test_preconditions);
#if HAVE_CUDA
  g_test_add_func ("/Ds/Scratchpad/gpu/default-device-order", test_gpu_default_device_order);
  g_test_add_func ("/Ds/Scratchpad/gpu/orders-to-upstream", test_gpu_orders_to_upstream);
  g_test_add_func ("/Ds/Scratchpad/gpu/default-dealloc-orders", test_gpu_default_dealloc_orders);
  g_test_add_func ("/Ds/Scratchpad/gpu/sync-upstream-waits/finalize", test_gpu_sync_upstream_finalize);
  g_test_add_func ("/Ds/Scratchpad/gpu/sync-upstream-waits/release", test_gpu_sync_upstream_release);
  g_test_add_func ("/Ds/Scratchpad/gpu/pinned-in-flight", test_gpu_pinned_in_flight);
  g_test_add_func ("/Ds/Scratchpad/gpu/device-cross-stream", test_gpu_device_cross_stream);
  g_test_add_func ("/Ds/Scratchpad/gpu/managed", test_gpu_managed);
  g_test_add_func ("/Ds/Scratchpad/gpu/to-device", test_gpu_to_device);
  g_test_add_func ("/Ds/Scratchpad/gpu/to-contiguous-device", test_gpu_to_contiguous_device);
  g_test_add_func ("/Ds/Scratchpad/gpu/to-device-host-order", test_gpu_to_device_host_order);
  g_test_add_func ("/Ds/Scratchpad/gpu/finalize-other-thread", test_gpu_finalize_other_thread);
  g_test_add_func ("/Ds/Scratchpad/gpu/finalize-other-context", test_gpu_finalize_other_context);
#endif

#undef ADD
#undef ADD_BOTH

  return g_test_run ();
}
