/* bench-gst-scratch.c: the per-buffer cost of scratch memory in a GStreamer
 * CUDA element
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * dslumastats needs, per frame, pinned memory to upload the luma plane,
 * device memory for the plane and the partial results, device memory for
 * the result and pinned memory to read it back. This runs the same work in
 * dsbenchluma (bench-luma-element.c), an element of this program that
 * takes that memory in one of five ways (its scratch-mode), in a
 * GstHarness (no source, no sink: the frames are pushed from here), and
 * prints, per frame:
 *
 *   scratch   the time the element spends getting and giving back that
 *             memory (its last-scratch-time property; for ds-meta also the
 *             unref of the output buffer, which releases the scratch)
 *   element   the whole transform (upload, kernels, read-back, wait)
 *   wall      push + pull + unref as seen from here
 *
 * The /wait rows give the same scratch back only after waiting for the
 * frame's work (release-before-wait=false): the difference to the plain
 * row is what releasing while the work is still queued costs or saves.
 *
 * as the median and 90th percentile over the frames, and ratios against the
 * baselines measured in the same run: cudaMalloc/cudaMallocHost per buffer
 * (cuda-malloc) and one long-lived preallocated set of buffers
 * (preallocated, what GStreamer elements do today). With GStreamer's CUDA
 * library every element gets one GstCudaContext of this program's, so a
 * second table gives, per frame and from the statistics of that context's
 * pinned, device and managed pools (ds_gst_cuda_context_get_resource ()),
 * the CUDA calls ds made for the scratch: events recorded, completion
 * queries, stream waits, blocking waits, upstream allocations and
 * deallocations. The modes then share those pools, as the elements of one
 * pipeline do.
 *
 * Needs a GPU: without one it prints "SKIP: ..." and exits 77.
 * DS_BENCH_TIME scales the number of frames (default 1.0).
 */

#include "ds-gst-test.h"

#include <stdlib.h>
#include <time.h>

#include <gst/cuda/gstcudacontext.h>
#include <gst/cuda/gstcudautils.h>

#include "bench-luma-element.h"


#define EXIT_SKIP 77

/* The rows: a scratch mode, whether the element gives the scratch back
 * before waiting for the frame's work (ds's stream-ordered release) or
 * after (the same allocations, released on an idle stream), and whether
 * its ds-reuse scratchpad keeps its device block (keep-blocks). */
static const struct
{
  const char *label;
  const char *mode;
  gboolean    release_before_wait;
  gboolean    keep_blocks;
} modes[] = {
  { "ds-reuse", "ds-reuse", TRUE, FALSE },
  { "ds-reuse/keep", "ds-reuse", TRUE, TRUE },
  { "ds-reuse/wait", "ds-reuse", FALSE, FALSE },
  { "ds-new", "ds-new", TRUE, FALSE },
  { "ds-new/wait", "ds-new", FALSE, FALSE },
  { "ds-meta", "ds-meta", TRUE, FALSE },
  { "cuda-malloc", "cuda-malloc", TRUE, FALSE },
  { "preallocated", "preallocated", TRUE, FALSE },
};
#define N_MODES G_N_ELEMENTS (modes)
#define MODE_CUDA_MALLOC 6
#define MODE_PREALLOCATED 7

typedef struct
{
  double scratch_median, scratch_p90, scratch_mean;
  double element_median, element_p90;
  double wall_median;
  gboolean have_calls;
  DsPoolStats calls;   /* over the timed frames, all pools summed */
} Result;

/* The context every element gets (NULL where none could be made: each
 * element then makes its own and no CUDA calls are counted). */
static GstCudaContext *shared_context;

/* The sum of the counters of @context's pinned, device and managed pools. */
static gboolean
sum_pool_counters (DsPoolStats *out)
{
  memset (out, 0, sizeof *out);
  if (shared_context == NULL)
    return FALSE;
  for (DsMemoryKind kind = DS_MEMORY_KIND_PINNED; kind < DS_N_MEMORY_KINDS; kind++)
    {
      g_autoptr(GError) error = NULL;
      DsMemoryResource *pool = ds_gst_cuda_context_get_resource (shared_context, kind, &error);
      DsPoolStats s;

      g_assert_no_error (error);
      ds_pool_resource_get_stats (DS_POOL_RESOURCE (pool), &s);
      out->upstream_allocations += s.upstream_allocations;
      out->upstream_deallocations += s.upstream_deallocations;
      out->cache_hits += s.cache_hits;
      out->cache_misses += s.cache_misses;
      out->events_recorded += s.events_recorded;
      out->event_queries += s.event_queries;
      out->stream_waits += s.stream_waits;
      out->event_waits += s.event_waits;
    }
  return TRUE;
}

static GstStaticPadTemplate harness_src =
  GST_STATIC_PAD_TEMPLATE ("src", GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS_ANY);
static GstStaticPadTemplate harness_sink =
  GST_STATIC_PAD_TEMPLATE ("sink", GST_PAD_SINK, GST_PAD_ALWAYS, GST_STATIC_CAPS_ANY);

static guint64
now_ns (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (guint64) ts.tv_sec * G_GUINT64_CONSTANT (1000000000) + (guint64) ts.tv_nsec;
}

static int
compare_double (const void *a,
                const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;

  return x < y ? -1 : x > y ? 1 : 0;
}

static double
percentile (double *values,
            guint   n,
            double  p)
{
  qsort (values, n, sizeof (double), compare_double);
  return values[MIN (n - 1, (guint) (p * n))];
}

static void
run_mode (guint               m,
          const GstVideoInfo *info,
          guint               n_warmup,
          guint               n_frames,
          Result             *result)
{
  GstElement *element = gst_object_ref_sink (gst_element_factory_make ("dsbenchluma", NULL));
  GstBuffer *frame = gst_buffer_new_allocate (NULL, GST_VIDEO_INFO_SIZE (info), NULL);
  double *scratch = g_new (double, n_frames);
  double *elem = g_new (double, n_frames);
  double *wall = g_new (double, n_frames);
  double scratch_sum = 0;
  DsPoolStats before = { 0, };
  GstHarness *h;
  GstMapInfo map;

  /* Luma that varies over the frame. */
  g_assert_true (gst_buffer_map (frame, &map, GST_MAP_WRITE));
  for (gsize i = 0; i < map.size; i++)
    map.data[i] = (guint8) ((i * 2654435761u) >> 24);
  gst_buffer_unmap (frame, &map);

  gst_util_set_object_arg (G_OBJECT (element), "scratch-mode", modes[m].mode);
  g_object_set (element, "release-before-wait", modes[m].release_before_wait,
                "keep-blocks", modes[m].keep_blocks, NULL);
  if (shared_context != NULL)
    {
      GstContext *context = gst_context_new_cuda_context (shared_context);

      gst_element_set_context (element, context);
      gst_context_unref (context);
    }
  h = gst_harness_new_full (element, &harness_src, "sink", &harness_sink, "src");
  gst_harness_set_src_caps (h, gst_video_info_to_caps (info));

  for (guint i = 0; i < n_warmup + n_frames; i++)
    {
      if (i == n_warmup)
        result->have_calls = sum_pool_counters (&before);
      guint64 t0 = now_ns (), t1, t2, t3;
      guint64 last_scratch = 0, last_process = 0;
      GstBuffer *out;

      out = gst_harness_push_and_pull (h, gst_buffer_ref (frame));
      t1 = now_ns ();
      g_assert_nonnull (out);
      gst_buffer_unref (out);
      t2 = now_ns ();
      if (i < n_warmup)
        continue;

      g_object_get (element, "last-scratch-time", &last_scratch,
                    "last-process-time", &last_process, NULL);
      t3 = (guint64) last_scratch;
      /* ds-meta gives the scratch back when the buffer goes. */
      if (g_strcmp0 (modes[m].mode, "ds-meta") == 0)
        t3 += t2 - t1;
      scratch[i - n_warmup] = t3 / 1000.0;
      elem[i - n_warmup] = last_process / 1000.0;
      wall[i - n_warmup] = (t2 - t0) / 1000.0;
      scratch_sum += t3 / 1000.0;
    }

  if (result->have_calls)
    {
      DsPoolStats after;

      sum_pool_counters (&after);
#define DELTA(field) result->calls.field = after.field - before.field
      DELTA (upstream_allocations);
      DELTA (upstream_deallocations);
      DELTA (cache_hits);
      DELTA (cache_misses);
      DELTA (events_recorded);
      DELTA (event_queries);
      DELTA (stream_waits);
      DELTA (event_waits);
#undef DELTA
    }

  result->scratch_mean = scratch_sum / n_frames;
  result->scratch_median = percentile (scratch, n_frames, 0.5);
  result->scratch_p90 = percentile (scratch, n_frames, 0.9);
  result->element_median = percentile (elem, n_frames, 0.5);
  result->element_p90 = percentile (elem, n_frames, 0.9);
  result->wall_median = percentile (wall, n_frames, 0.5);

  gst_harness_teardown (h);
  gst_object_unref (element);
  gst_buffer_unref (frame);
  g_free (scratch);
  g_free (elem);
  g_free (wall);
}

static void
run_size (GstVideoFormat format,
          gint           width,
          gint           height,
          guint          n_frames)
{
  GstVideoInfo info;
  Result results[N_MODES];

  gst_video_info_set_format (&info, format, width, height);
  GST_VIDEO_INFO_FPS_N (&info) = 30;
  GST_VIDEO_INFO_FPS_D (&info) = 1;

  g_print ("\n%s %dx%d, %u frames per mode after %u warm-up frames "
           "(luma plane %d bytes)\n", gst_video_format_to_string (format), width, height,
           n_frames, 50, width * height);
  g_print ("%-13s %13s %13s %13s %14s %14s %12s %16s %16s\n",
           "scratch-mode", "scratch med", "scratch p90", "scratch mean",
           "element med", "element p90", "wall med",
           "scratch/cudaMal", "element/prealloc");

  for (guint m = 0; m < N_MODES; m++)
    run_mode (m, &info, 50, n_frames, &results[m]);

  for (guint m = 0; m < N_MODES; m++)
    {
      const Result *r = &results[m];

      g_print ("%-13s %10.2f us %10.2f us %10.2f us %11.2f us %11.2f us %9.2f us %15.4fx %15.3fx\n",
               modes[m].label, r->scratch_median, r->scratch_p90, r->scratch_mean,
               r->element_median, r->element_p90, r->wall_median,
               r->scratch_median / results[MODE_CUDA_MALLOC].scratch_median,
               r->element_median / results[MODE_PREALLOCATED].element_median);
    }
  g_print ("extra element time per frame over preallocated (median): ");
  for (guint m = 0; m < N_MODES; m++)
    g_print ("%s %+.2f us%s", modes[m].label,
             results[m].element_median - results[MODE_PREALLOCATED].element_median,
             m + 1 < N_MODES ? ", " : "\n");

  if (!results[0].have_calls)
    return;
  g_print ("CUDA calls ds made per frame for the scratch (the shared context's pinned, device "
           "and managed pools, over the timed frames):\n");
  g_print ("%-13s %9s %9s %9s %9s %9s %9s %9s\n", "scratch-mode", "events", "queries",
           "waits", "blocking", "upstream", "hits", "misses");
  for (guint m = 0; m < N_MODES; m++)
    {
      const DsPoolStats *c = &results[m].calls;

      if (m == MODE_CUDA_MALLOC || m == MODE_PREALLOCATED)
        continue;
#define PER_FRAME(field) ((double) c->field / n_frames)
      g_print ("%-13s %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f\n", modes[m].label,
               PER_FRAME (events_recorded), PER_FRAME (event_queries),
               PER_FRAME (stream_waits), PER_FRAME (event_waits),
               PER_FRAME (upstream_allocations) + PER_FRAME (upstream_deallocations),
               PER_FRAME (cache_hits), PER_FRAME (cache_misses));
#undef PER_FRAME
    }
  g_print ("  (upstream = cudaMalloc*/cudaFree* calls; hits and misses: blocks taken from the pools)\n");
}

int
main (int    argc,
      char **argv)
{
  const char *time_env = g_getenv ("DS_BENCH_TIME");
  double scale = time_env != NULL ? g_ascii_strtod (time_env, NULL) : 1.0;
  guint n_frames;

  gst_init (&argc, &argv);

  if (!ds_gst_test_cuda_available ())
    {
      g_print ("SKIP: %s\n", ds_gst_test_cuda_unavailable_reason ());
      return EXIT_SKIP;
    }
  if (scale <= 0)
    scale = 1.0;
  n_frames = MAX (100, (guint) (1000 * scale));
  g_assert_true (gst_ds_bench_luma_register ());
  shared_context = gst_cuda_context_new (0);
  if (shared_context == NULL)
    g_print ("# no GstCudaContext for device 0: each element makes its own, no CUDA calls counted\n");

  g_print ("bench-gst-scratch: per-frame cost of scratch memory in dslumastats's work "
           "(median and p90 over frames; ratios against baselines of this run)\n");
  run_size (GST_VIDEO_FORMAT_I420, 320, 240, n_frames);
  run_size (GST_VIDEO_FORMAT_GRAY8, 1920, 1080, n_frames / 2);

  g_clear_object (&shared_context);
  gst_deinit ();
  return EXIT_SUCCESS;
}
