/* test-pool-resource.c: DsPoolResource, the stream-aware caching pool
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The cases that run anywhere: construction, and host pools on a recording
 * upstream (DsTestPoolFixture). Host pools under load are in
 * test-pool-resource-stress.c, the stream cases in test-pool-resource-gpu.c
 * and test-pool-resource-stress-gpu.c.
 */

#include "config.h"

#include <string.h>

#include "ds-test-fixtures.h"
#include "ds-cuda-private.h"
#include "ds-default-resources-private.h"
#include "ds-pool-resource-private.h"

typedef DsTestPoolFixture Fixture;

/* Construction ------------------------------------------------------------ */

static void
test_pool_new (void)
{
  g_autoptr(DsMemoryResource) upstream = ds_host_memory_resource_new ();
  DsMemoryResource *pool, *got = NULL;
  DsMemoryKind kind = DS_MEMORY_KIND_MANAGED;
  guint64 max = 0;

  g_test_summary ("A pool reports its upstream, the upstream's kind and its "
                  "tuning as properties, is stream-ordered and finalizes");

  pool = ds_pool_resource_new (upstream);
  g_assert_true (DS_IS_POOL_RESOURCE (pool));
  g_assert_true (DS_IS_MEMORY_RESOURCE (pool));
  g_assert_true (ds_memory_resource_is_stream_ordered (pool));
  g_assert_cmpint (ds_memory_resource_get_kind (pool), ==, DS_MEMORY_KIND_HOST);
  g_assert_true (ds_pool_resource_get_upstream (DS_POOL_RESOURCE (pool)) == upstream);

  g_object_get (pool, "upstream", &got, "kind", &kind, "max-cached-size", &max, NULL);
  g_assert_true (got == upstream);
  g_object_unref (got);
  g_assert_cmpint (kind, ==, DS_MEMORY_KIND_HOST);
  g_assert_cmpuint (max, ==, DS_POOL_RESOURCE_DEFAULT_MAX_CACHED_SIZE);

  g_assert_finalize_object (pool);

  /* No upstream: a host pool. */
  pool = g_object_new (DS_TYPE_POOL_RESOURCE, NULL);
  g_assert_cmpint (ds_memory_resource_get_kind (pool), ==, DS_MEMORY_KIND_HOST);
  g_assert_true (DS_IS_HOST_MEMORY_RESOURCE (ds_pool_resource_get_upstream (DS_POOL_RESOURCE (pool))));
  g_assert_finalize_object (pool);

  /* The kind follows the upstream. */
  {
    g_autoptr(DsTestResource) dev = ds_test_resource_new (DS_MEMORY_KIND_DEVICE, FALSE);

    pool = ds_pool_resource_new (DS_MEMORY_RESOURCE (dev));
    g_assert_cmpint (ds_memory_resource_get_kind (pool), ==, DS_MEMORY_KIND_DEVICE);
    g_assert_finalize_object (pool);
  }

  if (g_test_undefined ())
    {
      g_test_expect_message ("Ds", G_LOG_LEVEL_CRITICAL, "*assertion*failed*");
      g_assert_null (ds_pool_resource_new (NULL));
      g_test_assert_expected_messages ();
    }
}

static void
test_pool_max_cached_size_notify (void)
{
  g_autoptr(DsMemoryResource) pool = g_object_new (DS_TYPE_POOL_RESOURCE, NULL);
  guint n_notify = 0;

  g_test_summary ("max-cached-size notifies only when it changes");

  g_signal_connect (pool, "notify::max-cached-size", G_CALLBACK (ds_test_count_notify), &n_notify);

  ds_pool_resource_set_max_cached_size (DS_POOL_RESOURCE (pool), 4096);
  g_assert_cmpuint (n_notify, ==, 1);
  ds_pool_resource_set_max_cached_size (DS_POOL_RESOURCE (pool), 4096);
  g_assert_cmpuint (n_notify, ==, 1);
  g_object_set (pool, "max-cached-size", (guint64) 8192, NULL);
  g_assert_cmpuint (n_notify, ==, 2);
  g_assert_cmpuint (ds_pool_resource_get_max_cached_size (DS_POOL_RESOURCE (pool)), ==, 8192);
}

static void
test_pool_stats_boxed (void)
{
  DsPoolStats stats = { 0, }, *copy;
  GValue value = G_VALUE_INIT;

  g_test_summary ("DsPoolStats is a boxed type that copies its fields");

  stats.cache_hits = 7;
  stats.peak_bytes_in_use = 1 << 20;
  copy = ds_pool_stats_copy (&stats);
  g_assert_cmpuint (copy->cache_hits, ==, 7);
  g_assert_cmpuint (copy->peak_bytes_in_use, ==, 1 << 20);

  g_value_init (&value, DS_TYPE_POOL_STATS);
  g_value_take_boxed (&value, copy);
  g_assert_cmpuint (((DsPoolStats *) g_value_get_boxed (&value))->cache_hits, ==, 7);
  g_value_unset (&value);
}

/* Host pools -------------------------------------------------------------- */

static void
test_host_reuse (Fixture       *f,
                 gconstpointer  user_data)
{
  g_autoptr(GError) error = NULL;
  DsPoolStats s;
  gpointer p, q, r;

  g_test_summary ("A block given back is handed out again for any request of "
                  "its size class, without going upstream");

  p = ds_memory_resource_allocate (f->pool, 1000, 0, &error);
  g_assert_no_error (error);
  g_assert_nonnull (p);
  memset (p, 0x5a, 1000);
  /* Rounded up to its class: 4 granules = 1024 bytes, aligned to 256. */
  g_assert_cmpuint (ds_test_resource_count_allocs (f->up), ==, 1);
  g_assert_cmpuint (ds_test_resource_get_call (f->up, 0).size, ==, 1024);
  g_assert_cmpuint (ds_test_resource_get_call (f->up, 0).alignment, ==, 256);

  ds_memory_resource_deallocate (f->pool, p, 1000, 0);
  g_assert_cmpuint (ds_test_resource_count_deallocs (f->up), ==, 0);

  /* Same class, another size: same block. */
  q = ds_memory_resource_allocate (f->pool, 1024, 64, &error);
  g_assert_no_error (error);
  g_assert_true (q == p);
  g_assert_cmpuint (ds_test_resource_count_allocs (f->up), ==, 1);

  /* Another class: a new block. */
  r = ds_memory_resource_allocate (f->pool, 1025, 0, &error);
  g_assert_no_error (error);
  g_assert_true (r != p);
  g_assert_cmpuint (ds_test_resource_count_allocs (f->up), ==, 2);
  g_assert_cmpuint (ds_test_resource_get_call (f->up, 1).size, ==, 1280);

  /* Through the async entry points in host order, too. */
  {
    g_autoptr(DsAccessOrder) host = ds_access_order_new_host ();
    gpointer t;

    g_assert_true (ds_memory_resource_deallocate_async (f->pool, q, 1024, 64, host, &error));
    g_assert_no_error (error);
    t = ds_memory_resource_allocate_async (f->pool, 800, 0, host, &error);
    g_assert_no_error (error);
    g_assert_true (t == p);
    ds_memory_resource_deallocate (f->pool, t, 800, 0);
  }

  ds_memory_resource_deallocate (f->pool, r, 1025, 0);

  s = ds_test_pool_stats (f->pool);
  g_assert_cmpuint (s.upstream_allocations, ==, 2);
  g_assert_cmpuint (s.upstream_deallocations, ==, 0);
  g_assert_cmpuint (s.cache_misses, ==, 2);
  g_assert_cmpuint (s.cache_hits, ==, 2);
  g_assert_cmpuint (s.bytes_held, ==, 1024 + 1280);
  g_assert_cmpuint (s.bytes_cached, ==, 1024 + 1280);
  g_assert_cmpuint (s.n_cached_blocks, ==, 2);
  g_assert_cmpuint (s.bytes_in_use, ==, 0);
  g_assert_cmpuint (s.peak_bytes_in_use, ==, 1024 + 1280);
  g_assert_cmpuint (ds_test_pool_cuda_calls (&s), ==, 0);

  g_assert_finalize_object (g_steal_pointer (&f->pool));
  ds_test_resource_assert_clean (f->up);
  g_assert_cmpuint (ds_test_resource_count_deallocs (f->up), ==, 2);
}

static void
test_host_size_classes (Fixture       *f,
                        gconstpointer  user_data)
{
  static const gsize sizes[] = {
    1, 255, 256, 257, 2048, 2049, 2560, 3000, 4096, 4097, 65536, 65537,
    100000, 262144, 262145, 1048576, 3 * 1048576 + 5,
  };
  guint i;

  g_test_summary ("Blocks are at most 25% larger than asked (counted in "
                  "256-byte granules) and are given back upstream with the "
                  "size and alignment they were taken with");

  for (i = 0; i < G_N_ELEMENTS (sizes); i++)
    {
      g_autoptr(GError) error = NULL;
      gpointer p = ds_memory_resource_allocate (f->pool, sizes[i], 0, &error);
      DsTestCall call;
      gsize granules = (sizes[i] + 255) / 256 * 256;

      g_assert_no_error (error);
      memset (p, 1, sizes[i]);
      call = ds_test_resource_get_call (f->up, ds_test_resource_get_n_calls (f->up) - 1);
      g_assert_cmpint (call.op, ==, DS_TEST_OP_ALLOCATE);
      g_assert_cmpuint (call.size, >=, sizes[i]);
      g_assert_cmpuint (call.size * 4, <=, granules * 5);
      g_assert_cmpuint (call.size % 256, ==, 0);
      ds_memory_resource_deallocate (f->pool, p, sizes[i], 0);
    }

  g_assert_cmpuint (ds_pool_resource_trim (DS_POOL_RESOURCE (f->pool)), >, 0);
  ds_test_resource_assert_clean (f->up);
}

static void
test_host_alignment (Fixture       *f,
                     gconstpointer  user_data)
{
  gsize alignment;
  guint round;

  g_test_summary ("Every power-of-two alignment is honoured; up to 64 KiB "
                  "blocks are cached per alignment class, beyond that they "
                  "go straight upstream");

  for (round = 0; round < 2; round++)
    {
      gpointer blocks[21];
      guint allocs_before = ds_test_resource_count_allocs (f->up), i;

      /* All at once, so that the peak demand covers them all. */
      for (i = 0, alignment = 1; alignment <= 1 << 20; alignment *= 2, i++)
        {
          g_autoptr(GError) error = NULL;

          blocks[i] = ds_memory_resource_allocate (f->pool, 3000, alignment, &error);
          g_assert_no_error (error);
          ds_test_assert_aligned (blocks[i], alignment);
          memset (blocks[i], 2, 3000);
        }
      for (i = 0, alignment = 1; alignment <= 1 << 20; alignment *= 2, i++)
        ds_memory_resource_deallocate (f->pool, blocks[i], 3000, alignment);

      /* 1..256 share one alignment class (9 blocks); 512..64 KiB have one
       * class each (8); 128 KiB..1 MiB are not cached (4). The second
       * round takes only the uncached ones upstream. */
      if (round == 0)
        g_assert_cmpuint (ds_test_resource_count_allocs (f->up) - allocs_before, ==, 9 + 8 + 4);
      else
        g_assert_cmpuint (ds_test_resource_count_allocs (f->up) - allocs_before, ==, 4);
    }

  /* Uncached blocks went back at once. */
  g_assert_cmpuint (ds_test_resource_get_n_live (f->up), ==, 9 + 8);
  g_assert_cmpuint (ds_test_resource_get_n_mismatches (f->up), ==, 0);
}

static void
test_host_max_cached_size (Fixture       *f,
                           gconstpointer  user_data)
{
  g_autoptr(GError) error = NULL;
  gpointer p, q;
  DsPoolStats s;

  g_test_summary ("Requests above max-cached-size go upstream and back each "
                  "time; lowering it gives larger blocks back when they are "
                  "freed, with the size they were taken with");

  ds_pool_resource_set_max_cached_size (DS_POOL_RESOURCE (f->pool), 65536);

  p = ds_memory_resource_allocate (f->pool, 100000, 0, &error);
  g_assert_no_error (error);
  ds_memory_resource_deallocate (f->pool, p, 100000, 0);
  g_assert_cmpuint (ds_test_resource_get_n_live (f->up), ==, 0);
  p = ds_memory_resource_allocate (f->pool, 100000, 0, &error);
  g_assert_no_error (error);
  ds_memory_resource_deallocate (f->pool, p, 100000, 0);
  g_assert_cmpuint (ds_test_resource_count_allocs (f->up), ==, 2);
  g_assert_cmpuint (ds_test_resource_count_deallocs (f->up), ==, 2);

  /* Cached under a larger limit, freed under a smaller one. */
  ds_pool_resource_set_max_cached_size (DS_POOL_RESOURCE (f->pool), 1 << 20);
  q = ds_memory_resource_allocate (f->pool, 300000, 0, &error);
  g_assert_no_error (error);
  ds_pool_resource_set_max_cached_size (DS_POOL_RESOURCE (f->pool), 4096);
  ds_memory_resource_deallocate (f->pool, q, 300000, 0);
  g_assert_cmpuint (ds_test_resource_get_n_live (f->up), ==, 0);
  g_assert_cmpuint (ds_test_resource_get_n_mismatches (f->up), ==, 0);

  s = ds_test_pool_stats (f->pool);
  g_assert_cmpuint (s.bytes_held, ==, 0);
  g_assert_cmpuint (s.bytes_in_use, ==, 0);
  g_assert_cmpuint (s.upstream_allocations, ==, s.upstream_deallocations);
  g_assert_cmpuint (s.cache_hits, ==, 0);
  g_assert_cmpuint (s.cache_misses, ==, 3);
}

static void
test_host_trim (Fixture       *f,
                gconstpointer  user_data)
{
  gpointer blocks[10];
  guint64 cached, trimmed;
  DsPoolStats s;
  guint i;

  g_test_summary ("trim gives every cached block back upstream, keeps those "
                  "in use and returns the bytes it freed");

  for (i = 0; i < G_N_ELEMENTS (blocks); i++)
    {
      g_autoptr(GError) error = NULL;

      blocks[i] = ds_memory_resource_allocate (f->pool, 4096 << (i % 4), 0, &error);
      g_assert_no_error (error);
    }
  for (i = 0; i < 6; i++)
    ds_memory_resource_deallocate (f->pool, blocks[i], 4096 << (i % 4), 0);

  s = ds_test_pool_stats (f->pool);
  cached = s.bytes_cached;
  g_assert_cmpuint (cached, ==, 4096 * (1 + 2 + 4 + 8 + 1 + 2));
  g_assert_cmpuint (s.n_cached_blocks, ==, 6);

  trimmed = ds_pool_resource_trim (DS_POOL_RESOURCE (f->pool));
  g_assert_cmpuint (trimmed, ==, cached);
  g_assert_cmpuint (ds_test_resource_get_n_live (f->up), ==, 4);

  s = ds_test_pool_stats (f->pool);
  g_assert_cmpuint (s.bytes_cached, ==, 0);
  g_assert_cmpuint (s.n_cached_blocks, ==, 0);
  g_assert_cmpuint (s.upstream_deallocations, ==, 6);
  g_assert_cmpuint (s.bytes_held, ==, s.bytes_in_use);
  g_assert_cmpuint (ds_pool_resource_trim (DS_POOL_RESOURCE (f->pool)), ==, 0);

  for (i = 6; i < G_N_ELEMENTS (blocks); i++)
    ds_memory_resource_deallocate (f->pool, blocks[i], 4096 << (i % 4), 0);
  g_assert_cmpuint (ds_pool_resource_trim (DS_POOL_RESOURCE (f->pool)), ==, 4096 * (4 + 8 + 1 + 2));
  ds_test_resource_assert_clean (f->up);
}

static void
test_host_finalize (Fixture       *f,
                    gconstpointer  user_data)
{
  guint i;

  g_test_summary ("Finalizing a pool gives every cached block back upstream, "
                  "exactly once, with the size and alignment it was taken with");

  for (i = 0; i < 50; i++)
    {
      g_autoptr(GError) error = NULL;
      gsize size = 100 + 977 * i;
      gsize alignment = (gsize) 1 << (i % 14);
      gpointer p = ds_memory_resource_allocate (f->pool, size, alignment, &error);

      g_assert_no_error (error);
      ds_memory_resource_deallocate (f->pool, p, size, alignment);
    }

  g_assert_cmpuint (ds_test_resource_get_n_live (f->up), >, 0);
  g_assert_finalize_object (g_steal_pointer (&f->pool));
  ds_test_resource_assert_clean (f->up);
}

static void
test_host_out_of_memory (Fixture       *f,
                         gconstpointer  user_data)
{
  g_autoptr(GError) error = NULL;
  gpointer p, q;
  DsPoolStats s;

  g_test_summary ("An upstream failure comes back as a GError and leaves the "
                  "pool consistent; out of memory, the pool gives its cache "
                  "back and tries once more");

  ds_test_resource_fail_next (f->up, 1);
  p = ds_memory_resource_allocate (f->pool, 5000, 0, &error);
  g_assert_null (p);
  g_assert_error (error, DS_ERROR, DS_ERROR_OUT_OF_MEMORY);
  g_clear_error (&error);

  s = ds_test_pool_stats (f->pool);
  g_assert_cmpuint (s.bytes_held, ==, 0);
  g_assert_cmpuint (s.bytes_in_use, ==, 0);
  g_assert_cmpuint (s.upstream_allocations, ==, 0);

  /* Cache a block, then fail the next upstream allocation once: the pool
   * gives the cached block back and succeeds on the retry. */
  p = ds_memory_resource_allocate (f->pool, 5000, 0, &error);
  g_assert_no_error (error);
  ds_memory_resource_deallocate (f->pool, p, 5000, 0);
  ds_test_resource_fail_next (f->up, 1);
  q = ds_memory_resource_allocate (f->pool, 50000, 0, &error);
  g_assert_no_error (error);
  g_assert_nonnull (q);
  s = ds_test_pool_stats (f->pool);
  g_assert_cmpuint (s.n_cached_blocks, ==, 0);
  g_assert_cmpuint (s.upstream_deallocations, ==, 1);
  g_assert_cmpuint (ds_test_resource_get_n_live (f->up), ==, 1);
  ds_memory_resource_deallocate (f->pool, q, 50000, 0);

  /* Too large for the upstream (its limit is 1 GiB). */
  p = ds_memory_resource_allocate (f->pool, (gsize) 3 << 30, 0, &error);
  g_assert_null (p);
  g_assert_error (error, DS_ERROR, DS_ERROR_OUT_OF_MEMORY);
}

static void
test_host_no_cuda (void)
{
  g_autoptr(DsTestResource) up = ds_test_resource_new (DS_MEMORY_KIND_HOST, FALSE);
  g_autoptr(DsAccessOrder) host = ds_access_order_new_host ();
  DsMemoryResource *pool;
  DsFenceBatch batch;
  guint i;

  g_test_summary ("A host pool used in host order never calls CUDA: not to "
                  "allocate, give back, trim, read statistics or finalize");

  if (!ds_test_cuda_spy_works ())
    {
      g_test_skip ("the CUDA call spy does not work in this build");
      return;
    }

  ds_test_cuda_spy_reset ();
  pool = ds_pool_resource_new (DS_MEMORY_RESOURCE (up));
  for (i = 0; i < 100; i++)
    {
      g_autoptr(GError) error = NULL;
      gpointer p = ds_memory_resource_allocate_async (pool, 64 * (i + 1), 0, host, &error);
      gpointer q = ds_memory_resource_allocate (pool, 1000, 0, &error);

      g_assert_no_error (error);
      ds_fence_batch_init (&batch);
      g_assert_true (ds_test_batch_give_back (&batch, pool, p, 64 * (i + 1), 0, host, NULL));
      g_assert_true (ds_test_batch_give_back (&batch, pool, q, 1000, 0, NULL, NULL));
      ds_fence_batch_finish (&batch);
    }
  (void) ds_test_pool_stats (pool);
  ds_pool_resource_trim (DS_POOL_RESOURCE (pool));
  g_object_unref (pool);

  /* The default host resource, too. */
  {
    g_autoptr(GError) error = NULL;
    DsMemoryResource *def = ds_default_resource_new (DS_MEMORY_KIND_HOST, 0, NULL, &error);
    gpointer p;

    g_assert_no_error (error);
    g_assert_true (DS_IS_POOL_RESOURCE (def));
    p = ds_memory_resource_allocate (def, 100, 0, &error);
    g_assert_no_error (error);
    ds_memory_resource_deallocate (def, p, 100, 0);
    g_assert_finalize_object (def);
  }

  ds_test_assert_no_cuda_calls ();
  ds_test_resource_assert_clean (up);
}

static void
test_batch_not_a_pool (void)
{
  g_autoptr(DsTestResource) up = ds_test_resource_new (DS_MEMORY_KIND_HOST, FALSE);
  g_autoptr(DsAccessOrder) host = ds_access_order_new_host ();
  g_autoptr(GError) error = NULL;
  DsFenceBatch batch;
  gpointer p;

  g_test_summary ("A release batch gives blocks of a resource that is not a "
                  "pool back through its own deallocate, at once in host order");

  p = ds_memory_resource_allocate (DS_MEMORY_RESOURCE (up), 100, 0, &error);
  g_assert_no_error (error);

  ds_fence_batch_init (&batch);
  g_assert_true (ds_test_batch_give_back (&batch, DS_MEMORY_RESOURCE (up), p, 100, 16, host, &error));
  g_assert_no_error (error);
  ds_fence_batch_finish (&batch);

  g_assert_cmpuint (ds_test_resource_count_deallocs (up), ==, 1);
  ds_test_resource_assert_clean (up);
}

/* Stream orders that need no device: handles no stream has, so that the
 * fence layer numbers releases without CUDA (nothing to check). */
#define N_LOAN_STREAMS 6

static void
test_batch_stream_loans (void)
{
  g_autoptr(DsTestResource) up = ds_test_resource_new (DS_MEMORY_KIND_HOST, FALSE);
  DsAccessOrder orders[N_LOAN_STREAMS];
  DsStreamState *states[N_LOAN_STREAMS];
  DsStreamLoan loans[N_LOAN_STREAMS];
  gpointer blocks[2][N_LOAN_STREAMS];
  DsMemoryResource *pool;
  DsFenceBatch outer, inner;
  guint i, n_owned = 0;

  g_test_summary ("A release batch borrows its streams' states from the "
                  "thread's cache, which keeps every lent state however many "
                  "streams and batches are open at once; loans past the "
                  "cache hold references of their own");

  /* With a driver, the handles made up here would reach it (a stream's
   * description, its checks at releases): made-up handles are for a
   * machine without one. */
  if (ds_cuda_ensure_available (NULL))
    {
      g_test_skip ("a CUDA device is available: made-up stream handles would reach the driver");
      return;
    }

  for (i = 0; i < N_LOAN_STREAMS; i++)
    ds_access_order_init_stream (&orders[i], GSIZE_TO_POINTER (0x1000 + 0x100 * i), 0);

  /* More streams than the cache holds, all lent at once: distinct
   * states, the loans past the cache with a reference each. */
  for (i = 0; i < N_LOAN_STREAMS; i++)
    {
      states[i] = ds_stream_state_borrow (&orders[i], &loans[i]);
      g_assert_nonnull (states[i]);
      g_assert_true (ds_stream_state_matches (states[i], &orders[i]));
      for (guint j = 0; j < i; j++)
        g_assert_true (states[j] != states[i]);
      n_owned += loans[i].slot < 0;
    }
  g_assert_cmpuint (n_owned, ==, N_LOAN_STREAMS - 4);
  /* A second loan of a lent state is the same state. */
  {
    DsStreamLoan again;

    g_assert_true (ds_stream_state_borrow (&orders[0], &again) == states[0]);
    g_assert_cmpint (again.slot, ==, loans[0].slot);
    ds_stream_state_end_loan (states[0], &again);
  }
  for (i = 0; i < N_LOAN_STREAMS; i++)
    ds_stream_state_end_loan (states[i], &loans[i]);

  /* Two batches open at once on one thread, each over every stream (more
   * than a batch's four fences): the blocks go back under their streams'
   * fences and come out again, the states staying alive throughout. */
  pool = ds_pool_resource_new (DS_MEMORY_RESOURCE (up));
  for (guint round = 0; round < 3; round++)
    {
      for (guint b = 0; b < 2; b++)
        for (i = 0; i < N_LOAN_STREAMS; i++)
          {
            g_autoptr(GError) error = NULL;

            blocks[b][i] = ds_memory_resource_allocate_async (pool, 4096, 0, &orders[i], &error);
            g_assert_no_error (error);
            g_assert_nonnull (blocks[b][i]);
          }

      ds_fence_batch_init (&outer);
      for (i = 0; i < N_LOAN_STREAMS; i++)
        {
          g_assert_true (ds_test_batch_give_back (&outer, pool, blocks[0][i], 4096, 0, &orders[i], NULL));
          if (i == N_LOAN_STREAMS / 2)
            {
              ds_fence_batch_init (&inner);
              for (guint j = 0; j < N_LOAN_STREAMS; j++)
                g_assert_true (ds_test_batch_give_back (&inner, pool, blocks[1][j], 4096, 0,
                                                          &orders[N_LOAN_STREAMS - 1 - j], NULL));
              ds_fence_batch_finish (&inner);
            }
        }
      ds_fence_batch_finish (&outer);
    }

  {
    DsPoolStats s = ds_test_pool_stats (pool);

    /* Rounds after the first take every block from the pool. */
    g_assert_cmpuint (s.cache_hits, ==, 2 * 2 * N_LOAN_STREAMS);
    g_assert_cmpuint (s.n_cached_blocks, ==, 2 * N_LOAN_STREAMS);
  }
  g_assert_finalize_object (pool);
  ds_test_resource_assert_clean (up);
}

static void
test_default_kinds (void)
{
  DsMemoryKind kind;

  g_test_summary ("The default pool of each kind: host works anywhere; the "
                  "others need a CUDA device and say so without one");

  for (kind = DS_MEMORY_KIND_HOST; kind <= DS_MEMORY_KIND_MANAGED; kind++)
    {
      g_autoptr(GError) error = NULL;
      DsMemoryResource *pool = ds_default_resource_new (kind, 0, NULL, &error);
      gpointer p;

      if (kind != DS_MEMORY_KIND_HOST && !ds_test_cuda_available ())
        {
          g_assert_null (pool);
#if HAVE_CUDA
          g_assert_error (error, DS_ERROR, DS_ERROR_NO_DEVICE);
#else
          g_assert_error (error, DS_ERROR, DS_ERROR_NOT_SUPPORTED);
#endif
          continue;
        }

      g_assert_no_error (error);
      g_assert_true (DS_IS_POOL_RESOURCE (pool));
      g_assert_cmpint (ds_memory_resource_get_kind (pool), ==, kind);
      p = ds_memory_resource_allocate (pool, 100000, 0, &error);
      g_assert_no_error (error);
      g_assert_nonnull (p);
      if (kind != DS_MEMORY_KIND_DEVICE)
        memset (p, 3, 100000);
      ds_memory_resource_deallocate (pool, p, 100000, 0);
      g_assert_finalize_object (pool);
    }
}

static void
test_stream_order_without_device (Fixture       *f,
                                  gconstpointer  user_data)
{
  g_autoptr(DsAccessOrder) order = NULL;
  g_autoptr(GError) error = NULL;
  gpointer p, q;

  g_test_summary ("Without a CUDA device no stream work can be pending: "
                  "blocks given back in a stream's order are reusable at once");

  /* Before anything else: the fake handle must never reach a real driver. */
  DS_TEST_REQUIRE_NO_CUDA ();

  order = ds_access_order_new_stream ((gpointer) (guintptr) 0x1000, -1);

  p = ds_memory_resource_allocate_async (f->pool, 4096, 0, order, &error);
  g_assert_no_error (error);
  g_assert_true (ds_memory_resource_deallocate_async (f->pool, p, 4096, 0, order, &error));
  g_assert_no_error (error);
  q = ds_memory_resource_allocate (f->pool, 4096, 0, &error);
  g_assert_no_error (error);
  g_assert_true (q == p);
  ds_memory_resource_deallocate (f->pool, q, 4096, 0);
}

/* Misuse: blocks given back twice, not handed out, or with the wrong size - */

/* Expects the critical of a refused block matching @pattern. */
#define EXPECT_REFUSED(pattern) \
  g_test_expect_message ("Ds", G_LOG_LEVEL_CRITICAL, (pattern))

static void
test_host_double_free (Fixture       *f,
                       gconstpointer  user_data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(DsAccessOrder) host = ds_access_order_new_host ();
  gpointer p, q, r;
  DsPoolStats s;
  DsFenceBatch batch;

  g_test_summary ("A block given back twice is refused with a critical and "
                  "handed out once, not twice; through deallocate, "
                  "deallocate_async and a release batch alike");

  p = ds_memory_resource_allocate (f->pool, 4096, 0, &error);
  g_assert_no_error (error);
  ds_memory_resource_deallocate (f->pool, p, 4096, 0);

  EXPECT_REFUSED ("*refusing to take back*4096*given back already*");
  ds_memory_resource_deallocate (f->pool, p, 4096, 0);
  g_test_assert_expected_messages ();

  EXPECT_REFUSED ("*refusing to take back*given back already*");
  g_assert_true (ds_memory_resource_deallocate_async (f->pool, p, 4096, 0, host, &error));
  g_assert_no_error (error);
  g_test_assert_expected_messages ();

  /* The arena's path: a release batch, through the pool's fenced
   * deallocation. */
  EXPECT_REFUSED ("*refusing to take back*given back already*");
  ds_fence_batch_init (&batch);
  g_assert_true (ds_test_batch_give_back (&batch, f->pool, p, 4096, 16, host, NULL));
  ds_fence_batch_finish (&batch);
  g_test_assert_expected_messages ();

  s = ds_test_pool_stats (f->pool);
  g_assert_cmpuint (s.refused_deallocations, ==, 3);
  g_assert_cmpuint (s.n_cached_blocks, ==, 1);
  g_assert_cmpuint (s.bytes_cached, ==, 4096);
  g_assert_cmpuint (s.bytes_in_use, ==, 0);

  /* The next two requests of its class get two blocks. */
  q = ds_memory_resource_allocate (f->pool, 4096, 0, &error);
  g_assert_no_error (error);
  r = ds_memory_resource_allocate (f->pool, 4096, 0, &error);
  g_assert_no_error (error);
  g_assert_true (q == p);
  g_assert_true (r != q);
  g_assert_cmpuint (ds_test_resource_count_allocs (f->up), ==, 2);

  s = ds_test_pool_stats (f->pool);
  g_assert_cmpuint (s.bytes_in_use, ==, 2 * 4096);
  g_assert_cmpuint (s.n_cached_blocks, ==, 0);
  g_assert_cmpuint (s.bytes_held, ==, 2 * 4096);
  /* The pool's record of what it holds: two blocks. */
  g_assert_cmpuint (ds_pool_registry_count (DS_POOL_RESOURCE (f->pool)->registry), ==, 2);

  /* Handed out again, it may be given back again, once. */
  ds_memory_resource_deallocate (f->pool, q, 4096, 0);
  ds_memory_resource_deallocate (f->pool, r, 4096, 0);
  EXPECT_REFUSED ("*given back already*");
  ds_memory_resource_deallocate (f->pool, q, 4096, 0);
  g_test_assert_expected_messages ();

  s = ds_test_pool_stats (f->pool);
  g_assert_cmpuint (s.refused_deallocations, ==, 4);
  g_assert_cmpuint (s.n_cached_blocks, ==, 2);
  g_assert_cmpuint (s.bytes_in_use, ==, 0);
  g_assert_cmpuint (s.upstream_deallocations, ==, 0);
}

static void
test_host_foreign_pointer (Fixture       *f,
                           gconstpointer  user_data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(DsAccessOrder) host = ds_access_order_new_host ();
  g_autofree char *foreign = g_malloc (8192);
  gpointer p, q;
  DsPoolStats s;
  guint i;

  g_test_summary ("A pointer the pool never handed out, or one inside a block "
                  "it did, is refused with a critical: never cached, never "
                  "handed out, never given upstream");

  EXPECT_REFUSED ("*refusing to take back*4096*did not hand it out*");
  ds_memory_resource_deallocate (f->pool, foreign, 4096, 0);
  g_test_assert_expected_messages ();

  EXPECT_REFUSED ("*did not hand it out*");
  g_assert_true (ds_memory_resource_deallocate_async (f->pool, foreign + 4096, 4096, 0, host, &error));
  g_assert_no_error (error);
  g_test_assert_expected_messages ();

  /* Inside a block it handed out. */
  p = ds_memory_resource_allocate (f->pool, 8192, 0, &error);
  g_assert_no_error (error);
  EXPECT_REFUSED ("*did not hand it out*");
  ds_memory_resource_deallocate (f->pool, (char *) p + 256, 4096, 0);
  g_test_assert_expected_messages ();

  s = ds_test_pool_stats (f->pool);
  g_assert_cmpuint (s.refused_deallocations, ==, 3);
  g_assert_cmpuint (s.n_cached_blocks, ==, 0);
  g_assert_cmpuint (s.bytes_cached, ==, 0);
  g_assert_cmpuint (s.bytes_in_use, ==, 8192);

  /* Nothing of it is handed out. */
  for (i = 0; i < 4; i++)
    {
      q = ds_memory_resource_allocate (f->pool, 4096, 0, &error);
      g_assert_no_error (error);
      g_assert_true (q != (gpointer) foreign && q != (gpointer) (foreign + 4096));
      g_assert_true (q != (gpointer) ((char *) p + 256));
      ds_memory_resource_deallocate (f->pool, q, 4096, 0);
    }

  ds_memory_resource_deallocate (f->pool, p, 8192, 0);
  g_assert_finalize_object (g_steal_pointer (&f->pool));
  /* The upstream got back only what it handed out. */
  g_assert_cmpuint (ds_test_resource_get_n_mismatches (f->up), ==, 0);
  g_assert_cmpuint (ds_test_resource_get_n_live (f->up), ==, 0);
}

static void
test_host_wrong_size (Fixture       *f,
                      gconstpointer  user_data)
{
  g_autoptr(GError) error = NULL;
  gpointer p, q, big, huge;
  DsPoolStats s;
  guint n_deallocs;

  g_test_summary ("A block given back with another size or alignment than it "
                  "was handed out with is refused with a critical that names "
                  "both sizes, and stays out: a 4 KiB block never comes back "
                  "as a 1 MiB one");

  p = ds_memory_resource_allocate (f->pool, 4096, 0, &error);
  g_assert_no_error (error);

  EXPECT_REFUSED ("*refusing to take back*size 1048576*handed out with size 4096*");
  ds_memory_resource_deallocate (f->pool, p, 1 << 20, 0);
  g_test_assert_expected_messages ();

  /* Another size in the same size class is refused too. */
  EXPECT_REFUSED ("*size 4000*handed out with size 4096*");
  ds_memory_resource_deallocate (f->pool, p, 4000, 0);
  g_test_assert_expected_messages ();

  EXPECT_REFUSED ("*alignment 4096*handed out with size 4096, alignment 16*");
  ds_memory_resource_deallocate (f->pool, p, 4096, 4096);
  g_test_assert_expected_messages ();

  s = ds_test_pool_stats (f->pool);
  g_assert_cmpuint (s.refused_deallocations, ==, 3);
  g_assert_cmpuint (s.n_cached_blocks, ==, 0);
  g_assert_cmpuint (s.bytes_in_use, ==, 4096);

  /* It was not filed as a 1 MiB block, nor as a 4 KiB one. */
  big = ds_memory_resource_allocate (f->pool, 1 << 20, 0, &error);
  g_assert_no_error (error);
  g_assert_true (big != p);
  q = ds_memory_resource_allocate (f->pool, 4096, 0, &error);
  g_assert_no_error (error);
  g_assert_true (q != p);

  /* Given back right, it is cached and handed out again. */
  ds_memory_resource_deallocate (f->pool, p, 4096, 0);
  ds_memory_resource_deallocate (f->pool, q, 4096, 0);
  ds_memory_resource_deallocate (f->pool, big, 1 << 20, 0);
  g_assert_true (ds_memory_resource_allocate (f->pool, 4096, 0, &error) == q);
  ds_memory_resource_deallocate (f->pool, q, 4096, 0);

  /* A block too large to cache is never given upstream with a size the
   * pool did not take it with. */
  ds_pool_resource_set_max_cached_size (DS_POOL_RESOURCE (f->pool), 65536);
  huge = ds_memory_resource_allocate (f->pool, 100000, 0, &error);
  g_assert_no_error (error);
  n_deallocs = ds_test_resource_count_deallocs (f->up);
  EXPECT_REFUSED ("*size 200000*handed out with size 100000*");
  ds_memory_resource_deallocate (f->pool, huge, 200000, 0);
  g_test_assert_expected_messages ();
  g_assert_cmpuint (ds_test_resource_count_deallocs (f->up), ==, n_deallocs);
  ds_memory_resource_deallocate (f->pool, huge, 100000, 0);
  g_assert_cmpuint (ds_test_resource_count_deallocs (f->up), ==, n_deallocs + 1);
  g_assert_cmpuint (ds_test_resource_get_n_mismatches (f->up), ==, 0);

  s = ds_test_pool_stats (f->pool);
  g_assert_cmpuint (s.refused_deallocations, ==, 4);
  g_assert_cmpuint (s.bytes_in_use, ==, 0);
  g_assert_cmpuint (s.bytes_held, ==, s.bytes_cached);
}

static void
test_host_misuse_subprocess (void)
{
  g_test_summary ("With criticals fatal (no expected message), a double free "
                  "stops the program at the critical");

  if (g_test_subprocess ())
    {
      g_autoptr(DsMemoryResource) pool = g_object_new (DS_TYPE_POOL_RESOURCE, NULL);
      gpointer p = ds_memory_resource_allocate (pool, 100, 0, NULL);

      ds_memory_resource_deallocate (pool, p, 100, 0);
      ds_memory_resource_deallocate (pool, p, 100, 0);
      return;
    }

  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_failed ();
  g_test_trap_assert_stderr ("*CRITICAL*refusing to take back*size 100*given back already*");
}

/* Two threads give the same block back at once, many times: each time
 * one wins and the other is refused. */
typedef struct
{
  DsMemoryResource *pool;
  gpointer          ptr;
  gint              go;
  gint              done;
  guint             round;
} Racer;

static gpointer
race_free (gpointer data)
{
  Racer *r = data;

  for (guint round = 1; round <= 200; round++)
    {
      while ((guint) g_atomic_int_get (&r->go) < round)
        ;
      ds_memory_resource_deallocate (r->pool, r->ptr, 512, 0);
      g_atomic_int_inc (&r->done);
    }

  return NULL;
}

static void
quiet_critical (const gchar    *log_domain,
                GLogLevelFlags  log_level,
                const gchar    *message,
                gpointer        user_data)
{
  g_atomic_int_inc ((gint *) user_data);
}

static void
test_host_double_free_race (void)
{
  g_test_summary ("Two threads giving the same block back at once: one is "
                  "refused, the block is cached once");

  if (g_test_subprocess ())
    {
      g_autoptr(DsMemoryResource) pool = g_object_new (DS_TYPE_POOL_RESOURCE, NULL);
      Racer r = { pool, NULL, 0, 0, 0 };
      gint refused = 0;
      GThread *a, *b;
      DsPoolStats s;

      g_log_set_always_fatal (G_LOG_FATAL_MASK);
      g_log_set_handler ("Ds", G_LOG_LEVEL_CRITICAL, quiet_critical, &refused);
      a = g_thread_new ("racer-a", race_free, &r);
      b = g_thread_new ("racer-b", race_free, &r);
      for (guint round = 1; round <= 200; round++)
        {
          gpointer q;

          r.ptr = ds_memory_resource_allocate (pool, 512, 0, NULL);
          g_atomic_int_set (&r.go, (gint) round);
          while ((guint) g_atomic_int_get (&r.done) < 2 * round)
            ;
          /* Cached once: one request gets it, the next a new block. */
          g_assert_true (ds_memory_resource_allocate (pool, 512, 0, NULL) == r.ptr);
          q = ds_memory_resource_allocate (pool, 512, 0, NULL);
          g_assert_true (q != r.ptr);
          ds_memory_resource_deallocate (pool, q, 512, 0);
          ds_memory_resource_deallocate (pool, r.ptr, 512, 0);
          g_assert_cmpint (g_atomic_int_get (&refused), ==, (gint) round);
        }
      g_thread_join (a);
      g_thread_join (b);

      ds_pool_resource_get_stats (DS_POOL_RESOURCE (pool), &s);
      g_assert_cmpuint (s.refused_deallocations, ==, 200);
      g_assert_cmpuint (s.bytes_in_use, ==, 0);
      g_assert_cmpuint (s.n_cached_blocks, ==, s.upstream_allocations);
      return;
    }

  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_passed ();
}

/* Giving memory back on its own ------------------------------------------ */

static gint64 fake_now;

static gint64
fake_clock (void)
{
  return fake_now;
}

static void
test_host_idle_release (Fixture       *f,
                        gconstpointer  user_data)
{
  DsPoolResource *pool = DS_POOL_RESOURCE (f->pool);
  gpointer burst[64];
  DsPoolStats s;
  guint i, allocs_after_burst;

  g_test_summary ("After a burst, a long steady small demand brings what the "
                  "pool holds down to its release threshold, without trim: "
                  "blocks idle for the idle timeout go back upstream, the "
                  "block in use and those reused stay");

  /* A pool made now, on the fake clock. */
  fake_now = g_get_monotonic_time ();
  ds_clock_set_for_testing (fake_clock);
  g_clear_object (&f->pool);
  f->pool = ds_pool_resource_new (DS_MEMORY_RESOURCE (f->up));
  pool = DS_POOL_RESOURCE (f->pool);

  g_assert_cmpuint (ds_pool_resource_get_release_threshold (pool), ==, 32 << 20);
  g_assert_cmpuint (ds_pool_resource_get_idle_timeout (pool), ==, 5000);
  ds_pool_resource_set_release_threshold (pool, 1 << 20);
  ds_pool_resource_set_idle_timeout (pool, 1000);

  /* The burst: 16 MiB at once. */
  for (i = 0; i < G_N_ELEMENTS (burst); i++)
    burst[i] = ds_memory_resource_allocate (f->pool, 256 << 10, 0, NULL);
  for (i = 0; i < G_N_ELEMENTS (burst); i++)
    ds_memory_resource_deallocate (f->pool, burst[i], 256 << 10, 0);
  s = ds_test_pool_stats (f->pool);
  g_assert_cmpuint (s.bytes_held, ==, 16 << 20);
  allocs_after_burst = ds_test_resource_count_allocs (f->up);

  /* Steady demand: four 4 KiB blocks per unit of work, 10 ms apart (the
   * pool looks every 256 blocks given back: every 0.64 s here). For the
   * first second and a half nothing goes: the burst is not idle for the
   * idle timeout at any check before. */
  for (i = 0; i < 2000; i++)
    {
      gpointer p[4];

      for (guint k = 0; k < 4; k++)
        {
          p[k] = ds_memory_resource_allocate (f->pool, 4096, 0, NULL);
          memset (p[k], 1, 4096);
        }
      for (guint k = 0; k < 4; k++)
        ds_memory_resource_deallocate (f->pool, p[k], 4096, 0);
      fake_now += 10000;
      if (i == 150)
        {
          s = ds_test_pool_stats (f->pool);
          g_assert_cmpuint (s.bytes_held, ==, (16 << 20) + 4 * 4096);
          g_assert_cmpuint (s.idle_releases, ==, 0);
        }
    }

  s = ds_test_pool_stats (f->pool);
  /* Down to the threshold (not below it by a block or more). */
  g_assert_cmpuint (s.bytes_held, <=, 1 << 20);
  g_assert_cmpuint (s.bytes_held, >, (1 << 20) - (256 << 10));
  g_assert_cmpuint (s.idle_releases, ==, 61);
  g_assert_cmpuint (s.upstream_deallocations, ==, s.idle_releases);
  g_assert_cmpuint (s.bytes_in_use, ==, 0);
  g_assert_cmpuint (s.bytes_held, ==, s.bytes_cached);
  g_assert_cmpuint (ds_test_resource_get_live_bytes (f->up), ==, s.bytes_held);
  /* The small blocks in steady use were never given back: one upstream
   * allocation each in all those units. */
  g_assert_cmpuint (ds_test_resource_count_allocs (f->up), ==, allocs_after_burst + 4);
  g_assert_cmpuint (s.cache_hits, ==, 2000 * 4 - 4);

  /* A threshold of 0: everything idle goes (the three small blocks no
   * longer used, at the second check after they were last used). */
  ds_pool_resource_set_release_threshold (pool, 0);
  for (i = 0; i < 600; i++)
    {
      gpointer p = ds_memory_resource_allocate (f->pool, 4096, 0, NULL);

      ds_memory_resource_deallocate (f->pool, p, 4096, 0);
      fake_now += 10000;
    }
  s = ds_test_pool_stats (f->pool);
  g_assert_cmpuint (s.bytes_held, ==, 4096);
  g_assert_cmpuint (s.idle_releases, ==, 61 + 3 + 3);

  /* Off: G_MAXUINT64 keeps a second burst for good. */
  ds_pool_resource_set_release_threshold (pool, G_MAXUINT64);
  for (i = 0; i < G_N_ELEMENTS (burst); i++)
    burst[i] = ds_memory_resource_allocate (f->pool, 256 << 10, 0, NULL);
  for (i = 0; i < G_N_ELEMENTS (burst); i++)
    ds_memory_resource_deallocate (f->pool, burst[i], 256 << 10, 0);
  for (i = 0; i < 2000; i++)
    {
      gpointer p = ds_memory_resource_allocate (f->pool, 4096, 0, NULL);

      ds_memory_resource_deallocate (f->pool, p, 4096, 0);
      fake_now += 10000;
    }
  g_assert_cmpuint (ds_test_pool_stats (f->pool).bytes_held, >=, 16 << 20);

  ds_clock_set_for_testing (NULL);
}

static void
test_pool_release_settings_notify (void)
{
  g_autoptr(DsMemoryResource) pool = g_object_new (DS_TYPE_POOL_RESOURCE, NULL);
  guint n_threshold = 0, n_timeout = 0;
  guint64 threshold = 0;
  guint timeout = 0;

  g_test_summary ("release-threshold and idle-timeout have their documented "
                  "defaults and notify only when they change");

  g_object_get (pool, "release-threshold", &threshold, "idle-timeout", &timeout, NULL);
  g_assert_cmpuint (threshold, ==, DS_POOL_RESOURCE_DEFAULT_RELEASE_THRESHOLD);
  g_assert_cmpuint (threshold, ==, 32 << 20);
  g_assert_cmpuint (timeout, ==, DS_POOL_RESOURCE_DEFAULT_IDLE_TIMEOUT);

  g_signal_connect (pool, "notify::release-threshold", G_CALLBACK (ds_test_count_notify), &n_threshold);
  g_signal_connect (pool, "notify::idle-timeout", G_CALLBACK (ds_test_count_notify), &n_timeout);
  ds_pool_resource_set_release_threshold (DS_POOL_RESOURCE (pool), 4096);
  ds_pool_resource_set_release_threshold (DS_POOL_RESOURCE (pool), 4096);
  g_object_set (pool, "idle-timeout", 10u, NULL);
  g_object_set (pool, "idle-timeout", 10u, NULL);
  g_assert_cmpuint (n_threshold, ==, 1);
  g_assert_cmpuint (n_timeout, ==, 1);
  g_assert_cmpuint (ds_pool_resource_get_idle_timeout (DS_POOL_RESOURCE (pool)), ==, 10);

  /* The default resources get the defaults. */
  {
    g_autoptr(GError) error = NULL;
    DsMemoryResource *def = ds_default_resource_new (DS_MEMORY_KIND_HOST, 0, NULL, &error);

    g_assert_no_error (error);
    g_assert_cmpuint (ds_pool_resource_get_release_threshold (DS_POOL_RESOURCE (def)), ==,
                      DS_POOL_RESOURCE_DEFAULT_RELEASE_THRESHOLD);
    g_assert_cmpuint (ds_pool_resource_get_idle_timeout (DS_POOL_RESOURCE (def)), ==,
                      DS_POOL_RESOURCE_DEFAULT_IDLE_TIMEOUT);
    g_assert_finalize_object (def);
  }
}

/* Giving back upstream while upstream hands out again ----------------------- */

/* A host upstream that hands the address it got back last out again at
 * once, as malloc does, and that can let the pool take a block from
 * inside its deallocate: what two threads do when one gives a block back
 * upstream while the other takes one (upstream allocations take no pool
 * lock), made deterministic in one thread. */
#define TEST_TYPE_REENTRANT (test_reentrant_get_type ())
G_DECLARE_FINAL_TYPE (TestReentrant, test_reentrant, TEST, REENTRANT, GObject)

struct _TestReentrant
{
  GObject           parent_instance;
  gpointer          spare;       /* the last block given back */
  gsize             spare_size;
  guint             n_live;
  DsMemoryResource *pool;        /* borrowed: take a block from it in the next deallocate */
  gpointer          got;         /* what that took */
};

static void test_reentrant_iface_init (DsMemoryResourceInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (TestReentrant, test_reentrant, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (DS_TYPE_MEMORY_RESOURCE,
                                                      test_reentrant_iface_init))

static DsMemoryKind
test_reentrant_get_kind (DsMemoryResource *resource)
{
  return DS_MEMORY_KIND_HOST;
}

static gpointer
test_reentrant_allocate (DsMemoryResource  *resource,
                         gsize              size,
                         gsize              alignment,
                         GError           **error)
{
  TestReentrant *self = TEST_REENTRANT (resource);
  gpointer p;

  if (self->spare != NULL && self->spare_size == size)
    p = g_steal_pointer (&self->spare);
  else
    p = g_aligned_alloc (1, size, MAX (alignment, sizeof (gpointer)));
  self->n_live++;

  return p;
}

static void
test_reentrant_deallocate (DsMemoryResource *resource,
                           gpointer          ptr,
                           gsize             size,
                           gsize             alignment)
{
  TestReentrant *self = TEST_REENTRANT (resource);
  DsMemoryResource *pool = g_steal_pointer (&self->pool);

  self->n_live--;
  g_clear_pointer (&self->spare, g_aligned_free);
  self->spare = ptr;
  self->spare_size = size;

  if (pool != NULL)
    self->got = ds_memory_resource_allocate (pool, size, 0, NULL);
}

static void
test_reentrant_finalize (GObject *object)
{
  TestReentrant *self = TEST_REENTRANT (object);

  g_clear_pointer (&self->spare, g_aligned_free);
  G_OBJECT_CLASS (test_reentrant_parent_class)->finalize (object);
}

static void
test_reentrant_class_init (TestReentrantClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = test_reentrant_finalize;
}

static void
test_reentrant_init (TestReentrant *self)
{
}

static void
test_reentrant_iface_init (DsMemoryResourceInterface *iface)
{
  iface->get_kind = test_reentrant_get_kind;
  iface->allocate = test_reentrant_allocate;
  iface->deallocate = test_reentrant_deallocate;
}

static void
test_give_back_then_same_address (void)
{
  g_autoptr(TestReentrant) up = g_object_new (TEST_TYPE_REENTRANT, NULL);
  DsMemoryResource *pool = ds_pool_resource_new (DS_MEMORY_RESOURCE (up));
  DsPoolStats s;
  gpointer p;

  g_test_summary ("A block the pool gives back upstream leaves the pool's "
                  "registry first: upstream may hand the same address out "
                  "again at once, and the pool takes it as a new block, not "
                  "as one handed out twice (test-pool-resource-stress hit "
                  "this 1 run in 16 with two threads)");

  /* Not cached: given straight back upstream. */
  ds_pool_resource_set_max_cached_size (DS_POOL_RESOURCE (pool), 4096);
  p = ds_memory_resource_allocate (pool, 65536, 0, NULL);
  g_assert_nonnull (p);

  up->pool = pool;
  ds_memory_resource_deallocate (pool, p, 65536, 0);
  g_assert_true (up->got == p);

  s = ds_test_pool_stats (pool);
  g_assert_cmpuint (s.bytes_in_use, ==, 65536);
  g_assert_cmpuint (s.upstream_allocations, ==, 2);
  g_assert_cmpuint (s.upstream_deallocations, ==, 1);
  g_assert_cmpuint (s.refused_deallocations, ==, 0);

  /* It is a block the pool knows, with that size. */
  ds_memory_resource_deallocate (pool, up->got, 65536, 0);
  s = ds_test_pool_stats (pool);
  g_assert_cmpuint (s.bytes_in_use, ==, 0);
  g_assert_cmpuint (s.refused_deallocations, ==, 0);

  g_assert_finalize_object (pool);
  g_assert_cmpuint (up->n_live, ==, 0);
}

static void
test_pool_binding (void)
{
  g_autoptr(DsTestResource) device_up = ds_test_resource_new (DS_MEMORY_KIND_DEVICE, FALSE);
  g_autoptr(DsMemoryResource) host_up = ds_host_memory_resource_new ();
  /* A context handle never made current: no pool here allocates. */
  gpointer ctx = GSIZE_TO_POINTER (0x1000);
  DsMemoryResource *bound, *bound_primary, *unbound, *host;

  g_test_summary ("A pool says whether it enters a device and context itself "
                  "for its upstream calls: those it was made for, not yet for "
                  "one that takes them from its first upstream allocation, "
                  "never for host pools or other resources");

  bound = ds_pool_resource_new_for_device (DS_MEMORY_RESOURCE (device_up), 0, ctx);
  g_assert_cmpint (ds_fenced_resource_get_binding (bound, 0, ctx), ==, DS_SCOPE_BINDING_SAME);
  g_assert_cmpint (ds_fenced_resource_get_binding (bound, 1, ctx), ==, DS_SCOPE_BINDING_OTHER);
  g_assert_cmpint (ds_fenced_resource_get_binding (bound, 0, GSIZE_TO_POINTER (0x2000)), ==,
                   DS_SCOPE_BINDING_OTHER);
  g_assert_cmpint (ds_fenced_resource_get_binding (bound, -1, ctx), ==, DS_SCOPE_BINDING_OTHER);

  /* NULL is the device's primary context, the same as itself. */
  bound_primary = ds_pool_resource_new_for_device (DS_MEMORY_RESOURCE (device_up), 0, NULL);
  g_assert_cmpint (ds_fenced_resource_get_binding (bound_primary, 0, NULL), ==, DS_SCOPE_BINDING_SAME);
  g_assert_cmpint (ds_fenced_resource_get_binding (bound_primary, 0, ctx), ==, DS_SCOPE_BINDING_OTHER);

  unbound = ds_pool_resource_new (DS_MEMORY_RESOURCE (device_up));
  g_assert_cmpint (ds_fenced_resource_get_binding (unbound, 0, ctx), ==, DS_SCOPE_BINDING_NOT_YET);

  host = ds_pool_resource_new_for_device (host_up, 0, ctx);
  g_assert_cmpint (ds_fenced_resource_get_binding (host, 0, ctx), ==, DS_SCOPE_BINDING_OTHER);
  g_assert_cmpint (ds_fenced_resource_get_binding (DS_MEMORY_RESOURCE (device_up), 0, ctx), ==,
                   DS_SCOPE_BINDING_OTHER);

  g_assert_finalize_object (bound);
  g_assert_finalize_object (bound_primary);
  g_assert_finalize_object (unbound);
  g_assert_finalize_object (host);
}

int
main (int    argc,
      char **argv)
{
  ds_test_init (&argc, &argv);

#define ADD_HOST(path, func) \
  ds_test_add_pool ("/Ds/PoolResource/" path, DS_MEMORY_KIND_HOST, 0, func)

  g_test_add_func ("/Ds/PoolResource/new", test_pool_new);
  g_test_add_func ("/Ds/PoolResource/max-cached-size/notify", test_pool_max_cached_size_notify);
  g_test_add_func ("/Ds/PoolResource/stats/boxed", test_pool_stats_boxed);
  g_test_add_func ("/Ds/PoolResource/release-settings/notify", test_pool_release_settings_notify);
  ADD_HOST ("host/reuse", test_host_reuse);
  ADD_HOST ("host/size-classes", test_host_size_classes);
  ADD_HOST ("host/alignment", test_host_alignment);
  ADD_HOST ("host/max-cached-size", test_host_max_cached_size);
  ADD_HOST ("host/trim", test_host_trim);
  ADD_HOST ("host/finalize", test_host_finalize);
  ADD_HOST ("host/out-of-memory", test_host_out_of_memory);
  ADD_HOST ("host/misuse/double-free", test_host_double_free);
  ADD_HOST ("host/misuse/foreign-pointer", test_host_foreign_pointer);
  ADD_HOST ("host/misuse/wrong-size", test_host_wrong_size);
  g_test_add_func ("/Ds/PoolResource/host/misuse/fatal", test_host_misuse_subprocess);
  g_test_add_func ("/Ds/PoolResource/host/misuse/double-free-race", test_host_double_free_race);
  ADD_HOST ("host/idle-release", test_host_idle_release);
  g_test_add_func ("/Ds/PoolResource/host/no-cuda-calls", test_host_no_cuda);
  g_test_add_func ("/Ds/PoolResource/release/not-a-pool", test_batch_not_a_pool);
  g_test_add_func ("/Ds/PoolResource/release/stream-loans", test_batch_stream_loans);
  g_test_add_func ("/Ds/PoolResource/host/give-back-then-same-address", test_give_back_then_same_address);
  g_test_add_func ("/Ds/PoolResource/default/kinds", test_default_kinds);
  g_test_add_func ("/Ds/PoolResource/binding", test_pool_binding);
  ds_test_add_pool ("/Ds/PoolResource/no-device/stream-order", DS_MEMORY_KIND_DEVICE, 0,
                    test_stream_order_without_device);

#undef ADD_HOST

  return g_test_run ();
}
