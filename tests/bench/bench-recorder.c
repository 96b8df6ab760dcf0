/* bench-recorder.c: what a running DsRecorder costs pools and scratchpads
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Host memory only: runs on any machine. The same operations with no
 * recorder, with one running at its default interval (frequent events
 * coalesced), keeping every event, writing a file, and with a watch; then
 * eight threads without and with a recorder. The cost of the observer
 * hook when nothing observes is one branch per event: bench-lifecycle
 * measures it.
 */

#include "ds-bench.h"

#include <ds-recorder.h>

#include <glib/gstdio.h>

static const gsize unit_sizes[] = { 200, 1000, 4096, 16384, 300, 65536, 2000, 262144 };

typedef struct
{
  DsMemoryResource *pool;
  DsScratchpad     *reused;
} Bench;

static void
pair_1k (gpointer data,
         guint    n)
{
  Bench *b = data;

  for (guint i = 0; i < n; i++)
    {
      gpointer p = ds_memory_resource_allocate (b->pool, 1024, 0, NULL);

      ds_memory_resource_deallocate (b->pool, p, 1024, 0);
      ds_bench_sink = p;
    }
}

static void
unit_reused (gpointer data,
             guint    n)
{
  Bench *b = data;

  for (guint i = 0; i < n; i++)
    {
      for (guint k = 0; k < G_N_ELEMENTS (unit_sizes); k++)
        ds_bench_sink = ds_scratchpad_alloc (b->reused, DS_MEMORY_KIND_HOST, unit_sizes[k], 0, NULL);
      ds_scratchpad_release (b->reused);
    }
}

static void
unit_new (gpointer data,
          guint    n)
{
  for (guint i = 0; i < n; i++)
    {
      DsScratchpad *sp = ds_scratchpad_new (NULL);

      for (guint k = 0; k < G_N_ELEMENTS (unit_sizes); k++)
        ds_bench_sink = ds_scratchpad_alloc (sp, DS_MEMORY_KIND_HOST, unit_sizes[k], 0, NULL);
      g_object_unref (sp);
    }
}

static void
count_cb (DsRecorder             *recorder,
          const DsRecorderSample *sample,
          gpointer                user_data)
{
  g_atomic_int_inc ((gint *) user_data);
}

typedef enum
{
  MODE_OFF,
  MODE_ON,
  MODE_EVERY,
  MODE_FILE,
  MODE_WATCH,
  N_MODES
} Mode;

static const char * const mode_names[N_MODES] = {
  "no recorder",
  "recorder, default interval (10 ms)",
  "recorder, interval 0 (every event kept)",
  "recorder writing a file",
  "recorder with a watch",
};

static char *file_dir;
static gint watched;

/* Starts the recorder @mode asks for; NULL for none. */
static DsRecorder *
start (Mode mode)
{
  g_autoptr(GError) error = NULL;
  DsRecorder *recorder;

  switch (mode)
    {
    case MODE_OFF:
      return NULL;
    case MODE_FILE:
      {
        g_autofree char *path = g_build_filename (file_dir, "bench.csv", NULL);

        recorder = ds_recorder_new_for_file (path, 0);
      }
      break;
    default:
      recorder = ds_recorder_new (0);
      break;
    }
  if (mode == MODE_EVERY)
    ds_recorder_set_interval (recorder, 0);
  if (mode == MODE_WATCH)
    ds_recorder_add_watch (recorder, count_cb, &watched, NULL);
  if (!ds_recorder_start (recorder, &error))
    g_error ("Cannot start a recorder: %s", error->message);

  return recorder;
}

static guint64
stop (DsRecorder *recorder)
{
  guint64 n;

  if (recorder == NULL)
    return 0;
  ds_recorder_stop (recorder);
  n = ds_recorder_get_n_samples (recorder);
  g_object_unref (recorder);
  return n;
}

static void
table (const char  *title,
       DsBenchFunc  func,
       Bench       *b)
{
  g_autoptr(DsBenchTable) t = ds_bench_table_new (title);
  DsBenchResult *off = NULL, *on = NULL, *off_again;

  for (Mode mode = MODE_OFF; mode < N_MODES; mode++)
    {
      DsRecorder *recorder = start (mode);
      DsBenchResult *r = ds_bench_table_add (t, ds_bench_run (mode_names[mode], func, NULL, b,
                                                              0, 100000, 1.0));
      gint64 t0 = ds_bench_now_ns ();
      guint64 n = stop (recorder);

      if (mode == MODE_OFF)
        off = r;
      if (mode == MODE_ON)
        on = r;
      if (n != 0)
        r->note = g_strdup_printf ("%" G_GUINT64_FORMAT " samples kept for %" G_GUINT64_FORMAT
                                   " iterations; stop took %.1f ms", n, r->total,
                                   (ds_bench_now_ns () - t0) / 1e6);
    }
  off_again = ds_bench_table_add (t, ds_bench_run ("no recorder, again", func, NULL, b, 0, 100000, 1.0));
  ds_bench_table_note (t, "a running recorder at its default interval: %+.1f ns per iteration "
                       "(%.2fx); the two runs without one differ by %+.1f ns",
                       on->median_ns - off->median_ns, on->median_ns / off->median_ns,
                       off_again->median_ns - off->median_ns);
  ds_bench_table_print (t);
}

static guint64
reused_worker (DsBenchWorker *worker,
               gpointer       data)
{
  DsScratchpad *sp = ds_scratchpad_new (NULL);
  guint64 n = 0;

  ds_bench_worker_wait (worker);
  while (ds_bench_worker_running (worker))
    {
      for (guint k = 0; k < G_N_ELEMENTS (unit_sizes); k++)
        ds_bench_sink = ds_scratchpad_alloc (sp, DS_MEMORY_KIND_HOST, unit_sizes[k], 0, NULL);
      ds_scratchpad_release (sp);
      n++;
    }
  g_object_unref (sp);

  return n;
}

int
main (int    argc,
      char **argv)
{
  g_autoptr(DsMemoryResource) host = ds_host_memory_resource_new ();
  Bench b;

  ds_bench_init (&argc, &argv, "bench-recorder: what a running recorder costs (host memory)");
  file_dir = g_dir_make_tmp ("ds-bench-recorder-XXXXXX", NULL);

  b.pool = ds_pool_resource_new (host);
  b.reused = ds_scratchpad_new (NULL);

  table ("one allocate + free pair of 1 KiB, a host pool (per pair)", pair_1k, &b);
  table ("reused scratchpad: 8 host allocations (200 B .. 256 KiB) + release", unit_reused, &b);
  table ("new scratchpad: 8 host allocations + unref", unit_new, &b);

  printf ("\n== 8 threads, each a reused scratchpad: 8 host allocations + release ==\n");
  printf ("%-40s %16s %10s\n", "case", "lifecycles/s", "vs first");
  {
    double first = 0;

    for (Mode mode = MODE_OFF; mode < N_MODES; mode++)
      {
        DsRecorder *recorder = start (mode);
        double rate = ds_bench_threads_rate (8, reused_worker, NULL, 1.0, NULL);

        stop (recorder);
        if (mode == MODE_OFF)
          first = rate;
        printf ("%-40s %16.0f %9.2fx\n", mode_names[mode], rate, rate / first);
      }
  }

  g_object_unref (b.reused);
  g_object_unref (b.pool);
  {
    g_autofree char *path = g_build_filename (file_dir, "bench.csv", NULL);

    g_remove (path);
    g_rmdir (file_dir);
  }
  g_free (file_dir);

  return 0;
}
