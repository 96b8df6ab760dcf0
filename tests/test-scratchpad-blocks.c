/* test-scratchpad-blocks.c: DsScratchpad, the blocks it takes from its
 * upstream resources and gives back
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Growth, release, statistics and upstream failures, for every kind, on
 * recording upstream resources (DsTestScratchpadFixture): no GPU needed.
 */

#include "config.h"

#include <string.h>

#include "ds-test-fixtures.h"

#define KiB ((gsize) 1024)
#define MiB (1024 * KiB)

typedef DsTestScratchpadFixture Fixture;

static const char * const kind_names[] = { "host", "pinned", "device", "managed" };

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

      ds_test_scratchpad_alloc_ok (f, kind, 1, 16);
      call = ds_test_resource_get_call (r, 0);
      g_assert_cmpuint (call.size, ==, 64 * KiB);

      ds_test_scratchpad_alloc_ok (f, kind, 64 * KiB, 16);
      call = ds_test_resource_get_call (r, 1);
      g_assert_cmpuint (call.size, ==, 128 * KiB);

      /* The tail of the first block is not reused. */
      p = ds_test_scratchpad_alloc_ok (f, kind, 16, 16);
      g_assert_true ((guintptr) p >= (guintptr) call.ptr &&
                     (guintptr) p < (guintptr) call.ptr + call.size);

      ds_test_scratchpad_alloc_ok (f, kind, 300000, 16);
      call = ds_test_resource_get_call (r, 2);
      g_assert_cmpuint (call.size, ==, 512 * KiB);

      ds_test_scratchpad_alloc_ok (f, kind, 512 * KiB, 16);
      call = ds_test_resource_get_call (r, 3);
      g_assert_cmpuint (call.size, ==, 1024 * KiB);

      ds_test_scratchpad_alloc_ok (f, kind, 2048 * KiB, 16);
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
      ds_test_scratchpad_alloc_ok (f, kind, 8, 16);
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
      /* 8 bytes, then 1000 times 32 and 16: all of it in the first block. */
      g_assert_cmpuint (ds_scratchpad_get_allocated (f->sp, kind), ==, 16 + 1000 * (32 + 16));
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

/* The sizes of the successful upstream allocations of @r, from call @from. */
static GArray *
upstream_block_sizes (DsTestResource *r,
                      guint           from)
{
  GArray *sizes = g_array_new (FALSE, FALSE, sizeof (gsize));

  for (guint i = from; i < ds_test_resource_get_n_calls (r); i++)
    {
      DsTestCall call = ds_test_resource_get_call (r, i);

      if ((call.op == DS_TEST_OP_ALLOCATE || call.op == DS_TEST_OP_ALLOCATE_ASYNC) && !call.failed)
        g_array_append_val (sizes, call.size);
    }

  return sizes;
}

static void
test_growth_ceiling (Fixture       *f,
                     gconstpointer  user_data)
{
  const gsize ceiling = 1024 * KiB;
  guint kind;

  g_test_summary ("blocks double up to max-block-size "
                  "and then stay there, however long the scratchpad is "
                  "used without a release; a request above the ceiling "
                  "gets a block of its own size, and the next block is a "
                  "ceiling-sized one again");

  g_assert_cmpuint (ds_scratchpad_get_max_block_size (f->sp), ==,
                    DS_SCRATCHPAD_DEFAULT_MAX_BLOCK_SIZE);
  ds_scratchpad_set_max_block_size (f->sp, ceiling);
  g_assert_cmpuint (ds_scratchpad_get_max_block_size (f->sp), ==, ceiling);

  for (kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
    {
      static const gsize expected[] = { 64 * KiB, 128 * KiB, 256 * KiB, 512 * KiB };
      g_autoptr(GArray) sizes = NULL;
      DsTestResource *r = f->res[kind];
      guint i, n_calls;

      /* 200 allocations of 64 KiB: 12.5 MiB, never released. */
      for (i = 0; i < 200; i++)
        ds_test_scratchpad_alloc_ok (f, kind, 64 * KiB, 16);

      /* 15 allocations fill the blocks of 64 to 512 KiB; the other 185
       * take 1 MiB blocks of 16 each. */
      sizes = upstream_block_sizes (r, 0);
      g_assert_cmpuint (sizes->len, ==, 4 + (185 + 15) / 16);
      for (i = 0; i < sizes->len; i++)
        g_assert_cmpuint (g_array_index (sizes, gsize, i), ==,
                          i < G_N_ELEMENTS (expected) ? expected[i] : ceiling);

      /* Above the ceiling: its own size, then the ceiling again. */
      n_calls = ds_test_resource_get_n_calls (r);
      ds_test_scratchpad_alloc_ok (f, kind, 3 * ceiling + 1, 16);
      ds_test_scratchpad_alloc_ok (f, kind, 64 * KiB, 16);
      g_clear_pointer (&sizes, g_array_unref);
      sizes = upstream_block_sizes (r, n_calls);
      g_assert_cmpuint (sizes->len, ==, 2);
      g_assert_cmpuint (g_array_index (sizes, gsize, 0), ==, 3 * ceiling + 1);
      g_assert_cmpuint (g_array_index (sizes, gsize, 1), ==, ceiling);
    }

  /* The setting is fixed once the scratchpad has allocated. */
  if (g_test_undefined ())
    {
      g_test_expect_message ("Ds", G_LOG_LEVEL_CRITICAL, "*max-block-size*cannot change*");
      ds_scratchpad_set_max_block_size (f->sp, 0);
      g_test_assert_expected_messages ();
      g_assert_cmpuint (ds_scratchpad_get_max_block_size (f->sp), ==, ceiling);
    }
}

static void
test_growth_no_ceiling (Fixture       *f,
                        gconstpointer  user_data)
{
  g_autoptr(GArray) sizes = NULL;
  guint i;

  g_test_summary ("max-block-size G_MAXUINT64: no ceiling, blocks keep "
                  "doubling; an initial size above the ceiling is kept, "
                  "and blocks do not grow past it");

  g_object_set (f->sp, "max-block-size", G_MAXUINT64, NULL);
  g_assert_cmpuint (ds_scratchpad_get_max_block_size (f->sp), ==, G_MAXSIZE);

  for (i = 0; i < 63; i++)
    ds_test_scratchpad_alloc_ok (f, DS_MEMORY_KIND_HOST, 64 * KiB, 16);
  sizes = upstream_block_sizes (f->res[DS_MEMORY_KIND_HOST], 0);
  g_assert_cmpuint (sizes->len, ==, 6);
  for (i = 0; i < sizes->len; i++)
    g_assert_cmpuint (g_array_index (sizes, gsize, i), ==, (64 * KiB) << i);
  g_clear_pointer (&sizes, g_array_unref);
  ds_scratchpad_release (f->sp);

  /* A fresh scratchpad: a ceiling below the initial size. */
  g_clear_object (&f->sp);
  f->sp = ds_scratchpad_new (f->host);
  g_object_set (f->sp, "pinned-resource", f->res[DS_MEMORY_KIND_PINNED],
                "initial-size-pinned", (guint64) 256 * KiB,
                "max-block-size", (guint64) 64 * KiB, NULL);
  for (i = 0; i < 12; i++)
    ds_test_scratchpad_alloc_ok (f, DS_MEMORY_KIND_PINNED, 64 * KiB, 16);
  sizes = upstream_block_sizes (f->res[DS_MEMORY_KIND_PINNED], 0);
  g_assert_cmpuint (sizes->len, ==, 3);
  for (i = 0; i < sizes->len; i++)
    g_assert_cmpuint (g_array_index (sizes, gsize, i), ==, 256 * KiB);
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
      ds_test_scratchpad_alloc_ok (f, kind, (64 * KiB) << i, 16);

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
  g_assert_cmpuint (ds_test_scratchpad_total_calls (f), ==, 4 * 8);
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
              gpointer p = ds_test_scratchpad_alloc_ok (f, kind, size, 1 << g_test_rand_int_range (0, 9));

              memset (p, cycle & 0xff, size);
              sum += (size + 15) & ~(gsize) 15;
            }
          /* A released scratchpad takes fresh blocks. */
          g_assert_cmpuint (ds_test_resource_count_allocs (f->res[kind]), >, allocs_before);
          /* Each allocation took its size rounded up to 16 and its padding. */
          g_assert_cmpuint (ds_scratchpad_get_allocated (f->sp, kind), >=, sum);
          g_assert_cmpuint (ds_scratchpad_get_allocated (f->sp, kind), <=,
                            ds_scratchpad_get_reserved (f->sp, kind));
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
        }
    }
}

static void
test_stats (Fixture       *f,
            gconstpointer  user_data)
{
  guint kind;

  g_test_summary ("Statistics: reserved = upstream bytes held, allocated = "
                  "what the allocations took of the blocks (sizes rounded up to "
                  "16, alignment padding, not the tail of a block left for a "
                  "new one), n_blocks (size 0 and failures take nothing)");

  for (kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
    {
      ds_test_scratchpad_alloc_ok (f, kind, 10, 0);
      ds_test_scratchpad_alloc_ok (f, kind, 20, 64);
      g_assert_null (ds_scratchpad_alloc (f->sp, kind, 0, 0, NULL));
      g_assert_null (ds_scratchpad_alloc (f->sp, kind, 10, 3, NULL));
      ds_test_scratchpad_alloc_ok (f, kind, 100 * KiB, 16);

      /* 16, then 48 of padding to 64 and 32; a new block for the last. */
      g_assert_cmpuint (ds_scratchpad_get_allocated (f->sp, kind), ==, 16 + 48 + 32 + 100 * KiB);
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
      DsTestKindState before;
      guint8 *a, *b;

      /* First block. */
      ds_test_resource_fail_next (r, 1);
      g_assert_null (ds_scratchpad_alloc (f->sp, kind, 100, 16, &error));
      g_assert_error (error, DS_ERROR, DS_ERROR_OUT_OF_MEMORY);
      g_assert_cmpstr (error->message, !=, "");
      g_clear_error (&error);
      g_assert_cmpuint (ds_scratchpad_get_n_blocks (f->sp, kind), ==, 0);
      g_assert_cmpuint (ds_scratchpad_get_allocated (f->sp, kind), ==, 0);
      g_assert_cmpuint (ds_scratchpad_get_reserved (f->sp, kind), ==, 0);

      a = ds_test_scratchpad_alloc_ok (f, kind, 100, 16);
      before = ds_test_scratchpad_kind_state (f, kind);

      /* A new block. */
      ds_test_resource_fail_next (r, 2);
      g_assert_null (ds_scratchpad_alloc (f->sp, kind, 1 << 20, 16, &error));
      g_assert_error (error, DS_ERROR, DS_ERROR_OUT_OF_MEMORY);
      g_clear_error (&error);
      g_assert_null (ds_scratchpad_iface_alloc (DS_SCRATCHPAD_IFACE (f->sp), kind,
                                                1 << 20, 16, &error));
      g_assert_error (error, DS_ERROR, DS_ERROR_OUT_OF_MEMORY);
      g_clear_error (&error);
      ds_test_assert_kind_state_equal (before, ds_test_scratchpad_kind_state (f, kind));

      /* The current block still serves, right after the last allocation. */
      b = ds_test_scratchpad_alloc_ok (f, kind, 100, 16);
      g_assert_true (b == a + 112);
      g_assert_cmpuint (ds_test_resource_count_allocs (r), ==, 1);

      /* And growth goes on once the upstream recovers. */
      ds_test_scratchpad_alloc_ok (f, kind, 1 << 20, 16);
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

/* A reused scratchpad learns ------------------------------------------------- */

/* @n_units units of work of @n_allocs allocations of @size bytes aligned
 * to @alignment per kind, each followed by a release: the first takes two
 * blocks (@first_reserved bytes), every later one a single block of
 * @reserved bytes; the initial size stays 64 KiB. */
static void
check_units_learned (Fixture *f,
                     guint    n_units,
                     guint    n_allocs,
                     gsize    size,
                     gsize    alignment,
                     guint64  first_reserved,
                     guint64  reserved)
{
  for (guint unit = 0; unit < n_units; unit++)
    {
      for (guint kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
        {
          guint before = ds_test_resource_count_allocs (f->res[kind]);

          for (guint i = 0; i < n_allocs; i++)
            ds_test_scratchpad_alloc_ok (f, kind, size, alignment);
          /* Each takes its size rounded up to 16; the blocks end on a multiple
           * of it, so no tail is left. */
          g_assert_cmpuint (ds_scratchpad_get_allocated (f->sp, kind), ==,
                            n_allocs * ((size + 15) & ~(gsize) 15));
          g_assert_cmpuint (ds_scratchpad_get_n_blocks (f->sp, kind), ==, unit == 0 ? 2 : 1);
          g_assert_cmpuint (ds_scratchpad_get_reserved (f->sp, kind), ==,
                            unit == 0 ? first_reserved : reserved);
          g_assert_cmpuint (ds_test_resource_count_allocs (f->res[kind]) - before, ==,
                            unit == 0 ? 2 : 1);
          g_assert_cmpuint (ds_scratchpad_get_initial_size (f->sp, kind), ==, 64 * KiB);
        }
      ds_scratchpad_release (f->sp);
    }
}

static void
test_release_learns (Fixture       *f,
                     gconstpointer  user_data)
{
  g_test_summary ("A scratchpad released after each unit of work takes one "
                  "block per kind per unit once it has seen the sizes: after "
                  "a unit of 100 KiB (64 + 128 KiB blocks), the next units "
                  "take one 128 KiB block; the initial size stays as set");

  check_units_learned (f, 10, 100, 1024, 16, 192 * KiB, 128 * KiB);
}

static void
test_release_learns_rounded (Fixture       *f,
                             gconstpointer  user_data)
{
  g_test_summary ("What a unit takes of its blocks counts the rounding of each "
                  "allocation up to 16: units of 6000 allocations of 8 bytes "
                  "(47 KiB asked, 94 KiB taken: 64 + 128 KiB blocks) take one "
                  "128 KiB block each once seen, not the 64 KiB that their "
                  "asked sizes would fit");

  check_units_learned (f, 6, 6000, 8, 8, 192 * KiB, 128 * KiB);
}

/* A new scratchpad on the default resources starts where the thread's last
 * released one left off. */

typedef struct
{
  guint n_blocks;
  guint64 reserved;
} UnitResult;

/* One unit of 100 allocations of 1 KiB of host memory in @sp; @sp is
 * dropped (its release leaves the demand in the thread's memo). */
static UnitResult
host_unit (DsScratchpad *sp)
{
  UnitResult r;

  for (guint i = 0; i < 100; i++)
    {
      g_autoptr(GError) error = NULL;

      g_assert_nonnull (ds_scratchpad_alloc (sp, DS_MEMORY_KIND_HOST, 1024, 16, &error));
      g_assert_no_error (error);
    }
  r.n_blocks = ds_scratchpad_get_n_blocks (sp, DS_MEMORY_KIND_HOST);
  r.reserved = ds_scratchpad_get_reserved (sp, DS_MEMORY_KIND_HOST);
  g_assert_finalize_object (sp);

  return r;
}

static gpointer
new_learns_thread (gpointer data)
{
  UnitResult r;

  /* A thread's first scratchpad knows nothing: 64 + 128 KiB. */
  r = host_unit (ds_scratchpad_new (NULL));
  g_assert_cmpuint (r.n_blocks, ==, 2);
  g_assert_cmpuint (r.reserved, ==, 192 * KiB);

  return NULL;
}

static void
test_new_learns (void)
{
  g_autoptr(DsMemoryResource) pool = NULL;
  g_autoptr(DsTestResource) upstream = ds_test_resource_new (DS_MEMORY_KIND_HOST, FALSE);
  UnitResult r;

  g_test_summary ("A new scratchpad drawing from a default resource starts "
                  "where the last one released on the same thread left off: "
                  "after a unit of 100 KiB (64 + 128 KiB blocks), the next "
                  "new scratchpad takes one 128 KiB block; on another thread, "
                  "or with a resource of its own, it starts at its initial "
                  "size; a larger initial size stays as set; a new default "
                  "resource starts from nothing, and its blocks come from it");

  /* Run in threads of their own: the memo starts empty whatever ran
   * before in this process. */
  g_thread_join (g_thread_new ("learn-1", new_learns_thread, NULL));

  /* The same thread: the second new scratchpad takes one block. */
  r = host_unit (ds_scratchpad_new (NULL));
  r = host_unit (ds_scratchpad_new (NULL));
  g_assert_cmpuint (r.n_blocks, ==, 1);
  g_assert_cmpuint (r.reserved, ==, 128 * KiB);

  /* Another thread has a memo of its own. */
  g_thread_join (g_thread_new ("learn-2", new_learns_thread, NULL));

  /* A resource given as a property: no memo (it may die, and another
   * resource take its address). */
  pool = ds_pool_resource_new (DS_MEMORY_RESOURCE (upstream));
  r = host_unit (g_object_new (DS_TYPE_SCRATCHPAD, "host-resource", pool, NULL));
  g_assert_cmpuint (r.n_blocks, ==, 2);
  g_assert_cmpuint (r.reserved, ==, 192 * KiB);

  /* The memo raises the first block, never lowers it. */
  r = host_unit (g_object_new (DS_TYPE_SCRATCHPAD, "initial-size-host", (guint64) MiB, NULL));
  g_assert_cmpuint (r.n_blocks, ==, 1);
  g_assert_cmpuint (r.reserved, ==, MiB);

  /* Another default resource for the kind: the memo is of the old one,
   * so nothing of it carries over, neither the demand nor the vtable
   * (the blocks come from the new default). */
  ds_memory_resource_set_default (DS_MEMORY_KIND_HOST, -1, DS_MEMORY_RESOURCE (upstream));
  {
    DsScratchpad *sp = ds_scratchpad_new (NULL);
    g_autoptr(GError) error = NULL;
    gpointer p = ds_scratchpad_alloc (sp, DS_MEMORY_KIND_HOST, 1024, 16, &error);

    g_assert_no_error (error);
    g_assert_true (ds_test_resource_owns (upstream, p, 1024));
    r = host_unit (sp);
    g_assert_cmpuint (r.n_blocks, ==, 2);
    g_assert_cmpuint (r.reserved, ==, 192 * KiB);
  }
  /* ... and its memo is learned in turn. */
  r = host_unit (ds_scratchpad_new (NULL));
  g_assert_cmpuint (r.n_blocks, ==, 1);
  g_assert_cmpuint (r.reserved, ==, 128 * KiB);
  ds_memory_resource_set_default (DS_MEMORY_KIND_HOST, -1, NULL);

  g_clear_object (&pool);
  ds_test_resource_assert_clean (upstream);
}

/* keep-blocks ---------------------------------------------------------------- */

static void
count_notify (GObject    *object,
              GParamSpec *pspec,
              gpointer    data)
{
  (*(guint *) data)++;
}

static void
test_keep_blocks (Fixture       *f,
                  gconstpointer  user_data)
{
  guint8 *first[DS_N_MEMORY_KINDS] = { NULL, };
  guint n_notify = 0;
  gboolean keep = TRUE;

  g_test_summary ("With keep-blocks, a release keeps each kind's newest block "
                  "(all four kinds here: the fixture's orders are the host's), "
                  "empty and current: the next units of the same size bump in "
                  "it without any upstream call, from its start; the older "
                  "block goes back at once; with keep-blocks off again, the "
                  "next release gives everything back");

  g_assert_false (ds_scratchpad_get_keep_blocks (f->sp));
  g_signal_connect (f->sp, "notify::keep-blocks", G_CALLBACK (count_notify), &n_notify);
  ds_scratchpad_set_keep_blocks (f->sp, TRUE);
  ds_scratchpad_set_keep_blocks (f->sp, TRUE);
  g_assert_cmpuint (n_notify, ==, 1);
  g_object_get (f->sp, "keep-blocks", &keep, NULL);
  g_assert_true (keep);

  for (guint unit = 0; unit < 6; unit++)
    {
      guint calls = ds_test_scratchpad_total_calls (f);

      for (guint kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
        {
          guint8 *p = ds_test_scratchpad_alloc_ok (f, kind, 1024, 16);

          if (unit == 1)
            first[kind] = p;
          else if (unit > 1)
            g_assert_true (p == first[kind]);
          for (guint i = 1; i < 100; i++)
            ds_test_scratchpad_alloc_ok (f, kind, 1024, 16);
          g_assert_cmpuint (ds_scratchpad_get_allocated (f->sp, kind), ==, 100 * KiB);
          g_assert_cmpuint (ds_scratchpad_get_n_blocks (f->sp, kind), ==, unit == 0 ? 2 : 1);
        }
      /* Unit 0 took a 64 and a 128 KiB block of each kind; the next
       * units take nothing. */
      g_assert_cmpuint (ds_test_scratchpad_total_calls (f) - calls, ==,
                        unit == 0 ? 2 * DS_N_MEMORY_KINDS : 0);

      calls = ds_test_scratchpad_total_calls (f);
      ds_scratchpad_release (f->sp);
      g_assert_cmpuint (ds_test_scratchpad_total_calls (f) - calls, ==,
                        unit == 0 ? DS_N_MEMORY_KINDS : 0);
      for (guint kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
        {
          g_assert_cmpuint (ds_scratchpad_get_n_blocks (f->sp, kind), ==, 1);
          g_assert_cmpuint (ds_scratchpad_get_reserved (f->sp, kind), ==, 128 * KiB);
          g_assert_cmpuint (ds_scratchpad_get_allocated (f->sp, kind), ==, 0);
          if (unit == 0)
            {
              /* The 64 KiB block went back, the 128 KiB one stayed. */
              DsTestCall c = ds_test_resource_get_call (f->res[kind], 2);

              g_assert_cmpuint (c.size, ==, 64 * KiB);
              g_assert_true (c.op == DS_TEST_OP_DEALLOCATE);
            }
        }
    }

  ds_scratchpad_set_keep_blocks (f->sp, FALSE);
  g_assert_cmpuint (n_notify, ==, 2);
  ds_scratchpad_release (f->sp);
  for (guint kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
    {
      g_assert_cmpuint (ds_scratchpad_get_n_blocks (f->sp, kind), ==, 0);
      g_assert_cmpuint (ds_scratchpad_get_reserved (f->sp, kind), ==, 0);
      g_assert_cmpuint (ds_test_resource_count_deallocs (f->res[kind]), ==,
                        ds_test_resource_count_allocs (f->res[kind]));
      ds_test_resource_assert_clean (f->res[kind]);
    }
}

static void
test_keep_blocks_finalize (Fixture       *f,
                           gconstpointer  user_data)
{
  g_test_summary ("Finalizing a scratchpad that keeps blocks gives them back, "
                  "each once (the fixture's teardown checks every upstream), "
                  "and keep-blocks is refused once it is disposed");

  g_object_set (f->sp, "keep-blocks", TRUE, NULL);
  for (guint kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
    for (guint i = 0; i < 100; i++)
      ds_test_scratchpad_alloc_ok (f, kind, 1024, 16);
  ds_scratchpad_release (f->sp);
  for (guint kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
    g_assert_cmpuint (ds_scratchpad_get_n_blocks (f->sp, kind), ==, 1);

  g_object_run_dispose (G_OBJECT (f->sp));
  for (guint kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
    {
      g_assert_cmpuint (ds_scratchpad_get_n_blocks (f->sp, kind), ==, 0);
      g_assert_cmpuint (ds_test_resource_count_deallocs (f->res[kind]), ==,
                        ds_test_resource_count_allocs (f->res[kind]));
    }
  g_test_expect_message ("Ds", G_LOG_LEVEL_CRITICAL, "*keep-blocks*disposed*");
  ds_scratchpad_set_keep_blocks (f->sp, FALSE);
  g_test_assert_expected_messages ();
}

static void
test_keep_blocks_lets_go (Fixture       *f,
                          gconstpointer  user_data)
{
  guint64 big_allocs, big_deallocs = 0;
  guint units;

  g_test_summary ("A kept block larger than recent units need goes back: "
                  "after one 1 MiB unit, a few hundred-byte units later the "
                  "host kind holds at most 128 KiB again; a kind a unit did "
                  "not use gives its block back at that unit's release");

  ds_scratchpad_set_keep_blocks (f->sp, TRUE);
  ds_test_scratchpad_alloc_ok (f, DS_MEMORY_KIND_DEVICE, 1024, 16);
  ds_test_scratchpad_alloc_ok (f, DS_MEMORY_KIND_HOST, 1024 * KiB, 16);
  ds_scratchpad_release (f->sp);
  g_assert_cmpuint (ds_scratchpad_get_n_blocks (f->sp, DS_MEMORY_KIND_DEVICE), ==, 1);
  /* A unit without device memory: the device block goes back. */
  ds_test_scratchpad_alloc_ok (f, DS_MEMORY_KIND_HOST, 1024 * KiB, 16);
  ds_scratchpad_release (f->sp);
  g_assert_cmpuint (ds_scratchpad_get_n_blocks (f->sp, DS_MEMORY_KIND_DEVICE), ==, 0);
  g_assert_cmpuint (ds_test_resource_count_deallocs (f->res[DS_MEMORY_KIND_DEVICE]), ==, 1);
  g_assert_cmpuint (ds_scratchpad_get_reserved (f->sp, DS_MEMORY_KIND_HOST), >=, 1024 * KiB);

  for (units = 0; units < 40; units++)
    {
      ds_test_scratchpad_alloc_ok (f, DS_MEMORY_KIND_HOST, 100, 16);
      ds_scratchpad_release (f->sp);
      g_test_message ("unit %u: host reserved %" G_GUINT64_FORMAT, units,
                      ds_scratchpad_get_reserved (f->sp, DS_MEMORY_KIND_HOST));
      if (ds_scratchpad_get_reserved (f->sp, DS_MEMORY_KIND_HOST) <= 128 * KiB)
        break;
    }
  g_assert_cmpuint (units, <, 40);
  g_test_message ("let go after %u small units", units + 1);

  big_allocs = 0;
  for (guint i = 0; i < ds_test_resource_get_n_calls (f->res[DS_MEMORY_KIND_HOST]); i++)
    {
      DsTestCall c = ds_test_resource_get_call (f->res[DS_MEMORY_KIND_HOST], i);

      if (c.size >= 1024 * KiB)
        {
          if (c.op == DS_TEST_OP_ALLOCATE || c.op == DS_TEST_OP_ALLOCATE_ASYNC)
            big_allocs++;
          else
            big_deallocs++;
        }
    }
  g_assert_cmpuint (big_allocs, >, 0);
  g_assert_cmpuint (big_deallocs, ==, big_allocs);
}

/* A worker held inside the upstream's allocate while the main thread
 * uses the same scratchpad. */
typedef struct
{
  GMutex        lock;
  GCond         cond;
  gboolean      inside;
  gboolean      go;
  DsScratchpad *sp;
} Held;

static void
hold_inside (gpointer data)
{
  Held *h = data;

  g_mutex_lock (&h->lock);
  h->inside = TRUE;
  g_cond_broadcast (&h->cond);
  while (!h->go)
    g_cond_wait (&h->cond, &h->lock);
  g_mutex_unlock (&h->lock);
}

static gpointer
held_worker (gpointer data)
{
  Held *h = data;
  g_autoptr(GError) error = NULL;
  gpointer p = ds_scratchpad_alloc (h->sp, DS_MEMORY_KIND_HOST, 100, 0, &error);

  g_assert_no_error (error);
  return p;
}

static void
test_two_threads_at_once (void)
{
  g_autoptr(DsTestResource) r = ds_test_resource_new (DS_MEMORY_KIND_HOST, FALSE);
  g_autoptr(GError) error = NULL;
  Held h = { 0, };
  GThread *worker;

  g_test_summary ("A scratchpad that another thread is inside (here: in its "
                  "upstream's allocate) refuses allocations with DS_ERROR_BUSY "
                  "and a release with a critical, and changes nothing");

  g_mutex_init (&h.lock);
  g_cond_init (&h.cond);
  h.sp = ds_scratchpad_new (NULL);
  ds_scratchpad_set_resource (h.sp, DS_MEMORY_KIND_HOST, DS_MEMORY_RESOURCE (r));
  ds_test_resource_set_hook (r, hold_inside, &h);

  worker = g_thread_new ("held", held_worker, &h);
  g_mutex_lock (&h.lock);
  while (!h.inside)
    g_cond_wait (&h.cond, &h.lock);
  g_mutex_unlock (&h.lock);

  g_assert_null (ds_scratchpad_alloc (h.sp, DS_MEMORY_KIND_HOST, 100, 0, &error));
  g_assert_error (error, DS_ERROR, DS_ERROR_BUSY);
  g_clear_error (&error);
  g_assert_null (ds_scratchpad_alloc_block (h.sp, DS_MEMORY_KIND_HOST, 8, 0, &error));
  g_assert_error (error, DS_ERROR, DS_ERROR_BUSY);
  g_clear_error (&error);
  if (g_test_undefined ())
    {
      g_test_expect_message ("Ds", G_LOG_LEVEL_CRITICAL, "*in use by another thread*");
      ds_scratchpad_release (h.sp);
      g_test_assert_expected_messages ();
    }

  g_mutex_lock (&h.lock);
  h.go = TRUE;
  g_cond_broadcast (&h.cond);
  g_mutex_unlock (&h.lock);
  g_assert_nonnull (g_thread_join (worker));
  ds_test_resource_set_hook (r, NULL, NULL);

  /* The worker's allocation stands, and the scratchpad works again. */
  g_assert_cmpuint (ds_scratchpad_get_n_blocks (h.sp, DS_MEMORY_KIND_HOST), ==, 1);
  g_assert_nonnull (ds_scratchpad_alloc (h.sp, DS_MEMORY_KIND_HOST, 100, 0, &error));
  g_assert_no_error (error);
  ds_scratchpad_release (h.sp);
  g_assert_finalize_object (h.sp);
  ds_test_resource_assert_clean (r);
  g_mutex_clear (&h.lock);
  g_cond_clear (&h.cond);
}

int
main (int    argc,
      char **argv)
{
  ds_test_init (&argc, &argv);

#define ADD(path, func) ds_test_add_scratchpad ("/Ds/Scratchpad/" path, 0, func)
#define ADD_BOTH(path, func) \
  G_STMT_START { \
    ds_test_add_scratchpad ("/Ds/Scratchpad/" path "/sync-upstream", 0, func); \
    ds_test_add_scratchpad ("/Ds/Scratchpad/" path "/stream-ordered-upstream", \
                            DS_TEST_FIXTURE_STREAM_ORDERED, func); \
  } G_STMT_END

  ADD ("growth/doubling", test_growth);
  ADD ("growth/bump-no-upstream", test_bump_no_upstream);
  ADD ("growth/ceiling", test_growth_ceiling);
  ADD ("growth/no-ceiling", test_growth_no_ceiling);
  ADD ("growth/initial-size-properties", test_initial_sizes_properties);
  g_test_add_func ("/Ds/Scratchpad/growth/initial-sizes-new-full", test_initial_sizes_new_full);
  ADD_BOTH ("release/all", test_release_all);
  ADD_BOTH ("release/finalize", test_finalize_releases);
  ADD_BOTH ("release/usable-again", test_release_usable_again);
  ADD ("release/finalize-other-thread", test_finalize_other_thread);
  ADD ("release/learns", test_release_learns);
  ADD ("release/learns-rounded", test_release_learns_rounded);
  g_test_add_func ("/Ds/Scratchpad/release/new-learns", test_new_learns);
  ADD_BOTH ("release/keep-blocks", test_keep_blocks);
  ADD_BOTH ("release/keep-blocks-finalize", test_keep_blocks_finalize);
  ADD ("release/keep-blocks-lets-go", test_keep_blocks_lets_go);
  g_test_add_func ("/Ds/Scratchpad/threads/many-scratchpads", test_threads);
  g_test_add_func ("/Ds/Scratchpad/threads/two-at-once", test_two_threads_at_once);
  ADD ("stats", test_stats);
  ADD_BOTH ("upstream-failure", test_upstream_failure);

#undef ADD
#undef ADD_BOTH

  return g_test_run ();
}
