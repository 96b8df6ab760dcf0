/* ds-host-soak.c: a long run of host scratch on 8 threads, with a memory
 * timeline: do the pools and the process level off?
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * T threads (8) share the default host pool and one private
 * DsPoolResource for S seconds (600). Each unit of work takes 1 to 24
 * allocations of random size (log-uniform, 16 B to 256 KiB; one in 64 a
 * large one, up to 4 MiB), writes every byte of them, and gives them
 * back: from a new scratchpad or the thread's long-lived one (released),
 * on the default pool or the private one, each picked at random. Demand
 * comes in waves: each thread now and then rests for a random while, so
 * that what the pools hold should follow the demand and come back down
 * through idle release (the pools' release threshold is left as it is,
 * but a second private pool uses 1 MiB and 500 ms, so that its idle
 * releases show).
 *
 * A DsRecorder writes the pools' timeline to OUT/recording.csv; a monitor
 * writes, every second, OUT/monitor.csv: the process's resident set
 * (VmRSS), what malloc holds and has free in its arenas (mallinfo2), and
 * what each pool holds and its peak. At the end it prints, for the first
 * and the second half of the run, the mean and maximum of each, and how
 * much the second half's mean grew over the first's.
 *
 *   ds-host-soak [--seconds S] [--threads T] [--seed N] [--out DIR]
 *                [--malloc-trim]
 *
 * --malloc-trim makes the monitor call malloc_trim (0) every second (to
 * tell the host allocator's own keeping from the pools'). The allocator's
 * settings come from its environment (MALLOC_ARENA_MAX, ...). Registered
 * as a benchmark with --if-asked: `meson test --benchmark` skips it
 * unless DS_SOAK=1 is set.
 */

#include "config.h"

#include <malloc.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ds-recorder.h>
#include <glib/gstdio.h>

#define N_POOLS 3   /* the default host pool, a private one, one that releases early */

typedef struct
{
  guint          index;
  GRand         *rand;
  DsScratchpad  *reused[N_POOLS];
  guint64        units;
  guint64        bytes;
  char          *failure;
} Worker;

static DsMemoryResource *pools[N_POOLS];
static const char * const pool_names[N_POOLS] = { "default", "private", "private-early" };
static gint stop;

static gint opt_seconds = 600;
static gint opt_threads = 8;
static gint64 opt_seed;
static char *opt_out;
static gboolean opt_trim;
static gboolean opt_if_asked;

static gsize
random_size (GRand *rand)
{
  if (g_rand_int_range (rand, 0, 64) == 0)
    return (gsize) g_rand_int_range (rand, 256 << 10, 4 << 20);

  /* Log-uniform, 16 B .. 256 KiB. */
  return (gsize) (16.0 * pow (2.0, g_rand_double_range (rand, 0.0, 14.0)));
}

static DsScratchpad *
new_scratchpad (guint pool)
{
  DsAccessOrder host;

  ds_access_order_init_host (&host);
  if (pool == 0)
    return ds_scratchpad_new (&host);
  return g_object_new (DS_TYPE_SCRATCHPAD, "device-order", &host,
                       "host-resource", pools[pool], NULL);
}

static gboolean
unit (Worker *w)
{
  guint pool = (guint) g_rand_int_range (w->rand, 0, N_POOLS);
  gboolean fresh = g_rand_boolean (w->rand);
  DsScratchpad *sp = fresh ? new_scratchpad (pool) : w->reused[pool];
  guint n = (guint) g_rand_int_range (w->rand, 1, 25);

  for (guint i = 0; i < n; i++)
    {
      g_autoptr(GError) error = NULL;
      gsize size = random_size (w->rand);
      guint8 *p = ds_scratchpad_alloc (sp, DS_MEMORY_KIND_HOST, size, 0, &error);

      if (p == NULL)
        {
          w->failure = g_strdup_printf ("thread %u: %s", w->index, error->message);
          return FALSE;
        }
      memset (p, (int) (i + 1), size);
      w->bytes += size;
    }

  if (fresh)
    g_object_unref (sp);
  else
    ds_scratchpad_release (sp);
  w->units++;

  return TRUE;
}

static gpointer
worker_thread (gpointer data)
{
  Worker *w = data;

  for (guint p = 0; p < N_POOLS; p++)
    w->reused[p] = new_scratchpad (p);

  while (!g_atomic_int_get (&stop))
    {
      /* A wave: a burst of units, then (one time in four) a rest. */
      guint burst = (guint) g_rand_int_range (w->rand, 50, 2000);

      for (guint i = 0; i < burst && !g_atomic_int_get (&stop); i++)
        if (!unit (w))
          {
            g_atomic_int_set (&stop, 1);
            break;
          }
      if (g_rand_int_range (w->rand, 0, 4) == 0)
        g_usleep ((gulong) g_rand_int_range (w->rand, 10000, 1500000));
    }

  for (guint p = 0; p < N_POOLS; p++)
    g_object_unref (w->reused[p]);

  return NULL;
}

static guint64
rss_bytes (void)
{
  g_autofree char *status = NULL;
  const char *line;

  if (!g_file_get_contents ("/proc/self/status", &status, NULL, NULL))
    return 0;
  line = strstr (status, "VmRSS:");
  if (line == NULL)
    return 0;
  return g_ascii_strtoull (line + strlen ("VmRSS:"), NULL, 10) * 1024;
}

typedef struct
{
  double  time;
  guint64 rss;
  guint64 malloc_used;    /* in use in malloc's arenas and mmapped chunks */
  guint64 malloc_free;    /* free in its arenas, not given back */
  guint64 held[N_POOLS];
  guint64 peak[N_POOLS];
} Row;

static Row
take_row (double t0)
{
  struct mallinfo2 mi = mallinfo2 ();
  Row row = { 0, };

  row.time = g_get_monotonic_time () / 1e6 - t0;
  row.rss = rss_bytes ();
  row.malloc_used = mi.uordblks + mi.hblkhd;
  row.malloc_free = mi.fordblks;
  for (guint p = 0; p < N_POOLS; p++)
    {
      DsPoolStats s;

      ds_pool_resource_get_stats (DS_POOL_RESOURCE (pools[p]), &s);
      row.held[p] = s.bytes_held;
      row.peak[p] = s.peak_bytes_in_use;
    }

  return row;
}

static void
write_row (FILE      *out,
           const Row *r)
{
  fprintf (out, "%.3f,%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT,
           r->time, r->rss, r->malloc_used, r->malloc_free);
  for (guint p = 0; p < N_POOLS; p++)
    fprintf (out, ",%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT, r->held[p], r->peak[p]);
  fputc ('\n', out);
  fflush (out);
}

static void
summarize (const char *what,
           GArray     *rows,
           gsize       offset)
{
  double sum[2] = { 0, 0 }, max[2] = { 0, 0 };
  guint n[2] = { 0, 0 };
  double end = g_array_index (rows, Row, rows->len - 1).time;

  for (guint i = 0; i < rows->len; i++)
    {
      Row *r = &g_array_index (rows, Row, i);
      double v = (double) G_STRUCT_MEMBER (guint64, r, offset);
      guint half = r->time >= end / 2;

      /* The first 10 s are the ramp-up, not the level. */
      if (r->time < 10)
        continue;
      sum[half] += v;
      max[half] = MAX (max[half], v);
      n[half]++;
    }
  if (n[0] == 0 || n[1] == 0)
    return;
  printf ("%-28s %10.1f %10.1f %10.1f %10.1f %+8.1f%%\n", what,
          sum[0] / n[0] / 1048576, max[0] / 1048576, sum[1] / n[1] / 1048576, max[1] / 1048576,
          100.0 * ((sum[1] / n[1]) / (sum[0] / n[0]) - 1));
}

int
main (int    argc,
      char **argv)
{
  GOptionEntry entries[] = {
    { "seconds", 0, 0, G_OPTION_ARG_INT, &opt_seconds, "How long to run (600)", "S" },
    { "threads", 0, 0, G_OPTION_ARG_INT, &opt_threads, "Worker threads (8)", "T" },
    { "seed", 0, 0, G_OPTION_ARG_INT64, &opt_seed, "Random seed (0: from the clock)", "N" },
    { "out", 0, 0, G_OPTION_ARG_FILENAME, &opt_out, "Where to write recording.csv and monitor.csv", "DIR" },
    { "malloc-trim", 0, 0, G_OPTION_ARG_NONE, &opt_trim, "malloc_trim (0) every second", NULL },
    { "if-asked", 0, 0, G_OPTION_ARG_NONE, &opt_if_asked, "Skip (77) unless DS_SOAK=1", NULL },
    { NULL },
  };
  g_autoptr(GOptionContext) context = g_option_context_new ("- host scratch on many threads, with a memory timeline");
  g_autoptr(DsMemoryResource) host = ds_host_memory_resource_new ();
  g_autoptr(GError) error = NULL;
  g_autoptr(DsRecorder) recorder = NULL;
  g_autofree char *recording = NULL, *monitor = NULL;
  g_autoptr(GArray) rows = g_array_new (FALSE, FALSE, sizeof (Row));
  Worker *workers;
  GThread **threads;
  FILE *mon;
  double t0;
  int status = 0;

  g_option_context_add_main_entries (context, entries, NULL);
  if (!g_option_context_parse (context, &argc, &argv, &error))
    {
      g_printerr ("%s\n", error->message);
      return 2;
    }
  if (opt_if_asked && g_strcmp0 (g_getenv ("DS_SOAK"), "1") != 0)
    {
      printf ("SKIP: the host soak runs %d s; set DS_SOAK=1 to run it\n", opt_seconds);
      return 77;
    }
  if (opt_seed == 0)
    opt_seed = g_get_real_time ();
  if (opt_out == NULL)
    opt_out = g_strdup (".");
  g_mkdir_with_parents (opt_out, 0755);

  pools[0] = g_object_ref (ds_memory_resource_get_default (DS_MEMORY_KIND_HOST, 0, &error));
  g_assert_no_error (error);
  pools[1] = ds_pool_resource_new (host);
  pools[2] = ds_pool_resource_new (host);
  ds_pool_resource_set_release_threshold (DS_POOL_RESOURCE (pools[2]), 1 << 20);
  ds_pool_resource_set_idle_timeout (DS_POOL_RESOURCE (pools[2]), 500);

  recording = g_build_filename (opt_out, "recording.csv", NULL);
  monitor = g_build_filename (opt_out, "monitor.csv", NULL);
  recorder = ds_recorder_new_for_file (recording, 0);
  /* A sample a second per source and frequent event is plenty for 10
   * minutes; upstream calls and releases are kept whatever it is. */
  ds_recorder_set_interval (recorder, 250);
  if (!ds_recorder_start (recorder, &error))
    {
      g_printerr ("%s\n", error->message);
      return 1;
    }
  mon = g_fopen (monitor, "w");
  fprintf (mon, "time,rss,malloc_used,malloc_free");
  for (guint p = 0; p < N_POOLS; p++)
    fprintf (mon, ",held_%s,peak_%s", pool_names[p], pool_names[p]);
  fputc ('\n', mon);

  printf ("ds-host-soak: %d threads, %d s, seed %" G_GINT64_FORMAT ", MALLOC_ARENA_MAX=%s%s; "
          "writing %s and %s\n", opt_threads, opt_seconds, opt_seed,
          g_getenv ("MALLOC_ARENA_MAX") != NULL ? g_getenv ("MALLOC_ARENA_MAX") : "(unset)",
          opt_trim ? ", malloc_trim every second" : "", recording, monitor);

  t0 = g_get_monotonic_time () / 1e6;
  workers = g_new0 (Worker, opt_threads);
  threads = g_new0 (GThread *, opt_threads);
  for (gint t = 0; t < opt_threads; t++)
    {
      workers[t].index = (guint) t;
      workers[t].rand = g_rand_new_with_seed ((guint32) (opt_seed + t));
      threads[t] = g_thread_new ("soak", worker_thread, &workers[t]);
    }

  for (gint s = 0; s < opt_seconds && !g_atomic_int_get (&stop); s++)
    {
      Row row;

      g_usleep (G_USEC_PER_SEC);
      if (opt_trim)
        malloc_trim (0);
      row = take_row (t0);
      g_array_append_val (rows, row);
      write_row (mon, &row);
    }
  g_atomic_int_set (&stop, 1);
  for (gint t = 0; t < opt_threads; t++)
    {
      g_thread_join (threads[t]);
      if (workers[t].failure != NULL)
        {
          g_printerr ("%s\n", workers[t].failure);
          status = 1;
        }
    }
  ds_recorder_stop (recorder);
  fclose (mon);

  {
    guint64 units = 0, bytes = 0;
    double bound = 0;

    for (gint t = 0; t < opt_threads; t++)
      {
        units += workers[t].units;
        bytes += workers[t].bytes;
      }
    printf ("%" G_GUINT64_FORMAT " units of work, %.1f GiB written\n", units, bytes / 1073741824.0);
    printf ("%-28s %10s %10s %10s %10s %9s\n", "MiB", "1st mean", "1st max", "2nd mean", "2nd max",
            "growth");
    summarize ("VmRSS", rows, G_STRUCT_OFFSET (Row, rss));
    summarize ("malloc in use", rows, G_STRUCT_OFFSET (Row, malloc_used));
    summarize ("malloc free, kept", rows, G_STRUCT_OFFSET (Row, malloc_free));
    for (guint p = 0; p < N_POOLS; p++)
      {
        g_autofree char *held = g_strdup_printf ("pool %s: held", pool_names[p]);
        g_autofree char *peak = g_strdup_printf ("pool %s: peak demand", pool_names[p]);

        summarize (held, rows, G_STRUCT_OFFSET (Row, held) + p * sizeof (guint64));
        summarize (peak, rows, G_STRUCT_OFFSET (Row, peak) + p * sizeof (guint64));
      }
    for (guint i = 0; i < rows->len; i++)
      for (guint p = 0; p < N_POOLS; p++)
        {
          Row *r = &g_array_index (rows, Row, i);

          if (r->peak[p] != 0)
            bound = MAX (bound, (double) r->held[p] / r->peak[p]);
        }
    printf ("largest held / peak demand of any pool, any second: %.2f (the bound is 2)\n", bound);
    if (bound > 2.0)
      status = 1;
  }

  for (gint t = 0; t < opt_threads; t++)
    {
      g_rand_free (workers[t].rand);
      g_free (workers[t].failure);
    }
  g_free (workers);
  g_free (threads);
  for (guint p = 0; p < N_POOLS; p++)
    g_object_unref (pools[p]);
  g_free (opt_out);

  return status;
}
