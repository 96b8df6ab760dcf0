/* bench-gi-lifecycle.c: the lifecycle the binding benchmarks time, in C
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * One lifecycle: a new scratchpad (default orders), one 4 KiB host block
 * aligned to 64, 5 bytes written and read back, the scratchpad dropped
 * (which releases it). "block" does it through DsBlock as the bindings do
 * (ds_scratchpad_alloc_block, ds_block_write_data, ds_block_read); "raw"
 * through the C fast path (ds_scratchpad_alloc and memcpy). "reused" is the
 * same unit of work on a long-lived scratchpad released after it.
 *
 * One allocation: a 64-byte host block from a long-lived scratchpad that
 * is released after every ALLOCS_PER_RELEASE of them (the release's share
 * is counted), through DsBlock (ds_scratchpad_alloc_block and
 * ds_block_unref, as the bindings do) and through ds_scratchpad_alloc.
 *
 * Usage: bench-gi-lifecycle N BATCHES; prints one JSON object per variant:
 * what it times ("lifecycle" or "allocation"), the median ns per lifecycle
 * or allocation over the batches and the RSS (from /proc/self/statm) after
 * a warm-up of 1000 iterations and at the end.
 */

#include <ds.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static gsize
rss_bytes (void)
{
  unsigned long size = 0, resident = 0;
  FILE *f = fopen ("/proc/self/statm", "r");

  if (f != NULL)
    {
      if (fscanf (f, "%lu %lu", &size, &resident) != 2)
        resident = 0;
      fclose (f);
    }
  return (gsize) resident * (gsize) sysconf (_SC_PAGESIZE);
}

static void
lifecycle_block (void)
{
  DsScratchpad *sp = ds_scratchpad_new (NULL);
  DsBlock *block = ds_scratchpad_alloc_block (sp, DS_MEMORY_KIND_HOST, 4096, 64, NULL);
  GBytes *back;

  ds_block_write_data (block, 0, (const guint8 *) "hello", 5, NULL);
  back = ds_block_read (block, 0, 5, NULL);
  if (memcmp (g_bytes_get_data (back, NULL), "hello", 5) != 0)
    abort ();
  g_bytes_unref (back);
  ds_block_unref (block);
  g_object_unref (sp);
}

static void
lifecycle_raw (void)
{
  DsScratchpad *sp = ds_scratchpad_new (NULL);
  char *p = ds_scratchpad_alloc (sp, DS_MEMORY_KIND_HOST, 4096, 64, NULL);
  char back[5];

  memcpy (p, "hello", 5);
  memcpy (back, p, 5);
  if (memcmp (back, "hello", 5) != 0)
    abort ();
  g_object_unref (sp);
}

#define ALLOCS_PER_RELEASE 100

static DsScratchpad *reused;

static void
lifecycle_reused (void)
{
  DsBlock *block = ds_scratchpad_alloc_block (reused, DS_MEMORY_KIND_HOST, 4096, 64, NULL);
  GBytes *back;

  ds_block_write_data (block, 0, (const guint8 *) "hello", 5, NULL);
  back = ds_block_read (block, 0, 5, NULL);
  if (memcmp (g_bytes_get_data (back, NULL), "hello", 5) != 0)
    abort ();
  g_bytes_unref (back);
  ds_block_unref (block);
  ds_scratchpad_release (reused);
}

static void
allocation_block (void)
{
  static guint n;
  DsBlock *block = ds_scratchpad_alloc_block (reused, DS_MEMORY_KIND_HOST, 64, 0, NULL);

  if (block == NULL)
    abort ();
  ds_block_unref (block);
  if (++n % ALLOCS_PER_RELEASE == 0)
    ds_scratchpad_release (reused);
}

static void
allocation_raw (void)
{
  static guint n;

  if (ds_scratchpad_alloc (reused, DS_MEMORY_KIND_HOST, 64, 0, NULL) == NULL)
    abort ();
  if (++n % ALLOCS_PER_RELEASE == 0)
    ds_scratchpad_release (reused);
}

static int
compare (const void *a,
         const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;

  return (x > y) - (x < y);
}

static void
run (const char *what,
     const char *name,
     void      (*lifecycle) (void),
     long        n,
     int         batches)
{
  double *ns = g_new (double, batches);
  long per_batch = n / batches;
  gsize rss0, rss1;

  for (int i = 0; i < 1000; i++)
    lifecycle ();
  rss0 = rss_bytes ();
  for (int b = 0; b < batches; b++)
    {
      gint64 t0 = g_get_monotonic_time ();

      for (long i = 0; i < per_batch; i++)
        lifecycle ();
      ns[b] = (double) (g_get_monotonic_time () - t0) * 1000.0 / (double) per_batch;
    }
  rss1 = rss_bytes ();
  qsort (ns, batches, sizeof *ns, compare);
  printf ("{\"what\": \"%s\", \"name\": \"%s\", \"lifecycles\": %ld, \"ns\": %.1f, "
          "\"rss_before\": %" G_GSIZE_FORMAT ", \"rss_after\": %" G_GSIZE_FORMAT "}\n",
          what, name, per_batch * batches, ns[batches / 2], rss0, rss1);
  g_free (ns);
}

int
main (int    argc,
      char **argv)
{
  long n = argc > 1 ? atol (argv[1]) : 100000;
  int batches = argc > 2 ? atoi (argv[2]) : 20;

  if (n < batches || batches < 1)
    return 2;
  run ("lifecycle", "C, DsBlock calls (as bindings do)", lifecycle_block, n, batches);
  run ("lifecycle", "C, fast path (ds_scratchpad_alloc)", lifecycle_raw, n, batches);
  reused = ds_scratchpad_new (NULL);
  run ("lifecycle", "C, reused scratchpad (DsBlock calls)", lifecycle_reused, n, batches);
  run ("allocation", "C, DsBlock calls (as bindings do)", allocation_block, n, batches);
  run ("allocation", "C, fast path (ds_scratchpad_alloc)", allocation_raw, n, batches);
  ds_scratchpad_release (reused);
  g_object_unref (reused);
  return 0;
}
