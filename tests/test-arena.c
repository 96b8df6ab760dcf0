/* test-arena.c: the internal monotonic arena (ds-arena-private.h)
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Runs on any machine: the upstream is the recording test resource, and the
 * device orders are made-up streams that are only compared, never used.
 */

#include "config.h"

#include <string.h>

#include "ds-test-fixtures.h"

#define KiB ((gsize) 1024)
#define FAKE_STREAM (ds_test_stream_handle (0))

typedef DsTestArenaFixture Fixture;

/* The next block's size for a request as the arena asks its growth. */
static gsize
next_block_size (Fixture *f,
                 gsize    size,
                 gsize    alignment)
{
  gsize padding = alignment > DS_ARENA_BLOCK_ALIGNMENT ? alignment - DS_ARENA_BLOCK_ALIGNMENT : 0;

  return ds_growth_block_for (&f->arena.growth, size, padding, FALSE);
}

/* Grows the arena from @upstream (bound first) in @order. */
static gpointer
grow (Fixture              *f,
      DsMemoryResource     *upstream,
      const DsAccessOrder  *order,
      gsize                 size,
      gsize                 alignment,
      GError              **error)
{
  ds_test_arena_bind (f, upstream);
  return ds_arena_grow (&f->arena, size, alignment, order, error);
}

static void
test_empty (Fixture       *f,
            gconstpointer  user_data)
{
  g_test_summary ("A new arena holds nothing and cannot bump");

  g_assert_cmpuint (f->arena.n_blocks, ==, 0);
  g_assert_cmpuint (f->arena.reserved, ==, 0);
  g_assert_cmpuint (ds_arena_get_taken (&f->arena), ==, 0);
  g_assert_cmpuint (f->arena.growth.initial_size, ==, 64 * KiB);
  g_assert_null (_ds_bump (&f->window, 1, 1));
  g_assert_null (_ds_bump (&f->window, 16, 16));

  /* Releasing an empty arena calls nothing. */
  g_assert_true (ds_test_arena_release (f, DS_MEMORY_RESOURCE (f->sync), NULL, NULL));
  g_assert_cmpuint (ds_test_resource_get_n_calls (f->sync), ==, 0);
}

static void
test_next_block_size (Fixture       *f,
                      gconstpointer  user_data)
{
  g_test_summary ("The next block is the current block size, or the smallest "
                  "doubling of it that fits the request with its worst-case "
                  "alignment padding; 0 when that cannot be represented");

  g_assert_cmpuint (next_block_size (f, 1, 16), ==, 64 * KiB);
  g_assert_cmpuint (next_block_size (f, 64 * KiB, 16), ==, 64 * KiB);
  g_assert_cmpuint (next_block_size (f, 64 * KiB + 1, 16), ==, 128 * KiB);
  g_assert_cmpuint (next_block_size (f, 300000, 16), ==, 512 * KiB);
  g_assert_cmpuint (next_block_size (f, 64 * KiB, DS_ARENA_BLOCK_ALIGNMENT), ==, 64 * KiB);
  /* Alignment beyond the block alignment needs room for padding. */
  g_assert_cmpuint (next_block_size (f, 64 * KiB, 4096), ==, 128 * KiB);
  g_assert_cmpuint (next_block_size (f, G_MAXSIZE - 10, 1 << 20), ==, 0);
  g_assert_cmpuint (next_block_size (f, G_MAXSIZE / 2 + 2, 16), >=, G_MAXSIZE / 2 + 2);
}

static void
test_next_block_size_ceiling (Fixture       *f,
                              gconstpointer  user_data)
{
  const gsize MiB = 1024 * KiB;

  g_test_summary ("doubling stops at the ceiling "
                  "(64 MiB by default); a request above it gets a block of "
                  "its own size (with its padding), never a doubled one");

  g_assert_cmpuint (f->arena.growth.max_block_size, ==, DS_SCRATCHPAD_DEFAULT_MAX_BLOCK_SIZE);
  g_assert_cmpuint (DS_SCRATCHPAD_DEFAULT_MAX_BLOCK_SIZE, ==, 64 * MiB);

  /* 64 KiB first: a 40 MiB request doubles up to 64 MiB, not past it. */
  g_assert_cmpuint (next_block_size (f, 40 * MiB, 16), ==, 64 * MiB);
  g_assert_cmpuint (next_block_size (f, 64 * MiB, 16), ==, 64 * MiB);
  g_assert_cmpuint (next_block_size (f, 64 * MiB + 1, 16), ==, 64 * MiB + 1);
  g_assert_cmpuint (next_block_size (f, 100 * MiB, 4096), ==,
                    100 * MiB + 4096 - DS_ARENA_BLOCK_ALIGNMENT);
  g_assert_cmpuint (next_block_size (f, (gsize) 12 << 30, 16), ==, (gsize) 12 << 30);

  /* At the ceiling, it stays. */
  f->arena.growth.next_size = 64 * MiB;
  g_assert_cmpuint (next_block_size (f, 1, 16), ==, 64 * MiB);
  /* An initial size that does not double onto the ceiling: capped. */
  f->arena.growth.next_size = 48 * MiB;
  g_assert_cmpuint (next_block_size (f, 50 * MiB, 16), ==, 64 * MiB);
  f->arena.growth.next_size = 64 * KiB;
}

static void
test_growth (Fixture       *f,
             gconstpointer  user_data)
{
  DsMemoryResource *up = DS_MEMORY_RESOURCE (f->sync);
  gpointer p;
  DsTestCall call;
  guint i;

  g_test_summary ("Blocks: first the initial size, then ×2 each; a large "
                  "request gets the smallest doubling that fits; bumps "
                  "inside a block call no upstream; the old tail is "
                  "abandoned");

  p = ds_test_arena_grow_or_bump (f, up, 1, 16);
  g_assert_cmpuint (ds_test_resource_get_n_calls (f->sync), ==, 1);
  call = ds_test_resource_get_call (f->sync, 0);
  g_assert_cmpint (call.op, ==, DS_TEST_OP_ALLOCATE);
  g_assert_cmpuint (call.size, ==, 64 * KiB);
  g_assert_true (p == call.ptr);
  g_assert_cmpuint (f->arena.n_blocks, ==, 1);
  g_assert_cmpuint (f->arena.reserved, ==, 64 * KiB);

  /* Bumps inside the block: no upstream call. */
  for (i = 0; i < 100; i++)
    {
      gpointer q = ds_test_arena_grow_or_bump (f, up, 100, 16);

      g_assert_true (ds_test_resource_owns (f->sync, q, 100));
    }
  g_assert_cmpuint (ds_test_resource_get_n_calls (f->sync), ==, 1);

  /* 64 KiB no longer fits: the next block is 128 KiB. */
  p = ds_test_arena_grow_or_bump (f, up, 64 * KiB, 16);
  g_assert_cmpuint (ds_test_resource_get_n_calls (f->sync), ==, 2);
  call = ds_test_resource_get_call (f->sync, 1);
  g_assert_cmpuint (call.size, ==, 128 * KiB);
  g_assert_true (p == call.ptr);

  /* The tail of the 64 KiB block is abandoned: small requests now come
   * from the newest block. */
  p = ds_test_arena_grow_or_bump (f, up, 16, 16);
  g_assert_true ((guintptr) p >= (guintptr) call.ptr &&
                 (guintptr) p < (guintptr) call.ptr + call.size);

  /* Larger than the next doubling (256 KiB): the smallest doubling that
   * fits, 512 KiB. */
  p = ds_test_arena_grow_or_bump (f, up, 300000, 16);
  call = ds_test_resource_get_call (f->sync, 2);
  g_assert_cmpuint (call.size, ==, 512 * KiB);
  g_assert_true (p == call.ptr);

  /* And the one after that doubles again. */
  p = ds_test_arena_grow_or_bump (f, up, 512 * KiB, 16);
  call = ds_test_resource_get_call (f->sync, 3);
  g_assert_cmpuint (call.size, ==, 1024 * KiB);

  /* An exact fit takes no bigger block than needed. */
  p = ds_test_arena_grow_or_bump (f, up, 2048 * KiB, 16);
  call = ds_test_resource_get_call (f->sync, 4);
  g_assert_cmpuint (call.size, ==, 2048 * KiB);

  g_assert_cmpuint (f->arena.n_blocks, ==, 5);
  g_assert_cmpuint (f->arena.reserved, ==, (64 + 128 + 512 + 1024 + 2048) * KiB);
  g_assert_cmpuint (f->arena.reserved, ==, ds_test_resource_get_live_bytes (f->sync));

  for (i = 0; i < 5; i++)
    g_assert_cmpuint (ds_test_resource_get_call (f->sync, i).alignment, ==, DS_ARENA_BLOCK_ALIGNMENT);

  g_assert_true (ds_test_arena_release (f, up, NULL, NULL));
  ds_test_resource_assert_clean (f->sync);
}

static void
test_custom_initial_size (Fixture       *f,
                          gconstpointer  user_data)
{
  DsMemoryResource *up = DS_MEMORY_RESOURCE (f->sync);

  g_test_summary ("The first block has the arena's initial size");

  g_assert_cmpuint (f->arena.growth.initial_size, ==, 1000);
  ds_test_arena_grow_or_bump (f, up, 1, 1);
  ds_test_arena_grow_or_bump (f, up, 1000, 1);
  ds_test_arena_grow_or_bump (f, up, 1, 1);
  g_assert_cmpuint (ds_test_resource_get_call (f->sync, 0).size, ==, 1000);
  g_assert_cmpuint (ds_test_resource_get_call (f->sync, 1).size, ==, 2000);
  g_assert_cmpuint (ds_test_resource_get_n_calls (f->sync), ==, 2);

  g_assert_true (ds_test_arena_release (f, up, NULL, NULL));
  ds_test_resource_assert_clean (f->sync);
}

static void
test_stats (Fixture       *f,
            gconstpointer  user_data)
{
  DsMemoryResource *up = DS_MEMORY_RESOURCE (f->sync);

  g_test_summary ("taken counts what the allocations took of the blocks (sizes "
                  "rounded up to 16, alignment padding, not a tail left for a new "
                  "block), reserved the upstream bytes");

  ds_test_arena_grow_or_bump (f, up, 10, 16);
  g_assert_cmpuint (ds_arena_get_taken (&f->arena), ==, 16);
  ds_test_arena_grow_or_bump (f, up, 20, 64);
  /* 48 bytes of padding to 64, then 20 rounded up to 32. */
  g_assert_cmpuint (ds_arena_get_taken (&f->arena), ==, 96);
  /* A new block; the first one's tail is not counted. */
  ds_test_arena_grow_or_bump (f, up, 100 * KiB, 16);
  g_assert_cmpuint (ds_arena_get_taken (&f->arena), ==, 96 + 100 * KiB);
  ds_test_arena_grow_or_bump (f, up, 1, 1);
  g_assert_cmpuint (ds_arena_get_taken (&f->arena), ==, 96 + 100 * KiB + 16);
  g_assert_cmpuint (f->arena.reserved, ==, (64 + 128) * KiB);

  g_assert_true (ds_test_arena_release (f, up, NULL, NULL));
  g_assert_cmpuint (ds_arena_get_taken (&f->arena), ==, 0);
  g_assert_cmpuint (f->arena.reserved, ==, 0);
  g_assert_cmpuint (f->arena.n_blocks, ==, 0);
  ds_test_resource_assert_clean (f->sync);
}

static void
test_release_newest_first (Fixture       *f,
                           gconstpointer  user_data)
{
  DsMemoryResource *up = DS_MEMORY_RESOURCE (f->sync);
  gpointer blocks[4];
  guint i, n;

  g_test_summary ("Release gives every block back once, newest first, with "
                  "the size and alignment it was taken with, and empties the "
                  "arena");

  for (i = 0; i < 4; i++)
    {
      ds_test_arena_grow_or_bump (f, up, 64 * KiB << i, 16);
      blocks[i] = ds_test_resource_get_call (f->sync, i).ptr;
    }
  g_assert_cmpuint (ds_test_resource_get_n_calls (f->sync), ==, 4);

  g_assert_true (ds_test_arena_release (f, up, NULL, NULL));

  n = ds_test_resource_get_n_calls (f->sync);
  g_assert_cmpuint (n, ==, 8);
  for (i = 0; i < 4; i++)
    {
      DsTestCall call = ds_test_resource_get_call (f->sync, 4 + i);

      g_assert_cmpint (call.op, ==, DS_TEST_OP_DEALLOCATE);
      g_assert_true (call.ptr == blocks[3 - i]);
    }
  ds_test_resource_assert_clean (f->sync);

  g_assert_cmpuint (f->arena.n_blocks, ==, 0);
  g_assert_null (_ds_bump (&f->window, 1, 1));

  /* Releasing again gives nothing back twice. */
  g_assert_true (ds_test_arena_release (f, up, NULL, NULL));
  g_assert_cmpuint (ds_test_resource_get_n_calls (f->sync), ==, 8);
}

static void
test_usable_after_release (Fixture       *f,
                           gconstpointer  user_data)
{
  DsMemoryResource *up = DS_MEMORY_RESOURCE (f->sync);
  guint cycle;

  g_test_summary ("After release the arena takes a new block on the next "
                  "request and never hands out memory of a released block "
                  "(DALI's stale bump pointer)");

  for (cycle = 0; cycle < 50; cycle++)
    {
      guint i, n_before = ds_test_resource_count_allocs (f->sync);

      for (i = 0; i < 1 + cycle % 7; i++)
        {
          gsize size = 1 + g_test_rand_int_range (0, 40000);
          gpointer p = ds_test_arena_grow_or_bump (f, up, size, 16);

          g_assert_true (ds_test_resource_owns (f->sync, p, size));
          memset (p, 0x5a, size);
        }
      g_assert_cmpuint (ds_test_resource_count_allocs (f->sync), >, n_before);

      g_assert_true (ds_test_arena_release (f, up, NULL, NULL));
      ds_test_resource_assert_clean (f->sync);
      /* The initial size, doubled for what recent units took. */
      g_assert_cmpuint (f->arena.growth.next_size, >=, f->arena.growth.initial_size);
      g_assert_cmpuint (f->arena.growth.next_size % f->arena.growth.initial_size, ==, 0);
      g_assert_cmpuint ((f->arena.growth.next_size / f->arena.growth.initial_size) &
                        (f->arena.growth.next_size / f->arena.growth.initial_size - 1), ==, 0);
    }
}

/* One unit of work of @n allocations of @size bytes; returns how many
 * blocks it took from upstream. */
static guint
learn_unit (Fixture *f,
            guint    n,
            gsize    size)
{
  DsMemoryResource *up = DS_MEMORY_RESOURCE (f->sync);
  guint before = ds_test_resource_count_allocs (f->sync);

  for (guint i = 0; i < n; i++)
    {
      gpointer p = ds_test_arena_grow_or_bump (f, up, size, 16);

      g_assert_true (ds_test_resource_owns (f->sync, p, size));
    }
  g_assert_true (ds_test_arena_release (f, up, NULL, NULL));
  ds_test_resource_assert_clean (f->sync);

  return ds_test_resource_count_allocs (f->sync) - before;
}

static void
test_release_learns (Fixture       *f,
                     gconstpointer  user_data)
{
  guint i;

  g_test_summary ("A reused arena's first block covers what recent units took: "
                  "units of 100 KiB take two blocks once, then one each; a "
                  "large unit raises it to twice the running average at most, "
                  "and it shrinks back to the initial size; never above the "
                  "ceiling");

  /* 100 x 1 KiB: 64 KiB + 128 KiB the first time, then one 128 KiB block. */
  g_assert_cmpuint (learn_unit (f, 100, 1024), ==, 2);
  g_assert_cmpuint (f->arena.growth.next_size, ==, 128 * KiB);
  for (i = 0; i < 20; i++)
    g_assert_cmpuint (learn_unit (f, 1 + i * 99 / 19, 1024), ==, 1);
  g_assert_cmpuint (f->arena.growth.next_size, ==, 128 * KiB);

  /* A burst of 20 MiB: the next first block grows, but only to cover
   * twice the running average (8 MiB), not the burst (32 MiB)... */
  g_assert_cmpuint (learn_unit (f, 20, 1 << 20), >, 1);
  g_assert_cmpuint (f->arena.growth.next_size, ==, 8 << 20);
  g_assert_cmpuint (learn_unit (f, 1, 1024), ==, 1);
  /* ...and small units bring it back to the initial size. */
  for (i = 0; i < 100; i++)
    learn_unit (f, 1, 1024);
  g_assert_cmpuint (f->arena.growth.next_size, ==, 64 * KiB);

  /* Never above the ceiling (64 MiB), however large the units. */
  g_assert_cmpuint (f->arena.growth.max_block_size, ==, 64 << 20);
  for (i = 0; i < 4; i++)
    g_assert_cmpuint (learn_unit (f, 1, (gsize) 100 << 20), ==, 1);
  g_assert_cmpuint (f->arena.growth.next_size, ==, f->arena.growth.max_block_size);

  /* Steady units of 300 KiB after those: one block each, larger while
   * the large units fade, then a first block of 512 KiB, just above them. */
  for (i = 0; i < 300; i++)
    g_assert_cmpuint (learn_unit (f, 3, 100 * KiB), ==, 1);
  g_assert_cmpuint (f->arena.growth.next_size, ==, 512 * KiB);
  g_assert_cmpuint (learn_unit (f, 3, 100 * KiB), ==, 1);
}

static void
test_failure (Fixture       *f,
              gconstpointer  user_data)
{
  DsMemoryResource *up = DS_MEMORY_RESOURCE (f->sync);
  g_autoptr(GError) error = NULL;
  DsArena before;
  DsBumpWindow window_before;
  guint64 taken_before;
  gpointer p, q;

  g_test_summary ("An upstream failure leaves the arena exactly as it was: "
                  "later bumps use the old block, release returns it once");

  g_assert_null (_ds_bump (&f->window, 8, 8));
  ds_test_resource_fail_next (f->sync, 1);
  g_assert_null (grow (f, up, NULL, 8, 8, &error));
  g_assert_error (error, DS_ERROR, DS_ERROR_OUT_OF_MEMORY);
  g_clear_error (&error);
  g_assert_cmpuint (f->arena.n_blocks, ==, 0);
  g_assert_cmpuint (f->arena.reserved, ==, 0);
  g_assert_cmpuint (f->arena.growth.next_size, ==, 64 * KiB);

  p = ds_test_arena_grow_or_bump (f, up, 8, 8);
  before = f->arena;
  window_before = f->window;
  taken_before = ds_arena_get_taken (&f->arena);

  ds_test_resource_fail_next (f->sync, 1);
  g_assert_null (grow (f, up, NULL, 1 << 20, 16, &error));
  g_assert_error (error, DS_ERROR, DS_ERROR_OUT_OF_MEMORY);
  g_clear_error (&error);

  /* Beyond what the upstream will give. */
  g_assert_null (grow (f, up, NULL, G_MAXSIZE / 2 + 2, 16, &error));
  g_assert_nonnull (error);
  g_assert_true (error->domain == DS_ERROR);
  g_clear_error (&error);

  /* Representable only without doubling: still refused, nothing kept. */
  g_assert_null (grow (f, up, NULL, G_MAXSIZE - 10, 1 << 20, &error));
  g_assert_error (error, DS_ERROR, DS_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);

  g_assert_true (f->window.cur == window_before.cur);
  g_assert_true (f->window.end == window_before.end);
  g_assert_cmpuint (f->arena.n_blocks, ==, before.n_blocks);
  g_assert_cmpuint (f->arena.reserved, ==, before.reserved);
  g_assert_cmpuint (ds_arena_get_taken (&f->arena), ==, taken_before);
  g_assert_cmpuint (f->arena.growth.next_size, ==, before.growth.next_size);

  /* Right after p: the cursor is kept a multiple of 16 (ds-scratchpad.h). */
  q = _ds_bump (&f->window, 8, 8);
  g_assert_true ((guint8 *) q == (guint8 *) p + 16);

  g_assert_true (ds_test_arena_release (f, up, NULL, NULL));
  ds_test_resource_assert_clean (f->sync);
  g_assert_cmpuint (ds_test_resource_count_deallocs (f->sync), ==, 1);
}

static void
test_large_alignment (Fixture       *f,
                      gconstpointer  user_data)
{
  DsMemoryResource *up = DS_MEMORY_RESOURCE (f->sync);
  gsize alignment;

  g_test_summary ("Alignments beyond the block alignment are honoured, with "
                  "the padding inside the block");

  for (alignment = 1; alignment <= (1 << 20); alignment <<= 1)
    {
      gpointer p = ds_test_arena_grow_or_bump (f, up, 1000, alignment);

      g_assert_true (ds_test_resource_owns (f->sync, p, 1000));
    }

  g_assert_true (ds_test_arena_release (f, up, NULL, NULL));
  ds_test_resource_assert_clean (f->sync);
}

static void
test_random (Fixture       *f,
             gconstpointer  user_data)
{
  DsMemoryResource *up = DS_MEMORY_RESOURCE (f->sync);
  g_autoptr(GArray) ranges = g_array_new (FALSE, FALSE, sizeof (DsTestRange));
  guint i;

  g_test_summary ("Random sizes and alignments: every pointer aligned, inside "
                  "a live upstream block, and no two allocations overlap");

  for (i = 0; i < 2000; i++)
    {
      DsTestRange r;
      gsize alignment = (gsize) 1 << g_test_rand_int_range (0, 13);
      gpointer p;

      r.size = 1 + (g_test_rand_bit () ? g_test_rand_int_range (0, 64) :
                                         g_test_rand_int_range (0, 100000));
      p = ds_test_arena_grow_or_bump (f, up, r.size, alignment);
      g_assert_true (ds_test_resource_owns (f->sync, p, r.size));
      r.start = (guintptr) p;
      g_array_append_val (ranges, r);
    }

  ds_test_assert_disjoint (ranges);

  g_assert_true (ds_test_arena_release (f, up, NULL, NULL));
  ds_test_resource_assert_clean (f->sync);
}

static void
test_device_order_stream_ordered (Fixture       *f,
                                  gconstpointer  user_data)
{
  DsMemoryResource *up = DS_MEMORY_RESOURCE (f->async);
  g_autoptr(DsAccessOrder) order = ds_access_order_new_stream (FAKE_STREAM, 0);
  g_autoptr(GError) error = NULL;
  guint i;

  g_test_summary ("With a device order, a stream-ordered upstream gets "
                  "allocate_async and deallocate_async in that order, newest "
                  "first — with no CUDA call by the arena itself");

  g_assert_nonnull (grow (f, up, order, 100, 16, &error));
  g_assert_no_error (error);
  g_assert_nonnull (grow (f, up, order, 100 * KiB, 16, &error));
  g_assert_no_error (error);

  for (i = 0; i < 2; i++)
    {
      DsTestCall call = ds_test_resource_get_call (f->async, i);

      g_assert_cmpint (call.op, ==, DS_TEST_OP_ALLOCATE_ASYNC);
      g_assert_true (call.has_order);
      g_assert_true (ds_access_order_equal (&call.order, order));
    }

  ds_test_cuda_spy_reset ();
  g_assert_true (ds_test_arena_release (f, up, order, &error));
  g_assert_no_error (error);
  ds_test_assert_no_cuda_calls ();

  g_assert_cmpuint (ds_test_resource_get_n_calls (f->async), ==, 4);
  for (i = 0; i < 2; i++)
    {
      DsTestCall call = ds_test_resource_get_call (f->async, 2 + i);
      DsTestCall alloc = ds_test_resource_get_call (f->async, 1 - i);

      g_assert_cmpint (call.op, ==, DS_TEST_OP_DEALLOCATE_ASYNC);
      g_assert_true (call.has_order);
      g_assert_true (ds_access_order_equal (&call.order, order));
      g_assert_true (call.ptr == alloc.ptr);
      g_assert_cmpuint (call.size, ==, alloc.size);
      g_assert_cmpuint (call.alignment, ==, alloc.alignment);
    }
  ds_test_resource_assert_clean (f->async);
}

static void
test_host_order_plain_deallocate (Fixture       *f,
                                  gconstpointer  user_data)
{
  DsMemoryResource *up = DS_MEMORY_RESOURCE (f->async);
  g_autoptr(DsAccessOrder) host = ds_access_order_new_host ();
  g_autoptr(GError) error = NULL;

  g_test_summary ("In host order (NULL or a host DsAccessOrder), even a "
                  "stream-ordered upstream gets plain allocate/deallocate");

  ds_test_arena_grow_or_bump (f, up, 100, 16);
  g_assert_true (ds_test_arena_release (f, up, NULL, &error));
  g_assert_no_error (error);

  g_assert_nonnull (grow (f, up, NULL, 100, 16, &error));
  g_assert_true (ds_test_arena_release (f, up, host, &error));
  g_assert_no_error (error);

  g_assert_cmpuint (ds_test_resource_count (f->async, DS_TEST_OP_ALLOCATE), ==, 2);
  g_assert_cmpuint (ds_test_resource_count (f->async, DS_TEST_OP_DEALLOCATE), ==, 2);
  g_assert_cmpuint (ds_test_resource_count (f->async, DS_TEST_OP_ALLOCATE_ASYNC), ==, 0);
  g_assert_cmpuint (ds_test_resource_count (f->async, DS_TEST_OP_DEALLOCATE_ASYNC), ==, 0);
  ds_test_resource_assert_clean (f->async);
}

static void
test_device_order_sync_upstream_no_device (Fixture       *f,
                                           gconstpointer  user_data)
{
  DsMemoryResource *up = DS_MEMORY_RESOURCE (f->sync);
  g_autoptr(DsAccessOrder) order = ds_access_order_new_stream (FAKE_STREAM, 0);
  g_autoptr(GError) error = NULL;

  DS_TEST_REQUIRE_NO_CUDA ();

  g_test_summary ("With a device order that cannot be waited for and an "
                  "upstream that is not stream-ordered, blocks are kept "
                  "(leaked) rather than given back early; the arena is "
                  "empty and the error says why");

  ds_test_arena_grow_or_bump (f, up, 100, 16);
  ds_test_arena_grow_or_bump (f, up, 100 * KiB, 16);

  g_assert_false (ds_test_arena_release (f, up, order, &error));
  g_assert_error (error, DS_ERROR, DS_TEST_NO_DEVICE_ERROR);
  g_assert_cmpuint (ds_test_resource_count_deallocs (f->sync), ==, 0);
  g_assert_cmpuint (f->arena.n_blocks, ==, 0);
  g_assert_cmpuint (f->arena.reserved, ==, 0);
  g_assert_null (_ds_bump (&f->window, 1, 1));
}

int
main (int    argc,
      char **argv)
{
  ds_test_init (&argc, &argv);

#define ADD(path, func, initial) ds_test_add_arena ("/Ds/Arena/" path, initial, func)

  ADD ("empty", test_empty, 0);
  ADD ("next-block-size", test_next_block_size, 0);
  ADD ("next-block-size-ceiling", test_next_block_size_ceiling, 0);
  ADD ("growth", test_growth, 0);
  ADD ("custom-initial-size", test_custom_initial_size, 1000);
  ADD ("stats", test_stats, 0);
  ADD ("release/newest-first", test_release_newest_first, 0);
  ADD ("release/usable-again", test_usable_after_release, 0);
  ADD ("release/learns", test_release_learns, 0);
  ADD ("failure", test_failure, 0);
  ADD ("large-alignment", test_large_alignment, 0);
  ADD ("random", test_random, 0);
  ADD ("order/device-stream-ordered", test_device_order_stream_ordered, 0);
  ADD ("order/host-plain", test_host_order_plain_deallocate, 0);
  ADD ("order/device-sync-upstream-no-device", test_device_order_sync_upstream_no_device, 0);

#undef ADD

  return g_test_run ();
}
