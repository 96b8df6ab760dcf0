/* bench-threads.c: lifecycles per second with 1..16 threads
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Needs a GPU. Each thread has its own non-blocking stream and runs the
 * four-kind lifecycle (the one of bench-lifecycle) as fast as it can for a
 * fixed time, after a short warm-up; all threads share the default pools.
 * Each point is the median of five runs, interleaved with the others. The ds lifecycles queue
 * no work on their streams; one more row set adds a cudaStreamSynchronize
 * every 64 lifecycles, as a pipeline that waits for its stream would. Targets: at 8
 * threads, reused scratchpads >= 5x the lifecycles/s of one thread, new
 * ones >= 3x, and host-only new scratchpads at least the rate of plain
 * GObject construction measured here (GLib's own ceiling: g_object_new ()
 * and unref take process-wide locks and reference counts), for a GObject
 * with as many plain properties as DsScratchpad (the GObject baseline; a
 * type with none is printed beside it).
 *
 * More rows say where scaling stops: the host, device, pinned and
 * managed parts of the reused lifecycle each alone (the host part makes
 * no CUDA call and uses no stream), cudaEventQuery and cudaEventRecord
 * (the other calls a fence can be made and asked with), and cuStreamQuery on an idle stream (the call the pools check streams with),
 * which the driver serializes across threads. The queries/lifecycle column
 * counts the completion checks of the pools (cuStreamQuery,
 * cudaEventQuery); the summary prints what the
 * reused four-kind rows ask of the driver's ceiling at 8 threads.
 */

#include "ds-bench.h"

#include <string.h>

/* The driver's cuStreamQuery, which the pools call (ds-cuda.c), reached the
 * same way; cudaStreamQuery where the entry point is missing. */
typedef int (*StreamQueryFunc) (gpointer stream);
static StreamQueryFunc cu_stream_query;

static int
stream_query (cudaStream_t stream)
{
  return cu_stream_query != NULL ? cu_stream_query (stream) : (int) cudaStreamQuery (stream);
}

/* cuStreamWriteValue32: a stream-ordered write of a word the host can
 * read (mapped pinned memory), which would tell a stream's progress with
 * no query (NULL: no entry point; the row then does nothing). */
typedef int (*StreamWriteValueFunc) (gpointer stream, guint64 address, guint32 value, guint flags);
static StreamWriteValueFunc cu_stream_write_value;
static gint write_value_failures;


typedef DsBenchTemp Temp;

typedef enum
{
  MODE_DS_NEW,
  MODE_DS_REUSED,
  MODE_DS_REUSED_SYNC,
  MODE_DS_KEPT,
  MODE_ASYNC,
  MODE_DS_HOST_NEW,
  MODE_GOBJECT,
  MODE_GOBJECT_PROPS,
  MODE_DS_HOST_REUSED,
  MODE_DS_DEVICE_REUSED,
  MODE_DS_PINNED_REUSED,
  MODE_DS_MANAGED_REUSED,
  MODE_STREAM_QUERY,
  MODE_EVENT_QUERY,
  MODE_EVENT_RECORD,
  MODE_WRITE_VALUE,
  N_MODES,
} Mode;

static const char * const mode_names[N_MODES] = {
  "ds new scratchpad",
  "ds reused scratchpad",
  "ds reused scratchpad, cudaStreamSynchronize every 64 lifecycles",
  "ds reused scratchpad with keep-blocks (opt-in: host and device blocks stay)",
  "cudaMallocAsync x 8",
  "ds new scratchpad, host only (8 host allocs)",
  "baseline: plain GObject new + unref",
  "baseline: GObject with 13 plain properties (as DsScratchpad) new + unref",
  "ds reused scratchpad, host part only (16 + 48 KiB host; no CUDA call, no stream)",
  "ds reused scratchpad, device part only (256 + 64 KiB device)",
  "ds reused scratchpad, pinned part only (16 + 48 KiB pinned)",
  "ds reused scratchpad, managed part only (16 + 4 KiB managed)",
  "cuStreamQuery on the thread's idle stream (the driver's own ceiling)",
  "cudaEventQuery of a completed event of the thread's (another way to ask)",
  "cudaEventRecord on the thread's idle stream (what a fence costs to make)",
  "cuStreamWriteValue32 to a mapped word on the thread's idle stream, and a read of it",
};

/* The thread's event, for the event rows, and its mapped word (host
 * address, device address) for the write-value row. */
static __thread cudaEvent_t thread_event;
static __thread volatile guint32 *thread_word;
static __thread guint64 thread_word_device;
static __thread guint32 thread_word_value;

/* One lifecycle of @mode on @stream; @reused is the thread's reused
 * scratchpad. The GObject ceilings: DS_TYPE_BENCH_PLAIN_PROPS, a final
 * type with DsScratchpad's 13 plain properties (the GObject baseline: its
 * construction also freezes and thaws the notify queue under GLib's
 * process-wide lock), and DS_TYPE_BENCH_PLAIN, one with none. */
static inline void
lifecycle (Mode          mode,
           cudaStream_t  stream,
           DsScratchpad *reused)
{
  guint k;

  switch (mode)
    {
    case MODE_DS_NEW:
      {
        DsScratchpad *sp = ds_bench_scratchpad_new (stream, 0);

        ds_bench_alloc_temps (sp, ds_bench_four_kind, G_N_ELEMENTS (ds_bench_four_kind));
        g_object_unref (sp);
      }
      break;

    case MODE_DS_REUSED:
    case MODE_DS_REUSED_SYNC:
    case MODE_DS_KEPT:
      ds_bench_alloc_temps (reused, ds_bench_four_kind, G_N_ELEMENTS (ds_bench_four_kind));
      ds_scratchpad_release (reused);
      break;

    case MODE_DS_HOST_NEW:
      {
        DsScratchpad *sp = ds_scratchpad_new (NULL);

        for (k = 0; k < G_N_ELEMENTS (ds_bench_four_kind); k++)
          ds_bench_sink = ds_scratchpad_alloc (sp, DS_MEMORY_KIND_HOST, ds_bench_four_kind[k].size, 0, NULL);
        g_object_unref (sp);
      }
      break;

    case MODE_GOBJECT:
      g_object_unref (g_object_new (DS_TYPE_BENCH_PLAIN, NULL));
      break;

    case MODE_GOBJECT_PROPS:
      g_object_unref (g_object_new (DS_TYPE_BENCH_PLAIN_PROPS, NULL));
      break;

    case MODE_DS_HOST_REUSED:
    case MODE_DS_DEVICE_REUSED:
    case MODE_DS_PINNED_REUSED:
    case MODE_DS_MANAGED_REUSED:
      {
        DsMemoryKind kind = mode == MODE_DS_HOST_REUSED ? DS_MEMORY_KIND_HOST :
                            mode == MODE_DS_DEVICE_REUSED ? DS_MEMORY_KIND_DEVICE :
                            mode == MODE_DS_PINNED_REUSED ? DS_MEMORY_KIND_PINNED :
                            DS_MEMORY_KIND_MANAGED;

        /* The four-kind lifecycle's allocations of that kind, made as it
         * makes them (ds_bench_alloc_temps ()). */
        for (k = 0; k < G_N_ELEMENTS (ds_bench_four_kind); k++)
          if (ds_bench_four_kind[k].kind == kind)
            ds_bench_alloc_temps (reused, &ds_bench_four_kind[k], 1);
        ds_scratchpad_release (reused);
      }
      break;

    case MODE_STREAM_QUERY:
      (void) stream_query (stream);
      break;

    case MODE_EVENT_QUERY:
      (void) cudaEventQuery (thread_event);
      break;

    case MODE_EVENT_RECORD:
      CHECK (cudaEventRecord (thread_event, stream));
      break;

    case MODE_WRITE_VALUE:
      if (thread_word != NULL &&
          cu_stream_write_value (stream, thread_word_device, ++thread_word_value, 0) != 0)
        g_atomic_int_inc (&write_value_failures);
      if (thread_word != NULL)
        ds_bench_sink = GUINT_TO_POINTER (*thread_word);
      break;

    case MODE_ASYNC:
    default:
      {
        void *ptrs[8];

        for (k = 0; k < G_N_ELEMENTS (ds_bench_four_kind); k++)
          CHECK (cudaMallocAsync (&ptrs[k], ds_bench_four_kind[k].size, stream));
        for (k = G_N_ELEMENTS (ds_bench_four_kind); k-- > 0;)
          CHECK (cudaFreeAsync (ptrs[k], stream));
      }
      break;
    }
}

/* Keep the stream's queue short: cudaMallocAsync queues its frees. ds
 * queues nothing here (no event in steady state), so its rows measure ds
 * alone; MODE_DS_REUSED_SYNC shows what synchronizing an empty stream
 * adds (a driver call that does not scale). */
static inline void
maybe_sync (Mode          mode,
            cudaStream_t  stream,
            guint64       n)
{
  if (n % 64 == 0 &&
      (mode == MODE_ASYNC || mode == MODE_DS_REUSED_SYNC || mode == MODE_EVENT_RECORD ||
       mode == MODE_WRITE_VALUE))
    CHECK (cudaStreamSynchronize (stream));
}

/* One thread, on its own stream, doing lifecycles of @data (a Mode): a
 * warm-up of WARM_UP lifecycles (or WARM_UP_MS, whichever ends first)
 * first: its stream's first release, its shard's first blocks and the
 * learned block sizes are set-up, not the steady state this measures.
 * Then as many as it can until told to stop. */
#define WARM_UP    1000
#define WARM_UP_MS 20

static guint64
worker (DsBenchWorker *w,
        gpointer       data)
{
  Mode mode = GPOINTER_TO_INT (data);
  cudaStream_t stream;
  DsAccessOrder order;
  DsScratchpad *reused;
  guint64 lifecycles = 0;
  gint64 warm_up_end;

  CHECK (cudaSetDevice (0));
  CHECK (cudaStreamCreateWithFlags (&stream, cudaStreamNonBlocking));
  CHECK (cudaEventCreateWithFlags (&thread_event, cudaEventDisableTiming));
  CHECK (cudaEventRecord (thread_event, stream));
  if (mode == MODE_WRITE_VALUE && cu_stream_write_value != NULL)
    {
      void *host, *device;

      CHECK (cudaHostAlloc (&host, 64, cudaHostAllocMapped));
      CHECK (cudaHostGetDevicePointer (&device, host, 0));
      memset (host, 0, 64);
      thread_word = host;
      thread_word_device = (guint64) (guintptr) device;
    }
  ds_access_order_init_stream (&order, stream, 0);
  reused = ds_scratchpad_new (&order);
  if (mode == MODE_DS_KEPT)
    ds_scratchpad_set_keep_blocks (reused, TRUE);

  warm_up_end = ds_bench_now_ns () + WARM_UP_MS * G_GINT64_CONSTANT (1000000);
  for (guint i = 1; i <= WARM_UP; i++)
    {
      lifecycle (mode, stream, reused);
      maybe_sync (mode, stream, i);
      if (i % 16 == 0 && ds_bench_now_ns () > warm_up_end)
        break;
    }
  CHECK (cudaStreamSynchronize (stream));

  ds_bench_worker_wait (w);

  while (ds_bench_worker_running (w))
    {
      lifecycle (mode, stream, reused);
      maybe_sync (mode, stream, ++lifecycles);
    }

  g_object_unref (reused);
  CHECK (cudaStreamSynchronize (stream));
  CHECK (cudaEventDestroy (thread_event));
  if (thread_word != NULL)
    {
      if (*thread_word != thread_word_value)
        g_atomic_int_inc (&write_value_failures);
      CHECK (cudaFreeHost ((void *) thread_word));
      thread_word = NULL;
    }
  CHECK (cudaStreamDestroy (stream));
  return lifecycles;
}

static int
compare_doubles (gconstpointer a,
                 gconstpointer b)
{
  double x = *(const double *) a, y = *(const double *) b;

  return (x > y) - (x < y);
}

/* The driver's @name of CUDA 12's ABI, or NULL. */
static gpointer
driver_entry_point (const char *name)
{
  enum cudaDriverEntryPointQueryResult status;
  void *fn = NULL;

  if (cudaGetDriverEntryPointByVersion (name, &fn, 12000, cudaEnableDefault, &status) != cudaSuccess ||
      status != cudaDriverEntryPointSuccess)
    fn = NULL;
  (void) cudaGetLastError ();

  return fn;
}

int
main (int    argc,
      char **argv)
{
  static const guint counts[] = { 1, 2, 4, 8, 16 };
  /* Every (mode, threads) point is measured ROUNDS times, the rounds
   * interleaved (all points once, then again), and reported by its
   * median: the VM this runs on has had one 8-thread point at 178, 431
   * and 462 ns per lifecycle in three runs minutes apart. */
  enum { N_COUNTS = G_N_ELEMENTS (counts), ROUNDS = 5 };
  static double samples[N_MODES][N_COUNTS][ROUNDS];
  static double events[N_MODES][N_COUNTS], queries[N_MODES][N_COUNTS], upstream[N_MODES][N_COUNTS];
  double rates[N_MODES][N_COUNTS];
  double seconds;
  cudaMemPool_t mempool;
  guint64 threshold = G_MAXUINT64;
  Mode mode;
  guint i, r;

  ds_bench_init (&argc, &argv, "bench-threads: four-kind lifecycles per second, 1..16 threads, one stream each");
  g_type_ensure (DS_TYPE_BENCH_PLAIN);
  g_type_ensure (DS_TYPE_BENCH_PLAIN_PROPS);
  ds_bench_require_cuda ();

  seconds = 0.2 * ds_bench_time_scale ();

  CHECK (cudaSetDevice (0));
  cu_stream_query = (StreamQueryFunc) driver_entry_point ("cuStreamQuery");
  if (cu_stream_query == NULL)
    printf ("# cuStreamQuery: no entry point; its row times cudaStreamQuery\n");
  /* Stream memory operations are always there since CUDA 12 (the v2
   * API); a failed call is counted. */
  cu_stream_write_value = (StreamWriteValueFunc) driver_entry_point ("cuStreamWriteValue32");
  if (cu_stream_write_value == NULL)
    printf ("# cuStreamWriteValue32: not available here; its row does nothing\n");
  CHECK (cudaDeviceGetDefaultMemPool (&mempool, 0));
  CHECK (cudaMemPoolSetAttribute (mempool, cudaMemPoolAttrReleaseThreshold, &threshold));

  /* Warm every pool and shard. */
  ds_bench_threads_rate (16, worker, GINT_TO_POINTER (MODE_DS_NEW), 0.2, NULL);
  ds_bench_threads_rate (16, worker, GINT_TO_POINTER (MODE_ASYNC), 0.2, NULL);

  printf ("# each point: the median of %d runs of %.2f s, interleaved; each thread "
          "first runs %d lifecycles (at most %d ms) untimed\n", ROUNDS, seconds, WARM_UP,
          WARM_UP_MS);
  for (r = 0; r < ROUNDS; r++)
    for (mode = 0; mode < N_MODES; mode++)
      for (i = 0; i < N_COUNTS; i++)
        {
          DsPoolStats before, d;
          guint64 lifecycles = 0;

          ds_bench_default_pool_stats (&before);
          samples[mode][i][r] = ds_bench_threads_rate (counts[i], worker, GINT_TO_POINTER (mode),
                                                       seconds, &lifecycles);
          ds_bench_default_pool_stats_since (&before, &d);
          events[mode][i] += (double) d.events_recorded / MAX (1, lifecycles) / ROUNDS;
          queries[mode][i] += (double) d.event_queries / MAX (1, lifecycles) / ROUNDS;
          upstream[mode][i] += (double) ds_bench_pool_upstream_calls (&d) / MAX (1, lifecycles) / ROUNDS;
        }

  for (mode = 0; mode < N_MODES; mode++)
    {
      printf ("\n== %s: lifecycles/s (all threads) ==\n", mode_names[mode]);
      printf ("%8s %14s %10s %14s %14s %14s %18s %18s %18s\n", "threads", "lifecycles/s", "speed-up",
              "us/lifecycle", "slowest run", "fastest run", "events/lifecycle", "queries/lifecycle",
              "upstream/lifecycle");
      for (i = 0; i < N_COUNTS; i++)
        {
          double *s = samples[mode][i];

          qsort (s, ROUNDS, sizeof *s, compare_doubles);
          rates[mode][i] = s[ROUNDS / 2];
          printf ("%8u %14.0f %9.2fx %14.3f %14.0f %14.0f %18.3f %18.3f %18.4f\n", counts[i],
                  rates[mode][i], rates[mode][i] / rates[mode][0], 1e6 * counts[i] / rates[mode][i],
                  s[0], s[ROUNDS - 1], events[mode][i], queries[mode][i], upstream[mode][i]);
        }
    }

  /* What 8 threads could reach if nothing were shared: the sum of the
   * single-thread rates of the 8 CPUs they run on (the CPUs differ). */
  if (ds_bench_n_cpus () >= 8)
    {
      double ideal = 0;

      printf ("\n# single-thread ds reused rate on each of the 8 CPUs the 8-thread runs use:");
      for (i = 0; i < 8; i++)
        {
          int cpu = ds_bench_set_worker_base (i);
          double rate = ds_bench_threads_rate (1, worker, GINT_TO_POINTER (MODE_DS_REUSED),
                                               seconds, NULL);

          printf (" %d:%.2fM", cpu, rate / 1e6);
          ideal += rate;
        }
      ds_bench_set_worker_base (0);
      printf ("\n  ds reused at 8 threads: %.0f%% of the sum of those (%.2f M/s), "
              "%.2fx the first CPU's\n", 100 * rates[MODE_DS_REUSED][3] / ideal, ideal / 1e6,
              rates[MODE_DS_REUSED][3] / rates[MODE_DS_REUSED][0]);
    }

  printf ("\n");
  for (mode = 0; mode < N_MODES; mode++)
    printf ("  %s at 8 threads: %.2fx one thread; at 16: %.2fx\n", mode_names[mode],
            rates[mode][3] / rates[mode][0], rates[mode][4] / rates[mode][0]);
  /* What the GPU kinds' completion checks ask of the driver: it serializes
   * cuStreamQuery across threads (its own row), so a reused lifecycle
   * that queries scales only as far as the driver lets it, while one that
   * does not (host only, device only once nobody else wants its blocks)
   * scales with the CPUs. */
  printf ("  driver ceiling: cuStreamQuery %.2f M/s at 1 thread, %.2f M/s at 8 (all threads); "
          "ds reused at 8 threads asks %.2f M/s of it (%.3f queries/lifecycle), %.0f%%\n",
          rates[MODE_STREAM_QUERY][0] / 1e6, rates[MODE_STREAM_QUERY][3] / 1e6,
          queries[MODE_DS_REUSED][3] * rates[MODE_DS_REUSED][3] / 1e6, queries[MODE_DS_REUSED][3],
          100 * queries[MODE_DS_REUSED][3] * rates[MODE_DS_REUSED][3] / rates[MODE_STREAM_QUERY][3]);
  printf ("  the other fence calls, all threads: cudaEventQuery %.2f M/s at 1 thread, %.2f at 8; "
          "cudaEventRecord %.2f and %.2f\n",
          rates[MODE_EVENT_QUERY][0] / 1e6, rates[MODE_EVENT_QUERY][3] / 1e6,
          rates[MODE_EVENT_RECORD][0] / 1e6, rates[MODE_EVENT_RECORD][3] / 1e6);
  printf ("  cuStreamWriteValue32 (a stream-ordered progress word read by the host, no query): "
          "%.2f M/s at 1 thread, %.2f at 8; %d failed or wrong\n",
          rates[MODE_WRITE_VALUE][0] / 1e6, rates[MODE_WRITE_VALUE][3] / 1e6,
          g_atomic_int_get (&write_value_failures));
  printf ("  ds new vs cudaMallocAsync at 8 threads: %.2fx the lifecycles/s\n",
          rates[MODE_DS_NEW][3] / rates[MODE_ASYNC][3]);
  ds_bench_print_target ("8-thread speed-up of ds reused", rates[MODE_DS_REUSED][3] / rates[MODE_DS_REUSED][0],
                         ">=", 5, "x");
  ds_bench_print_target ("8-thread speed-up of ds reused with keep-blocks (opt-in)",
                         rates[MODE_DS_KEPT][3] / rates[MODE_DS_KEPT][0], ">=", 5, "x");
  ds_bench_print_target ("8-thread speed-up of ds new", rates[MODE_DS_NEW][3] / rates[MODE_DS_NEW][0],
                         ">=", 3, "x");
  ds_bench_print_target ("host-only ds new at 8 threads vs new + unref of a GObject with the same "
                         "13 plain properties at 8 threads (the GObject baseline; lifecycles/s over "
                         "objects/s, same run)",
                         rates[MODE_DS_HOST_NEW][3] / rates[MODE_GOBJECT_PROPS][3], ">=", 1, "x");
  printf ("  (GObject ceiling here: %.0f objects/s at 1 thread, %.0f at 8; stricter, a type "
          "with no properties: %.0f and %.0f, host-only ds new %.2fx that at 8 threads)\n",
          rates[MODE_GOBJECT_PROPS][0], rates[MODE_GOBJECT_PROPS][3],
          rates[MODE_GOBJECT][0], rates[MODE_GOBJECT][3],
          rates[MODE_DS_HOST_NEW][3] / rates[MODE_GOBJECT][3]);
  /* A new scratchpad per lifecycle makes and drops one GObject: 8 threads
   * of them cannot pass GLib's 8-thread rate for such objects. */
  printf ("  bound on the new speed-up: 8 threads of new scratchpads reach at most the 8-thread rate "
          "of the 13-property GObject, %.2fx ds new's 1-thread rate here; ds new at 8 threads ran "
          "at %.2fx that GObject rate\n",
          rates[MODE_GOBJECT_PROPS][3] / rates[MODE_DS_NEW][0],
          rates[MODE_DS_NEW][3] / rates[MODE_GOBJECT_PROPS][3]);

  {
    DsPoolStats s;

    ds_bench_default_pool_stats (&s);
    printf ("\n# default pools at exit: held %" G_GUINT64_FORMAT " B, peak demand (sum) %"
            G_GUINT64_FORMAT " B, hits %" G_GUINT64_FORMAT ", misses %" G_GUINT64_FORMAT
            "\n", s.bytes_held, s.peak_bytes_in_use, s.cache_hits, s.cache_misses);
  }

  return 0;
}
