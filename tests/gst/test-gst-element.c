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
 * GstHarness with exact expected statistics; videotestsrc pipelines of 300
 * frames (GRAY8 1920x1080, I420 641x361, NV12 1280x720, Y444 333x211)
 * checked against a CPU reference for every frame, the pools within their
 * bound at EOS with nothing in use; memory:CUDAMemory from cudaupload read in place; an
 * application's non-primary GstCudaContext; CUDA memory of another context
 * adopted with its context; what the pools hold in PAUSED, READY and NULL;
 * a restart.
 */

#include "ds-gst-test.h"

#include <gst/cuda/gstcudacontext.h>
#include <gst/cuda/gstcudamemory.h>
#include <gst/cuda/gstcudautils.h>

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
  g_autoptr(GstCaps) y444 = gst_caps_from_string ("video/x-raw,format=Y444,width=64,height=48,framerate=30/1");
  g_autoptr(GstCaps) cuda = gst_caps_from_string ("video/x-raw(memory:CUDAMemory),format=NV12,"
                                                  "width=64,height=48,framerate=30/1");
  g_autoptr(GstCaps) rgb = gst_caps_from_string ("video/x-raw,format=RGBA,width=64,height=48,framerate=30/1");
  GstPad *sink;

  g_test_summary ("dslumastats registers, with its pad templates, and accepts GRAY8, I420, "
                  "NV12 and Y444 in system and CUDA memory, not RGBA");

  factory = gst_element_factory_find ("dslumastats");
  g_assert_nonnull (factory);
  g_assert_cmpstr (gst_element_factory_get_metadata (factory, GST_ELEMENT_METADATA_KLASS), ==,
                   "Filter/Analyzer/Video/Hardware");
  templates = gst_element_factory_get_static_pad_templates (factory);
  g_assert_cmpuint (g_list_length ((GList *) templates), ==, 2);
  g_assert_true (gst_element_factory_can_sink_all_caps (factory, gray));
  g_assert_true (gst_element_factory_can_sink_all_caps (factory, i420));
  g_assert_true (gst_element_factory_can_sink_all_caps (factory, nv12));
  g_assert_true (gst_element_factory_can_sink_all_caps (factory, y444));
  g_assert_true (gst_element_factory_can_sink_all_caps (factory, cuda));
  g_assert_false (gst_element_factory_can_sink_any_caps (factory, rgb));

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
  guint statistics;

  g_test_summary ("Property defaults (cuda-device-id -1, as GStreamer's CUDA elements; every "
                  "statistic), and setting them by name as gst-launch does");

  g_object_get (element, "cuda-device-id", &device_id, "statistics", &statistics, NULL);
  g_assert_cmpint (device_id, ==, -1);
  g_assert_cmpuint (statistics, ==, 7);
  g_assert_true (gst_base_transform_is_qos_enabled (GST_BASE_TRANSFORM (element)));

  gst_util_set_object_arg (G_OBJECT (element), "statistics", "mean+min-max");
  gst_util_set_object_arg (G_OBJECT (element), "cuda-device-id", "0");
  g_object_get (element, "cuda-device-id", &device_id, "statistics", &statistics, NULL);
  g_assert_cmpint (device_id, ==, 0);
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

/* The pools the element's scratch comes from (pinned, device). */
static void
element_pools (GstElement       *element,
               DsMemoryResource *pools[2])
{
  g_autoptr(GError) error = NULL;
  GstCudaContext *ctx = element_cuda_context (element);

  g_assert_nonnull (ctx);
  pools[0] = ds_gst_cuda_context_get_resource (ctx, DS_MEMORY_KIND_PINNED, &error);
  pools[1] = ds_gst_cuda_context_get_resource (ctx, DS_MEMORY_KIND_DEVICE, &error);
  gst_object_unref (ctx);
  g_assert_no_error (error);
  g_assert_true (DS_IS_POOL_RESOURCE (pools[0]));
  g_assert_true (DS_IS_POOL_RESOURCE (pools[1]));
}

typedef struct
{
  GstElement  *element;
  DsPoolStats  at50[2];
  DsPoolStats  at_eos[2];
  gboolean     have50;
  gboolean     have_eos;
} PoolWatch;

static void
snapshot_pools (GstElement  *element,
                DsPoolStats  stats[2])
{
  DsMemoryResource *pools[2];

  element_pools (element, pools);
  ds_pool_resource_get_stats (DS_POOL_RESOURCE (pools[0]), &stats[0]);
  ds_pool_resource_get_stats (DS_POOL_RESOURCE (pools[1]), &stats[1]);
}

/* The pools after frame 50 (from its message, posted when the GPU was done
 * with it) and at EOS (which the element lets through once every frame's
 * results are posted and every frame's scratch given back). */
static GstBusSyncReply
pool_watch_sync_cb (GstBus     *bus,
                    GstMessage *msg,
                    gpointer    user_data)
{
  PoolWatch *watch = user_data;
  const GstStructure *s;
  guint64 frame;

  if (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_EOS)
    {
      snapshot_pools (watch->element, watch->at_eos);
      watch->have_eos = TRUE;
      return GST_BUS_PASS;
    }
  if (GST_MESSAGE_TYPE (msg) != GST_MESSAGE_ELEMENT ||
      GST_MESSAGE_SRC (msg) != GST_OBJECT (watch->element))
    return GST_BUS_PASS;
  s = gst_message_get_structure (msg);
  if (gst_structure_has_name (s, "ds-luma-stats") &&
      gst_structure_get_uint64 (s, "frame", &frame) && frame == 49)
    {
      snapshot_pools (watch->element, watch->at50);
      watch->have50 = TRUE;
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

/* Runs @pipeline to EOS (and leaves it in PLAYING); checks one message
 * per frame against the reference probe, in order. */
static void
run_to_eos (GstElement *pipeline,
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

  gst_object_unref (bus);
  g_assert_cmpuint (n, ==, n_frames);
}

static void
run_and_check (GstElement *pipeline,
               RefProbe   *probe,
               guint       n_frames)
{
  run_to_eos (pipeline, probe, n_frames);
  g_assert_cmpint (gst_element_set_state (pipeline, GST_STATE_NULL), ==, GST_STATE_CHANGE_SUCCESS);
}


static void
pool_stats_of (GstCudaContext *ctx,
               DsPoolStats    *dev,
               DsPoolStats    *pin)
{
  ds_pool_resource_get_stats (DS_POOL_RESOURCE (ds_gst_cuda_context_get_resource (ctx, DS_MEMORY_KIND_DEVICE, NULL)), dev);
  ds_pool_resource_get_stats (DS_POOL_RESOURCE (ds_gst_cuda_context_get_resource (ctx, DS_MEMORY_KIND_PINNED, NULL)), pin);
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

/* The next ds-luma-stats message on @bus (posted once the GPU is done). */
static GstMessage *
pop_stats (GstBus *bus)
{
  GstMessage *msg = gst_bus_timed_pop_filtered (bus, ELEMENT_TIMEOUT, GST_MESSAGE_ELEMENT);

  g_assert_nonnull (msg);
  g_assert_true (gst_structure_has_name (gst_message_get_structure (msg), "ds-luma-stats"));
  return msg;
}

static void
test_harness_exact (void)
{
  GstVideoInfo info;
  GstElement *element;
  GstHarness *h;
  GstBus *bus;

  g_test_summary ("GstHarness: frames with row padding give exactly the CPU statistics, "
                  "posted when the GPU is done, in order");
  DS_GST_TEST_REQUIRE_CUDA ();

  /* 322 wide: GRAY8 rows are padded to 324 bytes. */
  gst_video_info_set_format (&info, GST_VIDEO_FORMAT_GRAY8, 322, 37);
  g_assert_cmpint (GST_VIDEO_INFO_PLANE_STRIDE (&info, 0), ==, 324);

  element = gst_object_ref_sink (gst_element_factory_make ("dslumastats", NULL));
  bus = gst_bus_new ();
  gst_element_set_bus (element, bus);
  h = gst_harness_new_full (element, &harness_src, "sink", &harness_sink, "src");
  gst_object_unref (element);
  gst_harness_set_src_caps (h, gst_video_info_to_caps (&info));

  for (guint i = 0; i < 8; i++)
    {
      g_autofree char *why = NULL;
      DsGstTestLuma ref;
      GstBuffer *in = make_gray_frame (&info, i * 31, &ref);
      GstBuffer *out = gst_harness_push_and_pull (h, in);
      GstMessage *msg;
      guint64 frame = G_MAXUINT64;

      g_assert_true (out == in);
      msg = pop_stats (bus);
      g_assert_true (gst_structure_get_uint64 (gst_message_get_structure (msg), "frame", &frame));
      g_assert_cmpuint (frame, ==, i);
      if (!ds_gst_test_luma_matches (gst_message_get_structure (msg), &ref, &why))
        g_error ("frame %u: %s", i, why);
      gst_message_unref (msg);
      gst_buffer_unref (out);
    }

  gst_element_set_bus (h->element, NULL);
  gst_object_unref (bus);
  gst_harness_teardown (h);
}

typedef struct
{
  const char *format;
  gint        width;
  gint        height;
} Size;

static const Size sizes[] = {
  { "GRAY8", 1920, 1080 },
  { "I420", 641, 361 },
  { "NV12", 1280, 720 },
  { "Y444", 333, 211 },
};

static void
test_pipeline (gconstpointer data)
{
  const Size *size = data;
  g_autoptr(GError) error = NULL;
  g_autofree char *description = NULL;
  GstElement *pipeline, *element;
  GstPad *sink;
  RefProbe probe = { 0, };
  PoolWatch watch = { 0, };
  GstBus *bus;

  g_test_summary ("videotestsrc num-buffers=300 ! dslumastats ! fakesink: every frame "
                  "matches the CPU reference; at EOS none of the pools' memory is in use and "
                  "they hold at most twice their peak demand (how many blocks that takes "
                  "depends on how far the GPU lags: with it keeping up, the same after frame "
                  "50 as at EOS)");
  DS_GST_TEST_REQUIRE_CUDA ();

  description = g_strdup_printf ("videotestsrc num-buffers=%d pattern=snow "
                                 "! video/x-raw,format=%s,width=%d,height=%d,framerate=30/1 "
                                 "! dslumastats name=stats ! fakesink",
                                 N_FRAMES, size->format, size->width, size->height);
  pipeline = gst_parse_launch (description, &error);
  g_assert_no_error (error);
  element = gst_bin_get_by_name (GST_BIN (pipeline), "stats");
  sink = gst_element_get_static_pad (element, "sink");
  ref_probe_attach (&probe, sink);

  watch.element = element;
  bus = gst_element_get_bus (pipeline);
  gst_bus_set_sync_handler (bus, pool_watch_sync_cb, &watch, NULL);

  run_and_check (pipeline, &probe, N_FRAMES);

  g_assert_true (watch.have50);
  g_assert_true (watch.have_eos);
  g_test_message ("%s %dx%d: %d frames match the CPU reference (histogram, sum, mean, min, max)",
                  size->format, size->width, size->height, N_FRAMES);
  print_pool_stats ("after frame 50", watch.at50);
  print_pool_stats ("at EOS", watch.at_eos);
  for (guint i = 0; i < 2; i++)
    {
      g_assert_cmpuint (watch.at_eos[i].bytes_in_use, ==, 0);
      g_assert_cmpuint (watch.at_eos[i].bytes_held, <=, 2 * watch.at_eos[i].peak_bytes_in_use);
      g_test_message ("%s pool %s after frame 50", i == 0 ? "pinned" : "device",
                      watch.at_eos[i].bytes_held == watch.at50[i].bytes_held ?
                      "held no more memory at EOS than" : "grew (the GPU lagged) since");
    }

  gst_bus_set_sync_handler (bus, NULL, NULL, NULL);
  gst_object_unref (bus);
  gst_object_unref (sink);
  gst_object_unref (element);
  gst_object_unref (pipeline);
  ref_probe_clear (&probe);
}

/* Runs "videotestsrc ! FORMAT ! queue ! dslumastats ! queue ! fakesink" with
 * @ctx given to the pipeline by the application. */
static GstElement *
app_context_pipeline (GstCudaContext *ctx,
                      const char     *format,
                      guint           n_frames,
                      GstElement    **element,
                      RefProbe       *probe)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *launch = NULL;
  GstElement *pipeline;
  GstContext *context;
  GstPad *pad;

  launch = g_strdup_printf ("videotestsrc num-buffers=%u pattern=snow "
                            "! video/x-raw,format=%s,width=320,height=240,framerate=30/1 "
                            "! queue ! dslumastats name=stats ! queue ! fakesink", n_frames, format);
  pipeline = gst_parse_launch (launch, &error);
  g_assert_no_error (error);
  context = gst_context_new_cuda_context (ctx);
  gst_element_set_context (pipeline, context);
  gst_context_unref (context);

  *element = gst_bin_get_by_name (GST_BIN (pipeline), "stats");
  pad = gst_element_get_static_pad (*element, "sink");
  ref_probe_attach (probe, pad);
  gst_object_unref (pad);
  return pipeline;
}

static void
test_app_context (void)
{
  g_autoptr(GError) error = NULL;
  GstElement *pipeline, *element;
  GstCudaContext *ctx, *used;
  RefProbe probe = { 0, };
  DsPoolStats before, after;
  DsMemoryResource *dev_pool;

  g_test_summary ("The element uses an application's non-primary GstCudaContext "
                  "(gst_cuda_context_new) given to the pipeline, and its pools: a device "
                  "block from the pool per frame, the results exact");
  DS_GST_TEST_REQUIRE_CUDA ();

  ctx = gst_cuda_context_new (0);
  g_assert_nonnull (ctx);
  dev_pool = ds_gst_cuda_context_get_resource (ctx, DS_MEMORY_KIND_DEVICE, &error);
  g_assert_no_error (error);
  ds_pool_resource_get_stats (DS_POOL_RESOURCE (dev_pool), &before);

  pipeline = app_context_pipeline (ctx, "GRAY8", N_FRAMES, &element, &probe);
  g_assert_cmpint (gst_element_set_state (pipeline, GST_STATE_PAUSED), !=, GST_STATE_CHANGE_FAILURE);
  used = element_cuda_context (element);
  g_assert_true (used == ctx);
  gst_object_unref (used);

  run_to_eos (pipeline, &probe, N_FRAMES);
  ds_pool_resource_get_stats (DS_POOL_RESOURCE (dev_pool), &after);
  g_test_message ("application context: device pool %" G_GUINT64_FORMAT " -> %"
                  G_GUINT64_FORMAT " cache hits, %" G_GUINT64_FORMAT " bytes held",
                  before.cache_hits, after.cache_hits, after.bytes_held);
  g_assert_cmpuint (after.cache_hits, >=, before.cache_hits + N_FRAMES - 1);
  g_assert_cmpint (gst_element_set_state (pipeline, GST_STATE_NULL), ==, GST_STATE_CHANGE_SUCCESS);

  gst_object_unref (element);
  gst_object_unref (pipeline);
  ref_probe_clear (&probe);
  gst_object_unref (ctx);
}

static void
pool_finalized_cb (gpointer  data,
                   GObject  *where_the_object_was)
{
  (*(guint *) data)++;
}

static void
wait_state (GstElement *pipeline,
            GstState    state)
{
  GstState now;

  g_assert_cmpint (gst_element_set_state (pipeline, state), !=, GST_STATE_CHANGE_FAILURE);
  g_assert_cmpint (gst_element_get_state (pipeline, &now, NULL, ELEMENT_TIMEOUT), !=,
                   GST_STATE_CHANGE_FAILURE);
  g_assert_cmpint (now, ==, state);
}

static void
test_states (void)
{
  g_autoptr(GError) error = NULL;
  GstElement *pipeline, *element;
  GstCudaContext *ctx;
  RefProbe probe = { 0, };
  DsPoolStats dev, pin;
  DsMemoryResource *dev_pool;
  guint finalized = 0;

  g_test_summary ("What the context's pools hold: after PLAYING, and in PAUSED, the blocks "
                  "the element used (ready for the next buffer); in READY nothing (the "
                  "element stopped: its stream went, the pools gave everything back); in "
                  "NULL the pools go with the context");
  DS_GST_TEST_REQUIRE_CUDA ();

  ctx = gst_cuda_context_new (0);
  dev_pool = ds_gst_cuda_context_get_resource (ctx, DS_MEMORY_KIND_DEVICE, &error);
  g_assert_no_error (error);
  g_object_weak_ref (G_OBJECT (dev_pool), pool_finalized_cb, &finalized);
  pipeline = app_context_pipeline (ctx, "I420", 30, &element, &probe);

  run_to_eos (pipeline, &probe, 30);
  pool_stats_of (ctx, &dev, &pin);
  g_test_message ("PLAYING, at EOS: device pool %" G_GUINT64_FORMAT " bytes, pinned %"
                  G_GUINT64_FORMAT, dev.bytes_held, pin.bytes_held);
  g_assert_cmpuint (dev.bytes_held, >, 0);
  g_assert_cmpuint (pin.bytes_held, >, 0);
  g_assert_cmpuint (dev.bytes_in_use, ==, 0);

  wait_state (pipeline, GST_STATE_PAUSED);
  pool_stats_of (ctx, &dev, &pin);
  g_test_message ("PAUSED: device pool %" G_GUINT64_FORMAT " bytes, pinned %" G_GUINT64_FORMAT,
                  dev.bytes_held, pin.bytes_held);
  g_assert_cmpuint (dev.bytes_held, >, 0);

  wait_state (pipeline, GST_STATE_READY);
  pool_stats_of (ctx, &dev, &pin);
  g_test_message ("READY: device pool %" G_GUINT64_FORMAT " bytes, pinned %" G_GUINT64_FORMAT,
                  dev.bytes_held, pin.bytes_held);
  g_assert_cmpuint (dev.bytes_held, ==, 0);
  g_assert_cmpuint (pin.bytes_held, ==, 0);

  wait_state (pipeline, GST_STATE_NULL);
  gst_object_unref (element);
  gst_object_unref (pipeline);
  ref_probe_clear (&probe);
  g_assert_cmpuint (finalized, ==, 0);
  gst_object_unref (ctx);
  g_assert_cmpuint (finalized, ==, 1);
}

/* A buffer of CUDA memory of @ctx holding @frame (system memory). */
static GstBuffer *
upload_frame (GstCudaContext     *ctx,
              const GstVideoInfo *info,
              GstBuffer          *frame)
{
  GstBuffer *buf = gst_buffer_new ();
  GstVideoFrame src, dst;
  GstMemory *mem;

  mem = ds_gst_test_cuda_alloc (ctx, NULL, info);
  gst_buffer_append_memory (buf, mem);
  /* Mapped for writing on the host: gstcuda uploads it at the next CUDA map. */
  g_assert_true (gst_video_frame_map (&src, info, frame, GST_MAP_READ));
  g_assert_true (gst_video_frame_map (&dst, &GST_CUDA_MEMORY_CAST (mem)->info, buf, GST_MAP_WRITE));
  g_assert_true (gst_video_frame_copy (&dst, &src));
  gst_video_frame_unmap (&dst);
  gst_video_frame_unmap (&src);
  return buf;
}

static void
test_adopt_context (void)
{
  GstVideoInfo info;
  GstCudaContext *foreign, *used;
  GstElement *element;
  GstHarness *h;
  GstBus *bus;
  GstCaps *caps;

  g_test_summary ("CUDA memory of a context the element did not start with is read in "
                  "place after the element adopts that context (cuda-device-id -1)");
  DS_GST_TEST_REQUIRE_CUDA ();

  /* GstCudaMemory has no GRAY8: NV12, whose Y plane is what is measured. */
  gst_video_info_set_format (&info, GST_VIDEO_FORMAT_NV12, 256, 64);
  caps = gst_video_info_to_caps (&info);
  gst_caps_set_features_simple (caps, gst_caps_features_new (GST_CAPS_FEATURE_MEMORY_CUDA_MEMORY, NULL));
  foreign = gst_cuda_context_new (0);

  element = gst_object_ref_sink (gst_element_factory_make ("dslumastats", NULL));
  bus = gst_bus_new ();
  gst_element_set_bus (element, bus);
  h = gst_harness_new_full (element, &harness_src, "sink", &harness_sink, "src");
  gst_harness_set_src_caps (h, caps);
  used = element_cuda_context (element);
  g_assert_nonnull (used);
  g_assert_true (used != foreign);
  gst_object_unref (used);

  for (guint i = 0; i < 4; i++)
    {
      g_autofree char *why = NULL;
      DsGstTestLuma ref;
      GstBuffer *frame = make_gray_frame (&info, i * 17, &ref);
      GstBuffer *in = upload_frame (foreign, &info, frame);
      GstBuffer *out = gst_harness_push_and_pull (h, in);
      GstMessage *msg = pop_stats (bus);

      if (!ds_gst_test_luma_matches (gst_message_get_structure (msg), &ref, &why))
        g_error ("frame %u: %s", i, why);
      gst_message_unref (msg);
      gst_buffer_unref (out);
      gst_buffer_unref (frame);
    }
  used = element_cuda_context (element);
  g_assert_true (used == foreign);
  gst_object_unref (used);

  gst_element_set_bus (h->element, NULL);
  gst_object_unref (bus);
  gst_object_unref (element);
  gst_harness_teardown (h);
  gst_object_unref (foreign);
}

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

static void
test_cuda_memory (void)
{
  g_autoptr(GError) error = NULL;
  GstElement *pipeline, *element, *before;
  GstPad *pad, *stats_sink;
  RefProbe probe = { 0, };
  PoolWatch watch = { 0, };
  GstBus *bus;
  gint n_cuda = 0;

  g_test_summary ("cudaupload ! video/x-raw(memory:CUDAMemory) ! dslumastats, 300 frames of "
                  "NV12 1280x720: every buffer is CUDA memory, read in place (no plane-sized "
                  "scratch is taken), and the results match the CPU reference of the frames "
                  "before the upload");
  DS_GST_TEST_REQUIRE_CUDA ();
  DS_GST_TEST_REQUIRE_ELEMENT ("cudaupload");

  /* The caps filter makes cudaupload hand over CUDA memory: left to
   * itself it prefers passthrough in system memory. */
  pipeline = gst_parse_launch ("videotestsrc num-buffers=300 pattern=snow "
                               "! video/x-raw,format=NV12,width=1280,height=720,framerate=30/1 "
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
  bus = gst_element_get_bus (pipeline);
  gst_bus_set_sync_handler (bus, pool_watch_sync_cb, &watch, NULL);

  run_and_check (pipeline, &probe, N_FRAMES);

  g_assert_cmpint (g_atomic_int_get (&n_cuda), ==, N_FRAMES);
  g_assert_true (watch.have_eos);
  print_pool_stats ("CUDA memory, at EOS", watch.at_eos);
  /* In place, a frame needs only the partial results and the result (and
   * the pinned read-back): 64 KiB blocks. Reading through system memory
   * would take a block of at least the 1280x720 plane (900 KiB). */
  for (guint i = 0; i < 2; i++)
    {
      g_assert_cmpuint (watch.at_eos[i].upstream_allocations, >, 0);
      g_assert_cmpuint (watch.at_eos[i].bytes_held / watch.at_eos[i].upstream_allocations, <, 131072);
    }

  gst_bus_set_sync_handler (bus, NULL, NULL, NULL);
  gst_object_unref (bus);
  gst_object_unref (stats_sink);
  gst_object_unref (pad);
  gst_object_unref (before);
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
  int status;

  ds_gst_test_init (&argc, &argv);

  ds_gst_test_add_func ("/DsGst/Element/registered", test_registered);
  ds_gst_test_add_func ("/DsGst/Element/properties", test_properties);
  ds_gst_test_add_func ("/DsGst/Element/no-device", test_no_device);

  ds_gst_test_add_func ("/DsGst/Element/gpu/harness", test_harness_exact);
  for (guint i = 0; i < G_N_ELEMENTS (sizes); i++)
    {
      g_autofree char *path = g_strdup_printf ("/DsGst/Element/gpu/pipeline-%s", sizes[i].format);

      ds_gst_test_add_data_func (path, &sizes[i], test_pipeline);
    }
  ds_gst_test_add_func ("/DsGst/Element/gpu/app-context", test_app_context);
  ds_gst_test_add_func ("/DsGst/Element/gpu/states", test_states);
  ds_gst_test_add_func ("/DsGst/Element/gpu/adopt-context", test_adopt_context);
  ds_gst_test_add_func ("/DsGst/Element/gpu/cuda-memory", test_cuda_memory);
  ds_gst_test_add_func ("/DsGst/Element/gpu/restart", test_restart);

  status = g_test_run ();
  gst_deinit ();
  return status;
}
