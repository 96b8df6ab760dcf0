/* test-pool-resource.c: DsPoolResource, the stream-aware caching pool
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>

#include "ds-test-resource.h"
#include "ds-test-utils.h"
#include "ds-default-resources-private.h"
#include "ds-fence-batch-private.h"
#include "ds-pool-resource-private.h"
#include "ds-access-order-private.h"

static DsPoolStats
stats_of (DsMemoryResource *pool)
{
  DsPoolStats stats;

  ds_pool_resource_get_stats (DS_POOL_RESOURCE (pool), &stats);
  return stats;
}

/* The pool's CUDA calls, as its statistics count them. */
G_GNUC_UNUSED static guint64
cuda_calls_of (const DsPoolStats *s)
{
  return s->events_recorded + s->events_created + s->event_queries +
         s->stream_waits + s->event_waits;
}

G_GNUC_UNUSED static void
assert_within_bound (DsMemoryResource *pool)
{
  DsPoolStats s = stats_of (pool);

  g_assert_cmpuint (s.bytes_held, <=, 2 * s.peak_bytes_in_use);
  g_assert_cmpuint (s.bytes_cached, <=, s.bytes_held);
}

G_GNUC_UNUSED static void
set_policies (DsFenceReleasePolicy     release,
              DsFenceCrossStreamPolicy cross)
{
  ds_fence_set_policies (release, cross);
}

G_GNUC_UNUSED static void
reset_policies (void)
{
  ds_fence_set_policies (DS_FENCE_RELEASE_RECORD, DS_FENCE_CROSS_STREAM_QUERY);
}

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
count_notify_cb (GObject    *object,
                 GParamSpec *pspec,
                 gpointer    user_data)
{
  (*(guint *) user_data)++;
}

static void
test_pool_max_cached_size_notify (void)
{
  g_autoptr(DsMemoryResource) pool = g_object_new (DS_TYPE_POOL_RESOURCE, NULL);
  guint n_notify = 0;

  g_test_summary ("max-cached-size notifies only when it changes");

  g_signal_connect (pool, "notify::max-cached-size", G_CALLBACK (count_notify_cb), &n_notify);

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
test_host_reuse (void)
{
  g_autoptr(DsTestResource) up = ds_test_resource_new (DS_MEMORY_KIND_HOST, FALSE);
  DsMemoryResource *pool = ds_pool_resource_new (DS_MEMORY_RESOURCE (up));
  g_autoptr(GError) error = NULL;
  DsPoolStats s;
  gpointer p, q, r;

  g_test_summary ("A block given back is handed out again for any request of "
                  "its size class, without going upstream");

  p = ds_memory_resource_allocate (pool, 1000, 0, &error);
  g_assert_no_error (error);
  g_assert_nonnull (p);
  memset (p, 0x5a, 1000);
  /* Rounded up to its class: 4 granules = 1024 bytes, aligned to 256. */
  g_assert_cmpuint (ds_test_resource_count_allocs (up), ==, 1);
  g_assert_cmpuint (ds_test_resource_get_call (up, 0).size, ==, 1024);
  g_assert_cmpuint (ds_test_resource_get_call (up, 0).alignment, ==, 256);

  ds_memory_resource_deallocate (pool, p, 1000, 0);
  g_assert_cmpuint (ds_test_resource_count_deallocs (up), ==, 0);

  /* Same class, another size: same block. */
  q = ds_memory_resource_allocate (pool, 1024, 64, &error);
  g_assert_no_error (error);
  g_assert_true (q == p);
  g_assert_cmpuint (ds_test_resource_count_allocs (up), ==, 1);

  /* Another class: a new block. */
  r = ds_memory_resource_allocate (pool, 1025, 0, &error);
  g_assert_no_error (error);
  g_assert_true (r != p);
  g_assert_cmpuint (ds_test_resource_count_allocs (up), ==, 2);
  g_assert_cmpuint (ds_test_resource_get_call (up, 1).size, ==, 1280);

  /* Through the async entry points in host order, too. */
  {
    g_autoptr(DsAccessOrder) host = ds_access_order_new_host ();
    gpointer t;

    g_assert_true (ds_memory_resource_deallocate_async (pool, q, 1024, 64, host, &error));
    g_assert_no_error (error);
    t = ds_memory_resource_allocate_async (pool, 800, 0, host, &error);
    g_assert_no_error (error);
    g_assert_true (t == p);
    ds_memory_resource_deallocate (pool, t, 800, 0);
  }

  ds_memory_resource_deallocate (pool, r, 1025, 0);

  s = stats_of (pool);
  g_assert_cmpuint (s.upstream_allocations, ==, 2);
  g_assert_cmpuint (s.upstream_deallocations, ==, 0);
  g_assert_cmpuint (s.cache_misses, ==, 2);
  g_assert_cmpuint (s.cache_hits, ==, 2);
  g_assert_cmpuint (s.bytes_held, ==, 1024 + 1280);
  g_assert_cmpuint (s.bytes_cached, ==, 1024 + 1280);
  g_assert_cmpuint (s.n_cached_blocks, ==, 2);
  g_assert_cmpuint (s.bytes_in_use, ==, 0);
  g_assert_cmpuint (s.peak_bytes_in_use, ==, 1024 + 1280);
  g_assert_cmpuint (cuda_calls_of (&s), ==, 0);

  g_assert_finalize_object (pool);
  ds_test_resource_assert_clean (up);
  g_assert_cmpuint (ds_test_resource_count_deallocs (up), ==, 2);
}

static void
test_host_size_classes (void)
{
  g_autoptr(DsTestResource) up = ds_test_resource_new (DS_MEMORY_KIND_HOST, FALSE);
  DsMemoryResource *pool = ds_pool_resource_new (DS_MEMORY_RESOURCE (up));
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
      gpointer p = ds_memory_resource_allocate (pool, sizes[i], 0, &error);
      DsTestCall call;
      gsize granules = (sizes[i] + 255) / 256 * 256;

      g_assert_no_error (error);
      memset (p, 1, sizes[i]);
      call = ds_test_resource_get_call (up, ds_test_resource_get_n_calls (up) - 1);
      g_assert_cmpint (call.op, ==, DS_TEST_OP_ALLOCATE);
      g_assert_cmpuint (call.size, >=, sizes[i]);
      g_assert_cmpuint (call.size * 4, <=, granules * 5);
      g_assert_cmpuint (call.size % 256, ==, 0);
      ds_memory_resource_deallocate (pool, p, sizes[i], 0);
    }

  g_assert_cmpuint (ds_pool_resource_trim (DS_POOL_RESOURCE (pool)), >, 0);
  ds_test_resource_assert_clean (up);
  g_assert_finalize_object (pool);
}

static void
test_host_alignment (void)
{
  g_autoptr(DsTestResource) up = ds_test_resource_new (DS_MEMORY_KIND_HOST, FALSE);
  DsMemoryResource *pool = ds_pool_resource_new (DS_MEMORY_RESOURCE (up));
  gsize alignment;
  guint round;

  g_test_summary ("Every power-of-two alignment is honoured; up to 64 KiB "
                  "blocks are cached per alignment class, beyond that they "
                  "go straight upstream");

  for (round = 0; round < 2; round++)
    {
      gpointer blocks[21];
      guint allocs_before = ds_test_resource_count_allocs (up), i;

      /* All at once, so that the peak demand covers them all. */
      for (i = 0, alignment = 1; alignment <= 1 << 20; alignment *= 2, i++)
        {
          g_autoptr(GError) error = NULL;

          blocks[i] = ds_memory_resource_allocate (pool, 3000, alignment, &error);
          g_assert_no_error (error);
          ds_test_assert_aligned (blocks[i], alignment);
          memset (blocks[i], 2, 3000);
        }
      for (i = 0, alignment = 1; alignment <= 1 << 20; alignment *= 2, i++)
        ds_memory_resource_deallocate (pool, blocks[i], 3000, alignment);

      /* 1..256 share one alignment class (9 blocks); 512..64 KiB have one
       * class each (8); 128 KiB..1 MiB are not cached (4). The second
       * round takes only the uncached ones upstream. */
      if (round == 0)
        g_assert_cmpuint (ds_test_resource_count_allocs (up) - allocs_before, ==, 9 + 8 + 4);
      else
        g_assert_cmpuint (ds_test_resource_count_allocs (up) - allocs_before, ==, 4);
    }

  /* Uncached blocks went back at once. */
  g_assert_cmpuint (ds_test_resource_get_n_live (up), ==, 9 + 8);
  g_assert_cmpuint (ds_test_resource_get_n_mismatches (up), ==, 0);
  g_assert_finalize_object (pool);
  ds_test_resource_assert_clean (up);
}

static void
test_host_max_cached_size (void)
{
  g_autoptr(DsTestResource) up = ds_test_resource_new (DS_MEMORY_KIND_HOST, FALSE);
  DsMemoryResource *pool = ds_pool_resource_new (DS_MEMORY_RESOURCE (up));
  g_autoptr(GError) error = NULL;
  gpointer p, q;
  DsPoolStats s;

  g_test_summary ("Requests above max-cached-size go upstream and back each "
                  "time; lowering it gives larger blocks back when they are "
                  "freed, with the size they were taken with");

  ds_pool_resource_set_max_cached_size (DS_POOL_RESOURCE (pool), 65536);

  p = ds_memory_resource_allocate (pool, 100000, 0, &error);
  g_assert_no_error (error);
  ds_memory_resource_deallocate (pool, p, 100000, 0);
  g_assert_cmpuint (ds_test_resource_get_n_live (up), ==, 0);
  p = ds_memory_resource_allocate (pool, 100000, 0, &error);
  g_assert_no_error (error);
  ds_memory_resource_deallocate (pool, p, 100000, 0);
  g_assert_cmpuint (ds_test_resource_count_allocs (up), ==, 2);
  g_assert_cmpuint (ds_test_resource_count_deallocs (up), ==, 2);

  /* Cached under a larger limit, freed under a smaller one. */
  ds_pool_resource_set_max_cached_size (DS_POOL_RESOURCE (pool), 1 << 20);
  q = ds_memory_resource_allocate (pool, 300000, 0, &error);
  g_assert_no_error (error);
  ds_pool_resource_set_max_cached_size (DS_POOL_RESOURCE (pool), 4096);
  ds_memory_resource_deallocate (pool, q, 300000, 0);
  g_assert_cmpuint (ds_test_resource_get_n_live (up), ==, 0);
  g_assert_cmpuint (ds_test_resource_get_n_mismatches (up), ==, 0);

  s = stats_of (pool);
  g_assert_cmpuint (s.bytes_held, ==, 0);
  g_assert_cmpuint (s.bytes_in_use, ==, 0);
  g_assert_cmpuint (s.upstream_allocations, ==, s.upstream_deallocations);
  g_assert_cmpuint (s.cache_hits, ==, 0);
  g_assert_cmpuint (s.cache_misses, ==, 3);

  g_assert_finalize_object (pool);
  ds_test_resource_assert_clean (up);
}

static void
test_host_trim (void)
{
  g_autoptr(DsTestResource) up = ds_test_resource_new (DS_MEMORY_KIND_HOST, FALSE);
  DsMemoryResource *pool = ds_pool_resource_new (DS_MEMORY_RESOURCE (up));
  gpointer blocks[10];
  guint64 cached, trimmed;
  DsPoolStats s;
  guint i;

  g_test_summary ("trim gives every cached block back upstream, keeps those "
                  "in use and returns the bytes it freed");

  for (i = 0; i < G_N_ELEMENTS (blocks); i++)
    {
      g_autoptr(GError) error = NULL;

      blocks[i] = ds_memory_resource_allocate (pool, 4096 << (i % 4), 0, &error);
      g_assert_no_error (error);
    }
  for (i = 0; i < 6; i++)
    ds_memory_resource_deallocate (pool, blocks[i], 4096 << (i % 4), 0);

  s = stats_of (pool);
  cached = s.bytes_cached;
  g_assert_cmpuint (cached, ==, 4096 * (1 + 2 + 4 + 8 + 1 + 2));
  g_assert_cmpuint (s.n_cached_blocks, ==, 6);

  trimmed = ds_pool_resource_trim (DS_POOL_RESOURCE (pool));
  g_assert_cmpuint (trimmed, ==, cached);
  g_assert_cmpuint (ds_test_resource_get_n_live (up), ==, 4);

  s = stats_of (pool);
  g_assert_cmpuint (s.bytes_cached, ==, 0);
  g_assert_cmpuint (s.n_cached_blocks, ==, 0);
  g_assert_cmpuint (s.upstream_deallocations, ==, 6);
  g_assert_cmpuint (s.bytes_held, ==, s.bytes_in_use);
  g_assert_cmpuint (ds_pool_resource_trim (DS_POOL_RESOURCE (pool)), ==, 0);

  for (i = 6; i < G_N_ELEMENTS (blocks); i++)
    ds_memory_resource_deallocate (pool, blocks[i], 4096 << (i % 4), 0);
  g_assert_cmpuint (ds_pool_resource_trim (DS_POOL_RESOURCE (pool)), ==, 4096 * (4 + 8 + 1 + 2));
  ds_test_resource_assert_clean (up);

  g_assert_finalize_object (pool);
}

static void
test_host_finalize (void)
{
  g_autoptr(DsTestResource) up = ds_test_resource_new (DS_MEMORY_KIND_HOST, FALSE);
  DsMemoryResource *pool = ds_pool_resource_new (DS_MEMORY_RESOURCE (up));
  guint i;

  g_test_summary ("Finalizing a pool gives every cached block back upstream, "
                  "exactly once, with the size and alignment it was taken with");

  for (i = 0; i < 50; i++)
    {
      g_autoptr(GError) error = NULL;
      gsize size = 100 + 977 * i;
      gsize alignment = (gsize) 1 << (i % 14);
      gpointer p = ds_memory_resource_allocate (pool, size, alignment, &error);

      g_assert_no_error (error);
      ds_memory_resource_deallocate (pool, p, size, alignment);
    }

  g_assert_cmpuint (ds_test_resource_get_n_live (up), >, 0);
  g_assert_finalize_object (pool);
  ds_test_resource_assert_clean (up);
}

static void
test_host_peak_bound (void)
{
  g_autoptr(DsTestResource) up = ds_test_resource_new (DS_MEMORY_KIND_HOST, FALSE);
  DsMemoryResource *pool = ds_pool_resource_new (DS_MEMORY_RESOURCE (up));
  g_autoptr(GRand) rand = g_rand_new_with_seed (20261129);
  struct { gpointer ptr; gsize size; gsize alignment; } live[64];
  guint n_live = 0, step;
  guint64 max_held = 0;
  DsPoolStats s;

  g_test_summary ("Through phases of different block sizes the pool never "
                  "holds more than twice the peak demand, and what it "
                  "reports matches what its upstream has handed out");

  for (step = 0; step < 20000; step++)
    {
      guint phase = (step / 2000) % 6;
      gboolean alloc = n_live == 0 ||
                       (n_live < G_N_ELEMENTS (live) && g_rand_int_range (rand, 0, 100) < 55);

      if (alloc)
        {
          g_autoptr(GError) error = NULL;
          gsize lo = (gsize) 256 << (2 * phase);
          gsize size = g_rand_int_range (rand, lo, 4 * lo);
          gsize alignment = (gsize) 16 << g_rand_int_range (rand, 0, 5);

          live[n_live].ptr = ds_memory_resource_allocate (pool, size, alignment, &error);
          g_assert_no_error (error);
          live[n_live].size = size;
          live[n_live].alignment = alignment;
          n_live++;
        }
      else
        {
          guint k = g_rand_int_range (rand, 0, n_live);

          ds_memory_resource_deallocate (pool, live[k].ptr, live[k].size, live[k].alignment);
          live[k] = live[--n_live];
        }

      s = stats_of (pool);
      g_assert_cmpuint (s.bytes_held, <=, 2 * s.peak_bytes_in_use);
      g_assert_cmpuint (s.bytes_held, ==, ds_test_resource_get_live_bytes (up));
      max_held = MAX (max_held, s.bytes_held);
    }

  s = stats_of (pool);
  g_test_message ("peak demand %" G_GUINT64_FORMAT ", most held %" G_GUINT64_FORMAT
                  ", upstream allocations %" G_GUINT64_FORMAT ", hits %" G_GUINT64_FORMAT
                  ", misses %" G_GUINT64_FORMAT,
                  s.peak_bytes_in_use, max_held, s.upstream_allocations,
                  s.cache_hits, s.cache_misses);
  /* The cache is used: most requests are hits. */
  g_assert_cmpuint (s.cache_hits, >, s.cache_misses);

  while (n_live > 0)
    {
      n_live--;
      ds_memory_resource_deallocate (pool, live[n_live].ptr, live[n_live].size,
                                     live[n_live].alignment);
    }
  g_assert_cmpuint (stats_of (pool).bytes_in_use, ==, 0);
  g_assert_finalize_object (pool);
  ds_test_resource_assert_clean (up);
}

static void
test_host_out_of_memory (void)
{
  g_autoptr(DsTestResource) up = ds_test_resource_new (DS_MEMORY_KIND_HOST, FALSE);
  DsMemoryResource *pool = ds_pool_resource_new (DS_MEMORY_RESOURCE (up));
  g_autoptr(GError) error = NULL;
  gpointer p, q;
  DsPoolStats s;

  g_test_summary ("An upstream failure comes back as a GError and leaves the "
                  "pool consistent; out of memory, the pool gives its cache "
                  "back and tries once more");

  ds_test_resource_fail_next (up, 1);
  p = ds_memory_resource_allocate (pool, 5000, 0, &error);
  g_assert_null (p);
  g_assert_error (error, DS_ERROR, DS_ERROR_OUT_OF_MEMORY);
  g_clear_error (&error);

  s = stats_of (pool);
  g_assert_cmpuint (s.bytes_held, ==, 0);
  g_assert_cmpuint (s.bytes_in_use, ==, 0);
  g_assert_cmpuint (s.upstream_allocations, ==, 0);

  /* Cache a block, then fail the next upstream allocation once: the pool
   * gives the cached block back and succeeds on the retry. */
  p = ds_memory_resource_allocate (pool, 5000, 0, &error);
  g_assert_no_error (error);
  ds_memory_resource_deallocate (pool, p, 5000, 0);
  ds_test_resource_fail_next (up, 1);
  q = ds_memory_resource_allocate (pool, 50000, 0, &error);
  g_assert_no_error (error);
  g_assert_nonnull (q);
  s = stats_of (pool);
  g_assert_cmpuint (s.n_cached_blocks, ==, 0);
  g_assert_cmpuint (s.upstream_deallocations, ==, 1);
  g_assert_cmpuint (ds_test_resource_get_n_live (up), ==, 1);
  ds_memory_resource_deallocate (pool, q, 50000, 0);

  /* Too large for the upstream (its limit is 1 GiB). */
  p = ds_memory_resource_allocate (pool, (gsize) 3 << 30, 0, &error);
  g_assert_null (p);
  g_assert_error (error, DS_ERROR, DS_ERROR_OUT_OF_MEMORY);

  g_assert_finalize_object (pool);
  ds_test_resource_assert_clean (up);
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
      g_assert_true (ds_fence_batch_deallocate (&batch, pool, p, 64 * (i + 1), 0, host, NULL));
      g_assert_true (ds_fence_batch_deallocate (&batch, pool, q, 1000, 0, NULL, NULL));
      ds_fence_batch_finish (&batch);
    }
  (void) stats_of (pool);
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
  g_assert_true (ds_fence_batch_deallocate (&batch, DS_MEMORY_RESOURCE (up), p, 100, 16, host, &error));
  g_assert_no_error (error);
  ds_fence_batch_finish (&batch);

  g_assert_cmpuint (ds_test_resource_count_deallocs (up), ==, 1);
  ds_test_resource_assert_clean (up);
}

typedef struct
{
  DsMemoryResource *pool;
  guint             index;
  guint             iterations;
  guint             n_allocs;
} ThreadData;

static gpointer
host_thread (gpointer user_data)
{
  ThreadData *data = user_data;
  g_autoptr(GRand) rand = g_rand_new_with_seed (1000 + data->index);
  struct { guint8 *ptr; gsize size; gsize alignment; guint8 pattern; } held[8];
  guint n_held = 0, it;

  for (it = 0; it < data->iterations; it++)
    {
      if (n_held == G_N_ELEMENTS (held) || (n_held > 0 && g_rand_boolean (rand)))
        {
          guint k = g_rand_int_range (rand, 0, n_held);
          gsize j;

          /* Nobody else wrote into it while it was ours. */
          for (j = 0; j < held[k].size; j += 61)
            g_assert_cmpuint (held[k].ptr[j], ==, held[k].pattern);
          g_assert_cmpuint (held[k].ptr[held[k].size - 1], ==, held[k].pattern);

          ds_memory_resource_deallocate (data->pool, held[k].ptr, held[k].size,
                                         held[k].alignment);
          held[k] = held[--n_held];
        }
      else
        {
          g_autoptr(GError) error = NULL;
          gsize size = g_rand_int_range (rand, 1, 70000);
          gsize alignment = (gsize) 1 << g_rand_int_range (rand, 0, 13);
          guint8 *p = ds_memory_resource_allocate (data->pool, size, alignment, &error);

          g_assert_no_error (error);
          ds_test_assert_aligned (p, alignment);
          data->n_allocs++;
          held[n_held].ptr = p;
          held[n_held].size = size;
          held[n_held].alignment = alignment;
          held[n_held].pattern = (guint8) (data->index * 16 + it);
          memset (p, held[n_held].pattern, size);
          n_held++;
        }
    }

  while (n_held > 0)
    {
      n_held--;
      ds_memory_resource_deallocate (data->pool, held[n_held].ptr, held[n_held].size,
                                     held[n_held].alignment);
    }

  return NULL;
}

static void
test_host_threads (void)
{
  g_autoptr(DsTestResource) up = ds_test_resource_new (DS_MEMORY_KIND_HOST, FALSE);
  DsMemoryResource *pool = ds_pool_resource_new (DS_MEMORY_RESOURCE (up));
  GThread *threads[16];
  ThreadData data[16];
  guint64 n_allocs = 0;
  DsPoolStats s;
  guint i;

  g_test_summary ("16 threads share one host pool, each filling what it gets "
                  "with its own pattern and checking it before giving the "
                  "block back: no block is handed to two threads at once, "
                  "and the statistics add up afterwards");

  for (i = 0; i < G_N_ELEMENTS (threads); i++)
    {
      data[i].pool = pool;
      data[i].index = i;
      data[i].iterations = g_test_slow () ? 20000 : 4000;
      data[i].n_allocs = 0;
      threads[i] = g_thread_new ("pool-test", host_thread, &data[i]);
    }
  for (i = 0; i < G_N_ELEMENTS (threads); i++)
    {
      g_thread_join (threads[i]);
      n_allocs += data[i].n_allocs;
    }

  s = stats_of (pool);
  g_assert_cmpuint (s.bytes_in_use, ==, 0);
  g_assert_cmpuint (s.bytes_cached, ==, s.bytes_held);
  g_assert_cmpuint (s.bytes_held, <=, 2 * s.peak_bytes_in_use);
  g_assert_cmpuint (s.bytes_held, ==, ds_test_resource_get_live_bytes (up));
  g_assert_cmpuint (s.cache_hits + s.cache_misses, ==, n_allocs);
  g_assert_cmpuint (s.upstream_allocations, ==, ds_test_resource_count_allocs (up));
  g_assert_cmpuint (s.upstream_deallocations, ==, ds_test_resource_count_deallocs (up));
  g_assert_cmpuint (s.cache_hits, >, s.cache_misses);
  g_assert_cmpuint (cuda_calls_of (&s), ==, 0);

  g_assert_cmpuint (ds_pool_resource_trim (DS_POOL_RESOURCE (pool)), ==, s.bytes_held);
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
test_stream_order_without_device (void)
{
  g_autoptr(DsTestResource) up = NULL;
  g_autoptr(DsAccessOrder) order = NULL;
  g_autoptr(GError) error = NULL;
  DsMemoryResource *pool;
  gpointer p, q;

  g_test_summary ("Without a CUDA device no stream work can be pending: "
                  "blocks given back in a stream's order are reusable at once");

  /* Before anything else: the fake handle must never reach a real driver. */
  DS_TEST_REQUIRE_NO_CUDA ();

  up = ds_test_resource_new (DS_MEMORY_KIND_DEVICE, FALSE);
  pool = ds_pool_resource_new (DS_MEMORY_RESOURCE (up));
  order = ds_access_order_new_stream ((gpointer) (guintptr) 0x1000, -1);

  p = ds_memory_resource_allocate_async (pool, 4096, 0, order, &error);
  g_assert_no_error (error);
  g_assert_true (ds_memory_resource_deallocate_async (pool, p, 4096, 0, order, &error));
  g_assert_no_error (error);
  q = ds_memory_resource_allocate (pool, 4096, 0, &error);
  g_assert_no_error (error);
  g_assert_true (q == p);
  ds_memory_resource_deallocate (pool, q, 4096, 0);

  g_assert_finalize_object (pool);
  ds_test_resource_assert_clean (up);
}

/* GPU --------------------------------------------------------------------- */

#if HAVE_CUDA

static DsMemoryResource *
test_pool_new_device (DsTestResource **up_out)
{
  DsTestResource *up = ds_test_resource_new (DS_MEMORY_KIND_DEVICE, FALSE);
  DsMemoryResource *pool = ds_pool_resource_new (DS_MEMORY_RESOURCE (up));

  /* The upstream hands out host memory: the pointers are only tokens here;
   * the streams, events and waits are real. */
  *up_out = up;
  return pool;
}

static void
test_cuda_same_stream (void)
{
  DsTestResource *up;
  DsMemoryResource *pool;
  cudaStream_t stream;
  DsAccessOrder order;
  g_autoptr(GError) error = NULL;
  gint done = 0;
  gpointer p, q, h;
  DsPoolStats s;

  g_test_summary ("A block given back in stream S is handed out again at once "
                  "to the next request in S, while S is still busy, and to a "
                  "host-order request only after S has drained");

  DS_TEST_REQUIRE_CUDA ();
  reset_policies ();

  pool = test_pool_new_device (&up);
  stream = ds_test_stream_new ();
  ds_access_order_init_stream (&order, stream, -1);

  ds_test_stream_sleep (stream, 500, &done);
  p = ds_memory_resource_allocate_async (pool, 65536, 0, &order, &error);
  g_assert_no_error (error);
  g_assert_true (ds_memory_resource_deallocate_async (pool, p, 65536, 0, &order, &error));

  q = ds_memory_resource_allocate_async (pool, 65536, 0, &order, &error);
  g_assert_no_error (error);
  g_assert_true (q == p);
  g_assert_cmpint (g_atomic_int_get (&done), ==, 0);
  g_assert_true (ds_memory_resource_deallocate_async (pool, q, 65536, 0, &order, &error));

  /* Host order may not have it while S is busy. */
  h = ds_memory_resource_allocate (pool, 65536, 0, &error);
  g_assert_no_error (error);
  g_assert_true (h != p);
  g_assert_cmpint (g_atomic_int_get (&done), ==, 0);
  ds_memory_resource_deallocate (pool, h, 65536, 0);

  s = stats_of (pool);
  g_assert_cmpuint (s.events_recorded, ==, 2);
  g_assert_cmpuint (s.upstream_allocations, ==, 2);

  DS_TEST_CUDA_CHECK (cudaStreamSynchronize (stream));
  g_assert_cmpint (g_atomic_int_get (&done), ==, 1);

  /* Drained: now host order may have it (and the other block). */
  {
    gpointer a = ds_memory_resource_allocate (pool, 65536, 0, &error);
    gpointer b = ds_memory_resource_allocate (pool, 65536, 0, &error);

    g_assert_no_error (error);
    g_assert_true ((a == p && b == h) || (a == h && b == p));
    ds_memory_resource_deallocate (pool, a, 65536, 0);
    ds_memory_resource_deallocate (pool, b, 65536, 0);
  }
  g_assert_cmpuint (stats_of (pool).upstream_allocations, ==, 2);

  ds_test_stream_free (stream);
  g_assert_finalize_object (pool);
  ds_test_resource_assert_clean (up);
  g_object_unref (up);
}

static void
test_cuda_legacy_stream (void)
{
  DsTestResource *up;
  DsMemoryResource *pool;
  DsAccessOrder order;
  g_autoptr(GError) error = NULL;
  gpointer p, q;

  g_test_summary ("Same-stream reuse works for the legacy default stream");

  DS_TEST_REQUIRE_CUDA ();
  reset_policies ();

  pool = test_pool_new_device (&up);
  ds_access_order_init_stream (&order, NULL, -1);

  p = ds_memory_resource_allocate_async (pool, 1000, 0, &order, &error);
  g_assert_no_error (error);
  g_assert_true (ds_memory_resource_deallocate_async (pool, p, 1000, 0, &order, &error));
  q = ds_memory_resource_allocate_async (pool, 1000, 0, &order, &error);
  g_assert_true (q == p);
  g_assert_true (ds_memory_resource_deallocate_async (pool, q, 1000, 0, &order, &error));

  DS_TEST_CUDA_CHECK (cudaDeviceSynchronize ());
  g_assert_finalize_object (pool);
  ds_test_resource_assert_clean (up);
  g_object_unref (up);
}

static void
test_cuda_cross_stream (gconstpointer user_data)
{
  DsFenceCrossStreamPolicy policy = GPOINTER_TO_INT (user_data);
  DsTestResource *up;
  DsMemoryResource *pool;
  cudaStream_t s1, s2;
  DsAccessOrder o1, o2;
  g_autoptr(GError) error = NULL;
  gint done = 0, after = 0;
  gpointer p, q;

  g_test_summary ("A block given back in stream S is not handed to stream T "
                  "while S is busy (query policy), or T is made to wait for "
                  "S (wait policy); it is reusable by T once S has drained");

  DS_TEST_REQUIRE_CUDA ();
  set_policies (DS_FENCE_RELEASE_RECORD, policy);

  pool = test_pool_new_device (&up);
  s1 = ds_test_stream_new ();
  s2 = ds_test_stream_new ();
  ds_access_order_init_stream (&o1, s1, -1);
  ds_access_order_init_stream (&o2, s2, -1);

  /* Raise the peak demand first, so that the 2x memory bound leaves room
   * for a second block: this case is about the cross-stream policy, not
   * about what the pool does at the bound. */
  p = ds_memory_resource_allocate (pool, 100000, 0, &error);
  g_assert_no_error (error);
  ds_memory_resource_deallocate (pool, p, 100000, 0);

  ds_test_stream_sleep (s1, 400, &done);
  p = ds_memory_resource_allocate_async (pool, 20000, 0, &o1, &error);
  g_assert_no_error (error);
  g_assert_true (ds_memory_resource_deallocate_async (pool, p, 20000, 0, &o1, &error));

  q = ds_memory_resource_allocate_async (pool, 20000, 0, &o2, &error);
  g_assert_no_error (error);

  if (policy == DS_FENCE_CROSS_STREAM_QUERY)
    {
      g_assert_true (q != p);
      g_assert_cmpint (g_atomic_int_get (&done), ==, 0);
      g_assert_cmpuint (stats_of (pool).stream_waits, ==, 0);
      ds_memory_resource_deallocate (pool, q, 20000, 0);

      DS_TEST_CUDA_CHECK (cudaStreamSynchronize (s1));
      q = ds_memory_resource_allocate_async (pool, 20000, 0, &o2, &error);
      g_assert_no_error (error);
      g_assert_cmpuint (stats_of (pool).upstream_allocations, ==, 3);
      ds_memory_resource_deallocate_async (pool, q, 20000, 0, &o2, NULL);
    }
  else
    {
      /* T got it, but work queued on T now runs after S's. */
      g_assert_true (q == p);
      g_assert_cmpuint (stats_of (pool).stream_waits, ==, 1);
      ds_test_stream_set_flag (s2, &after);
      g_usleep (100 * G_TIME_SPAN_MILLISECOND);
      g_assert_cmpint (g_atomic_int_get (&after), ==, 0);
      g_assert_cmpint (g_atomic_int_get (&done), ==, 0);
      DS_TEST_CUDA_CHECK (cudaStreamSynchronize (s2));
      g_assert_cmpint (g_atomic_int_get (&done), ==, 1);
      g_assert_cmpint (g_atomic_int_get (&after), ==, 1);
      ds_memory_resource_deallocate_async (pool, q, 20000, 0, &o2, NULL);
    }

  ds_test_stream_free (s1);
  ds_test_stream_free (s2);
  reset_policies ();
  g_assert_finalize_object (pool);
  ds_test_resource_assert_clean (up);
  g_object_unref (up);
}

static void
test_cuda_lazy_same_stream (void)
{
  DsTestResource *up;
  DsMemoryResource *pool;
  cudaStream_t stream;
  DsAccessOrder order;
  g_autoptr(GError) error = NULL;
  DsPoolStats before, after;
  gpointer p, q, buffer;
  guint i, n_memsets;

  g_test_summary ("Lazy fences: a block given back in stream S and taken again "
                  "in S costs no CUDA call, not even a query, ever");

  DS_TEST_REQUIRE_CUDA ();
  ds_fence_set_policies (DS_FENCE_RELEASE_LAZY, DS_FENCE_CROSS_STREAM_QUERY);

  pool = test_pool_new_device (&up);
  stream = ds_test_stream_new ();
  ds_access_order_init_stream (&order, stream, -1);
  /* Work for the stream between reuses (the pool's blocks are tokens). */
  DS_TEST_CUDA_CHECK (cudaMalloc (&buffer, 4));

  /* The first release of a stream is checked: warm that up. */
  p = ds_memory_resource_allocate_async (pool, 1 << 20, 0, &order, &error);
  g_assert_no_error (error);
  g_assert_true (ds_memory_resource_deallocate_async (pool, p, 1 << 20, 0, &order, NULL));

  /* What the spy counts for the test's own memsets alone. */
  ds_test_cuda_spy_reset ();
  for (i = 0; i < 1000; i++)
    DS_TEST_CUDA_CHECK (cudaMemsetAsync (buffer, 0, 4, stream));
  n_memsets = ds_test_cuda_spy_get_count ();

  before = stats_of (pool);
  ds_test_cuda_spy_reset ();
  for (i = 0; i < 1000; i++)
    {
      q = ds_memory_resource_allocate_async (pool, 1 << 20, 0, &order, &error);
      g_assert_no_error (error);
      g_assert_true (q == p);
      DS_TEST_CUDA_CHECK (cudaMemsetAsync (buffer, 0, 4, stream));
      g_assert_true (ds_memory_resource_deallocate_async (pool, q, 1 << 20, 0, &order, NULL));
    }
  after = stats_of (pool);
  if (ds_test_cuda_spy_works ())
    g_assert_cmpuint (ds_test_cuda_spy_get_count (), ==, n_memsets);
  g_assert_cmpuint (cuda_calls_of (&after), ==, cuda_calls_of (&before));
  g_assert_cmpuint (after.bytes_pending, ==, 1 << 20);
  g_assert_cmpuint (after.bytes_in_use, ==, 0);
  assert_within_bound (pool);

  DS_TEST_CUDA_CHECK (cudaFree (buffer));
  ds_test_stream_free (stream);
  g_assert_finalize_object (pool);
  ds_test_resource_assert_clean (up);
  g_object_unref (up);
  reset_policies ();
}

static void
test_cuda_lazy_host_reuse (void)
{
  g_autoptr(DsMemoryResource) up = NULL;
  DsMemoryResource *pool;
  cudaStream_t stream;
  DsAccessOrder order;
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) busy = g_ptr_array_new ();
  DsPoolStats before, after;
  gint done = 0;
  guint i, reused = 0;

  g_test_summary ("Lazy fences: pinned blocks given back in a busy stream's "
                  "order never go to the host before that work is done; once "
                  "it is, they are reused, with at most a quarter of a CUDA "
                  "call per round");

  DS_TEST_REQUIRE_CUDA ();
  ds_fence_set_policies (DS_FENCE_RELEASE_LAZY, DS_FENCE_CROSS_STREAM_QUERY);

  up = ds_pinned_memory_resource_new ();
  pool = ds_pool_resource_new (up);
  stream = ds_test_stream_new ();
  ds_access_order_init_stream (&order, stream, -1);

  /* While the stream sleeps, every block handed to the host is new. */
  ds_test_stream_sleep (stream, 300, &done);
  for (i = 0; i < 8; i++)
    {
      guint8 *p = ds_memory_resource_allocate (pool, 64 << 10, 0, &error);

      g_assert_no_error (error);
      if (g_atomic_int_get (&done))
        break;
      g_assert_false (g_ptr_array_find (busy, p, NULL));
      p[0] = (guint8) i;
      g_ptr_array_add (busy, p);
      g_assert_true (ds_memory_resource_deallocate_async (pool, p, 64 << 10, 0, &order, NULL));
    }
  g_assert_cmpint (g_atomic_int_get (&done), ==, 0);
  g_assert_true (ds_test_wait_until (g_atomic_int_get (&done), 5000));
  DS_TEST_CUDA_CHECK (cudaStreamSynchronize (stream));

  /* Idle now: the blocks come back, checked every few releases. */
  before = stats_of (pool);
  for (i = 0; i < 400; i++)
    {
      guint8 *p = ds_memory_resource_allocate (pool, 64 << 10, 0, &error);

      g_assert_no_error (error);
      reused += g_ptr_array_find (busy, p, NULL);
      p[0] = 1;
      g_assert_true (ds_memory_resource_deallocate_async (pool, p, 64 << 10, 0, &order, NULL));
    }
  after = stats_of (pool);
  g_test_message ("reused %u of 400; CUDA calls %" G_GUINT64_FORMAT "; upstream %" G_GUINT64_FORMAT
                  "; held %" G_GUINT64_FORMAT " B", reused, cuda_calls_of (&after) - cuda_calls_of (&before),
                  after.upstream_allocations, after.bytes_held);
  g_assert_cmpuint (reused, >, 300);
  g_assert_cmpuint (10 * (cuda_calls_of (&after) - cuda_calls_of (&before)), <=, 3 * 400);
  g_assert_cmpuint (after.upstream_allocations, <=, before.upstream_allocations + 4);
  assert_within_bound (pool);

  ds_test_stream_free (stream);
  g_assert_finalize_object (pool);
  reset_policies ();
}

static void
test_cuda_destroyed_stream (void)
{
  DsTestResource *up;
  DsMemoryResource *pool;
  cudaStream_t s1, s2;
  DsAccessOrder o1, o2;
  g_autoptr(GError) error = NULL;
  gint done = 0;
  gpointer p, q;

  g_test_summary ("A stream destroyed while it has pending releases: its "
                  "blocks are not handed to a new stream (even one that gets "
                  "the same handle) before its work is done, and are reused "
                  "once it is");

  DS_TEST_REQUIRE_CUDA ();
  reset_policies ();

  pool = test_pool_new_device (&up);
  s1 = ds_test_stream_new ();
  ds_access_order_init_stream (&o1, s1, -1);

  /* 2 s: long enough that the old stream is still busy below even under
   * compute-sanitizer, which slows every CUDA call down. */
  ds_test_stream_sleep (s1, 2000, &done);
  p = ds_memory_resource_allocate_async (pool, 8192, 0, &o1, &error);
  g_assert_no_error (error);
  g_assert_true (ds_memory_resource_deallocate_async (pool, p, 8192, 0, &o1, &error));
  DS_TEST_CUDA_CHECK (cudaStreamDestroy (s1));

  s2 = ds_test_stream_new ();
  ds_access_order_init_stream (&o2, s2, -1);
  g_test_message ("old handle %p, new handle %p", (void *) s1, (void *) s2);
  g_assert_cmpuint (ds_access_order_get_stream_id (&o1), !=, 0);
  g_assert_cmpuint (ds_access_order_get_stream_id (&o1), !=, ds_access_order_get_stream_id (&o2));

  q = ds_memory_resource_allocate_async (pool, 8192, 0, &o2, &error);
  g_assert_no_error (error);
  g_assert_cmpint (g_atomic_int_get (&done), ==, 0);
  g_assert_true (q != p);
  ds_memory_resource_deallocate_async (pool, q, 8192, 0, &o2, NULL);

  /* The old stream's work finishes; its event with it. */
  g_assert_true (ds_test_wait_until (g_atomic_int_get (&done), 5000));
  DS_TEST_CUDA_CHECK (cudaDeviceSynchronize ());
  {
    gpointer a = ds_memory_resource_allocate (pool, 8192, 0, &error);
    gpointer b = ds_memory_resource_allocate (pool, 8192, 0, &error);

    g_assert_no_error (error);
    g_assert_true (a == p || b == p);
    ds_memory_resource_deallocate (pool, a, 8192, 0);
    ds_memory_resource_deallocate (pool, b, 8192, 0);
  }
  g_assert_cmpuint (stats_of (pool).upstream_allocations, ==, 2);

  ds_test_stream_free (s2);
  g_assert_finalize_object (pool);
  ds_test_resource_assert_clean (up);
  g_object_unref (up);
}

static void
test_cuda_release_batch (void)
{
  DsTestResource *ups[3];
  DsMemoryResource *pools[3];
  static const DsMemoryKind kinds[3] = {
    DS_MEMORY_KIND_PINNED, DS_MEMORY_KIND_DEVICE, DS_MEMORY_KIND_MANAGED,
  };
  cudaStream_t stream;
  DsAccessOrder order;
  gint done = 0;
  guint round, i, k;

  g_test_summary ("A release of many blocks of three kinds in one stream's "
                  "order records one event in all; under the query-idle "
                  "policy an idle stream records none; the adaptive policy "
                  "stops asking after it found the stream busy");

  DS_TEST_REQUIRE_CUDA ();

  for (k = 0; k < 3; k++)
    {
      ups[k] = ds_test_resource_new (kinds[k], FALSE);
      pools[k] = ds_pool_resource_new (DS_MEMORY_RESOURCE (ups[k]));
    }
  stream = ds_test_stream_new ();
  ds_access_order_init_stream (&order, stream, -1);

  /* 0: record; 1: query-idle, idle; 2: query-idle, busy; 3: adaptive,
   * busy (asks, records); 4: adaptive, idle but busy last time (records
   * without asking). */
  for (round = 0; round < 5; round++)
    {
      DsFenceReleasePolicy policy = round == 0 ? DS_FENCE_RELEASE_RECORD :
                                   round <= 2 ? DS_FENCE_RELEASE_QUERY_IDLE :
                                   DS_FENCE_RELEASE_ADAPTIVE;
      gpointer blocks[3][4];
      DsFenceBatch batch;
      guint64 before_events = 0, after_events = 0, before_queries = 0, after_queries = 0;

      set_policies (policy, DS_FENCE_CROSS_STREAM_QUERY);
      if (round == 2 || round == 3)
        ds_test_stream_sleep (stream, 200, &done);
      else
        DS_TEST_CUDA_CHECK (cudaStreamSynchronize (stream));

      for (k = 0; k < 3; k++)
        {
          DsPoolStats s = stats_of (pools[k]);

          before_events += s.events_recorded;
          before_queries += s.event_queries;
          for (i = 0; i < 4; i++)
            {
              g_autoptr(GError) error = NULL;

              blocks[k][i] = ds_memory_resource_allocate_async (pools[k], 4096 << i, 0, &order, &error);
              g_assert_no_error (error);
            }
        }

      ds_fence_batch_init (&batch);
      for (k = 0; k < 3; k++)
        for (i = 0; i < 4; i++)
          g_assert_true (ds_fence_batch_deallocate (&batch, pools[k], blocks[k][3 - i],
                                                    4096 << (3 - i), 16, &order, NULL));
      ds_fence_batch_finish (&batch);

      for (k = 0; k < 3; k++)
        {
          DsPoolStats s = stats_of (pools[k]);

          after_events += s.events_recorded;
          after_queries += s.event_queries;
        }

      g_test_message ("round %u: %" G_GUINT64_FORMAT " event(s), %" G_GUINT64_FORMAT " query(ies)",
                      round, after_events - before_events, after_queries - before_queries);
      if (round == 0)
        g_assert_cmpuint (after_events - before_events, ==, 1);
      else if (round == 1)
        {
          g_assert_cmpuint (after_events - before_events, ==, 0);
          g_assert_cmpuint (after_queries - before_queries, ==, 1);
        }
      else if (round == 4)
        {
          g_assert_cmpuint (after_events - before_events, ==, 1);
          g_assert_cmpuint (after_queries - before_queries, ==, 0);
        }
      else
        g_assert_cmpuint (after_events - before_events, ==, 1);
    }

  DS_TEST_CUDA_CHECK (cudaStreamSynchronize (stream));
  reset_policies ();
  ds_test_stream_free (stream);
  for (k = 0; k < 3; k++)
    {
      g_assert_finalize_object (pools[k]);
      ds_test_resource_assert_clean (ups[k]);
      g_object_unref (ups[k]);
    }
}

static void
test_cuda_trim_pending (void)
{
  DsTestResource *up;
  DsMemoryResource *pool;
  cudaStream_t stream;
  DsAccessOrder order;
  g_autoptr(GError) error = NULL;
  gint done = 0;
  gpointer p, h;
  DsPoolStats s;

  g_test_summary ("trim gives back what no stream uses any more and keeps "
                  "what a busy stream may still use, without waiting");

  DS_TEST_REQUIRE_CUDA ();
  reset_policies ();

  pool = test_pool_new_device (&up);
  stream = ds_test_stream_new ();
  ds_access_order_init_stream (&order, stream, -1);

  ds_test_stream_sleep (stream, 400, &done);
  p = ds_memory_resource_allocate_async (pool, 16384, 0, &order, &error);
  h = ds_memory_resource_allocate (pool, 32768, 0, &error);
  g_assert_no_error (error);
  ds_memory_resource_deallocate_async (pool, p, 16384, 0, &order, NULL);
  ds_memory_resource_deallocate (pool, h, 32768, 0);

  g_assert_cmpuint (ds_pool_resource_trim (DS_POOL_RESOURCE (pool)), ==, 32768);
  g_assert_cmpint (g_atomic_int_get (&done), ==, 0);
  g_assert_cmpuint (ds_test_resource_get_n_live (up), ==, 1);
  s = stats_of (pool);
  g_assert_cmpuint (s.event_waits, ==, 0);
  g_assert_cmpuint (s.bytes_cached, ==, 16384);

  DS_TEST_CUDA_CHECK (cudaStreamSynchronize (stream));
  g_assert_cmpuint (ds_pool_resource_trim (DS_POOL_RESOURCE (pool)), ==, 16384);
  ds_test_resource_assert_clean (up);

  ds_test_stream_free (stream);
  g_assert_finalize_object (pool);
  g_object_unref (up);
}

static void
test_cuda_finalize_pending (void)
{
  DsTestResource *up;
  DsMemoryResource *pool;
  cudaStream_t stream;
  DsAccessOrder order;
  g_autoptr(GError) error = NULL;
  gint done = 0;
  gpointer p;

  g_test_summary ("Finalizing a pool with blocks pending on a busy stream "
                  "waits for that stream's work before giving them back");

  DS_TEST_REQUIRE_CUDA ();
  reset_policies ();

  pool = test_pool_new_device (&up);
  stream = ds_test_stream_new ();
  ds_access_order_init_stream (&order, stream, -1);

  ds_test_stream_sleep (stream, 300, &done);
  p = ds_memory_resource_allocate_async (pool, 16384, 0, &order, &error);
  g_assert_no_error (error);
  ds_memory_resource_deallocate_async (pool, p, 16384, 0, &order, NULL);
  g_assert_cmpint (g_atomic_int_get (&done), ==, 0);

  g_assert_finalize_object (pool);
  g_assert_cmpint (g_atomic_int_get (&done), ==, 1);
  ds_test_resource_assert_clean (up);

  ds_test_stream_free (stream);
  g_object_unref (up);
}

static void
test_cuda_bound_reuses_pending (void)
{
  DsTestResource *up;
  DsMemoryResource *pool;
  cudaStream_t s1, s2, s3;
  DsAccessOrder o1, o2, o3;
  g_autoptr(GError) error = NULL;
  gint done1 = 0, done2 = 0, after = 0;
  gpointer p, q, r, h;
  DsPoolStats s;

  g_test_summary ("At twice the peak demand, a request reuses a block still "
                  "pending on another stream (its stream waits; host order "
                  "blocks) instead of giving it back and taking a new one");

  DS_TEST_REQUIRE_CUDA ();
  reset_policies ();

  pool = test_pool_new_device (&up);
  s1 = ds_test_stream_new ();
  s2 = ds_test_stream_new ();
  s3 = ds_test_stream_new ();
  ds_access_order_init_stream (&o1, s1, -1);
  ds_access_order_init_stream (&o2, s2, -1);
  ds_access_order_init_stream (&o3, s3, -1);

  ds_test_stream_sleep (s1, 400, &done1);
  ds_test_stream_sleep (s2, 600, &done2);

  /* Peak demand: one 64 KiB block; the bound: two. */
  p = ds_memory_resource_allocate_async (pool, 65536, 0, &o1, &error);
  g_assert_no_error (error);
  ds_memory_resource_deallocate_async (pool, p, 65536, 0, &o1, NULL);
  q = ds_memory_resource_allocate_async (pool, 65536, 0, &o2, &error);
  g_assert_no_error (error);
  g_assert_true (q != p);
  ds_memory_resource_deallocate_async (pool, q, 65536, 0, &o2, NULL);
  g_assert_cmpuint (stats_of (pool).upstream_allocations, ==, 2);

  /* A third stream: both blocks pending, no room for a third. */
  r = ds_memory_resource_allocate_async (pool, 65536, 0, &o3, &error);
  g_assert_no_error (error);
  g_assert_true (r == p || r == q);
  s = stats_of (pool);
  g_assert_cmpuint (s.upstream_allocations, ==, 2);
  g_assert_cmpuint (s.upstream_deallocations, ==, 0);
  g_assert_cmpuint (s.stream_waits, ==, 1);
  g_assert_cmpuint (s.event_waits, ==, 0);
  ds_test_stream_set_flag (s3, &after);
  g_usleep (100 * G_TIME_SPAN_MILLISECOND);
  g_assert_cmpint (g_atomic_int_get (&after), ==, 0);
  g_assert_cmpint (g_atomic_int_get (&done1), ==, 0);

  /* Host order (demand back to one block): blocks until the oldest
   * pending release (q's, on s2) completes, and reuses q. */
  ds_memory_resource_deallocate_async (pool, r, 65536, 0, &o3, NULL);
  h = ds_memory_resource_allocate (pool, 65536, 0, &error);
  g_assert_no_error (error);
  g_assert_true (h == q);
  g_assert_cmpint (g_atomic_int_get (&done2), ==, 1);
  s = stats_of (pool);
  g_assert_cmpuint (s.upstream_allocations, ==, 2);
  g_assert_cmpuint (s.upstream_deallocations, ==, 0);
  g_assert_cmpuint (s.event_waits, ==, 1);
  assert_within_bound (pool);

  ds_memory_resource_deallocate (pool, h, 65536, 0);
  ds_test_stream_free (s1);
  ds_test_stream_free (s2);
  ds_test_stream_free (s3);
  g_assert_cmpint (g_atomic_int_get (&after), ==, 1);
  g_assert_finalize_object (pool);
  ds_test_resource_assert_clean (up);
  g_object_unref (up);
}

static void
test_cuda_peak_bound (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GRand) rand = g_rand_new_with_seed (42);
  DsMemoryResource *up, *pool;
  cudaStream_t stream;
  DsAccessOrder order;
  struct { gpointer ptr; gsize size; } live[32];
  guint n_live = 0, step;
  DsPoolStats s;

  g_test_summary ("With real device memory released in stream order, the "
                  "pool never holds more than twice the peak demand");

  DS_TEST_REQUIRE_CUDA ();
  reset_policies ();

  up = ds_device_memory_resource_new (0);
  pool = ds_pool_resource_new (up);
  stream = ds_test_stream_new ();
  ds_access_order_init_stream (&order, stream, -1);

  for (step = 0; step < 4000; step++)
    {
      guint phase = (step / 500) % 4;

      if (n_live == 0 || (n_live < G_N_ELEMENTS (live) && g_rand_int_range (rand, 0, 100) < 55))
        {
          gsize lo = (gsize) 4096 << (3 * phase);
          gsize size = g_rand_int_range (rand, lo, 3 * lo);

          live[n_live].ptr = ds_memory_resource_allocate_async (pool, size, 0, &order, &error);
          g_assert_no_error (error);
          live[n_live].size = size;
          DS_TEST_CUDA_CHECK (cudaMemsetAsync (live[n_live].ptr, 1, size, stream));
          n_live++;
        }
      else
        {
          guint k = g_rand_int_range (rand, 0, n_live);

          ds_memory_resource_deallocate_async (pool, live[k].ptr, live[k].size, 0, &order, NULL);
          live[k] = live[--n_live];
        }
      assert_within_bound (pool);
    }

  while (n_live > 0)
    {
      n_live--;
      ds_memory_resource_deallocate_async (pool, live[n_live].ptr, live[n_live].size, 0, &order, NULL);
    }

  s = stats_of (pool);
  g_test_message ("peak %" G_GUINT64_FORMAT " held %" G_GUINT64_FORMAT " upstream %"
                  G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT " events %" G_GUINT64_FORMAT,
                  s.peak_bytes_in_use, s.bytes_held, s.upstream_allocations,
                  s.upstream_deallocations, s.events_recorded);
  g_assert_cmpuint (s.bytes_in_use, ==, 0);

  DS_TEST_CUDA_CHECK (cudaStreamSynchronize (stream));
  g_assert_cmpuint (ds_pool_resource_trim (DS_POOL_RESOURCE (pool)), ==, s.bytes_held);
  ds_test_stream_free (stream);
  g_assert_finalize_object (pool);
  g_object_unref (up);
}

typedef struct
{
  DsMemoryResource *pool;
  guint             index;
  guint             iterations;
  gint              failures;
} StressData;

static gpointer
stress_thread (gpointer user_data)
{
  StressData *data = user_data;
  g_autoptr(GRand) rand = g_rand_new_with_seed (7000 + data->index);
  cudaStream_t stream = ds_test_stream_new ();
  const gsize max_size = 256 * 1024, max_blocks = 4;
  guint8 *host = NULL;
  DsAccessOrder order;
  guint it;

  ds_access_order_init_stream (&order, stream, -1);
  DS_TEST_CUDA_CHECK (cudaMallocHost ((void **) &host, max_size * max_blocks));

  for (it = 0; it < data->iterations; it++)
    {
      guint n = g_rand_int_range (rand, 1, max_blocks + 1), i;
      gsize sizes[4];
      guint8 pattern[4];

      for (i = 0; i < n; i++)
        {
          g_autoptr(GError) error = NULL;
          gboolean host_order = g_rand_int_range (rand, 0, 8) == 0;
          gpointer p;

          sizes[i] = g_rand_int_range (rand, 1, max_size);
          pattern[i] = (guint8) (data->index * 13 + it * 7 + i + 1);
          p = host_order ? ds_memory_resource_allocate (data->pool, sizes[i], 0, &error)
                         : ds_memory_resource_allocate_async (data->pool, sizes[i], 0, &order, &error);
          g_assert_no_error (error);

          /* Fill it, let the GPU take a while, copy it back, give it back
           * at once: any other stream that got it before this work is done
           * would overwrite the pattern. */
          DS_TEST_CUDA_CHECK (cudaMemsetAsync (p, pattern[i], sizes[i], stream));
          if (g_rand_int_range (rand, 0, 16) == 0)
            ds_test_stream_sleep (stream, 1, NULL);
          DS_TEST_CUDA_CHECK (cudaMemcpyAsync (host + i * max_size, p, sizes[i],
                                               cudaMemcpyDeviceToHost, stream));
          ds_memory_resource_deallocate_async (data->pool, p, sizes[i], 0, &order, NULL);
        }

      DS_TEST_CUDA_CHECK (cudaStreamSynchronize (stream));
      for (i = 0; i < n; i++)
        {
          gsize j;

          for (j = 0; j < sizes[i]; j += 97)
            if (host[i * max_size + j] != pattern[i])
              {
                g_atomic_int_inc (&data->failures);
                break;
              }
          if (host[i * max_size + sizes[i] - 1] != pattern[i])
            g_atomic_int_inc (&data->failures);
        }
    }

  DS_TEST_CUDA_CHECK (cudaFreeHost (host));
  ds_test_stream_free (stream);
  return NULL;
}

static void
test_cuda_stress (gconstpointer user_data)
{
  DsFenceCrossStreamPolicy policy = GPOINTER_TO_INT (user_data);
  DsMemoryResource *up, *pool;
  GThread *threads[16];
  StressData data[16];
  DsPoolStats s;
  guint i;

  g_test_summary ("16 threads, each on its own stream, share one device pool "
                  "with random sizes; the GPU fills every block with a "
                  "pattern that is copied back and checked");

  DS_TEST_REQUIRE_CUDA ();
  set_policies (DS_FENCE_RELEASE_RECORD, policy);

  up = ds_device_memory_resource_new (0);
  pool = ds_pool_resource_new (up);

  for (i = 0; i < G_N_ELEMENTS (threads); i++)
    {
      data[i].pool = pool;
      data[i].index = i;
      data[i].iterations = 400;
      data[i].failures = 0;
      threads[i] = g_thread_new ("pool-stress", stress_thread, &data[i]);
    }
  for (i = 0; i < G_N_ELEMENTS (threads); i++)
    {
      g_thread_join (threads[i]);
      g_assert_cmpint (data[i].failures, ==, 0);
    }

  s = stats_of (pool);
  g_test_message ("hits %" G_GUINT64_FORMAT " misses %" G_GUINT64_FORMAT
                  " events %" G_GUINT64_FORMAT " created %" G_GUINT64_FORMAT
                  " queries %" G_GUINT64_FORMAT " waits %" G_GUINT64_FORMAT
                  " held %" G_GUINT64_FORMAT " peak %" G_GUINT64_FORMAT,
                  s.cache_hits, s.cache_misses, s.events_recorded, s.events_created,
                  s.event_queries, s.stream_waits, s.bytes_held, s.peak_bytes_in_use);
  g_assert_cmpuint (s.bytes_in_use, ==, 0);
  g_assert_cmpuint (s.bytes_held, <=, 2 * s.peak_bytes_in_use);
  g_assert_cmpuint (s.cache_hits, >, s.cache_misses);
  /* Events are reused: far fewer created than recorded. */
  g_assert_cmpuint (s.events_created * 4, <, s.events_recorded);

  reset_policies ();
  g_assert_finalize_object (pool);
  g_object_unref (up);
}

static void
test_cuda_stream_states (void)
{
  DsTestResource *up;
  DsMemoryResource *pool;
  g_autoptr(GError) error = NULL;
  guint before, i;

  g_test_summary ("Stream states of streams that come and go are dropped once "
                  "nothing they released is pending");

  DS_TEST_REQUIRE_CUDA ();
  reset_policies ();

  pool = test_pool_new_device (&up);
  before = ds_stream_state_count ();

  for (i = 0; i < 200; i++)
    {
      cudaStream_t stream = ds_test_stream_new ();
      DsAccessOrder order;
      gpointer p;

      ds_access_order_init_stream (&order, stream, -1);
      p = ds_memory_resource_allocate_async (pool, 512, 0, &order, &error);
      g_assert_no_error (error);
      ds_memory_resource_deallocate_async (pool, p, 512, 0, &order, NULL);
      ds_test_stream_free (stream);
      /* Another request picks the block up (its stream is gone, its event
       * has completed), dropping the last reference to the state. */
      p = ds_memory_resource_allocate (pool, 512, 0, &error);
      g_assert_no_error (error);
      ds_memory_resource_deallocate (pool, p, 512, 0);
    }

  g_assert_cmpuint (ds_stream_state_count (), <=, before + 8);
  g_assert_cmpuint (stats_of (pool).upstream_allocations, ==, 1);

  g_assert_finalize_object (pool);
  ds_test_resource_assert_clean (up);
  g_object_unref (up);
}

static void
test_cuda_default_pools (void)
{
  DsMemoryKind kind;
  cudaStream_t stream;
  DsAccessOrder order;

  g_test_summary ("The default pools of the CUDA kinds hand out real memory, "
                  "usable in stream order, and reuse it");

  DS_TEST_REQUIRE_CUDA ();
  reset_policies ();

  stream = ds_test_stream_new ();
  ds_access_order_init_stream (&order, stream, -1);

  for (kind = DS_MEMORY_KIND_PINNED; kind <= DS_MEMORY_KIND_MANAGED; kind++)
    {
      g_autoptr(GError) error = NULL;
      DsMemoryResource *pool = ds_default_resource_new (kind, 0, NULL, &error);
      gpointer p, q;
      guint i;

      g_assert_no_error (error);
      for (i = 0; i < 10; i++)
        {
          p = kind == DS_MEMORY_KIND_DEVICE
            ? ds_memory_resource_allocate_async (pool, 1 << 20, 0, &order, &error)
            : ds_memory_resource_allocate (pool, 1 << 20, 0, &error);
          g_assert_no_error (error);
          if (kind == DS_MEMORY_KIND_DEVICE)
            DS_TEST_CUDA_CHECK (cudaMemsetAsync (p, 7, 1 << 20, stream));
          else
            memset (p, 7, 1 << 20);
          ds_memory_resource_deallocate_async (pool, p, 1 << 20, 0, &order, NULL);
        }
      DS_TEST_CUDA_CHECK (cudaStreamSynchronize (stream));
      q = ds_memory_resource_allocate (pool, 1 << 20, 0, &error);
      g_assert_no_error (error);
      if (kind != DS_MEMORY_KIND_DEVICE)
        g_assert_cmpuint (((guint8 *) q)[12345], ==, 7);
      ds_memory_resource_deallocate (pool, q, 1 << 20, 0);
      g_assert_cmpuint (stats_of (pool).upstream_allocations, ==, 1);
      g_assert_finalize_object (pool);
    }

  ds_test_stream_free (stream);
}

#endif /* HAVE_CUDA */

#if HAVE_CUDA
# define add_cuda_test(path, func) g_test_add_func ((path), (func))
# define add_cuda_data_test(path, data, func) \
  g_test_add_data_func ((path), GINT_TO_POINTER (data), (func))
#else
static void
test_skip_no_cuda (void)
{
  g_test_skip ("ds was built without CUDA (-Dcuda=disabled)");
}
# define add_cuda_test(path, func) g_test_add_func ((path), test_skip_no_cuda)
# define add_cuda_data_test(path, data, func) g_test_add_func ((path), test_skip_no_cuda)
#endif

int
main (int    argc,
      char **argv)
{
  ds_test_init (&argc, &argv);

  g_test_add_func ("/Ds/PoolResource/new", test_pool_new);
  g_test_add_func ("/Ds/PoolResource/max-cached-size/notify", test_pool_max_cached_size_notify);
  g_test_add_func ("/Ds/PoolResource/stats/boxed", test_pool_stats_boxed);
  g_test_add_func ("/Ds/PoolResource/host/reuse", test_host_reuse);
  g_test_add_func ("/Ds/PoolResource/host/size-classes", test_host_size_classes);
  g_test_add_func ("/Ds/PoolResource/host/alignment", test_host_alignment);
  g_test_add_func ("/Ds/PoolResource/host/max-cached-size", test_host_max_cached_size);
  g_test_add_func ("/Ds/PoolResource/host/trim", test_host_trim);
  g_test_add_func ("/Ds/PoolResource/host/finalize", test_host_finalize);
  g_test_add_func ("/Ds/PoolResource/host/peak-bound", test_host_peak_bound);
  g_test_add_func ("/Ds/PoolResource/host/out-of-memory", test_host_out_of_memory);
  g_test_add_func ("/Ds/PoolResource/host/no-cuda-calls", test_host_no_cuda);
  g_test_add_func ("/Ds/PoolResource/host/threads", test_host_threads);
  g_test_add_func ("/Ds/PoolResource/release/not-a-pool", test_batch_not_a_pool);
  g_test_add_func ("/Ds/PoolResource/default/kinds", test_default_kinds);
  g_test_add_func ("/Ds/PoolResource/no-device/stream-order", test_stream_order_without_device);

  add_cuda_test ("/Ds/PoolResource/cuda/same-stream", test_cuda_same_stream);
  add_cuda_test ("/Ds/PoolResource/cuda/lazy/same-stream", test_cuda_lazy_same_stream);
  add_cuda_test ("/Ds/PoolResource/cuda/lazy/host-reuse", test_cuda_lazy_host_reuse);
  add_cuda_test ("/Ds/PoolResource/cuda/legacy-stream", test_cuda_legacy_stream);
  add_cuda_data_test ("/Ds/PoolResource/cuda/cross-stream/query", DS_FENCE_CROSS_STREAM_QUERY, test_cuda_cross_stream);
  add_cuda_data_test ("/Ds/PoolResource/cuda/cross-stream/wait", DS_FENCE_CROSS_STREAM_WAIT, test_cuda_cross_stream);
  add_cuda_test ("/Ds/PoolResource/cuda/destroyed-stream", test_cuda_destroyed_stream);
  add_cuda_test ("/Ds/PoolResource/cuda/release-batch", test_cuda_release_batch);
  add_cuda_test ("/Ds/PoolResource/cuda/trim-pending", test_cuda_trim_pending);
  add_cuda_test ("/Ds/PoolResource/cuda/finalize-pending", test_cuda_finalize_pending);
  add_cuda_test ("/Ds/PoolResource/cuda/peak-bound", test_cuda_peak_bound);
  add_cuda_test ("/Ds/PoolResource/cuda/bound-reuses-pending", test_cuda_bound_reuses_pending);
  add_cuda_data_test ("/Ds/PoolResource/cuda/stress/query", DS_FENCE_CROSS_STREAM_QUERY, test_cuda_stress);
  add_cuda_data_test ("/Ds/PoolResource/cuda/stress/wait", DS_FENCE_CROSS_STREAM_WAIT, test_cuda_stress);
  add_cuda_test ("/Ds/PoolResource/cuda/stream-states", test_cuda_stream_states);
  add_cuda_test ("/Ds/PoolResource/cuda/default-pools", test_cuda_default_pools);

  return g_test_run ();
}
