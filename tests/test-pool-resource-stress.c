/* test-pool-resource-stress.c: host pools under load
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A host pool on a recording upstream (DsTestPoolFixture) through phases
 * of different sizes, and shared by many threads.
 */

#include "config.h"

#include <string.h>

#include "ds-test-fixtures.h"

typedef DsTestPoolFixture Fixture;

static void
test_host_peak_bound (Fixture       *f,
                      gconstpointer  user_data)
{
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

          live[n_live].ptr = ds_memory_resource_allocate (f->pool, size, alignment, &error);
          g_assert_no_error (error);
          live[n_live].size = size;
          live[n_live].alignment = alignment;
          n_live++;
        }
      else
        {
          guint k = g_rand_int_range (rand, 0, n_live);

          ds_memory_resource_deallocate (f->pool, live[k].ptr, live[k].size, live[k].alignment);
          live[k] = live[--n_live];
        }

      s = ds_test_pool_stats (f->pool);
      g_assert_cmpuint (s.bytes_held, <=, 2 * s.peak_bytes_in_use);
      g_assert_cmpuint (s.bytes_held, ==, ds_test_resource_get_live_bytes (f->up));
      max_held = MAX (max_held, s.bytes_held);
    }

  s = ds_test_pool_stats (f->pool);
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
      ds_memory_resource_deallocate (f->pool, live[n_live].ptr, live[n_live].size,
                                     live[n_live].alignment);
    }
  g_assert_cmpuint (ds_test_pool_stats (f->pool).bytes_in_use, ==, 0);
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
test_host_threads (Fixture       *f,
                   gconstpointer  user_data)
{
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
      data[i].pool = f->pool;
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

  s = ds_test_pool_stats (f->pool);
  g_assert_cmpuint (s.bytes_in_use, ==, 0);
  g_assert_cmpuint (s.bytes_cached, ==, s.bytes_held);
  g_assert_cmpuint (s.bytes_held, <=, 2 * s.peak_bytes_in_use);
  g_assert_cmpuint (s.bytes_held, ==, ds_test_resource_get_live_bytes (f->up));
  g_assert_cmpuint (s.cache_hits + s.cache_misses, ==, n_allocs);
  g_assert_cmpuint (s.upstream_allocations, ==, ds_test_resource_count_allocs (f->up));
  g_assert_cmpuint (s.upstream_deallocations, ==, ds_test_resource_count_deallocs (f->up));
  g_assert_cmpuint (s.cache_hits, >, s.cache_misses);
  g_assert_cmpuint (ds_test_pool_cuda_calls (&s), ==, 0);

  g_assert_cmpuint (ds_pool_resource_trim (DS_POOL_RESOURCE (f->pool)), ==, s.bytes_held);
}

int
main (int    argc,
      char **argv)
{
  ds_test_init (&argc, &argv);

  ds_test_add_pool ("/Ds/PoolResource/host/peak-bound", DS_MEMORY_KIND_HOST, 0,
                    test_host_peak_bound);
  ds_test_add_pool ("/Ds/PoolResource/host/threads", DS_MEMORY_KIND_HOST, 0,
                    test_host_threads);

  return g_test_run ();
}
