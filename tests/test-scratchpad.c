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
      g_assert_cmpuint (ds_scratchpad_get_allocated (f->sp, kind), ==, 0);
    }
  g_assert_cmpuint (ds_test_scratchpad_total_calls (f), ==, 0);

  /* Also once a kind is set up: nothing counted. */
  ds_test_scratchpad_alloc_ok (f, DS_MEMORY_KIND_HOST, 10, 16);
  g_assert_null (ds_scratchpad_alloc (f->sp, DS_MEMORY_KIND_HOST, 0, 16, NULL));
  g_assert_cmpuint (ds_scratchpad_get_allocated (f->sp, DS_MEMORY_KIND_HOST), ==, 16);
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

/* The head of a scratchpad as programs built against ds's headers before
 * 0.2 see it: they bump inline in these windows (soversion 1's ABI). */
typedef struct
{
  guintptr cur;
  guintptr end;
} OldWindow;

typedef struct
{
  GObject   parent_instance;
  OldWindow windows[DS_N_MEMORY_KINDS];
} OldHead;

/* The inline bump with a size and an alignment known at compile time
 * (folded to constants in ds-scratchpad.h): each allocation lands where
 * the general one would, right after the last one, aligned; the block
 * fills to its last byte and the next allocation takes a new block. */
static void
test_inline_constant_size (Fixture       *f,
                           gconstpointer  user_data)
{
  const OldWindow *w =
    &((const OldHead *) (const void *) f->sp)->windows[DS_MEMORY_KIND_HOST];
  guintptr end, expected;
  guint8 *first, *p = NULL;
  guint n = 0;

  g_test_summary ("A constant size that keeps its constant alignment lands where "
                  "the general bump puts it, fills the block to its end, and "
                  "the next one takes a new block");

  /* Runtime size and alignment: the cursor is rounded up to 16 after it. */
  first = ds_test_scratchpad_alloc_ok (f, DS_MEMORY_KIND_HOST, 3, 1);
  end = w->end;
  expected = ((guintptr) first + 3 + 15) & ~(guintptr) 15;

  while (expected + 32 <= end)
    {
      p = ds_scratchpad_alloc (f->sp, DS_MEMORY_KIND_HOST, 32, 16, NULL);
      g_assert_true ((guintptr) p == expected);
      memset (p, 0x5a, 32);
      expected += 32;
      n++;
    }
  g_assert_cmpuint (n, >, 0);
  g_assert_true ((guintptr) p + 32 == end || end - ((guintptr) p + 32) < 32);
  g_assert_cmpuint (ds_scratchpad_get_n_blocks (f->sp, DS_MEMORY_KIND_HOST), ==, 1);
  /* The first block's, from its start: 3 bytes took 16. */
  g_assert_cmpuint (ds_scratchpad_get_allocated (f->sp, DS_MEMORY_KIND_HOST), ==, 16 + 32 * n);

  /* The next one does not fit: a new block, aligned, outside the old one. */
  p = ds_scratchpad_alloc (f->sp, DS_MEMORY_KIND_HOST, 32, 16, NULL);
  g_assert_nonnull (p);
  ds_test_assert_aligned (p, 16);
  g_assert_true ((guintptr) p + 32 <= (guintptr) first || (guintptr) p >= end);
  g_assert_cmpuint (ds_scratchpad_get_n_blocks (f->sp, DS_MEMORY_KIND_HOST), ==, 2);

  /* The array macro (a constant count of an aligned type) takes the same
   * path. */
  {
    guint64 *a = DS_SCRATCHPAD_ALLOC_HOST (f->sp, guint64, 4, NULL);

    g_assert_true ((guintptr) a == (guintptr) p + 32);
  }
}

/* The window of @kind, writable: the tests below play an older inline bump. */
static OldWindow *
window_of (DsScratchpad *sp,
           DsMemoryKind  kind)
{
  return &((OldHead *) (void *) sp)->windows[kind];
}

static void
test_cursor_16 (Fixture       *f,
                gconstpointer  user_data)
{
  static const gsize sizes[] = { 1, 3, 7, 8, 15, 16, 17, 31, 33, 100 };
  static const gsize alignments[] = { 0, 1, 2, 4, 8, 16 };
  guint kind;

  g_test_summary ("Within a block, an allocation aligned to at most 16 starts "
                  "at the cursor, which stays a multiple of 16: the next one "
                  "lands the size rounded up to 16 further, whatever its "
                  "alignment; larger alignments round it up");

  for (kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
    {
      const OldWindow *w = window_of (f->sp, kind);
      guint8 *p = ds_test_scratchpad_alloc_ok (f, kind, 1, 1);
      guintptr expected = (guintptr) p + 16;

      ds_test_assert_aligned (p, 16);
      for (guint i = 0; i < G_N_ELEMENTS (sizes); i++)
        for (guint j = 0; j < G_N_ELEMENTS (alignments); j++)
          {
            g_autoptr(GError) error = NULL;
            guint8 *q = ds_scratchpad_alloc (f->sp, kind, sizes[i], alignments[j], &error);

            g_assert_no_error (error);
            g_assert_true ((guintptr) q == expected);
            g_assert_cmpuint (w->cur % 16, ==, 0);
            memset (q, 0xa5, sizes[i]);
            expected += (sizes[i] + 15) & ~(gsize) 15;
          }

      /* Larger alignments, runtime and constant: the cursor rounded up. */
      for (gsize a = 32; a <= 4096; a <<= 1)
        {
          guint8 *q = ds_scratchpad_alloc (f->sp, kind, 5, a, NULL);

          expected = (expected + a - 1) & ~(guintptr) (a - 1);
          g_assert_true ((guintptr) q == expected);
          expected += 16;
        }
      {
        guint8 *q = ds_scratchpad_alloc (f->sp, kind, 24, 64, NULL);

        expected = (expected + 63) & ~(guintptr) 63;
        g_assert_true ((guintptr) q == expected);
        expected += 32;
      }

      g_assert_true (w->cur == expected);
      g_assert_cmpuint (ds_scratchpad_get_n_blocks (f->sp, kind), ==, 1);
      /* Every allocation since the block's start (p), its padding too. */
      g_assert_cmpuint (ds_scratchpad_get_allocated (f->sp, kind), ==, expected - (guintptr) p);
    }
}

/* The inline bump places a request aligned to at most 16 at the cursor
 * without looking at it (ds-scratchpad.h): a cursor with room after it
 * must be a multiple of 16. */
static void
assert_cursor_placeable (const OldWindow *w)
{
  g_assert_true (w->cur % 16 == 0 || w->cur == w->end);
}

static void
test_cursor_multiple_of_16 (Fixture       *f,
                            gconstpointer  user_data)
{
  static const gsize sizes[] = { 1, 7, 16, 33, 1000, 5000 };
  static const gsize alignments[] = { 0, 1, 8, 16, 32, 256, 4096 };
  guint kind;

  g_test_summary ("Every cursor the library leaves with room after it is a multiple of "
                  "16, which the inline bump places at without a test: after each "
                  "allocation the library places (any size, any alignment, a new "
                  "block, one for an alignment above the block's), and after a "
                  "release that keeps a block");

  ds_scratchpad_set_keep_blocks (f->sp, TRUE);
  for (kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
    {
      const OldWindow *w = window_of (f->sp, kind);
      guint kept = 0;

      for (guint round = 0; round < 4; round++)
        {
          /* A larger alignment than a block's: a block of its own. */
          ds_test_assert_aligned (ds_test_scratchpad_alloc_ok (f, kind, 10, 64 * 1024), 64 * 1024);
          assert_cursor_placeable (w);

          for (guint i = 0; i < G_N_ELEMENTS (sizes); i++)
            for (guint j = 0; j < G_N_ELEMENTS (alignments); j++)
              {
                g_autoptr(GError) error = NULL;
                guint8 *q = (ds_scratchpad_alloc) (f->sp, kind, sizes[i], alignments[j], &error);

                g_assert_no_error (error);
                ds_test_assert_aligned (q, MAX (alignments[j], 16));
                assert_cursor_placeable (w);
                q = ds_scratchpad_alloc (f->sp, kind, sizes[i], 0, &error);
                g_assert_no_error (error);
                ds_test_assert_aligned (q, 16);
                assert_cursor_placeable (w);
              }
          ds_scratchpad_release (f->sp);
          /* A block kept (once the scratchpad learned the unit's size):
           * its window starts at its start again. */
          if (ds_scratchpad_get_n_blocks (f->sp, kind) == 1)
            {
              g_assert_true (w->cur != w->end);
              assert_cursor_placeable (w);
              kept++;
            }
        }
      /* keep-blocks keeps host and device blocks; pinned and managed go
       * back in the stream's order (ds_scratchpad_release ()). */
      if (kind == DS_MEMORY_KIND_HOST)
        g_assert_cmpuint (kept, >, 0);
    }
}

/* One kind per loop, as a caller writes it, so that the compiler keeps the
 * window in registers across the bump and the library's fallback. */
G_GNUC_NO_INLINE static void
fill_loop (DsScratchpad *sp,
           DsMemoryKind  kind,
           const gsize  *sizes,
           guint8      **out,
           guint         n)
{
  for (guint i = 0; i < n; i++)
    out[i] = ds_scratchpad_alloc (sp, kind, sizes[i], 0, NULL);
}

static void
test_loop_across_blocks (Fixture       *f,
                         gconstpointer  user_data)
{
  enum { N = 600 };
  g_autofree gsize *sizes = g_new (gsize, N);
  g_autofree guint8 **ptrs = g_new0 (guint8 *, N);
  guint kind;

  g_test_summary ("A loop of allocations that fills several blocks (the bump "
                  "and the library's fallback taking turns): every pointer "
                  "16-aligned, no two overlapping, and the counters exact");

  for (kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
    {
      g_autoptr(GArray) ranges = g_array_new (FALSE, FALSE, sizeof (DsTestRange));
      guint64 total = 0;

      for (guint i = 0; i < N; i++)
        {
          sizes[i] = 1 + g_test_rand_int_range (0, 3000);
          /* Aligned to 16 at most: no padding, and a block's tail, left
           * for the next, is not counted. */
          total += (sizes[i] + 15) & ~(gsize) 15;
        }
      fill_loop (f->sp, kind, sizes, ptrs, N);

      for (guint i = 0; i < N; i++)
        {
          DsTestRange r = { (guintptr) ptrs[i], sizes[i] };

          g_assert_nonnull (ptrs[i]);
          ds_test_assert_aligned (ptrs[i], 16);
          memset (ptrs[i], i & 0xff, sizes[i]);
          g_array_append_val (ranges, r);
        }
      for (guint i = 0; i < N; i++)
        for (gsize b = 0; b < sizes[i]; b++)
          if (ptrs[i][b] != (i & 0xff))
            g_error ("kind %u: allocation %u overwritten at byte %" G_GSIZE_FORMAT, kind, i, b);
      ds_test_assert_disjoint (ranges);

      g_assert_cmpuint (ds_scratchpad_get_n_blocks (f->sp, kind), >, 2);
      g_assert_cmpuint (ds_scratchpad_get_allocated (f->sp, kind), ==, total);
    }
}

static void
test_bad_kind_keeps_windows (Fixture       *f,
                             gconstpointer  user_data)
{
  static const gint bad[] = { 4, 5, 6, 7, -1, 100, G_MAXINT, G_MININT };
  OldWindow before[DS_N_MEMORY_KINDS];
  guint kind, i;

  g_test_summary ("A request with an unknown kind, through the inline bump, "
                  "leaves every kind's window as it was (the bump reads and "
                  "writes back the window its kind value masks to)");

  for (kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
    ds_test_scratchpad_alloc_ok (f, kind, 40 + kind, 0);
  for (kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
    before[kind] = *window_of (f->sp, kind);

  for (i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autoptr(GError) error = NULL;

      g_assert_null (ds_scratchpad_alloc (f->sp, (DsMemoryKind) bad[i], 8, 0, &error));
      g_assert_error (error, DS_ERROR, DS_ERROR_INVALID_ARGUMENT);
    }

  for (kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
    {
      const OldWindow *w = window_of (f->sp, kind);

      g_assert_true (w->cur == before[kind].cur);
      g_assert_true (w->end == before[kind].end);
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

  g_assert_cmpuint (ds_test_scratchpad_total_calls (f), ==, 0);
}

/* Misuse ---------------------------------------------------------------------- */

static void
test_error_already_set (Fixture       *f,
                        gconstpointer  user_data)
{
  GError *set = g_error_new_literal (G_FILE_ERROR, G_FILE_ERROR_FAILED, "earlier");
  GError *error = set;
  DsTestKindState before;
  guint kind;

  g_test_summary ("with *error already set, every "
                  "allocation path is refused the same way (a critical, "
                  "NULL, the error untouched, nothing handed out), whether "
                  "the request fits the current block or not");

  if (!g_test_undefined ())
    {
      g_error_free (set);
      return;
    }

  for (kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
    {
      /* A current block with room to spare. */
      ds_test_scratchpad_alloc_ok (f, kind, 16, 16);
      before = ds_test_scratchpad_kind_state (f, kind);

#define REFUSED(call) \
      G_STMT_START { \
        g_test_expect_message ("Ds", G_LOG_LEVEL_CRITICAL, "*error == NULL*"); \
        g_assert_null (call); \
        g_test_assert_expected_messages (); \
        g_assert_true (error == set); \
        g_assert_cmpstr (error->message, ==, "earlier"); \
        ds_test_assert_kind_state_equal (before, ds_test_scratchpad_kind_state (f, kind)); \
      } G_STMT_END

      /* Fits: the inline bump, the exported function, the interface (both
       * of its paths), the array helper (inline and exported), the block. */
      REFUSED (ds_scratchpad_alloc (f->sp, kind, 16, 16, &error));
      REFUSED ((ds_scratchpad_alloc) (f->sp, kind, 16, 16, &error));
      REFUSED (ds_scratchpad_iface_alloc (DS_SCRATCHPAD_IFACE (f->sp), kind, 16, 0, &error));
      REFUSED ((ds_scratchpad_iface_alloc) (DS_SCRATCHPAD_IFACE (f->sp), kind, 16, 0, &error));
      REFUSED (ds_scratchpad_alloc_array (f->sp, kind, 4, 4, 0, &error));
      REFUSED ((ds_scratchpad_alloc_array) (f->sp, kind, 4, 4, 0, &error));
      REFUSED (ds_scratchpad_alloc_block (f->sp, kind, 16, 0, &error));
      /* Does not fit: the same. */
      REFUSED (ds_scratchpad_alloc (f->sp, kind, 1024 * 1024, 16, &error));
      REFUSED ((ds_scratchpad_alloc) (f->sp, kind, 1024 * 1024, 16, &error));
      /* Size 0, a bad alignment, an overflowing array: the same. */
      REFUSED (ds_scratchpad_alloc (f->sp, kind, 0, 16, &error));
      REFUSED (ds_scratchpad_alloc (f->sp, kind, 16, 3, &error));
      REFUSED (ds_scratchpad_alloc_array (f->sp, kind, G_MAXSIZE, 2, 0, &error));
#undef REFUSED
    }

  g_error_free (set);
}

static void
test_messages_name_arguments (Fixture       *f,
                              gconstpointer  user_data)
{
  static const struct
  {
    gsize       size, alignment;
    gint        code;
    const char *says;
  } cases[] = {
    /* The probe's case: once named "alignment 256". */
    { G_MAXSIZE - 1, 0, DS_ERROR_INVALID_ARGUMENT,
      "Size 18446744073709551614 with alignment 0 (the default, 16) overflows once padded" },
    /* Fits its own alignment, not the blocks': still ours to refuse. */
    { G_MAXSIZE - 100, 0, DS_ERROR_INVALID_ARGUMENT,
      "Size 18446744073709551515 with alignment 0 (the default, 16) overflows once padded" },
    { G_MAXSIZE - 100, 64, DS_ERROR_INVALID_ARGUMENT,
      "Size 18446744073709551515 with alignment 64 overflows once padded" },
    { 16, 48, DS_ERROR_INVALID_ARGUMENT, "Alignment 48 is not a power of two" },
    /* More than the test upstream gives: its message after the request. */
    { (gsize) 1 << 40, 0, DS_ERROR_OUT_OF_MEMORY,
      "Cannot allocate 1099511627776 bytes of host memory with alignment 0 (the default, 16): " },
    { (gsize) 1 << 40, 4096, DS_ERROR_OUT_OF_MEMORY,
      "Cannot allocate 1099511627776 bytes of host memory with alignment 4096: " },
  };

  g_test_summary ("an error names the size and "
                  "alignment as the caller passed them (0 as the default), "
                  "never the block size or block alignment behind them");

  if (GLIB_SIZEOF_SIZE_T != 8)
    {
      g_test_skip ("the messages below are written for a 64-bit gsize");
      return;
    }

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(GError) error = NULL;

      g_assert_null (ds_scratchpad_alloc (f->sp, DS_MEMORY_KIND_HOST, cases[i].size,
                                          cases[i].alignment, &error));
      g_assert_error (error, DS_ERROR, cases[i].code);
      g_assert_true (g_str_has_prefix (error->message, cases[i].says));
      if (cases[i].alignment == 0 || cases[i].alignment == 64)
        g_assert_null (strstr (error->message, "256"));
    }

  /* An upstream failure, with the request in front of its message. */
  {
    g_autoptr(GError) error = NULL;

    ds_test_resource_fail_next (f->res[DS_MEMORY_KIND_MANAGED], 1);
    g_assert_null (ds_scratchpad_alloc (f->sp, DS_MEMORY_KIND_MANAGED, 100, 64, &error));
    g_assert_error (error, DS_ERROR, DS_ERROR_OUT_OF_MEMORY);
    g_assert_true (g_str_has_prefix (error->message,
                                     "Cannot allocate 100 bytes of managed memory with alignment 64: "));
  }

  /* The same once the kind is set up and its block is full: the request
   * that takes a new block goes the short way (refill () in
   * ds-scratchpad.c), and fails with the same message; the scratchpad
   * keeps what it had. */
  {
    g_autoptr(GError) error = NULL;
    DsTestKindState before;

    ds_test_scratchpad_alloc_ok (f, DS_MEMORY_KIND_HOST, 100, 0);
    before = ds_test_scratchpad_kind_state (f, DS_MEMORY_KIND_HOST);
    ds_test_resource_fail_next (f->res[DS_MEMORY_KIND_HOST], 1);
    g_assert_null (ds_scratchpad_alloc (f->sp, DS_MEMORY_KIND_HOST, 1 << 20, 0, &error));
    g_assert_error (error, DS_ERROR, DS_ERROR_OUT_OF_MEMORY);
    g_assert_true (g_str_has_prefix (error->message,
                                     "Cannot allocate 1048576 bytes of host memory with "
                                     "alignment 0 (the default, 16): "));
    ds_test_assert_kind_state_equal (before, ds_test_scratchpad_kind_state (f, DS_MEMORY_KIND_HOST));
    g_assert_nonnull (ds_scratchpad_alloc (f->sp, DS_MEMORY_KIND_HOST, 1 << 20, 0, NULL));
    g_assert_cmpuint (ds_scratchpad_get_n_blocks (f->sp, DS_MEMORY_KIND_HOST), ==, 2);
  }
}

static void
assert_disposed (GError       *error,
                 DsMemoryKind  kind,
                 const char   *size)
{
  g_autofree char *says = g_strdup_printf ("Cannot allocate %s bytes of %s memory with ", size,
                                           (const char *[]) { "host", "pinned", "device", "managed" }[kind]);

  g_assert_error (error, DS_ERROR, DS_ERROR_DISPOSED);
  g_assert_true (g_str_has_prefix (error->message, says));
  g_assert_nonnull (strstr (error->message, "was disposed"));
}

static void
test_disposed (Fixture       *f,
               gconstpointer  user_data)
{
  guint kind;

  g_test_summary ("after g_object_run_dispose () the "
                  "memory is back upstream and every allocation, of any "
                  "size, through any entry point, is DS_ERROR_DISPOSED rather "
                  "than served by the default pools; release stays safe and "
                  "settings are refused");

  for (kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
    ds_test_scratchpad_alloc_ok (f, kind, 100, 0);

  g_object_run_dispose (G_OBJECT (f->sp));
  g_object_run_dispose (G_OBJECT (f->sp));

  for (kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
    {
      guint n_calls = ds_test_resource_get_n_calls (f->res[kind]);
      g_autoptr(GError) e1 = NULL, e2 = NULL, e3 = NULL, e4 = NULL, e5 = NULL, e6 = NULL;

      g_assert_cmpuint (ds_test_resource_get_n_live (f->res[kind]), ==, 0);
      g_assert_cmpuint (ds_scratchpad_get_n_blocks (f->sp, kind), ==, 0);

      g_assert_null (ds_scratchpad_alloc (f->sp, kind, 16, 0, &e1));
      assert_disposed (e1, kind, "16");
      g_assert_null ((ds_scratchpad_alloc) (f->sp, kind, 1 << 20, 64, &e2));
      assert_disposed (e2, kind, "1048576");
      g_assert_true (strstr (e2->message, "alignment 64:") != NULL);
      g_assert_null (ds_scratchpad_iface_alloc (DS_SCRATCHPAD_IFACE (f->sp), kind, 8, 0, &e3));
      assert_disposed (e3, kind, "8");
      g_assert_null (ds_scratchpad_alloc_block (f->sp, kind, 8, 0, &e4));
      assert_disposed (e4, kind, "8");
      g_assert_null (ds_scratchpad_alloc (f->sp, kind, 0, 0, &e5));
      assert_disposed (e5, kind, "0");
      g_assert_null (DS_SCRATCHPAD_ALLOC_N (f->sp, kind, guint32, 4, &e6));
      assert_disposed (e6, kind, "16");

      /* Nothing went to any upstream, the configured one included. */
      g_assert_cmpuint (ds_test_resource_get_n_calls (f->res[kind]), ==, n_calls);
    }

  /* The configured resources are gone and no default stands in. */
  {
    g_autoptr(DsMemoryResource) host = NULL;

    g_object_get (f->sp, "host-resource", &host, NULL);
    g_assert_null (host);
  }

  ds_scratchpad_release (f->sp);
  ds_scratchpad_release (f->sp);

  if (g_test_undefined ())
    {
      g_test_expect_message ("Ds", G_LOG_LEVEL_CRITICAL, "*host-resource*disposed*");
      g_object_set (f->sp, "host-resource", f->res[DS_MEMORY_KIND_HOST], NULL);
      g_test_assert_expected_messages ();
    }
}

static void
test_disposed_with_exports (Fixture       *f,
                            gconstpointer  user_data)
{
  g_autoptr(GError) error = NULL;
  DsBlock *block, *export;

  g_test_summary ("disposed while an export is alive, "
                  "the exported memory stays (with its resource) until the "
                  "export is gone, and even the room left in its block is "
                  "not handed out");

  block = ds_scratchpad_alloc_block (f->sp, DS_MEMORY_KIND_HOST, 64, 0, &error);
  g_assert_no_error (error);
  export = ds_block_export (block, &error);
  g_assert_no_error (error);

  g_object_run_dispose (G_OBJECT (f->sp));
  g_assert_cmpuint (ds_test_resource_get_n_live (f->res[DS_MEMORY_KIND_HOST]), ==, 1);
  g_assert_true (ds_block_is_valid (export));

  /* The block has room, and the inline bump would take it. */
  g_assert_null (ds_scratchpad_alloc (f->sp, DS_MEMORY_KIND_HOST, 16, 0, &error));
  g_assert_error (error, DS_ERROR, DS_ERROR_DISPOSED);
  g_clear_error (&error);

  ds_block_unref (export);
  ds_block_unref (block);
  /* Teardown finalizes it: the block goes back then, exactly once. */
}

typedef struct
{
  guint notified;      /* "notify" handlers run on the scratchpad */
  guint destroyed;     /* their destroy notify */
  guint weak_notified; /* weak reference notifies */
} Watch;

static guint other_notified;

static void
watch_notify (GObject    *object,
              GParamSpec *pspec,
              gpointer    data)
{
  ((Watch *) data)->notified++;
}

static void
watch_destroy (gpointer  data,
               GClosure *closure)
{
  ((Watch *) data)->destroyed++;
}

static void
watch_weak (gpointer  data,
            GObject  *where_the_object_was)
{
  ((Watch *) data)->weak_notified++;
}

/* Connected to another object with the scratchpad as its gobject: it
 * must be gone with the scratchpad. */
static void
on_other_notify (GObject    *other,
                 GParamSpec *pspec,
                 gpointer    sp)
{
  g_assert_true (DS_IS_SCRATCHPAD (sp));
  other_notified++;
}

static void
test_dispose_gobject (void)
{
  g_test_summary ("GObject's part of disposing a scratchpad happens once, whether "
                  "the last reference goes (ds leaves it to g_object_unref () "
                  "there) or g_object_run_dispose () comes first: handlers "
                  "destroyed, closures watching the scratchpad invalidated, weak "
                  "references notified, weak pointers cleared");

  for (guint run_dispose = 0; run_dispose < 2; run_dispose++)
    {
      DsScratchpad *other = ds_scratchpad_new (NULL);
      DsScratchpad *sp = ds_scratchpad_new (NULL);
      gpointer weak_pointer = sp;
      Watch w = { 0, };

      other_notified = 0;
      g_signal_connect_data (sp, "notify", G_CALLBACK (watch_notify), &w, watch_destroy, 0);
      g_object_weak_ref (G_OBJECT (sp), watch_weak, &w);
      g_object_add_weak_pointer (G_OBJECT (sp), &weak_pointer);
      g_signal_connect_object (other, "notify", G_CALLBACK (on_other_notify), sp, 0);

      g_object_notify (G_OBJECT (sp), "keep-blocks");
      g_object_notify (G_OBJECT (other), "keep-blocks");
      g_assert_cmpuint (w.notified, ==, 1);
      g_assert_cmpuint (other_notified, ==, 1);

      if (run_dispose)
        {
          g_object_run_dispose (G_OBJECT (sp));
          g_assert_cmpuint (w.destroyed, ==, 1);
          g_assert_cmpuint (w.weak_notified, ==, 1);
          g_assert_null (weak_pointer);
          g_object_notify (G_OBJECT (sp), "keep-blocks");
          g_object_notify (G_OBJECT (other), "keep-blocks");
          g_assert_cmpuint (w.notified, ==, 1);
          g_assert_cmpuint (other_notified, ==, 1);
        }
      else
        {
          g_assert_cmpuint (w.destroyed, ==, 0);
          g_assert_cmpuint (w.weak_notified, ==, 0);
          g_assert_nonnull (weak_pointer);
        }

      g_object_unref (sp);
      g_assert_cmpuint (w.destroyed, ==, 1);
      g_assert_cmpuint (w.weak_notified, ==, 1);
      g_assert_null (weak_pointer);
      /* The handler on the other object went with the scratchpad. */
      g_object_notify (G_OBJECT (other), "keep-blocks");
      g_assert_cmpuint (other_notified, ==, 1);
      g_assert_finalize_object (other);
    }
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
  ADD ("alloc/inline-constant-size", test_inline_constant_size);
  ADD ("alloc/cursor-16", test_cursor_16);
  ADD ("alloc/cursor-multiple-of-16", test_cursor_multiple_of_16);
  ADD ("alloc/loop-across-blocks", test_loop_across_blocks);
  ADD ("alloc/bad-kind-keeps-windows", test_bad_kind_keeps_windows);
  g_test_add_func ("/Ds/Scratchpad/no-device/gpu-kinds", test_no_device);
  g_test_add_func ("/Ds/Scratchpad/no-device/stream-order", test_no_device_stream_order);
  ADD ("to-contiguous/bad-input", test_to_contiguous_bad_input);
  ADD ("preconditions", test_preconditions);
  ADD ("issue-12/error-already-set", test_error_already_set);
  ADD ("issue-12/messages-name-arguments", test_messages_name_arguments);
  ADD ("issue-12/disposed", test_disposed);
  ADD ("issue-12/disposed-with-exports", test_disposed_with_exports);
  g_test_add_func ("/Ds/Scratchpad/dispose/gobject", test_dispose_gobject);

#undef ADD

  return g_test_run ();
}
