/* test-scratchpad-cursor.c: DsScratchpadCursor, a kind's bump window lent
 * to a C loop (recording upstreams; no device needed)
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>

#include "ds-test-fixtures.h"

typedef DsTestScratchpadFixture Fixture;

/* A second scratchpad over recording upstreams of its own. */
typedef struct
{
  DsTestResource *res[DS_N_MEMORY_KINDS];
  DsScratchpad   *sp;
} Twin;

static void
twin_init (Twin *t,
           const DsAccessOrder *order)
{
  for (guint kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
    t->res[kind] = ds_test_resource_new (kind, FALSE);
  t->sp = g_object_new (DS_TYPE_SCRATCHPAD,
                        "device-order", order,
                        "host-resource", t->res[DS_MEMORY_KIND_HOST],
                        "pinned-resource", t->res[DS_MEMORY_KIND_PINNED],
                        "device-resource", t->res[DS_MEMORY_KIND_DEVICE],
                        "managed-resource", t->res[DS_MEMORY_KIND_MANAGED],
                        NULL);
}

static void
twin_clear (Twin *t)
{
  g_assert_finalize_object (g_steal_pointer (&t->sp));
  for (guint kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
    {
      ds_test_resource_assert_clean (t->res[kind]);
      g_assert_finalize_object (g_steal_pointer (&t->res[kind]));
    }
}

static void
assert_same_state (DsScratchpad   *a,
                   DsTestResource *ra,
                   DsScratchpad   *b,
                   DsTestResource *rb,
                   DsMemoryKind    kind)
{
  g_assert_cmpuint (ds_scratchpad_get_reserved (a, kind), ==, ds_scratchpad_get_reserved (b, kind));
  g_assert_cmpuint (ds_scratchpad_get_allocated (a, kind), ==, ds_scratchpad_get_allocated (b, kind));
  g_assert_cmpuint (ds_scratchpad_get_n_allocations (a, kind), ==,
                    ds_scratchpad_get_n_allocations (b, kind));
  g_assert_cmpuint (ds_scratchpad_get_n_blocks (a, kind), ==, ds_scratchpad_get_n_blocks (b, kind));
  g_assert_cmpuint (ds_test_resource_get_n_calls (ra), ==, ds_test_resource_get_n_calls (rb));
}

/* The same random requests through a cursor and through
 * ds_scratchpad_alloc () on a twin: every cursor allocation aligned,
 * inside a live block of the kind's upstream, disjoint from the others and
 * at the same offset from the twin's previous one; the same blocks taken
 * and the same counters once the cursor ends. */
static void
test_matches_alloc (Fixture       *f,
                    gconstpointer  user_data)
{
  g_autoptr(GArray) ranges = g_array_new (FALSE, FALSE, sizeof (DsTestRange));
  Twin twin;

  g_test_summary ("A cursor hands out what ds_scratchpad_alloc () would: same "
                  "alignment, offsets, blocks and counters");
  twin_init (&twin, f->host);

  for (guint kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
    {
      DsScratchpadCursor cursor = ds_scratchpad_begin_cursor (f->sp, kind);
      guintptr last = 0, twin_last = 0;
      guint blocks = 0;

      for (guint i = 0; i < 600; i++)
        {
          g_autoptr(GError) error = NULL;
          /* Up to the blocks' own alignment, so that the padding does
           * not depend on where each upstream put its block. */
          gsize alignment = (gsize) 1 << g_test_rand_int_range (0, 9);
          gsize size = 1 + (g_test_rand_bit () ? g_test_rand_int_range (0, 64) :
                                                 g_test_rand_int_range (0, 40000));
          guint8 *p = ds_scratchpad_cursor_alloc (&cursor, size, alignment, &error);
          guint8 *q = ds_scratchpad_alloc (twin.sp, kind, size, alignment, NULL);
          DsTestRange r = { (guintptr) p, size };

          g_assert_no_error (error);
          g_assert_nonnull (p);
          g_assert_nonnull (q);
          ds_test_assert_aligned (p, alignment);
          g_assert_true (ds_test_resource_owns (f->res[kind], p, size));
          /* In the same block as the one before (the twin took no new
           * one either: the cursor's blocks are counted once it ends),
           * both moved on by the same amount. */
          if (ds_scratchpad_get_n_blocks (twin.sp, kind) == blocks && i > 0)
            g_assert_cmpint ((gssize) ((guintptr) p - last), ==, (gssize) ((guintptr) q - twin_last));
          blocks = ds_scratchpad_get_n_blocks (twin.sp, kind);
          last = (guintptr) p;
          twin_last = (guintptr) q;
          memset (p, (int) (i & 0xff), size);
          g_array_append_val (ranges, r);
        }
      ds_scratchpad_end_cursor (&cursor);
      assert_same_state (f->sp, f->res[kind], twin.sp, twin.res[kind], kind);
      g_assert_cmpuint (ds_scratchpad_get_n_allocations (f->sp, kind), ==, 600);
    }

  ds_test_assert_disjoint (ranges);
  ds_scratchpad_release (f->sp);
  ds_scratchpad_release (twin.sp);
  twin_clear (&twin);
}

/* Allocations before, through and after a cursor share the kind's blocks
 * without overlapping, and the counters add up. */
static void
test_interleaved (Fixture       *f,
                  gconstpointer  user_data)
{
  g_autoptr(GArray) ranges = g_array_new (FALSE, FALSE, sizeof (DsTestRange));
  DsScratchpadCursor cursor;
  guint64 bytes = 0;

  g_test_summary ("Direct allocations around a cursor: no overlap, counters "
                  "cover both");

  for (guint round = 0; round < 3; round++)
    {
      for (guint i = 0; i < 20; i++)
        {
          DsTestRange r = { 0, 100 + i * 37 };

          r.start = (guintptr) ds_test_scratchpad_alloc_ok (f, DS_MEMORY_KIND_HOST, r.size, 0);
          bytes += r.size;
          g_array_append_val (ranges, r);
        }
      cursor = ds_scratchpad_begin_cursor (f->sp, DS_MEMORY_KIND_HOST);
      for (guint i = 0; i < 30; i++)
        {
          DsTestRange r = { 0, 3000 + i * 11 };

          r.start = (guintptr) ds_scratchpad_cursor_alloc (&cursor, r.size, 64, NULL);
          g_assert_true (ds_test_resource_owns (f->res[DS_MEMORY_KIND_HOST],
                                                (gpointer) r.start, r.size));
          bytes += r.size;
          g_array_append_val (ranges, r);
        }
      ds_scratchpad_end_cursor (&cursor);
    }

  ds_test_assert_disjoint (ranges);
  g_assert_cmpuint (ds_scratchpad_get_allocated (f->sp, DS_MEMORY_KIND_HOST), ==, bytes);
  g_assert_cmpuint (ds_scratchpad_get_n_allocations (f->sp, DS_MEMORY_KIND_HOST), ==, 150);

  /* Released as any other allocation: every block back, once. */
  ds_scratchpad_release (f->sp);
  g_assert_cmpuint (ds_test_resource_get_n_live (f->res[DS_MEMORY_KIND_HOST]), ==, 0);
  g_assert_cmpuint (ds_scratchpad_get_allocated (f->sp, DS_MEMORY_KIND_HOST), ==, 0);
}

/* Size 0, bad alignments and an error already set: as ds_scratchpad_alloc (). */
static void
test_bad_requests (Fixture       *f,
                   gconstpointer  user_data)
{
  DsScratchpadCursor cursor = ds_scratchpad_begin_cursor (f->sp, DS_MEMORY_KIND_DEVICE);
  g_autoptr(GError) error = NULL;
  GError *set;

  g_test_summary ("A cursor refuses what ds_scratchpad_alloc () refuses, with the same errors");

  g_assert_null (ds_scratchpad_cursor_alloc (&cursor, 0, 0, &error));
  g_assert_no_error (error);

  g_assert_nonnull (ds_scratchpad_cursor_alloc (&cursor, 64, 0, &error));
  g_assert_null (ds_scratchpad_cursor_alloc (&cursor, 64, 3, &error));
  g_assert_error (error, DS_ERROR, DS_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "Alignment 3"));
  g_clear_error (&error);

  g_assert_null (ds_scratchpad_cursor_alloc (&cursor, G_MAXSIZE - 8, 0, &error));
  g_assert_error (error, DS_ERROR, DS_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);

  /* An upstream failure: the error, and the cursor goes on. */
  ds_test_resource_fail_next (f->res[DS_MEMORY_KIND_DEVICE], 1);
  g_assert_null (ds_scratchpad_cursor_alloc (&cursor, 1 << 20, 0, &error));
  g_assert_error (error, DS_ERROR, DS_ERROR_OUT_OF_MEMORY);
  g_clear_error (&error);
  g_assert_nonnull (ds_scratchpad_cursor_alloc (&cursor, 1 << 20, 0, &error));
  g_assert_no_error (error);

  set = g_error_new_literal (DS_ERROR, DS_ERROR_CUDA, "set before");
  g_test_expect_message ("Ds", G_LOG_LEVEL_CRITICAL, "*error == NULL*");
  g_assert_null (ds_scratchpad_cursor_alloc (&cursor, 16, 0, &set));
  g_test_assert_expected_messages ();
  g_error_free (set);

  ds_scratchpad_end_cursor (&cursor);
  g_assert_cmpuint (ds_scratchpad_get_n_allocations (f->sp, DS_MEMORY_KIND_DEVICE), ==, 2);
  ds_scratchpad_release (f->sp);
}

/* While a kind is lent: its direct allocations and every release are
 * refused with a critical; other kinds go on. After the end, all is as
 * before. */
static void
test_lent_kind_refused (Fixture       *f,
                        gconstpointer  user_data)
{
  DsScratchpadCursor cursor = ds_scratchpad_begin_cursor (f->sp, DS_MEMORY_KIND_PINNED);
  DsScratchpadCursor second;
  gpointer p;

  g_test_summary ("Misuse while a cursor is open is loud: the lent kind's direct "
                  "allocations, a second cursor and releases are refused");

  p = ds_scratchpad_cursor_alloc (&cursor, 100, 0, NULL);
  g_assert_nonnull (p);

  g_test_expect_message ("Ds", G_LOG_LEVEL_CRITICAL, "*pinned*lent to a cursor*");
  g_assert_null (ds_scratchpad_alloc (f->sp, DS_MEMORY_KIND_PINNED, 16, 0, NULL));
  g_test_assert_expected_messages ();

  g_test_expect_message ("Ds", G_LOG_LEVEL_CRITICAL, "*pinned*lent to a cursor*");
  g_assert_null (ds_scratchpad_iface_alloc (DS_SCRATCHPAD_IFACE (f->sp), DS_MEMORY_KIND_PINNED,
                                            16, 0, NULL));
  g_test_assert_expected_messages ();

  g_test_expect_message ("Ds", G_LOG_LEVEL_CRITICAL, "*pinned*lent to a cursor already*");
  second = ds_scratchpad_begin_cursor (f->sp, DS_MEMORY_KIND_PINNED);
  g_test_assert_expected_messages ();
  g_test_expect_message ("Ds", G_LOG_LEVEL_CRITICAL, "*cursor has ended*");
  g_assert_null (ds_scratchpad_cursor_alloc (&second, 16, 0, NULL));
  g_test_assert_expected_messages ();
  ds_scratchpad_end_cursor (&second);   /* never began: nothing */

  /* Other kinds are unaffected. */
  ds_test_scratchpad_alloc_ok (f, DS_MEMORY_KIND_HOST, 100, 0);

  g_test_expect_message ("Ds", G_LOG_LEVEL_CRITICAL, "*lent to a cursor*nothing is given back*");
  ds_scratchpad_release (f->sp);
  g_test_assert_expected_messages ();
  g_assert_cmpuint (ds_scratchpad_get_n_blocks (f->sp, DS_MEMORY_KIND_HOST), ==, 1);
  g_assert_cmpuint (ds_test_resource_get_n_live (f->res[DS_MEMORY_KIND_PINNED]), ==, 1);

  ds_scratchpad_end_cursor (&cursor);
  g_assert_nonnull (ds_scratchpad_alloc (f->sp, DS_MEMORY_KIND_PINNED, 16, 0, NULL));
  g_assert_cmpuint (ds_scratchpad_get_n_allocations (f->sp, DS_MEMORY_KIND_PINNED), ==, 2);
  ds_scratchpad_release (f->sp);
  g_assert_cmpuint (ds_test_resource_get_n_live (f->res[DS_MEMORY_KIND_PINNED]), ==, 0);
  g_assert_cmpuint (ds_test_resource_get_n_live (f->res[DS_MEMORY_KIND_HOST]), ==, 0);
}

/* After the end, and for a copy ended before: refused, nothing handed out. */
static void
test_after_end (Fixture       *f,
                gconstpointer  user_data)
{
  DsScratchpadCursor cursor = ds_scratchpad_begin_cursor (f->sp, DS_MEMORY_KIND_HOST);
  DsScratchpadCursor copy;

  g_test_summary ("An ended cursor, or a stale copy of one, hands out nothing");

  g_assert_nonnull (ds_scratchpad_cursor_alloc (&cursor, 100, 0, NULL));
  copy = cursor;
  ds_scratchpad_end_cursor (&cursor);

  g_test_expect_message ("Ds", G_LOG_LEVEL_CRITICAL, "*cursor has ended*");
  g_assert_null (ds_scratchpad_cursor_alloc (&cursor, 100, 0, NULL));
  g_test_assert_expected_messages ();
  ds_scratchpad_end_cursor (&cursor);   /* again: nothing */

  /* The copy still points into the block: a request that does not fit
   * there reaches the library, which sees the kind is not lent. */
  g_test_expect_message ("Ds", G_LOG_LEVEL_CRITICAL, "*no cursor open*copy*");
  g_assert_null (ds_scratchpad_cursor_alloc (&copy, 1 << 20, 0, NULL));
  g_test_assert_expected_messages ();
  g_test_expect_message ("Ds", G_LOG_LEVEL_CRITICAL, "*no cursor open*copy*");
  ds_scratchpad_end_cursor (&copy);
  g_test_assert_expected_messages ();

  g_test_expect_message ("Ds", G_LOG_LEVEL_CRITICAL, "*assertion*failed*");
  cursor = ds_scratchpad_begin_cursor (f->sp, (DsMemoryKind) 7);
  g_test_assert_expected_messages ();
  g_test_expect_message ("Ds", G_LOG_LEVEL_CRITICAL, "*cursor has ended*");
  g_assert_null (ds_scratchpad_cursor_alloc (&cursor, 100, 0, NULL));
  g_test_assert_expected_messages ();

  g_assert_cmpuint (ds_scratchpad_get_n_allocations (f->sp, DS_MEMORY_KIND_HOST), ==, 1);
  ds_scratchpad_release (f->sp);
}

/* The cursor holds a reference: the caller may drop its own, and the
 * scratchpad (with every block) goes when the cursor ends. */
static void
test_holds_reference (Fixture       *f,
                      gconstpointer  user_data)
{
  DsScratchpad *sp = g_steal_pointer (&f->sp);
  DsScratchpadCursor cursor = ds_scratchpad_begin_cursor (sp, DS_MEMORY_KIND_MANAGED);
  guint8 *p;

  g_test_summary ("A cursor keeps its scratchpad alive; ending it drops the last reference");

  g_object_add_weak_pointer (G_OBJECT (sp), (gpointer *) &sp);
  g_object_unref (sp);
  g_assert_nonnull (sp);

  p = ds_scratchpad_cursor_alloc (&cursor, 5000, 0, NULL);
  g_assert_nonnull (p);
  memset (p, 0x5a, 5000);
  g_assert_cmpuint (ds_test_resource_get_n_live (f->res[DS_MEMORY_KIND_MANAGED]), ==, 1);

  ds_scratchpad_end_cursor (&cursor);
  g_assert_null (sp);
  g_assert_cmpuint (ds_test_resource_get_n_live (f->res[DS_MEMORY_KIND_MANAGED]), ==, 0);
}

/* A cursor over a disposed scratchpad: DS_ERROR_DISPOSED, as ds_scratchpad_alloc (). */
static void
test_disposed (Fixture       *f,
               gconstpointer  user_data)
{
  g_autoptr(GError) error = NULL;
  DsScratchpadCursor cursor;

  g_test_summary ("A cursor begun on a disposed scratchpad refuses with DS_ERROR_DISPOSED");

  g_object_run_dispose (G_OBJECT (f->sp));
  cursor = ds_scratchpad_begin_cursor (f->sp, DS_MEMORY_KIND_HOST);
  g_assert_null (ds_scratchpad_cursor_alloc (&cursor, 16, 0, &error));
  g_assert_error (error, DS_ERROR, DS_ERROR_DISPOSED);
  ds_scratchpad_end_cursor (&cursor);
}

int
main (int    argc,
      char **argv)
{
  ds_test_init (&argc, &argv);

#define ADD(path, func) ds_test_add_scratchpad ("/Ds/ScratchpadCursor/" path, 0, func)

  ADD ("matches-alloc", test_matches_alloc);
  ADD ("interleaved", test_interleaved);
  ADD ("bad-requests", test_bad_requests);
  ADD ("lent-kind-refused", test_lent_kind_refused);
  ADD ("after-end", test_after_end);
  ADD ("holds-reference", test_holds_reference);
  ADD ("disposed", test_disposed);

#undef ADD

  return g_test_run ();
}
