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
  ds_test_add_scratchpad ("/Ds/Scratchpad/typed-macros", 0, test_typed_macros);

  return g_test_run ();
}
