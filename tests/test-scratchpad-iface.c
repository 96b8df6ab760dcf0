/* test-scratchpad-iface.c: DsScratchpadIface and the typed helpers
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "ds-test-fixtures.h"

typedef DsTestScratchpadFixture Fixture;

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
                  "implementation: DsScratchpad's arenas, or another class, "
                  "in any order (the inline bump caches DsScratchpad's class)");

  /* Another class first, before the inline path has seen a DsScratchpad
   * in this file. */
  p = ds_scratchpad_iface_alloc (DS_SCRATCHPAD_IFACE (fixed), DS_MEMORY_KIND_HOST, 8, 0, &error);
  g_assert_no_error (error);
  g_assert_true (p == fixed->buffer);
  g_assert_cmpuint (fixed->n_calls, ==, 1);

  iface = DS_SCRATCHPAD_IFACE (f->sp);
  p = ds_scratchpad_iface_alloc (iface, DS_MEMORY_KIND_PINNED, 77, 32, &error);
  g_assert_no_error (error);
  ds_test_assert_aligned (p, 32);
  g_assert_true (ds_test_resource_owns (f->res[DS_MEMORY_KIND_PINNED], p, 77));
  /* 77 bytes take 80 of the block. */
  g_assert_cmpuint (ds_scratchpad_get_allocated (f->sp, DS_MEMORY_KIND_PINNED), ==, 80);

  iface = DS_SCRATCHPAD_IFACE (fixed);
  p = ds_scratchpad_iface_alloc (iface, DS_MEMORY_KIND_MANAGED, 10, 0, &error);
  g_assert_no_error (error);
  g_assert_true (p == fixed->buffer + 8);
  g_assert_cmpint (fixed->last_kind, ==, DS_MEMORY_KIND_MANAGED);
  g_assert_null (ds_scratchpad_iface_alloc (iface, DS_MEMORY_KIND_HOST, 1000, 0, &error));
  g_assert_error (error, DS_ERROR, DS_ERROR_OUT_OF_MEMORY);
  g_assert_cmpuint (fixed->n_calls, ==, 3);
  g_clear_error (&error);

  /* Back to the DsScratchpad: its bump, not the other class. */
  p = ds_scratchpad_iface_alloc (DS_SCRATCHPAD_IFACE (f->sp), DS_MEMORY_KIND_PINNED, 3, 0, &error);
  g_assert_no_error (error);
  g_assert_true (ds_test_resource_owns (f->res[DS_MEMORY_KIND_PINNED], p, 3));
  g_assert_cmpuint (ds_scratchpad_get_allocated (f->sp, DS_MEMORY_KIND_PINNED), ==, 80 + 16);
  g_assert_cmpuint (fixed->n_calls, ==, 3);
}

/* A loop of allocations through the interface with the instance in a
 * local, as the inline bump is built for (the instance's head is asked
 * for once, before the loop, and the cursor stays in a register): sizes
 * that cross several blocks, so that the exported function places some
 * of them mid-loop and the loop goes on from the cursor it leaves. Every
 * allocation is filled with its own byte and checked at the end, so any
 * two that overlap show. */
#define LOOP_N 2000

static void
test_iface_loop (Fixture       *f,
                 gconstpointer  user_data)
{
  g_autoptr(TestFixedScratchpad) fixed = g_object_new (TEST_TYPE_FIXED_SCRATCHPAD, NULL);
  DsScratchpadIface *iface = DS_SCRATCHPAD_IFACE (f->sp);
  DsScratchpadIface *other = DS_SCRATCHPAD_IFACE (fixed);
  DsScratchpadIface *both[2] = { iface, other };
  g_autofree guint8 **ptrs = g_new0 (guint8 *, LOOP_N);
  g_autofree gsize *sizes = g_new0 (gsize, LOOP_N);
  GRand *rand = g_rand_new_with_seed (9);
  guint64 rounded = 0;
  guint i, n_other;

  g_test_summary ("A caller's loop through ds_scratchpad_iface_alloc () over one "
                  "DsScratchpad crosses blocks without two allocations "
                  "overlapping; over another implementation every request "
                  "reaches it; an instance that changes inside the loop gets "
                  "each request to its own implementation");

  for (i = 0; i < LOOP_N; i++)
    sizes[i] = g_rand_int_range (rand, 1, 200);
  g_rand_free (rand);

  for (i = 0; i < LOOP_N; i++)
    ptrs[i] = ds_scratchpad_iface_alloc (iface, DS_MEMORY_KIND_HOST, sizes[i], 16, NULL);

  for (i = 0; i < LOOP_N; i++)
    {
      g_assert_nonnull (ptrs[i]);
      ds_test_assert_aligned (ptrs[i], 16);
      g_assert_true (ds_test_resource_owns (f->res[DS_MEMORY_KIND_HOST], ptrs[i], sizes[i]));
      memset (ptrs[i], (int) (i & 0xff), sizes[i]);
      rounded += (sizes[i] + 15) & ~(gsize) 15;
    }
  for (i = 0; i < LOOP_N; i++)
    for (gsize b = 0; b < sizes[i]; b++)
      g_assert_cmpuint (ptrs[i][b], ==, i & 0xff);
  /* ~200 KiB from 64 KiB and doubling blocks: the exported function took
   * over at least twice inside the loop. */
  g_assert_cmpuint (ds_scratchpad_get_n_blocks (f->sp, DS_MEMORY_KIND_HOST), >=, 3);
  g_assert_cmpuint (ds_scratchpad_get_allocated (f->sp, DS_MEMORY_KIND_HOST), ==, rounded);

  /* Another implementation: all of it goes there, none to the scratchpad. */
  for (i = 0; i < 16; i++)
    g_assert_true (ds_scratchpad_iface_alloc (other, DS_MEMORY_KIND_DEVICE, 4, 16, NULL) ==
                   fixed->buffer + 4 * i);
  g_assert_cmpuint (fixed->n_calls, ==, 16);
  g_assert_cmpuint (ds_scratchpad_get_allocated (f->sp, DS_MEMORY_KIND_DEVICE), ==, 0);

  /* The instance changes at every step. */
  n_other = fixed->n_calls;
  for (i = 0; i < 32; i++)
    {
      DsScratchpadIface *self = both[i & 1];
      gpointer p = ds_scratchpad_iface_alloc (self, DS_MEMORY_KIND_PINNED, 2, 16, NULL);

      if (self == iface)
        g_assert_true (ds_test_resource_owns (f->res[DS_MEMORY_KIND_PINNED], p, 2));
      else
        g_assert_true (p == fixed->buffer + fixed->used - 2);
    }
  g_assert_cmpuint (fixed->n_calls - n_other, ==, 16);
  g_assert_cmpuint (ds_scratchpad_get_allocated (f->sp, DS_MEMORY_KIND_PINNED), ==, 16 * 16);
}

/* Threads that each go through the interface to an implementation of
 * their own, DsScratchpad's and another: the inline bump writes back the
 * window it bumped in, a blank one for the other implementation, which
 * must be the thread's own (under TSan a shared one is a reported race). */
#define IFACE_THREADS 4

static gpointer
iface_thread (gpointer data)
{
  g_autoptr(DsScratchpad) sp = ds_scratchpad_new (NULL);
  g_autoptr(TestFixedScratchpad) fixed = g_object_new (TEST_TYPE_FIXED_SCRATCHPAD, NULL);
  DsScratchpadIface *both[2] = { DS_SCRATCHPAD_IFACE (sp), DS_SCRATCHPAD_IFACE (fixed) };
  guint i, round;

  for (round = 0; round < 50; round++)
    {
      for (i = 0; i < 200; i++)
        {
          DsScratchpadIface *self = both[i & 1];

          if (ds_scratchpad_iface_alloc (self, DS_MEMORY_KIND_HOST, 1, 16, NULL) == NULL)
            return GUINT_TO_POINTER (FALSE);
        }
      if (ds_scratchpad_get_allocated (sp, DS_MEMORY_KIND_HOST) != 100 * 16 ||
          fixed->n_calls != 100 * (round + 1))
        return GUINT_TO_POINTER (FALSE);
      ds_scratchpad_release (sp);
      fixed->used = 0;
    }

  return GUINT_TO_POINTER (TRUE);
}

static void
test_iface_threads (void)
{
  GThread *threads[IFACE_THREADS];
  guint i;

  g_test_summary ("Threads going through ds_scratchpad_iface_alloc () to a "
                  "DsScratchpad and another implementation at once each get "
                  "their own results (and, under TSan, share no blank window)");

  for (i = 0; i < IFACE_THREADS; i++)
    threads[i] = g_thread_new ("iface", iface_thread, NULL);
  for (i = 0; i < IFACE_THREADS; i++)
    g_assert_true (GPOINTER_TO_UINT (g_thread_join (threads[i])));
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
  DsTestKindState before;
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
  /* 20 bytes after 80: they take 32. */
  g_assert_cmpuint (ds_scratchpad_get_allocated (f->sp, DS_MEMORY_KIND_HOST), ==, 112);

  dev = DS_SCRATCHPAD_ALLOC_DEVICE (f->sp, guint64, 3, &error);
  g_assert_no_error (error);
  g_assert_true (ds_test_resource_owns (f->res[DS_MEMORY_KIND_DEVICE], dev, 24));
  g_assert_cmpuint (ds_scratchpad_get_allocated (f->sp, DS_MEMORY_KIND_DEVICE), ==, 32);

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
      before = ds_test_scratchpad_kind_state (f, kind);

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

      ds_test_assert_kind_state_equal (before, ds_test_scratchpad_kind_state (f, kind));
      g_assert_cmpuint (ds_test_resource_get_n_calls (f->res[kind]), ==, before.n_calls);
    }
}

int
main (int    argc,
      char **argv)
{
  ds_test_init (&argc, &argv);

  ds_test_add_scratchpad ("/Ds/Scratchpad/iface/dispatch", 0, test_iface_dispatch);
  ds_test_add_scratchpad ("/Ds/Scratchpad/iface/loop", 0, test_iface_loop);
  g_test_add_func ("/Ds/Scratchpad/iface/threads", test_iface_threads);
  ds_test_add_scratchpad ("/Ds/Scratchpad/typed-macros", 0, test_typed_macros);

  return g_test_run ();
}
