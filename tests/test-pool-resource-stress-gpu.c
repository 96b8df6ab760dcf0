/* test-pool-resource-stress-gpu.c: DsPoolResource over real CUDA memory
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Device pools under load, on one stream and on many threads with a stream
 * each, and the default pools of the CUDA kinds. Every case needs a CUDA
 * device and skips without one.
 */

#include "config.h"

#include <string.h>

#include "ds-test-fixtures.h"
#include "ds-default-resources-private.h"

#if HAVE_CUDA

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
  ds_test_pool_reset_policies ();

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
      ds_test_pool_assert_within_bound (pool);
    }

  while (n_live > 0)
    {
      n_live--;
      ds_memory_resource_deallocate_async (pool, live[n_live].ptr, live[n_live].size, 0, &order, NULL);
    }

  s = ds_test_pool_stats (pool);
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
  DsMemoryResource *up, *pool;
  GThread *threads[16];
  StressData data[16];
  DsPoolStats s;
  guint i;

  g_test_summary ("16 threads, each on its own stream, share one device pool "
                  "with random sizes; the GPU fills every block with a "
                  "pattern that is copied back and checked");

  DS_TEST_REQUIRE_CUDA ();
  ds_test_pool_reset_policies ();

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

  s = ds_test_pool_stats (pool);
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

  ds_test_pool_reset_policies ();
  g_assert_finalize_object (pool);
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
  ds_test_pool_reset_policies ();

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
      g_assert_cmpuint (ds_test_pool_stats (pool).upstream_allocations, ==, 1);
      g_assert_finalize_object (pool);
    }

  ds_test_stream_free (stream);
}

#endif /* HAVE_CUDA */

int
main (int    argc,
      char **argv)
{
  ds_test_init (&argc, &argv);

  ds_test_add_gpu_func ("/Ds/PoolResource/cuda/peak-bound", test_cuda_peak_bound);
  ds_test_add_gpu_data_func ("/Ds/PoolResource/cuda/stress", NULL, test_cuda_stress);
  ds_test_add_gpu_func ("/Ds/PoolResource/cuda/default-pools", test_cuda_default_pools);

  return g_test_run ();
}
