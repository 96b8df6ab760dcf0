/* test-gst-element.c: the dslumastats example element
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * CPU cases (any machine): the element registers, shows its properties,
 * negotiates the caps it should, and fails with a clear error — no crash,
 * no hang — when there is no CUDA device.
 *
 * /gpu/ cases (suite cuda; they skip with the reason without a device):
 * GstHarness runs with exact expected statistics; videotestsrc pipelines of
 * 300 frames in GRAY8, I420 and NV12 checked against a CPU reference for
 * every frame, with the ds pool statistics after frame 50 and frame 300;
 * the same with queues, scratch tied to buffers (scratch-mode ds-meta) and
 * finalized on another streaming thread, its published device results read
 * back and checked; an application-provided, non-primary GstCudaContext;
 * memory:CUDAMemory input; every scratch mode; restart.
 */

#include "ds-gst-test.h"


#if DS_GST_HAVE_CUDA
# include <gst/cuda/gstcudacontext.h>
# include <gst/cuda/gstcudamemory.h>
# include <gst/cuda/gstcudautils.h>
#endif

/* The device-side result the element publishes with scratch-mode ds-meta
 * (ds-luma-stats.h of the example plugin). */
#include "ds-luma-stats.h"

#define N_FRAMES 300
#define ELEMENT_TIMEOUT (60 * GST_SECOND)

/* --- CPU cases -------------------------------------------------------- */

static void
test_registered (void)
{
  GstElementFactory *factory;
  GstElement *element;
  const GList *templates;
  g_autoptr(GstCaps) gray = gst_caps_from_string ("video/x-raw,format=GRAY8,width=64,height=48,framerate=30/1");
  g_autoptr(GstCaps) i420 = gst_caps_from_string ("video/x-raw,format=I420,width=64,height=48,framerate=30/1");
  g_autoptr(GstCaps) nv12 = gst_caps_from_string ("video/x-raw,format=NV12,width=64,height=48,framerate=30/1");
  g_autoptr(GstCaps) rgb = gst_caps_from_string ("video/x-raw,format=RGBA,width=64,height=48,framerate=30/1");
  GstPad *sink;

  g_test_summary ("dslumastats registers, with its pad templates and properties, and "
                  "accepts GRAY8, I420 and NV12 (and CUDA memory with gstcuda), not RGBA");

  factory = gst_element_factory_find ("dslumastats");
  g_assert_nonnull (factory);
  g_assert_cmpstr (gst_element_factory_get_metadata (factory, GST_ELEMENT_METADATA_KLASS), ==,
                   "Filter/Analyzer/Video/Hardware");
  templates = gst_element_factory_get_static_pad_templates (factory);
  g_assert_cmpuint (g_list_length ((GList *) templates), ==, 2);
  g_assert_true (gst_element_factory_can_sink_all_caps (factory, gray));
  g_assert_true (gst_element_factory_can_sink_all_caps (factory, i420));
  g_assert_true (gst_element_factory_can_sink_all_caps (factory, nv12));
  g_assert_false (gst_element_factory_can_sink_any_caps (factory, rgb));
#if DS_GST_HAVE_CUDA
  {
    g_autoptr(GstCaps) cuda = gst_caps_from_string ("video/x-raw(memory:CUDAMemory),format=NV12,"
                                                    "width=64,height=48,framerate=30/1");

    g_assert_true (gst_element_factory_can_sink_all_caps (factory, cuda));
  }
#endif

  element = gst_element_factory_create (factory, NULL);
  g_assert_nonnull (element);
  sink = gst_element_get_static_pad (element, "sink");
  g_assert_true (gst_pad_query_accept_caps (sink, i420));
  g_assert_false (gst_pad_query_accept_caps (sink, rgb));
  gst_object_unref (sink);

  gst_object_unref (element);
  gst_object_unref (factory);
}

static void
test_properties (void)
{
  GstElement *element = gst_element_factory_make ("dslumastats", NULL);
  gint device_id;
  gint mode;
  guint statistics;
  gboolean post, release_early, keep_blocks;
  guint64 frames;

  g_test_summary ("Property defaults, and setting them by name as gst-launch does");

  g_object_get (element, "device-id", &device_id, "scratch-mode", &mode,
                "statistics", &statistics, "post-messages", &post,
                "frames-processed", &frames, "release-before-wait", &release_early,
                "keep-blocks", &keep_blocks, NULL);
  g_assert_cmpint (device_id, ==, -1);
  g_assert_true (release_early);
  g_assert_false (keep_blocks);
  g_assert_cmpint (mode, ==, 0);
  g_assert_cmpuint (statistics, ==, 7);
  g_assert_true (post);
  g_assert_cmpuint (frames, ==, 0);

  gst_util_set_object_arg (G_OBJECT (element), "scratch-mode", "ds-meta");
  gst_util_set_object_arg (G_OBJECT (element), "statistics", "mean+min-max");
  g_object_get (element, "scratch-mode", &mode, "statistics", &statistics, NULL);
  g_assert_cmpint (mode, ==, 2);
  g_assert_cmpuint (statistics, ==, 3);

  gst_object_unref (element);
}

static void
test_no_device (void)
{
  g_autoptr(GError) error = NULL;
  GstElement *pipeline;
  GstBus *bus;
  GstMessage *msg;
  GError *err = NULL;
  gchar *debug = NULL;
  GstStateChangeReturn ret;

  g_test_summary ("Without a CUDA device the pipeline fails to start with a RESOURCE "
                  "NOT_FOUND error that says so, and goes back to NULL cleanly");
  DS_GST_TEST_REQUIRE_NO_CUDA ();

  pipeline = gst_parse_launch ("videotestsrc num-buffers=5 ! dslumastats name=stats ! fakesink",
                               &error);
  g_assert_no_error (error);
  bus = gst_element_get_bus (pipeline);

  ret = gst_element_set_state (pipeline, GST_STATE_PLAYING);
  g_assert_cmpint (ret, ==, GST_STATE_CHANGE_FAILURE);

  msg = gst_bus_timed_pop_filtered (bus, ELEMENT_TIMEOUT, GST_MESSAGE_ERROR | GST_MESSAGE_EOS);
  g_assert_nonnull (msg);
  g_assert_cmpint (GST_MESSAGE_TYPE (msg), ==, GST_MESSAGE_ERROR);
  g_assert_cmpstr (GST_OBJECT_NAME (GST_MESSAGE_SRC (msg)), ==, "stats");
  gst_message_parse_error (msg, &err, &debug);
  g_test_message ("error: %s (%s)", err->message, debug);
  g_assert_error (err, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_NOT_FOUND);
  g_assert_true (g_str_has_prefix (err->message, "No CUDA device"));
  g_clear_error (&err);
  g_free (debug);
  gst_message_unref (msg);

  g_assert_cmpint (gst_element_set_state (pipeline, GST_STATE_NULL), ==, GST_STATE_CHANGE_SUCCESS);
  gst_object_unref (bus);
  gst_object_unref (pipeline);
}

/* --- GPU helpers ------------------------------------------------------- */

/* Statistics of the frames that entered the element, in order. */
typedef struct
{
  GMutex         lock;
  GstVideoInfo   info;
  gboolean       have_info;
  GArray        *refs;        /* DsGstTestLuma */
} RefProbe;

static GstPadProbeReturn
ref_probe_cb (GstPad          *pad,
              GstPadProbeInfo *info,
              gpointer         user_data)
{
  RefProbe *probe = user_data;

  if (GST_PAD_PROBE_INFO_TYPE (info) & GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM)
    {
      GstEvent *event = GST_PAD_PROBE_INFO_EVENT (info);

      if (GST_EVENT_TYPE (event) == GST_EVENT_CAPS)
        {
          GstCaps *caps;

          gst_event_parse_caps (event, &caps);
          g_mutex_lock (&probe->lock);
          probe->have_info = gst_video_info_from_caps (&probe->info, caps);
          g_mutex_unlock (&probe->lock);
        }
    }
  else if (GST_PAD_PROBE_INFO_TYPE (info) & GST_PAD_PROBE_TYPE_BUFFER)
    {
      DsGstTestLuma ref;

      g_mutex_lock (&probe->lock);
      g_assert_true (probe->have_info);
      g_assert_true (ds_gst_test_luma_of_buffer (&probe->info, GST_PAD_PROBE_INFO_BUFFER (info), &ref));
      g_array_append_val (probe->refs, ref);
      g_mutex_unlock (&probe->lock);
    }

  return GST_PAD_PROBE_OK;
}

static void
ref_probe_attach (RefProbe *probe,
                  GstPad   *pad)
{
  g_mutex_init (&probe->lock);
  probe->refs = g_array_new (FALSE, TRUE, sizeof (DsGstTestLuma));
  gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER | GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM,
                     ref_probe_cb, probe, NULL);
}

static void
ref_probe_clear (RefProbe *probe)
{
  g_array_unref (probe->refs);
  g_mutex_clear (&probe->lock);
}

#if DS_GST_HAVE_CUDA
/* The GstCudaContext an element uses, through a context query. */
static GstCudaContext *
element_cuda_context (GstElement *element)
{
  GstQuery *query = gst_query_new_context (GST_CUDA_CONTEXT_TYPE);
  GstPad *pad = gst_element_get_static_pad (element, "src");
  GstCudaContext *ctx = NULL;
  GstContext *context = NULL;

  if (gst_pad_query (pad, query))
    {
      gst_query_parse_context (query, &context);
      if (context != NULL)
        gst_structure_get (gst_context_get_structure (context), GST_CUDA_CONTEXT_TYPE,
                           GST_TYPE_CUDA_CONTEXT, &ctx, NULL);
    }
  gst_query_unref (query);
  gst_object_unref (pad);
  return ctx;
}
#endif

/* The pools the element's scratch comes from (pinned, device). */
static void
element_pools (GstElement       *element,
               DsMemoryResource *pools[2])
{
  g_autoptr(GError) error = NULL;
#if DS_GST_HAVE_CUDA
  GstCudaContext *ctx = element_cuda_context (element);

  g_assert_nonnull (ctx);
  pools[0] = ds_gst_cuda_context_get_resource (ctx, DS_MEMORY_KIND_PINNED, &error);
  pools[1] = ds_gst_cuda_context_get_resource (ctx, DS_MEMORY_KIND_DEVICE, &error);
  gst_object_unref (ctx);
#else
  g_assert_cmpint (cudaSetDevice (0), ==, cudaSuccess);
  pools[0] = ds_memory_resource_get_default (DS_MEMORY_KIND_PINNED, 0, &error);
  pools[1] = ds_memory_resource_get_default (DS_MEMORY_KIND_DEVICE, 0, &error);
#endif
  g_assert_no_error (error);
  g_assert_true (DS_IS_POOL_RESOURCE (pools[0]));
  g_assert_true (DS_IS_POOL_RESOURCE (pools[1]));
}

typedef struct
{
  GstElement  *element;
  gboolean     snapshot_pools;
  DsPoolStats  at50[2];
  DsPoolStats  at300[2];
  gboolean     have50;
  gboolean     have300;
  GThread     *element_thread;
} PoolWatch;

/* Runs on the element's streaming thread right after it posted a frame's
 * message, i.e. after the frame's scratch was given back. */
static GstBusSyncReply
pool_watch_sync_cb (GstBus     *bus,
                    GstMessage *msg,
                    gpointer    user_data)
{
  PoolWatch *watch = user_data;
  const GstStructure *s;
  guint64 frame;

  if (GST_MESSAGE_TYPE (msg) != GST_MESSAGE_ELEMENT ||
      GST_MESSAGE_SRC (msg) != GST_OBJECT (watch->element))
    return GST_BUS_PASS;
  s = gst_message_get_structure (msg);
  if (!gst_structure_has_name (s, "ds-luma-stats") ||
      !gst_structure_get_uint64 (s, "frame", &frame))
    return GST_BUS_PASS;

  watch->element_thread = g_thread_self ();
  if (watch->snapshot_pools && (frame == 49 || frame == N_FRAMES - 1))
    {
      DsMemoryResource *pools[2];
      DsPoolStats *stats = frame == 49 ? watch->at50 : watch->at300;

      element_pools (watch->element, pools);
      ds_pool_resource_get_stats (DS_POOL_RESOURCE (pools[0]), &stats[0]);
      ds_pool_resource_get_stats (DS_POOL_RESOURCE (pools[1]), &stats[1]);
      if (frame == 49)
        watch->have50 = TRUE;
      else
        watch->have300 = TRUE;
    }

  return GST_BUS_PASS;
}

static void
print_pool_stats (const char        *when,
                  const DsPoolStats  stats[2])
{
  static const char *names[] = { "pinned", "device" };

  for (guint i = 0; i < 2; i++)
    g_test_message ("%s: %s pool: %" G_GUINT64_FORMAT " bytes held, %" G_GUINT64_FORMAT
                    " in use, %" G_GUINT64_FORMAT " cached blocks, %" G_GUINT64_FORMAT
                    " upstream allocations, %" G_GUINT64_FORMAT " upstream deallocations, %"
                    G_GUINT64_FORMAT " cache hits, %" G_GUINT64_FORMAT " misses, peak in use %"
                    G_GUINT64_FORMAT, when, names[i], stats[i].bytes_held,
                    stats[i].bytes_in_use, stats[i].n_cached_blocks,
                    stats[i].upstream_allocations, stats[i].upstream_deallocations,
                    stats[i].cache_hits, stats[i].cache_misses, stats[i].peak_bytes_in_use);
}

/* Runs @pipeline to EOS; checks one message per frame against the
 * reference probe, in order. Returns the number of frames. */
static guint
run_and_check (GstElement *pipeline,
               RefProbe   *probe,
               guint       n_frames)
{
  GstBus *bus = gst_element_get_bus (pipeline);
  guint n = 0;
  gboolean done = FALSE;

  g_assert_cmpint (gst_element_set_state (pipeline, GST_STATE_PLAYING), !=,
                   GST_STATE_CHANGE_FAILURE);

  while (!done)
    {
      GstMessage *msg = gst_bus_timed_pop_filtered (bus, ELEMENT_TIMEOUT,
                                                    GST_MESSAGE_ERROR | GST_MESSAGE_EOS |
                                                    GST_MESSAGE_ELEMENT);
      const GstStructure *s;

      g_assert_nonnull (msg);
      switch (GST_MESSAGE_TYPE (msg))
        {
        case GST_MESSAGE_ERROR:
          {
            GError *err = NULL;
            gchar *debug = NULL;

            gst_message_parse_error (msg, &err, &debug);
            g_error ("error from %s: %s (%s)", GST_OBJECT_NAME (GST_MESSAGE_SRC (msg)),
                     err->message, debug);
          }
          break;
        case GST_MESSAGE_EOS:
          done = TRUE;
          break;
        case GST_MESSAGE_ELEMENT:
          s = gst_message_get_structure (msg);
          if (gst_structure_has_name (s, "ds-luma-stats"))
            {
              g_autofree char *why = NULL;
              guint64 frame = G_MAXUINT64;
              DsGstTestLuma ref;

              g_assert_true (gst_structure_get_uint64 (s, "frame", &frame));
              g_assert_cmpuint (frame, ==, n);
              g_mutex_lock (&probe->lock);
              g_assert_cmpuint (n, <, probe->refs->len);
              ref = g_array_index (probe->refs, DsGstTestLuma, n);
              g_mutex_unlock (&probe->lock);
              if (!ds_gst_test_luma_matches (s, &ref, &why))
                g_error ("frame %u differs from the CPU reference: %s", n, why);
              n++;
            }
          break;
        default:
          break;
        }
      gst_message_unref (msg);
    }

  g_assert_cmpint (gst_element_set_state (pipeline, GST_STATE_NULL), ==, GST_STATE_CHANGE_SUCCESS);
  gst_object_unref (bus);
  g_assert_cmpuint (n, ==, n_frames);
  return n;
}

/* --- GPU cases ---------------------------------------------------------- */

static GstBuffer *
make_gray_frame (const GstVideoInfo *info,
                 guint               seed,
                 DsGstTestLuma      *ref)
{
  GstBuffer *buf = gst_buffer_new_allocate (NULL, GST_VIDEO_INFO_SIZE (info), NULL);
  GstVideoFrame frame;

  g_assert_true (gst_video_frame_map (&frame, info, buf, GST_MAP_WRITE));
  for (gint y = 0; y < GST_VIDEO_INFO_HEIGHT (info); y++)
    {
      guint8 *row = GST_VIDEO_FRAME_COMP_DATA (&frame, 0) +
                    (gsize) y * GST_VIDEO_FRAME_COMP_STRIDE (&frame, 0);

      for (gint x = 0; x < GST_VIDEO_FRAME_COMP_STRIDE (&frame, 0); x++)
        /* Padding bytes past the width get 255: they must not count. */
        row[x] = x < GST_VIDEO_INFO_WIDTH (info) ? (guint8) ((x * 7 + y * 13 + seed) % 251) : 255;
    }
  gst_video_frame_unmap (&frame);
  g_assert_true (ds_gst_test_luma_of_buffer (info, buf, ref));
  g_assert_cmpuint (ref->max, <, 251);
  return buf;
}

static GstStaticPadTemplate harness_src =
  GST_STATIC_PAD_TEMPLATE ("src", GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS_ANY);
static GstStaticPadTemplate harness_sink =
  GST_STATIC_PAD_TEMPLATE ("sink", GST_PAD_SINK, GST_PAD_ALWAYS, GST_STATIC_CAPS_ANY);

static void
test_harness_exact (gconstpointer data)
{
  const char *mode = data;
  GstVideoInfo info;
  GstElement *element;
  GstHarness *h;
  GstBus *bus;
  GstCaps *caps;

  g_test_summary ("GstHarness: frames with row padding give exactly the CPU statistics, "
                  "in every scratch mode");
  DS_GST_TEST_REQUIRE_CUDA ();

  /* 322 wide: GRAY8 rows are padded to 324 bytes. */
  gst_video_info_set_format (&info, GST_VIDEO_FORMAT_GRAY8, 322, 37);
  g_assert_cmpint (GST_VIDEO_INFO_PLANE_STRIDE (&info, 0), ==, 324);
  caps = gst_video_info_to_caps (&info);

  element = gst_object_ref_sink (gst_element_factory_make ("dslumastats", NULL));
  gst_util_set_object_arg (G_OBJECT (element), "scratch-mode", mode);
  bus = gst_bus_new ();
  gst_element_set_bus (element, bus);
  /* Starts the element (PLAYING) in that scratch mode. */
  h = gst_harness_new_full (element, &harness_src, "sink", &harness_sink, "src");
  gst_object_unref (element);
  gst_harness_set_src_caps (h, caps);

  for (guint i = 0; i < 8; i++)
    {
      g_autofree char *why = NULL;
      DsGstTestLuma ref;
      GstBuffer *in = make_gray_frame (&info, i * 31, &ref);
      GstBuffer *out;
      GstMessage *msg;

      out = gst_harness_push_and_pull (h, in);
      g_assert_nonnull (out);
      msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ELEMENT);
      g_assert_nonnull (msg);
      if (!ds_gst_test_luma_matches (gst_message_get_structure (msg), &ref, &why))
        g_error ("scratch-mode %s, frame %u: %s", mode, i, why);
      gst_message_unref (msg);
      /* ds-meta: the buffer carries the scratch that holds the results. */
      g_assert_true ((ds_gst_buffer_get_scratch_meta (out, g_quark_from_string ("ds-luma-stats")) != NULL) ==
                     (g_strcmp0 (mode, "ds-meta") == 0));
      gst_buffer_unref (out);
    }

  gst_element_set_bus (h->element, NULL);
  gst_object_unref (bus);
  gst_harness_teardown (h);
}

static void
test_pipeline (gconstpointer data)
{
  const char *format = data;
  g_autoptr(GError) error = NULL;
  g_autofree char *description = NULL;
  GstElement *pipeline, *element;
  GstPad *sink;
  RefProbe probe = { 0, };
  PoolWatch watch = { 0, };
  GstBus *bus;

  g_test_summary ("videotestsrc num-buffers=300 ! dslumastats ! fakesink: every frame "
                  "matches the CPU reference; the pools hold the same memory after frame "
                  "50 and after frame 300");
  DS_GST_TEST_REQUIRE_CUDA ();

  description = g_strdup_printf ("videotestsrc num-buffers=%d pattern=snow "
                                 "! video/x-raw,format=%s,width=320,height=240,framerate=30/1 "
                                 "! dslumastats name=stats ! fakesink",
                                 N_FRAMES, format);
  pipeline = gst_parse_launch (description, &error);
  g_assert_no_error (error);
  element = gst_bin_get_by_name (GST_BIN (pipeline), "stats");
  sink = gst_element_get_static_pad (element, "sink");
  ref_probe_attach (&probe, sink);

  watch.element = element;
  watch.snapshot_pools = TRUE;
  bus = gst_element_get_bus (pipeline);
  gst_bus_set_sync_handler (bus, pool_watch_sync_cb, &watch, NULL);

  run_and_check (pipeline, &probe, N_FRAMES);

  g_assert_true (watch.have50);
  g_assert_true (watch.have300);
  g_test_message ("%s: %d frames of 320x240 match the CPU reference (histogram, sum, mean, "
                  "min, max)", format, N_FRAMES);
  print_pool_stats ("after frame 50", watch.at50);
  print_pool_stats ("after frame 300", watch.at300);
  for (guint i = 0; i < 2; i++)
    {
      g_assert_cmpuint (watch.at300[i].bytes_held, ==, watch.at50[i].bytes_held);
      g_assert_cmpuint (watch.at300[i].upstream_allocations, ==, watch.at50[i].upstream_allocations);
      g_assert_cmpuint (watch.at300[i].bytes_in_use, ==, 0);
    }

  gst_bus_set_sync_handler (bus, NULL, NULL, NULL);
  gst_object_unref (bus);
  gst_object_unref (sink);
  gst_object_unref (element);
  gst_object_unref (pipeline);
  ref_probe_clear (&probe);
}

/* scratch-mode ds-meta between queues: the buffers, and the scratchpads on
 * them, are freed on the fakesink's streaming thread. */
typedef struct
{
  GMutex         lock;
  RefProbe      *probe;
  guint          n_handoffs;
  guint          n_checked;
  gint           n_finalized;          /* atomic */
  gint           n_other_thread;       /* atomic */
  GThread       *element_thread;
#if DS_GST_HAVE_CUDA
  GstCudaContext *ctx;
#endif
} MetaCheck;

static void
meta_scratchpad_finalized_cb (gpointer  data,
                              GObject  *where_the_object_was)
{
  MetaCheck *check = data;
  GThread *element_thread;

  g_mutex_lock (&check->lock);
  element_thread = check->element_thread;
  g_mutex_unlock (&check->lock);

  g_atomic_int_inc (&check->n_finalized);
  if (g_thread_self () != element_thread)
    g_atomic_int_inc (&check->n_other_thread);
}

static void
handoff_cb (GstElement *sink,
            GstBuffer  *buffer,
            GstPad     *pad,
            gpointer    user_data)
{
  MetaCheck *check = user_data;
  DsGstScratchMeta *meta = ds_gst_buffer_get_scratch_meta (buffer,
                                                            g_quark_from_string ("ds-luma-stats"));
  DsLumaResult result;
  DsGstTestLuma ref;
  guint index;

  g_assert_nonnull (meta);
  g_assert_cmpint (meta->kind, ==, DS_MEMORY_KIND_DEVICE);
  g_assert_cmpuint (meta->size, ==, sizeof (DsLumaResult));

  /* Read the published device results as a downstream GPU element would,
   * after the producer's work (the element waited for it already). */
#if DS_GST_HAVE_CUDA
  g_assert_true (gst_cuda_context_push (check->ctx));
#else
  g_assert_cmpint (cudaSetDevice (0), ==, cudaSuccess);
#endif
  g_assert_cmpint (cudaMemcpy (&result, meta->data, sizeof result, cudaMemcpyDeviceToHost), ==,
                   cudaSuccess);
#if DS_GST_HAVE_CUDA
  g_assert_true (gst_cuda_context_pop (NULL));
#endif

  g_mutex_lock (&check->lock);
  index = check->n_handoffs++;
  g_mutex_unlock (&check->lock);

  g_mutex_lock (&check->probe->lock);
  g_assert_cmpuint (index, <, check->probe->refs->len);
  ref = g_array_index (check->probe->refs, DsGstTestLuma, index);
  g_mutex_unlock (&check->probe->lock);

  g_assert_cmpuint (result.sum, ==, ref.sum);
  g_assert_cmpuint (result.min, ==, ref.min);
  g_assert_cmpuint (result.max, ==, ref.max);
  g_assert_cmpmem (result.histogram, sizeof result.histogram, ref.histogram, sizeof ref.histogram);
  check->n_checked++;

  g_object_weak_ref (G_OBJECT (meta->scratchpad), meta_scratchpad_finalized_cb, check);
}

static GstBusSyncReply
element_thread_sync_cb (GstBus     *bus,
                        GstMessage *msg,
                        gpointer    user_data)
{
  MetaCheck *check = user_data;

  if (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ELEMENT &&
      gst_structure_has_name (gst_message_get_structure (msg), "ds-luma-stats"))
    {
      g_mutex_lock (&check->lock);
      check->element_thread = g_thread_self ();
      g_mutex_unlock (&check->lock);
    }
  return GST_BUS_PASS;
}

static void
test_pipeline_queue_meta (void)
{
  g_autoptr(GError) error = NULL;
  GstElement *pipeline, *element, *sink;
  GstPad *pad;
  RefProbe probe = { 0, };
  MetaCheck check = { 0, };
  GstBus *bus;

  g_test_summary ("queue ! dslumastats scratch-mode=ds-meta ! queue ! fakesink: each "
                  "buffer carries its scratch; downstream reads the published device "
                  "results (they match the CPU reference); the scratchpads are finalized "
                  "on another streaming thread when the buffers are freed, every one");
  DS_GST_TEST_REQUIRE_CUDA ();

  pipeline = gst_parse_launch ("videotestsrc num-buffers=300 pattern=snow "
                               "! video/x-raw,format=I420,width=320,height=240,framerate=30/1 "
                               "! queue ! dslumastats name=stats scratch-mode=ds-meta "
                               "! queue max-size-buffers=8 ! fakesink name=sink signal-handoffs=true",
                               &error);
  g_assert_no_error (error);
  element = gst_bin_get_by_name (GST_BIN (pipeline), "stats");
  sink = gst_bin_get_by_name (GST_BIN (pipeline), "sink");
  pad = gst_element_get_static_pad (element, "sink");
  ref_probe_attach (&probe, pad);

  g_mutex_init (&check.lock);
  check.probe = &probe;
#if DS_GST_HAVE_CUDA
  /* The pipeline shares one context: give it ours, so the handoff can
   * read the element's device memory in it. */
  check.ctx = gst_cuda_context_new (0);
  {
    GstContext *context = gst_context_new_cuda_context (check.ctx);

    gst_element_set_context (pipeline, context);
    gst_context_unref (context);
  }
#endif
  g_signal_connect (sink, "handoff", G_CALLBACK (handoff_cb), &check);
  bus = gst_element_get_bus (pipeline);
  gst_bus_set_sync_handler (bus, element_thread_sync_cb, &check, NULL);

  run_and_check (pipeline, &probe, N_FRAMES);

  g_assert_cmpuint (check.n_checked, ==, N_FRAMES);
  g_assert_cmpint (g_atomic_int_get (&check.n_finalized), ==, N_FRAMES);
  g_test_message ("ds-meta: %u frames read back from the published device scratch and "
                  "matched; %d scratchpads finalized, %d of them on a thread other than "
                  "the element's", check.n_checked, g_atomic_int_get (&check.n_finalized),
                  g_atomic_int_get (&check.n_other_thread));
  g_assert_cmpint (g_atomic_int_get (&check.n_other_thread), >, 0);

  gst_bus_set_sync_handler (bus, NULL, NULL, NULL);
  gst_object_unref (bus);
  gst_object_unref (pad);
  gst_object_unref (sink);
  gst_object_unref (element);
  gst_object_unref (pipeline);
#if DS_GST_HAVE_CUDA
  gst_object_unref (check.ctx);
#endif
  g_mutex_clear (&check.lock);
  ref_probe_clear (&probe);
}

static void
test_pipeline_queue_new (void)
{
  g_autoptr(GError) error = NULL;
  GstElement *pipeline, *element;
  GstPad *pad;
  RefProbe probe = { 0, };

  g_test_summary ("queue ! dslumastats scratch-mode=ds-new ! queue ! fakesink: a new "
                  "scratchpad per buffer, on the queue's streaming thread");
  DS_GST_TEST_REQUIRE_CUDA ();

  pipeline = gst_parse_launch ("videotestsrc num-buffers=300 pattern=snow "
                               "! video/x-raw,format=NV12,width=320,height=240,framerate=30/1 "
                               "! queue ! dslumastats name=stats scratch-mode=ds-new "
                               "! queue ! fakesink", &error);
  g_assert_no_error (error);
  element = gst_bin_get_by_name (GST_BIN (pipeline), "stats");
  pad = gst_element_get_static_pad (element, "sink");
  ref_probe_attach (&probe, pad);

  run_and_check (pipeline, &probe, N_FRAMES);

  gst_object_unref (pad);
  gst_object_unref (element);
  gst_object_unref (pipeline);
  ref_probe_clear (&probe);
}

static void
test_app_context (gconstpointer data)
{
#if DS_GST_HAVE_CUDA
  gboolean keep = GPOINTER_TO_INT (data);
  g_autoptr(GError) error = NULL;
  g_autofree char *launch = NULL;
  GstElement *pipeline, *element;
  GstCudaContext *ctx, *used;
  GstContext *context;
  GstPad *pad;
  RefProbe probe = { 0, };
  DsPoolStats before, after;
  DsMemoryResource *dev_pool;

  g_test_summary ("The element uses an application's non-primary GstCudaContext "
                  "(gst_cuda_context_new) given to the pipeline, and its pools: "
                  "a device block from the pool per frame, or with keep-blocks "
                  "one for the first frames only, the results exact either way");
  DS_GST_TEST_REQUIRE_CUDA ();

  ctx = gst_cuda_context_new (0);
  g_assert_nonnull (ctx);
  dev_pool = ds_gst_cuda_context_get_resource (ctx, DS_MEMORY_KIND_DEVICE, &error);
  g_assert_no_error (error);
  ds_pool_resource_get_stats (DS_POOL_RESOURCE (dev_pool), &before);

  launch = g_strdup_printf ("videotestsrc num-buffers=300 pattern=snow "
                            "! video/x-raw,format=GRAY8,width=320,height=240,framerate=30/1 "
                            "! queue ! dslumastats name=stats keep-blocks=%s ! queue ! fakesink",
                            keep ? "true" : "false");
  pipeline = gst_parse_launch (launch, &error);
  g_assert_no_error (error);
  context = gst_context_new_cuda_context (ctx);
  gst_element_set_context (pipeline, context);
  gst_context_unref (context);

  element = gst_bin_get_by_name (GST_BIN (pipeline), "stats");
  pad = gst_element_get_static_pad (element, "sink");
  ref_probe_attach (&probe, pad);

  g_assert_cmpint (gst_element_set_state (pipeline, GST_STATE_PAUSED), !=,
                   GST_STATE_CHANGE_FAILURE);
  used = element_cuda_context (element);
  g_assert_true (used == ctx);
  gst_object_unref (used);

  run_and_check (pipeline, &probe, N_FRAMES);

  ds_pool_resource_get_stats (DS_POOL_RESOURCE (dev_pool), &after);
  g_test_message ("application context: device pool %" G_GUINT64_FORMAT " -> %"
                  G_GUINT64_FORMAT " cache hits, %" G_GUINT64_FORMAT " bytes held",
                  before.cache_hits, after.cache_hits, after.bytes_held);
  if (keep)
    g_assert_cmpuint (after.cache_hits + after.cache_misses, <=,
                      before.cache_hits + before.cache_misses + 2);
  else
    g_assert_cmpuint (after.cache_hits, >=, before.cache_hits + N_FRAMES - 1);

  gst_object_unref (pad);
  gst_object_unref (element);
  gst_object_unref (pipeline);
  ref_probe_clear (&probe);
  gst_object_unref (ctx);
#else
  g_test_skip ("built without GStreamer's CUDA library (gstreamer-cuda-1.0)");
#endif
}

#if DS_GST_HAVE_CUDA
static GstPadProbeReturn
count_cuda_memory_cb (GstPad          *pad,
                      GstPadProbeInfo *info,
                      gpointer         user_data)
{
  GstBuffer *buffer = GST_PAD_PROBE_INFO_BUFFER (info);

  if (gst_buffer_n_memory (buffer) == 1 &&
      gst_is_cuda_memory (gst_buffer_peek_memory (buffer, 0)))
    g_atomic_int_inc ((gint *) user_data);
  return GST_PAD_PROBE_OK;
}
#endif

static void
test_cuda_memory (void)
{
#if DS_GST_HAVE_CUDA
  g_autoptr(GError) error = NULL;
  GstElement *pipeline, *element, *before;
  GstPad *pad, *stats_sink;
  RefProbe probe = { 0, };
  PoolWatch watch = { 0, };
  GstBus *bus;
  gint n_cuda = 0;

  g_test_summary ("cudaupload ! video/x-raw(memory:CUDAMemory) ! dslumastats: every buffer "
                  "is CUDA memory, read in place (no plane-sized scratch is taken), and the "
                  "results match the CPU reference of the frames before the upload");
  DS_GST_TEST_REQUIRE_CUDA ();
  DS_GST_TEST_REQUIRE_ELEMENT ("cudaupload");

  /* The caps filter makes cudaupload hand over CUDA memory: left to
   * itself it prefers passthrough in system memory. */
  pipeline = gst_parse_launch ("videotestsrc num-buffers=300 pattern=snow "
                               "! video/x-raw,format=NV12,width=320,height=240,framerate=30/1 "
                               "! identity name=before ! cudaupload "
                               "! video/x-raw(memory:CUDAMemory) ! dslumastats name=stats "
                               "! fakesink", &error);
  g_assert_no_error (error);
  before = gst_bin_get_by_name (GST_BIN (pipeline), "before");
  pad = gst_element_get_static_pad (before, "src");
  ref_probe_attach (&probe, pad);
  element = gst_bin_get_by_name (GST_BIN (pipeline), "stats");
  stats_sink = gst_element_get_static_pad (element, "sink");
  gst_pad_add_probe (stats_sink, GST_PAD_PROBE_TYPE_BUFFER, count_cuda_memory_cb, &n_cuda, NULL);

  watch.element = element;
  watch.snapshot_pools = TRUE;
  bus = gst_element_get_bus (pipeline);
  gst_bus_set_sync_handler (bus, pool_watch_sync_cb, &watch, NULL);

  run_and_check (pipeline, &probe, N_FRAMES);

  g_assert_cmpint (g_atomic_int_get (&n_cuda), ==, N_FRAMES);
  g_assert_true (watch.have300);
  print_pool_stats ("CUDA memory, after frame 300", watch.at300);
  /* In place, a frame needs only the partial results and the result (and
   * the pinned read-back): 64 KiB blocks. Reading through system memory
   * would take a 128 KiB block for the plane. (The pinned pool rotates up
   * to 9 of them: with lazy fences the host takes pinned blocks back after
   * a check of the stream every 8th release.) */
  g_assert_cmpuint (watch.at300[0].upstream_allocations, >, 0);
  g_assert_cmpuint (watch.at300[1].upstream_allocations, >, 0);
  g_assert_cmpuint (watch.at300[0].bytes_held / watch.at300[0].upstream_allocations, <, 131072);
  g_assert_cmpuint (watch.at300[1].bytes_held / watch.at300[1].upstream_allocations, <, 131072);
  g_assert_cmpuint (watch.at300[0].upstream_allocations, <=, 9);

  gst_bus_set_sync_handler (bus, NULL, NULL, NULL);
  gst_object_unref (bus);
  gst_object_unref (stats_sink);
  gst_object_unref (pad);
  gst_object_unref (before);
  gst_object_unref (element);
  gst_object_unref (pipeline);
  ref_probe_clear (&probe);
#else
  g_test_skip ("built without GStreamer's CUDA library (gstreamer-cuda-1.0)");
#endif
}

static void
test_all_modes (gconstpointer data)
{
  const char *mode = data;
  g_autoptr(GError) error = NULL;
  g_autofree char *description = NULL;
  GstElement *pipeline, *element;
  GstPad *pad;
  RefProbe probe = { 0, };
  guint64 frames = 0, scratch_ns = 0;

  g_test_summary ("Every scratch mode gives the same, correct statistics (60 frames, "
                  "640x480 I420)");
  DS_GST_TEST_REQUIRE_CUDA ();

  description = g_strdup_printf ("videotestsrc num-buffers=60 pattern=snow "
                                 "! video/x-raw,format=I420,width=640,height=480,framerate=30/1 "
                                 "! dslumastats name=stats scratch-mode=%s ! fakesink", mode);
  pipeline = gst_parse_launch (description, &error);
  g_assert_no_error (error);
  element = gst_bin_get_by_name (GST_BIN (pipeline), "stats");
  pad = gst_element_get_static_pad (element, "sink");
  ref_probe_attach (&probe, pad);

  run_and_check (pipeline, &probe, 60);
  g_object_get (element, "frames-processed", &frames, "scratch-time", &scratch_ns, NULL);
  g_assert_cmpuint (frames, ==, 60);
  g_test_message ("scratch-mode %s: %.2f us of scratch handling per frame (mean; not a "
                  "benchmark)", mode, scratch_ns / 1000.0 / 60);

  gst_object_unref (pad);
  gst_object_unref (element);
  gst_object_unref (pipeline);
  ref_probe_clear (&probe);
}

static void
test_restart (void)
{
  g_autoptr(GError) error = NULL;
  GstElement *pipeline, *element;
  GstPad *pad;
  RefProbe probe = { 0, };

  g_test_summary ("A pipeline run twice (NULL in between) works both times");
  DS_GST_TEST_REQUIRE_CUDA ();

  pipeline = gst_parse_launch ("videotestsrc num-buffers=20 pattern=snow "
                               "! video/x-raw,format=GRAY8,width=64,height=48,framerate=30/1 "
                               "! dslumastats name=stats ! fakesink", &error);
  g_assert_no_error (error);
  element = gst_bin_get_by_name (GST_BIN (pipeline), "stats");
  pad = gst_element_get_static_pad (element, "sink");
  ref_probe_attach (&probe, pad);

  run_and_check (pipeline, &probe, 20);
  g_array_set_size (probe.refs, 0);
  run_and_check (pipeline, &probe, 20);

  gst_object_unref (pad);
  gst_object_unref (element);
  gst_object_unref (pipeline);
  ref_probe_clear (&probe);
}

int
main (int    argc,
      char **argv)
{
  static const char *modes[] = { "ds-reuse", "ds-new", "ds-meta", "cuda-malloc", "preallocated" };
  int status;

  ds_gst_test_init (&argc, &argv);

  ds_gst_test_add_func ("/DsGst/Element/registered", test_registered);
  ds_gst_test_add_func ("/DsGst/Element/properties", test_properties);
  ds_gst_test_add_func ("/DsGst/Element/no-device", test_no_device);

  for (guint i = 0; i < G_N_ELEMENTS (modes); i++)
    {
      g_autofree char *path = g_strdup_printf ("/DsGst/Element/gpu/harness-%s", modes[i]);

      ds_gst_test_add_data_func (path, modes[i], test_harness_exact);
    }
  ds_gst_test_add_data_func ("/DsGst/Element/gpu/pipeline-GRAY8", "GRAY8", test_pipeline);
  ds_gst_test_add_data_func ("/DsGst/Element/gpu/pipeline-I420", "I420", test_pipeline);
  ds_gst_test_add_data_func ("/DsGst/Element/gpu/pipeline-NV12", "NV12", test_pipeline);
  ds_gst_test_add_func ("/DsGst/Element/gpu/queue-ds-meta", test_pipeline_queue_meta);
  ds_gst_test_add_func ("/DsGst/Element/gpu/queue-ds-new", test_pipeline_queue_new);
  ds_gst_test_add_data_func ("/DsGst/Element/gpu/app-context", GINT_TO_POINTER (FALSE), test_app_context);
  ds_gst_test_add_data_func ("/DsGst/Element/gpu/app-context-keep-blocks", GINT_TO_POINTER (TRUE), test_app_context);
  ds_gst_test_add_func ("/DsGst/Element/gpu/cuda-memory", test_cuda_memory);
  for (guint i = 0; i < G_N_ELEMENTS (modes); i++)
    {
      g_autofree char *path = g_strdup_printf ("/DsGst/Element/gpu/mode-%s", modes[i]);

      ds_gst_test_add_data_func (path, modes[i], test_all_modes);
    }
  ds_gst_test_add_data_func ("/DsGst/Element/gpu/mode-ds-reuse-wait-first",
                             "ds-reuse release-before-wait=false", test_all_modes);
  ds_gst_test_add_data_func ("/DsGst/Element/gpu/mode-ds-new-wait-first",
                             "ds-new release-before-wait=false", test_all_modes);
  ds_gst_test_add_func ("/DsGst/Element/gpu/restart", test_restart);

  status = g_test_run ();
  gst_deinit ();
  return status;
}
