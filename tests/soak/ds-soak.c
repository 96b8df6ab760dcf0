/* ds-soak.c: a long run of scratchpad lifecycles, data checked on the GPU
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * T threads (8), each on a stream of its own, run scratchpad lifecycles
 * until L (1 000 000) have run in all: a new scratchpad on the thread's
 * stream, or the thread's long-lived one released after each use, takes
 * 1 to 8 allocations of random kind, size (1 B to 256 KiB, now and then
 * up to 4 MiB) and alignment, writes a pattern of its own into each (a
 * kernel for device and managed scratch; the CPU for host and pinned
 * scratch, pinned then copied to the device), checks it (a kernel on the
 * device, the CPU on the host), and gives everything back in the stream's
 * order without waiting. Memory handed to two users at once shows as a
 * mismatch: the pattern of one overwrites the other's before its check.
 * The long-lived scratchpads of every other thread have keep-blocks on.
 * Every STREAM_EVERY lifecycles a thread replaces its stream (and its
 * order and long-lived scratchpad) and destroys the old one with its work
 * still queued: blocks given back on it stay pending until a pool's idle
 * release settles them with a device-wide wait, while the other threads
 * keep taking blocks.
 *
 * The default pools' statistics, VmRSS and the GPU's used memory are
 * printed at the start, the middle and the end. Exits 1 on any mismatch
 * or error, 77 (skip) without a usable CUDA device.
 *
 *   ds-soak [--lifecycles L] [--threads T] [--seed S]
 *   (or DS_SOAK_LIFECYCLES, DS_SOAK_THREADS, DS_SOAK_SEED)
 *
 * Registered as a benchmark with --if-asked: `meson test --benchmark`
 * skips it unless DS_SOAK=1 is set.
 */

#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ds.h>
#include <cuda_runtime_api.h>

#include "ds-soak-kernels.h"

#define STAGING_SIZE ((gsize) 16 << 20)
#define SYNC_EVERY 128
#define STREAM_EVERY 2048

typedef struct
{
  guint          index;
  cudaStream_t   stream;
  DsAccessOrder *order;
  GRand         *rand;
  guint8        *staging;      /* device: where pinned scratch is copied */
  unsigned int  *mismatches;   /* mapped pinned: the check kernel's count */
  DsScratchpad  *reused;
  guint64        lifecycles;
  guint64        allocations;
  guint64        bytes;
  guint64        gpu_checked;
  guint64        host_mismatches;
  guint64        gpu_mismatches;
  guint64        streams_replaced;
  char          *failure;
} Worker;

static gint64 next_lifecycle;
static gint64 phase_end;
static gint stop;

static guint64 opt_lifecycles = 1000000;
static gint opt_threads = 8;
static guint64 opt_seed;
static gboolean opt_if_asked;

static void
fail (Worker     *w,
      const char *format,
      ...) G_GNUC_PRINTF (2, 3);

static void
fail (Worker     *w,
      const char *format,
      ...)
{
  va_list args;

  g_atomic_int_set (&stop, 1);
  if (w->failure != NULL)
    return;
  va_start (args, format);
  w->failure = g_strdup_vprintf (format, args);
  va_end (args);
}

#define CUDA_OK(w, call) \
  ({ cudaError_t _r = (call); \
     if (_r != cudaSuccess) \
       fail ((w), "%s: %s", #call, cudaGetErrorString (_r)); \
     _r == cudaSuccess; })

static const char *
kind_name (DsMemoryKind kind)
{
  static const char *const names[] = { "host", "pinned", "device", "managed" };

  return (guint) kind < G_N_ELEMENTS (names) ? names[kind] : "?";
}

static gsize
random_size (GRand *rand)
{
  guint bits = g_rand_int_range (rand, 0, 64) == 0 ? 22 : (guint) g_rand_int_range (rand, 0, 19);

  return 1 + (gsize) g_rand_int_range (rand, 0, 1 << bits);
}

static gboolean
sync_and_count (Worker *w)
{
  unsigned int bad;

  if (!CUDA_OK (w, cudaStreamSynchronize (w->stream)))
    return FALSE;
  bad = g_atomic_int_get ((gint *) w->mismatches);
  if (bad != 0)
    {
      w->gpu_mismatches += bad;
      *w->mismatches = 0;
      fail (w, "thread %u: %u byte(s) of scratch did not hold their pattern "
            "(checked on the GPU)", w->index, bad);
      return FALSE;
    }
  return TRUE;
}

static void
lifecycle (Worker *w,
           gint64  id)
{
  g_autoptr(GError) error = NULL;
  DsSoakRegions fill = { 0, }, check = { 0, };
  struct { const guint8 *ptr; gsize size; guint tag; } host[8];
  guint n_host = 0, n, j;
  gsize staging_used = 0;
  gboolean reuse = g_rand_boolean (w->rand);
  DsScratchpad *sp = reuse ? w->reused : ds_scratchpad_new (w->order);

  n = g_rand_int_range (w->rand, 1, 9);
  for (j = 0; j < n; j++)
    {
      DsMemoryKind kind = g_rand_int_range (w->rand, 0, DS_N_MEMORY_KINDS);
      gsize size = random_size (w->rand);
      gint shift = g_rand_int_range (w->rand, -1, 13);
      gsize alignment = shift < 0 ? 0 : (gsize) 1 << shift;
      guint tag = (guint) (id * 8 + j);
      guint8 *p;
      gsize i;

      p = ds_scratchpad_alloc (sp, kind, size, alignment, &error);
      if (p == NULL)
        {
          fail (w, "lifecycle %" G_GINT64_FORMAT ": %s of %" G_GSIZE_FORMAT " bytes: %s",
                id, kind_name (kind), size, error->message);
          break;
        }
      if ((guintptr) p % (alignment != 0 ? alignment : DS_SCRATCHPAD_DEFAULT_ALIGNMENT) != 0)
        fail (w, "%p is not aligned to %" G_GSIZE_FORMAT, p, alignment);
      w->allocations++;
      w->bytes += size;

      switch (kind)
        {
        case DS_MEMORY_KIND_HOST:
        case DS_MEMORY_KIND_PINNED:
          for (i = 0; i < size; i++)
            p[i] = ds_soak_pattern_byte (tag, i);
          host[n_host].ptr = p;
          host[n_host].size = size;
          host[n_host].tag = tag;
          n_host++;
          if (kind == DS_MEMORY_KIND_PINNED && staging_used < STAGING_SIZE)
            {
              gsize copy = MIN (size, STAGING_SIZE - staging_used);

              CUDA_OK (w, cudaMemcpyAsync (w->staging + staging_used, p, copy,
                                           cudaMemcpyHostToDevice, w->stream));
              check.r[check.n++] = (DsSoakRegion) { w->staging + staging_used, copy, tag };
              staging_used += (copy + 255) & ~(gsize) 255;
            }
          break;
        case DS_MEMORY_KIND_DEVICE:
        case DS_MEMORY_KIND_MANAGED:
          fill.r[fill.n++] = (DsSoakRegion) { p, size, tag };
          check.r[check.n++] = (DsSoakRegion) { p, size, tag };
          break;
        default:
          g_assert_not_reached ();
        }
    }

  CUDA_OK (w, ds_soak_fill (&fill, w->stream));
  CUDA_OK (w, ds_soak_check (&check, w->mismatches, w->stream));
  w->gpu_checked += check.n;

  /* The CPU's own check of host and pinned scratch, while the GPU works. */
  for (j = 0; j < n_host; j++)
    {
      gsize i;

      for (i = 0; i < host[j].size; i++)
        if (host[j].ptr[i] != ds_soak_pattern_byte (host[j].tag, i))
          {
            w->host_mismatches++;
            fail (w, "lifecycle %" G_GINT64_FORMAT ": host-visible scratch at %p byte %"
                  G_GSIZE_FORMAT " changed under its user", id, host[j].ptr, i);
            break;
          }
    }

  if (reuse)
    ds_scratchpad_release (sp);
  else
    g_object_unref (sp);
  w->lifecycles++;
}

/* The thread's order and long-lived scratchpad, on its current stream.
 * Every other thread's long-lived scratchpad keeps its blocks across
 * releases (keep-blocks): its next unit's device and host scratch is the
 * memory the last unit's queued work still uses. */
static void
worker_bind_stream (Worker *w)
{
  w->order = ds_access_order_new_stream (w->stream, 0);
  w->reused = ds_scratchpad_new (w->order);
  if (w->index % 2 == 1)
    ds_scratchpad_set_keep_blocks (w->reused, TRUE);
}

/* A new stream for the thread; the old one is destroyed with its work
 * still queued (CUDA finishes it). The new stream waits for that work, so
 * that the staging buffer and the mismatch count stay in order and the
 * next sync_and_count () covers the old stream's checks too. */
static gboolean
replace_stream (Worker *w)
{
  cudaStream_t old = w->stream;
  cudaEvent_t done;

  g_clear_object (&w->reused);          /* gives back on the old stream */
  g_clear_pointer (&w->order, ds_access_order_free);
  if (!CUDA_OK (w, cudaEventCreateWithFlags (&done, cudaEventDisableTiming)))
    return FALSE;
  if (!CUDA_OK (w, cudaEventRecord (done, old)) ||
      !CUDA_OK (w, cudaStreamCreateWithFlags (&w->stream, cudaStreamNonBlocking)) ||
      !CUDA_OK (w, cudaStreamWaitEvent (w->stream, done, 0)))
    {
      w->stream = old;
      cudaEventDestroy (done);
      worker_bind_stream (w);
      return FALSE;
    }
  cudaEventDestroy (done);
  CUDA_OK (w, cudaStreamDestroy (old));
  worker_bind_stream (w);
  w->streams_replaced++;

  return TRUE;
}

static gpointer
worker_main (gpointer user_data)
{
  Worker *w = user_data;

  if (!CUDA_OK (w, cudaSetDevice (0)))
    return NULL;
  while (!g_atomic_int_get (&stop))
    {
      gint64 id = __atomic_fetch_add (&next_lifecycle, 1, __ATOMIC_RELAXED);

      if (id >= phase_end)
        break;
      lifecycle (w, id);
      if (w->lifecycles % SYNC_EVERY == 0 && !sync_and_count (w))
        break;
      if (w->lifecycles % STREAM_EVERY == 0 && !replace_stream (w))
        break;
    }
  sync_and_count (w);

  return NULL;
}

static guint64
vm_rss_kib (void)
{
  g_autofree char *status = NULL;
  const char *line;

  if (!g_file_get_contents ("/proc/self/status", &status, NULL, NULL))
    return 0;
  line = strstr (status, "VmRSS:");
  return line != NULL ? g_ascii_strtoull (line + 6, NULL, 10) : 0;
}

static void
print_table_header (void)
{
  g_print ("| phase | lifecycles | VmRSS MiB | GPU used MiB | kind | held MiB | cached MiB "
           "| in use MiB | pending MiB | peak in use MiB | upstream allocs | upstream frees "
           "| idle releases | cache hits | cache misses | events recorded | blocking waits |\n");
  g_print ("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
}

static void
print_phase (const char *phase,
             guint64     lifecycles)
{
  size_t free_b = 0, total_b = 0;
  guint64 rss = vm_rss_kib ();
  guint kind;

  (void) cudaMemGetInfo (&free_b, &total_b);
  for (kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
    {
      g_autoptr(GError) error = NULL;
      DsMemoryResource *res = ds_memory_resource_get_default (kind, 0, &error);
      DsPoolStats s = { 0, };
      const double M = 1024.0 * 1024.0;

      if (res != NULL && DS_IS_POOL_RESOURCE (res))
        ds_pool_resource_get_stats (DS_POOL_RESOURCE (res), &s);
      g_print ("| %s | %" G_GUINT64_FORMAT " | %.1f | %.1f | %s | %.2f | %.2f | %.2f | %.2f "
               "| %.2f | %" G_GUINT64_FORMAT " | %" G_GUINT64_FORMAT " | %" G_GUINT64_FORMAT
               " | %" G_GUINT64_FORMAT " | %" G_GUINT64_FORMAT " | %" G_GUINT64_FORMAT
               " | %" G_GUINT64_FORMAT " |\n",
               phase, lifecycles, rss / 1024.0, (double) (total_b - free_b) / M,
               kind_name (kind),
               s.bytes_held / M, s.bytes_cached / M, s.bytes_in_use / M, s.bytes_pending / M,
               s.peak_bytes_in_use / M, s.upstream_allocations, s.upstream_deallocations,
               s.idle_releases, s.cache_hits, s.cache_misses, s.events_recorded,
               s.event_waits);
    }
}

static guint64
env_u64 (const char *name,
         guint64     fallback)
{
  const char *v = g_getenv (name);

  return v != NULL && *v != '\0' ? g_ascii_strtoull (v, NULL, 10) : fallback;
}

int
main (int    argc,
      char **argv)
{
  GOptionEntry entries[] = {
    { "lifecycles", 'n', 0, G_OPTION_ARG_INT64, &opt_lifecycles, "Lifecycles in all (1000000)", "L" },
    { "threads", 't', 0, G_OPTION_ARG_INT, &opt_threads, "Threads, one stream each (8)", "T" },
    { "seed", 's', 0, G_OPTION_ARG_INT64, &opt_seed, "Random seed (0: from the clock)", "S" },
    { "if-asked", 0, 0, G_OPTION_ARG_NONE, &opt_if_asked, "Skip (77) unless DS_SOAK=1", NULL },
    { NULL },
  };
  g_autoptr(GOptionContext) context = NULL;
  g_autoptr(GError) error = NULL;
  Worker *workers;
  GThread **threads;
  const char *phases[] = { "first half", "second half" };
  guint64 total_lifecycles = 0, total_allocs = 0, total_bytes = 0, total_checked = 0;
  guint64 host_bad = 0, gpu_bad = 0, streams_replaced = 0;
  int count = 0, phase, t, status = 0;
  cudaError_t r;

  opt_lifecycles = env_u64 ("DS_SOAK_LIFECYCLES", opt_lifecycles);
  opt_threads = (gint) env_u64 ("DS_SOAK_THREADS", (guint64) opt_threads);
  opt_seed = env_u64 ("DS_SOAK_SEED", opt_seed);
  context = g_option_context_new ("- scratchpad soak over all four kinds");
  g_option_context_add_main_entries (context, entries, NULL);
  if (!g_option_context_parse (context, &argc, &argv, &error))
    {
      g_printerr ("%s\n", error->message);
      return 2;
    }
  if (opt_threads < 1 || opt_threads > 64)
    {
      g_printerr ("--threads must be 1..64\n");
      return 2;
    }
  if (opt_seed == 0)
    opt_seed = (guint64) g_get_real_time ();
  if (opt_if_asked && g_strcmp0 (g_getenv ("DS_SOAK"), "1") != 0)
    {
      g_print ("SKIP: the soak runs only when asked (DS_SOAK=1)\n");
      return 77;
    }

  r = cudaGetDeviceCount (&count);
  if (r != cudaSuccess || count == 0)
    {
      g_print ("SKIP: no CUDA device (%s)\n", r != cudaSuccess ? cudaGetErrorString (r) : "0 devices");
      return 77;
    }
  if (cudaSetDevice (0) != cudaSuccess)
    return 77;

  g_print ("ds-soak: %" G_GUINT64_FORMAT " lifecycles, %d threads on %d streams, "
           "seed %" G_GUINT64_FORMAT " (rerun with --seed %" G_GUINT64_FORMAT ")\n",
           opt_lifecycles, opt_threads, opt_threads, opt_seed, opt_seed);

  workers = g_new0 (Worker, opt_threads);
  threads = g_new0 (GThread *, opt_threads);
  for (t = 0; t < opt_threads; t++)
    {
      Worker *w = &workers[t];

      w->index = t;
      w->rand = g_rand_new_with_seed ((guint32) (opt_seed * 1000003u + (guint64) t));
      if (!CUDA_OK (w, cudaStreamCreateWithFlags (&w->stream, cudaStreamNonBlocking)) ||
          !CUDA_OK (w, cudaMalloc ((void **) &w->staging, STAGING_SIZE)) ||
          !CUDA_OK (w, cudaHostAlloc ((void **) &w->mismatches, sizeof (unsigned int),
                                      cudaHostAllocMapped)))
        {
          g_printerr ("setup: %s\n", w->failure);
          return 1;
        }
      *w->mismatches = 0;
      worker_bind_stream (w);
    }

  print_table_header ();
  print_phase ("start", 0);

  for (phase = 0; phase < 2 && !g_atomic_int_get (&stop); phase++)
    {
      gint64 start = g_get_monotonic_time ();
      guint64 before = 0, after = 0;

      for (t = 0; t < opt_threads; t++)
        before += workers[t].lifecycles;
      /* Each thread took one number past the end of the last phase. */
      next_lifecycle = (gint64) before;
      phase_end = phase == 0 ? (gint64) (opt_lifecycles / 2) : (gint64) opt_lifecycles;
      for (t = 0; t < opt_threads; t++)
        threads[t] = g_thread_new ("ds-soak", worker_main, &workers[t]);
      for (t = 0; t < opt_threads; t++)
        g_thread_join (threads[t]);
      for (t = 0; t < opt_threads; t++)
        after += workers[t].lifecycles;
      print_phase (phase == 0 ? "middle" : "end", after);
      g_printerr ("%s: %" G_GUINT64_FORMAT " lifecycles in %.1f s\n", phases[phase],
                  after - before, (g_get_monotonic_time () - start) / 1e6);
    }

  for (t = 0; t < opt_threads; t++)
    {
      Worker *w = &workers[t];

      total_lifecycles += w->lifecycles;
      total_allocs += w->allocations;
      total_bytes += w->bytes;
      total_checked += w->gpu_checked;
      host_bad += w->host_mismatches;
      gpu_bad += w->gpu_mismatches;
      streams_replaced += w->streams_replaced;
      if (w->failure != NULL)
        {
          g_printerr ("FAIL: thread %d: %s\n", t, w->failure);
          status = 1;
        }
      g_object_unref (w->reused);
      ds_access_order_free (w->order);
      cudaStreamSynchronize (w->stream);
      cudaStreamDestroy (w->stream);
      cudaFree (w->staging);
      cudaFreeHost (w->mismatches);
      g_rand_free (w->rand);
      g_free (w->failure);
    }
  if (total_lifecycles < opt_lifecycles)
    status = 1;

  g_print ("ds-soak: %" G_GUINT64_FORMAT " lifecycles, %" G_GUINT64_FORMAT " allocations, "
           "%.1f GiB written, %" G_GUINT64_FORMAT " regions checked on the GPU, %"
           G_GUINT64_FORMAT " streams destroyed busy; "
           "mismatches: %" G_GUINT64_FORMAT " on the host, %" G_GUINT64_FORMAT
           " on the GPU; seed %" G_GUINT64_FORMAT "; %s\n",
           total_lifecycles, total_allocs, total_bytes / (1024.0 * 1024.0 * 1024.0),
           total_checked, streams_replaced, host_bad, gpu_bad, opt_seed,
           status == 0 ? "PASS" : "FAIL");

  g_free (threads);
  g_free (workers);

  return status;
}
