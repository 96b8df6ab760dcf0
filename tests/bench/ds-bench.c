/* ds-bench.c: timing, tables and skips for the ds benchmarks
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

/* sched_setaffinity () and the CPU_* macros. */
#define _GNU_SOURCE

#include "ds-bench.h"

const DsBenchTemp ds_bench_four_kind[8] = {
  { DS_MEMORY_KIND_HOST, 16 << 10 },
  { DS_MEMORY_KIND_PINNED, 16 << 10 },
  { DS_MEMORY_KIND_DEVICE, 256 << 10 },
  { DS_MEMORY_KIND_MANAGED, 16 << 10 },
  { DS_MEMORY_KIND_HOST, 48 << 10 },
  { DS_MEMORY_KIND_PINNED, 48 << 10 },
  { DS_MEMORY_KIND_DEVICE, 64 << 10 },
  { DS_MEMORY_KIND_MANAGED, 4 << 10 },
};

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <errno.h>
#ifdef __linux__
# include <sched.h>
#endif

_Thread_local gpointer volatile ds_bench_sink;
const char *ds_bench_current = "(set-up)";

#if HAVE_CUDA
void
ds_bench_cuda_failed (const char  *file,
                      int          line,
                      const char  *call,
                      cudaError_t  result)
{
  int device = -1;
  cudaError_t got = cudaGetDevice (&device);

  g_printerr ("%s:%d: %s: %s (%s), during \"%s\"; cudaGetDevice: %d (%s)\n", file, line, call,
              cudaGetErrorString (result), cudaGetErrorName (result), ds_bench_current, device,
              cudaGetErrorName (got));
  /* Whether the thread's context was what failed: the device's primary
   * context made current again, the same kind of call on the legacy stream. */
  if (device >= 0 && cudaSetDevice (device) == cudaSuccess)
    g_printerr ("after cudaSetDevice (%d): cudaStreamSynchronize (0): %s\n", device,
                cudaGetErrorName (cudaStreamSynchronize (0)));
  g_error ("%s:%d: %s: %s", file, line, call, cudaGetErrorString (result));
}
#endif

static double time_scale = 1.0;

#ifdef __linux__
/* The CPUs the process may use, as it started; bench_cpus[0] runs the
 * main thread (see pin_main_thread ()). */
static int bench_cpus[CPU_SETSIZE];
static int n_bench_cpus;
/* Worker i of the thread benchmarks runs on bench_cpus[(worker_base + i) %
 * n_bench_cpus]. */
static guint worker_base;

static gboolean
pin_to (int cpu)
{
  cpu_set_t set;

  CPU_ZERO (&set);
  CPU_SET (cpu, &set);
  return sched_setaffinity (0, sizeof set, &set) == 0;
}
#endif

/* Pins the main thread to one CPU: on the H200 VM an unpinned
 * single-thread case moved between two speeds from run to run (a reused
 * four-kind lifecycle at 0.37 or 0.72 us), as the scheduler moved it
 * between CPUs. Pinning does not make the CPUs alike: their speeds differ
 * up to 2x and change within minutes (a reused device-only lifecycle
 * pinned to each CPU in turn: 88 to 174 ns; a CPU fast in one probe was
 * among the slowest a minute later, so picking the fastest CPU at start
 * was tried and dropped). What pinning buys is that ds and every baseline
 * of a run share one CPU. The CPU is the second one the process may use
 * (the first takes most interrupts), or DS_BENCH_CPU; DS_BENCH_CPU=none
 * leaves it unpinned. Called after CUDA is initialized, so that the
 * driver's own threads keep every CPU. */
static void
pin_main_thread (void)
{
#ifdef __linux__
  const char *env = g_getenv ("DS_BENCH_CPU");
  cpu_set_t set;
  int cpu;

  if (sched_getaffinity (0, sizeof set, &set) != 0)
    return;
  for (cpu = 0; cpu < CPU_SETSIZE; cpu++)
    if (CPU_ISSET (cpu, &set))
      bench_cpus[n_bench_cpus++] = cpu;
  if (n_bench_cpus == 0 || g_strcmp0 (env, "none") == 0)
    {
      n_bench_cpus = 0;
      printf ("# not pinned to a CPU\n");
      return;
    }

  cpu = bench_cpus[MIN (1, n_bench_cpus - 1)];
  if (env != NULL)
    cpu = atoi (env);
  /* The main thread's CPU first: worker 0 of ds_bench_threads_rate () runs
   * there while the main thread sleeps. */
  for (int i = 0; i < n_bench_cpus; i++)
    if (bench_cpus[i] == cpu)
      {
        bench_cpus[i] = bench_cpus[0];
        bench_cpus[0] = cpu;
      }

  if (pin_to (cpu))
    printf ("# main thread pinned to CPU %d (DS_BENCH_CPU=N or none to change)\n", cpu);
  else
    printf ("# could not pin to CPU %d: %s\n", cpu, g_strerror (errno));
#endif
}

void
ds_bench_pin_worker (guint index)
{
#ifdef __linux__
  if (n_bench_cpus == 0)
    return;
  (void) pin_to (bench_cpus[(worker_base + index) % n_bench_cpus]);
#endif
}

guint
ds_bench_n_cpus (void)
{
#ifdef __linux__
  return n_bench_cpus;
#else
  return 0;
#endif
}

int
ds_bench_set_worker_base (guint base)
{
#ifdef __linux__
  if (n_bench_cpus == 0)
    return -1;
  worker_base = base % n_bench_cpus;
  return bench_cpus[worker_base];
#else
  return -1;
#endif
}

void
ds_bench_init (int          *argc,
               char       ***argv,
               const char   *what)
{
  const char *scale = g_getenv ("DS_BENCH_TIME");

  if (scale != NULL)
    {
      double s = g_ascii_strtod (scale, NULL);

      if (s > 0)
        time_scale = s;
    }

  /* Unbuffered: meson shows the output even when a run is cut short. */
  setvbuf (stdout, NULL, _IOLBF, 0);
  printf ("# %s\n", what);
  printf ("# ds %s, GLib %u.%u.%u, %u CPU(s), DS_BENCH_TIME=%.2f\n",
          DS_VERSION_S, glib_major_version, glib_minor_version,
          glib_micro_version, g_get_num_processors (), time_scale);
#if HAVE_CUDA
  {
    int count = 0, runtime = 0, driver = 0;
    struct cudaDeviceProp prop;

    if (cudaGetDeviceCount (&count) == cudaSuccess && count > 0 &&
        cudaGetDeviceProperties (&prop, 0) == cudaSuccess)
      {
        (void) cudaRuntimeGetVersion (&runtime);
        (void) cudaDriverGetVersion (&driver);
        printf ("# GPU 0: %s (sm_%d%d), %d device(s), runtime %d, driver %d\n",
                prop.name, prop.major, prop.minor, count, runtime, driver);
      }
    (void) cudaGetLastError ();
  }
#endif

  pin_main_thread ();
}

double
ds_bench_time_scale (void)
{
  return time_scale;
}

gint64
ds_bench_now_ns (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (gint64) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int
compare_double (const void *a,
                const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;

  return x < y ? -1 : x > y ? 1 : 0;
}

/* One case being timed: ds_bench_run () times one from start to end;
 * a table's cases (ds_bench_table_add_case ()) are timed a batch each in
 * turn. */
typedef struct
{
  DsBenchResult *result;
  DsBenchFunc    func;
  DsBenchFunc    between;
  gpointer       data;
  guint          batch;
  guint          max_batches;
  gint64         budget;    /* ns of timed batches and what runs between them */
  gint64         spent;
  GArray        *samples;   /* double: ns per iteration of each batch */
} BenchCase;

static BenchCase *
bench_case_new (const char  *name,
                DsBenchFunc  func,
                DsBenchFunc  between,
                gpointer     data,
                guint        batch,
                guint        max_batches,
                double       seconds)
{
  BenchCase *bc = g_new0 (BenchCase, 1);

  bc->result = g_new0 (DsBenchResult, 1);
  bc->result->name = g_strdup (name);
  bc->func = func;
  bc->between = between;
  bc->data = data;
  bc->batch = batch;
  bc->max_batches = max_batches;
  bc->budget = (gint64) (seconds * time_scale * 1e9);
  bc->samples = g_array_new (FALSE, FALSE, sizeof (double));

  return bc;
}

/* Warm-up (also sizes the batch when asked to). */
static void
bench_case_warm (BenchCase *bc)
{
  DsBenchResult *result = bc->result;
  gint64 t0, t1;

  ds_bench_current = result->name;
  t0 = ds_bench_now_ns ();
  bc->func (bc->data, 1);
  result->total = 1;
  if (bc->between != NULL)
    bc->between (bc->data, 1);
  t1 = ds_bench_now_ns ();
  if (bc->batch == 0)
    {
      gint64 warm_until;

      bc->func (bc->data, 16);
      if (bc->between != NULL)
        bc->between (bc->data, 16);
      t0 = ds_bench_now_ns ();
      bc->func (bc->data, 16);
      t1 = ds_bench_now_ns ();
      result->total += 32;
      if (bc->between != NULL)
        bc->between (bc->data, 16);
      /* Batches of about 200 us: what runs between them (a stream
       * synchronization) leaves caches colder, and a short batch would
       * time that more than the case. */
      bc->batch = (guint) CLAMP (200000.0 * 16 / MAX (1.0, (double) (t1 - t0)), 1, 65536);

      /* Warm for about 20 ms, so that the first case of a table is not
       * timed colder than the others. */
      warm_until = ds_bench_now_ns () + 20 * 1000 * 1000;
      while (ds_bench_now_ns () < warm_until)
        {
          bc->func (bc->data, bc->batch);
          result->total += bc->batch;
          if (bc->between != NULL)
            bc->between (bc->data, bc->batch);
        }
    }
  else
    {
      for (guint i = 0; i < 3 && (t1 - t0) < bc->budget / 20; i++)
        {
          bc->func (bc->data, bc->batch);
          result->total += bc->batch;
          if (bc->between != NULL)
            bc->between (bc->data, bc->batch);
        }
    }
}

/* Whether @bc has timed enough: @max_batches batches, or at least 5 and
 * its time budget. */
static gboolean
bench_case_done (const BenchCase *bc)
{
  return bc->samples->len >= bc->max_batches ||
         (bc->samples->len >= 5 && bc->spent > bc->budget);
}

/* Times one batch. */
static void
bench_case_step (BenchCase *bc)
{
  double per_iteration;
  gint64 t0, t1, t2;

  ds_bench_current = bc->result->name;
  t0 = ds_bench_now_ns ();
  bc->func (bc->data, bc->batch);
  t1 = ds_bench_now_ns ();
  if (bc->between != NULL)
    bc->between (bc->data, bc->batch);
  t2 = ds_bench_now_ns ();

  per_iteration = (double) (t1 - t0) / bc->batch;
  g_array_append_val (bc->samples, per_iteration);
  bc->result->iterations += bc->batch;
  bc->result->total += bc->batch;
  bc->spent += t2 - t0;
}

/* Fills in the result's median and p90, frees @bc and returns the result. */
static DsBenchResult *
bench_case_finish (BenchCase *bc)
{
  DsBenchResult *result = bc->result;
  GArray *samples = bc->samples;

  qsort (samples->data, samples->len, sizeof (double), compare_double);
  result->batch = bc->batch;
  result->median_ns = g_array_index (samples, double, samples->len / 2);
  result->p90_ns = g_array_index (samples, double, MIN (samples->len - 1, samples->len * 9 / 10));
  g_array_free (samples, TRUE);
  g_free (bc);

  return result;
}

DsBenchResult *
ds_bench_run (const char  *name,
              DsBenchFunc  func,
              DsBenchFunc  between,
              gpointer     data,
              guint        batch,
              guint        max_batches,
              double       seconds)
{
  BenchCase *bc = bench_case_new (name, func, between, data, batch, max_batches, seconds);

  bench_case_warm (bc);
  while (!bench_case_done (bc))
    bench_case_step (bc);

  return bench_case_finish (bc);
}

/* Tables ------------------------------------------------------------------ */

static void
result_free (gpointer data)
{
  DsBenchResult *result = data;

  g_free (result->name);
  g_free (result->note);
  g_free (result);
}

DsBenchTable *
ds_bench_table_new (const char *title)
{
  DsBenchTable *table = g_new0 (DsBenchTable, 1);

  table->title = g_strdup (title);
  table->rows = g_ptr_array_new_with_free_func (result_free);
  table->pending = g_ptr_array_new ();
  table->lines = g_ptr_array_new_with_free_func (g_free);
  return table;
}

DsBenchResult *
ds_bench_table_add (DsBenchTable  *table,
                    DsBenchResult *result)
{
  g_ptr_array_add (table->rows, result);
  return result;
}

DsBenchResult *
ds_bench_table_add_case (DsBenchTable *table,
                         const char   *name,
                         DsBenchFunc   func,
                         DsBenchFunc   between,
                         gpointer      data,
                         guint         batch,
                         guint         max_batches,
                         double        seconds)
{
  BenchCase *bc = bench_case_new (name, func, between, data, batch, max_batches, seconds);

  g_ptr_array_add (table->rows, bc->result);
  g_ptr_array_add (table->pending, bc);
  return bc->result;
}

/* How long a case of a table runs in one turn (ds_bench_table_measure ()). */
#define SLICE_NS (2 * G_GINT64_CONSTANT (1000000))

void
ds_bench_table_measure (DsBenchTable *table)
{
  GPtrArray *cases = table->pending;
  gboolean busy = TRUE;

  for (guint i = 0; i < cases->len; i++)
    bench_case_warm (cases->pdata[i]);

  /* Each case in turn, for a slice of about 2 ms (at least one batch),
   * until each has timed enough: a machine that speeds up or slows down
   * over the seconds a table takes does so for every case alike, while
   * within a slice a case runs back to back, warm, as it would alone
   * (one batch per turn measured single-lifecycle cases after another
   * case's lifecycle, colder: 1.04x between two of them became 1.1-1.4x). */
  while (busy)
    {
      busy = FALSE;
      for (guint i = 0; i < cases->len; i++)
        {
          BenchCase *bc = cases->pdata[i];
          gint64 slice_end = ds_bench_now_ns () + SLICE_NS;

          while (!bench_case_done (bc))
            {
              bench_case_step (bc);
              busy = TRUE;
              if (ds_bench_now_ns () >= slice_end)
                break;
            }
        }
    }

  for (guint i = 0; i < cases->len; i++)
    bench_case_finish (cases->pdata[i]);
  g_ptr_array_set_size (cases, 0);
}

void
ds_bench_table_note (DsBenchTable *table,
                     const char   *format,
                     ...)
{
  va_list args;

  va_start (args, format);
  g_ptr_array_add (table->lines, g_strdup_vprintf (format, args));
  va_end (args);
}

char *
ds_bench_format_time (double ns)
{
  if (ns < 1000)
    return g_strdup_printf ("%.1f ns", ns);
  if (ns < 1e6)
    return g_strdup_printf ("%.3f us", ns / 1e3);
  if (ns < 1e9)
    return g_strdup_printf ("%.3f ms", ns / 1e6);
  return g_strdup_printf ("%.3f s", ns / 1e9);
}

void
ds_bench_table_print (DsBenchTable *table)
{
  DsBenchResult *ref = table->rows->len > 0 ? table->rows->pdata[0] : NULL;
  guint i, width = 20;

  for (i = 0; i < table->rows->len; i++)
    width = MAX (width, strlen (((DsBenchResult *) table->rows->pdata[i])->name));

  printf ("\n== %s ==\n", table->title);
  printf ("%-*s %12s %12s %10s %12s\n", width, "case", "median", "p90",
          "iters", "vs first");
  for (i = 0; i < table->rows->len; i++)
    {
      DsBenchResult *r = table->rows->pdata[i];
      g_autofree char *median = ds_bench_format_time (r->median_ns);
      g_autofree char *p90 = ds_bench_format_time (r->p90_ns);

      printf ("%-*s %12s %12s %10" G_GUINT64_FORMAT " %11.2fx\n", width, r->name,
              median, p90, r->iterations, r->median_ns / ref->median_ns);
      if (r->note != NULL)
        printf ("%-*s   %s\n", width, "", r->note);
    }
  for (i = 0; i < table->lines->len; i++)
    printf ("  %s\n", (char *) table->lines->pdata[i]);
  fflush (stdout);
}

void
ds_bench_table_free (DsBenchTable *table)
{
  g_warn_if_fail (table->pending->len == 0);
  g_ptr_array_free (table->pending, TRUE);
  g_free (table->title);
  g_ptr_array_free (table->rows, TRUE);
  g_ptr_array_free (table->lines, TRUE);
  g_free (table);
}

static char *
format_target (const char *what,
               double      value,
               const char *op,
               double      limit,
               const char *unit)
{
  gboolean met = g_str_equal (op, "<=") ? value <= limit : value >= limit;

  return g_strdup_printf ("target %s: %.3g %s %s %.3g %s -> %s",
                          what, value, unit, op, limit, unit,
                          met ? "MET" : "MISSED");
}

void
ds_bench_table_target (DsBenchTable *table,
                       const char   *what,
                       double        value,
                       const char   *op,
                       double        limit,
                       const char   *unit)
{
  g_autofree char *line = format_target (what, value, op, limit, unit);

  ds_bench_table_note (table, "%s", line);
}

void
ds_bench_print_target (const char *what,
                       double      value,
                       const char *op,
                       double      limit,
                       const char *unit)
{
  g_autofree char *line = format_target (what, value, op, limit, unit);

  printf ("  %s\n", line);
}

void
ds_bench_require_cuda (void)
{
#if HAVE_CUDA
  int count = 0;
  cudaError_t result = cudaGetDeviceCount (&count);

  if (result == cudaSuccess && count > 0)
    return;

  printf ("SKIP: no GPU on this machine: %s (%s)\n",
          result != cudaSuccess ? cudaGetErrorName (result) : "0 devices",
          result != cudaSuccess ? cudaGetErrorString (result) : "the driver sees none");
#else
  printf ("SKIP: %s\n", DS_NO_CUDA_REASON);
#endif
  exit (DS_BENCH_SKIP);
}

void
ds_bench_default_pool_stats (DsPoolStats *total)
{
  DsMemoryKind kind;

  memset (total, 0, sizeof *total);
  for (kind = DS_MEMORY_KIND_HOST; kind <= DS_MEMORY_KIND_MANAGED; kind++)
    {
      DsMemoryResource *res = ds_memory_resource_get_default (kind, kind == DS_MEMORY_KIND_HOST ? -1 : 0, NULL);
      DsPoolStats s;

      if (res == NULL || !DS_IS_POOL_RESOURCE (res))
        continue;

      ds_pool_resource_get_stats (DS_POOL_RESOURCE (res), &s);
      total->upstream_allocations += s.upstream_allocations;
      total->upstream_deallocations += s.upstream_deallocations;
      total->cache_hits += s.cache_hits;
      total->cache_misses += s.cache_misses;
      total->events_recorded += s.events_recorded;
      total->events_created += s.events_created;
      total->event_queries += s.event_queries;
      total->stream_waits += s.stream_waits;
      total->event_waits += s.event_waits;
      total->bytes_held += s.bytes_held;
      total->bytes_cached += s.bytes_cached;
      total->bytes_in_use += s.bytes_in_use;
      total->peak_bytes_in_use += s.peak_bytes_in_use;
      total->n_cached_blocks += s.n_cached_blocks;
    }
}

void
ds_bench_default_pool_stats_since (const DsPoolStats *before,
                                   DsPoolStats       *delta)
{
  ds_bench_default_pool_stats (delta);
  delta->upstream_allocations -= before->upstream_allocations;
  delta->upstream_deallocations -= before->upstream_deallocations;
  delta->cache_hits -= before->cache_hits;
  delta->cache_misses -= before->cache_misses;
  delta->events_recorded -= before->events_recorded;
  delta->events_created -= before->events_created;
  delta->event_queries -= before->event_queries;
  delta->stream_waits -= before->stream_waits;
  delta->event_waits -= before->event_waits;
}

void
ds_bench_count_pool_stats (DsBenchFunc  func,
                           DsBenchFunc  between,
                           gpointer     data,
                           guint        n,
                           DsPoolStats *delta)
{
  DsPoolStats before;

  ds_bench_current = "(counting pool statistics)";
  if (between != NULL)
    between (data, n);
  ds_bench_default_pool_stats (&before);
  func (data, n);
  if (between != NULL)
    between (data, n);
  ds_bench_default_pool_stats_since (&before, delta);
}

guint64
ds_bench_pool_cuda_calls (const DsPoolStats *s)
{
  return s->events_recorded + s->events_created + s->event_queries +
         s->stream_waits + s->event_waits;
}

guint64
ds_bench_pool_upstream_calls (const DsPoolStats *s)
{
  return s->upstream_allocations + s->upstream_deallocations;
}

guint
ds_bench_poisson (GRand  *rand,
                  double  mean)
{
  /* Large means: the normal approximation (Box-Muller), which is what a
   * Poisson(1024) is to within a fraction of a percent. */
  if (mean > 64)
    {
      double u1 = g_rand_double_range (rand, 1e-12, 1.0);
      double u2 = g_rand_double (rand);
      double z = sqrt (-2.0 * log (u1)) * cos (2 * G_PI * u2);
      double v = floor (mean + sqrt (mean) * z + 0.5);

      return v < 1 ? 1 : (guint) v;
    }
  else
    {
      double l = exp (-mean), p = 1.0;
      guint k = 0;

      do
        {
          k++;
          p *= g_rand_double (rand);
        }
      while (p > l);
      return MAX (1, k - 1);
    }
}
