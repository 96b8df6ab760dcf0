/* bench-pool.c: what the pool's fence checks cost, and its misses
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Needs a GPU. Times lifecycles over the default pools with the streams
 * checked as ds checks them (at a stream's first release, and every 8th
 * while others want its blocks: ds-fence-private.h) beside checking every
 * release; blocks taken across streams; the cost of a cache miss; and a
 * scratchpad finalized on another thread than the one that filled it.
 */

#include "ds-bench.h"

#include <string.h>

#include "ds-default-resources-private.h"
#include "ds-fence-private.h"
#include "ds-pool-resource-private.h"

#define N_STREAMS 4

typedef struct
{
  cudaStream_t streams[N_STREAMS];
  guint        next;
  gsize        size;        /* device allocation */
  gsize        work;        /* bytes memset per lifecycle (0: none) */
} Ctx;

static void
sync_all (gpointer data,
          guint    n)
{
  Ctx *c = data;
  guint i;

  for (i = 0; i < N_STREAMS; i++)
    CHECK (cudaStreamSynchronize (c->streams[i]));
}

static void
four_kind (gpointer data,
           guint    n)
{
  Ctx *c = data;
  guint i;

  for (i = 0; i < n; i++)
    {
      DsScratchpad *sp = ds_bench_scratchpad_new (c->streams[0], 0);

      ds_bench_alloc_temps (sp, ds_bench_four_kind, G_N_ELEMENTS (ds_bench_four_kind));
      g_object_unref (sp);
    }
}

/* One device allocation and @work bytes of memset into it, on stream 0
 * (one stream) or on the streams in turn (@rotate). */
static void
device_work (Ctx     *c,
             guint    n,
             gboolean rotate)
{
  guint i;

  for (i = 0; i < n; i++)
    {
      cudaStream_t stream = c->streams[rotate ? c->next++ % N_STREAMS : 0];
      DsScratchpad *sp = ds_bench_scratchpad_new (stream, 0);
      gpointer p = ds_scratchpad_alloc (sp, DS_MEMORY_KIND_DEVICE, c->size, 0, NULL);

      CHECK (cudaMemsetAsync (p, 0, MAX (4, c->work), stream));
      g_object_unref (sp);
    }
}

static void
device_one_stream (gpointer data,
                   guint    n)
{
  device_work (data, n, FALSE);
}

static void
device_rotate (gpointer data,
               guint    n)
{
  device_work (data, n, TRUE);
}

static void
row (DsBenchTable *t,
     const char   *name,
     DsBenchFunc   func,
     Ctx          *c,
     guint         check_every)
{
  DsPoolStats before, d;
  DsBenchResult *r;
  guint64 n;

  ds_fence_set_check_every_for_testing (check_every);
  sync_all (c, 0);
  ds_bench_default_pool_stats (&before);
  r = ds_bench_table_add (t, ds_bench_run (name, func, sync_all, c, 0, 100000, 1.0));
  ds_bench_default_pool_stats_since (&before, &d);

  /* The counters cover the warm-up too. */
  n = r->total;
  r->note = g_strdup_printf ("per lifecycle: CUDA calls %.2f (events %.2f, queries %.2f, stream "
                             "waits %.2f, blocking waits %.3f), upstream %.3f; held at end %.1f MiB",
                             (double) ds_bench_pool_cuda_calls (&d) / n,
                             (double) d.events_recorded / n,
                             (double) d.event_queries / n,
                             (double) d.stream_waits / n,
                             (double) d.event_waits / n,
                             (double) ds_bench_pool_upstream_calls (&d) / n,
                             d.bytes_held / 1048576.0);
}

/* A table of @func with the streams checked as ds does (at a stream's
 * first release and every 8th while others want its blocks) and, for
 * comparison, at every release. */
static void
check_table (const char  *title,
             DsBenchFunc  func,
             Ctx         *c)
{
  g_autoptr(DsBenchTable) t = ds_bench_table_new (title);

  row (t, "ds (checked while wanted)", func, c, 0);
  row (t, "every release checked", func, c, 1);
  ds_fence_set_check_every_for_testing (0);
  ds_bench_table_print (t);
}

/* A cache miss: a size class not seen before, then trim. */
static void
miss_pool (gpointer data,
           guint    n)
{
  Ctx *c = data;
  DsMemoryResource *pool = ds_memory_resource_get_default (DS_MEMORY_KIND_DEVICE, 0, NULL);
  DsAccessOrder order;
  guint i;

  ds_access_order_init_stream (&order, c->streams[0], 0);
  for (i = 0; i < n; i++)
    {
      gpointer p = ds_memory_resource_allocate_async (pool, c->size, 0, &order, NULL);

      ds_memory_resource_deallocate_async (pool, p, c->size, 0, &order, NULL);
      CHECK (cudaStreamSynchronize (c->streams[0]));
      ds_pool_resource_trim (DS_POOL_RESOURCE (pool));
    }
}

static void
miss_async (gpointer data,
            guint    n)
{
  Ctx *c = data;
  cudaMemPool_t mempool;
  guint i;

  CHECK (cudaDeviceGetDefaultMemPool (&mempool, 0));
  for (i = 0; i < n; i++)
    {
      void *p;

      CHECK (cudaMallocAsync (&p, c->size, c->streams[0]));
      CHECK (cudaFreeAsync (p, c->streams[0]));
      CHECK (cudaStreamSynchronize (c->streams[0]));
      CHECK (cudaMemPoolTrimTo (mempool, 0));
    }
}

/* Producer/consumer: scratchpads filled on one thread, finalized on
 * another (as when a GstBuffer's meta dies downstream). */
typedef struct
{
  GAsyncQueue *queue;
  cudaStream_t stream;
  gboolean     hand_off;  /* FALSE: the producer unrefs, as a baseline */
} Handoff;

static gpointer
consumer_thread (gpointer data)
{
  Handoff *h = data;
  gpointer item;

  while ((item = g_async_queue_pop (h->queue)) != GINT_TO_POINTER (1))
    g_object_unref (item);
  return NULL;
}

static void
handoff_run (gpointer data,
             guint    n)
{
  Handoff *h = data;
  guint i;

  for (i = 0; i < n; i++)
    {
      DsScratchpad *sp = ds_bench_scratchpad_new (h->stream, 0);

      ds_bench_alloc_temps (sp, ds_bench_four_kind, G_N_ELEMENTS (ds_bench_four_kind));
      if (h->hand_off)
        g_async_queue_push (h->queue, sp);
      else
        g_object_unref (sp);
    }
}

static void
handoff_drain (gpointer data,
               guint    n)
{
  Handoff *h = data;

  while (g_async_queue_length (h->queue) > 0)
    g_thread_yield ();
  CHECK (cudaStreamSynchronize (h->stream));
}

int
main (int    argc,
      char **argv)
{
  cudaMemPool_t mempool;
  guint64 threshold = G_MAXUINT64;
  Ctx c = { 0, };
  guint i;

  ds_bench_init (&argc, &argv, "bench-pool: the pool's fence checks and misses, measured");
  ds_bench_require_cuda ();

  CHECK (cudaSetDevice (0));
  for (i = 0; i < N_STREAMS; i++)
    CHECK (cudaStreamCreateWithFlags (&c.streams[i], cudaStreamNonBlocking));
  CHECK (cudaDeviceGetDefaultMemPool (&mempool, 0));
  CHECK (cudaMemPoolSetAttribute (mempool, cudaMemPoolAttrReleaseThreshold, &threshold));

  check_table ("fence checks, four-kind lifecycle, idle stream", four_kind, &c);

  c.size = 1 << 20;
  c.work = 4;
  check_table ("fence checks, device-only lifecycle with a 4-byte memset (stream nearly idle)",
               device_one_stream, &c);

  c.size = 16 << 20;
  c.work = 16 << 20;
  check_table ("fence checks, device-only lifecycle with a 16 MiB memset (stream busy)",
               device_one_stream, &c);

  for (i = 0; i < 2; i++)
    {
      g_autofree char *title = g_strdup_printf ("across streams: %u streams in turn, one 4 MiB device "
                                                "block per lifecycle, %s memset into it",
                                                N_STREAMS, i == 0 ? "a 4-byte" : "a full 4 MiB");
      g_autoptr(DsBenchTable) t = ds_bench_table_new (title);

      c.size = 4 << 20;
      c.work = i == 0 ? 4 : c.size;
      row (t, "ds (take only completed blocks)", device_rotate, &c, 0);
      ds_bench_table_print (t);
    }

  {
    g_autoptr(DsBenchTable) t = ds_bench_table_new ("cache miss: a 4 MiB device block taken and given back, then trim");

    c.size = 4 << 20;
    ds_bench_table_add (t, ds_bench_run ("default device pool (over cudaMalloc): miss + trim", miss_pool, NULL, &c, 1, 200, 1.0));
    ds_bench_table_add (t, ds_bench_run ("cudaMallocAsync + cudaFreeAsync + cudaMemPoolTrimTo", miss_async, NULL, &c, 1, 200, 1.0));
    ds_bench_table_print (t);
  }

  {
    g_autoptr(DsBenchTable) t = ds_bench_table_new ("four-kind lifecycle, scratchpads finalized on another thread");
    Handoff h;
    GThread *consumer;

    h.queue = g_async_queue_new ();
    h.stream = c.streams[0];
    consumer = g_thread_new ("consumer", consumer_thread, &h);
    h.hand_off = FALSE;
    ds_bench_table_add (t, ds_bench_run ("same thread: new, 8 allocs, unref", handoff_run, handoff_drain, &h, 0, 100000, 1.0));
    h.hand_off = TRUE;
    ds_bench_table_add (t, ds_bench_run ("producer thread: new, 8 allocs; consumer unrefs", handoff_run, handoff_drain, &h, 0, 100000, 1.0));
    g_async_queue_push (h.queue, GINT_TO_POINTER (1));
    g_thread_join (consumer);
    g_async_queue_unref (h.queue);
    ds_bench_table_note (t, "the producer's time only; its pools' shards are refilled by the consumer's frees (stolen back)");
    ds_bench_table_print (t);
  }

  sync_all (&c, 0);
  for (i = 0; i < N_STREAMS; i++)
    CHECK (cudaStreamDestroy (c.streams[i]));
  return 0;
}
