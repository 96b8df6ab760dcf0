/* test-gst-template.c: the two template elements of "ds in your CUDA element"
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * CPU: dstemplate (the analyzer) and dsfilter (the filter) register and
 * fail cleanly without a device. /gpu/ (the CUDA memory cases need
 * cudaupload and cudadownload, from gst-plugins-bad's nvcodec): 300 frames
 * of GRAY8, NV12 and I420 at odd sizes, from system memory and through
 * cudaupload, each output frame equal to the CPU's blur of its input and
 * each posted sum equal to the CPU's, in order; the chain
 * cudaupload ! dsfilter ! dsfilter ! dstemplate ! cudadownload likewise.
 * In every GPU case the host's waits for the GPU (cuStreamSynchronize,
 * cuEventSynchronize, cuCtxSynchronize) and its polls (cuStreamQuery,
 * cuEventQuery) are counted per frame through CUPTI, by owner
 * (ds-host-wait-counter.c): with CUDA memory on GStreamer 1.24+, none in
 * ds's elements; and the same counts for GStreamer's own
 * cudaupload ! cudaconvertscale ! cudaconvertscale ! cudadownload.
 */

#include "ds-gst-test.h"
#include "ds-host-wait-counter.h"

#if HAVE_CUDA
# include <gst/cuda/cuda-gst.h>
# include <gst/cuda/gstcudaloader.h>
#endif

/* Frames per pipeline: 300, or --frames=N (run-gpu-checks.sh gives fewer
 * under compute-sanitizer, where a frame costs 10-100 times more). */
static guint n_frames = 300;

typedef struct
{
  const char *format;
  gint        width;
  gint        height;
  gboolean    cuda;       /* through cudaupload and cudadownload */
  guint       n_filters;  /* dsfilter elements */
  gboolean    analyzer;   /* a dstemplate after them */
} Case;

typedef struct
{
  GMutex        lock;
  guint         n_filters;
  GPtrArray    *want;      /* expected output frames' SHA-1, by frame */
  GArray       *sums;      /* guint64: their luma sums */
  guint         n_out;
  guint         n_wrong;
  gint          first_wrong;
  DsHostWaits   waits[2];  /* at the first and last frame out */
} Run;

static void
test_registered (void)
{
  g_autoptr(GstCaps) cuda = gst_caps_from_string ("video/x-raw(memory:CUDAMemory),format=NV12,"
                                                  "width=65,height=49,framerate=30/1");
  g_autoptr(GstCaps) sys = gst_caps_from_string ("video/x-raw,format=GRAY8,width=65,height=49,framerate=30/1");
  const char *names[] = { "dstemplate", "dsfilter" };

  g_test_summary ("dstemplate and dsfilter register and take CUDA and system memory");
  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    {
      GstElementFactory *factory = gst_element_factory_find (names[i]);

      g_assert_nonnull (factory);
      g_assert_true (gst_element_factory_can_sink_all_caps (factory, cuda));
      g_assert_true (gst_element_factory_can_sink_all_caps (factory, sys));
      gst_object_unref (factory);
    }
}

static void
test_no_device (void)
{
  const char *names[] = { "dstemplate", "dsfilter" };

  g_test_summary ("Without a CUDA device each element fails to start with RESOURCE NOT_FOUND");
  DS_GST_TEST_REQUIRE_NO_CUDA ();

  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    {
      GstElement *element = gst_element_factory_make (names[i], NULL);
      GstBus *bus = gst_bus_new ();
      GstMessage *msg;
      GError *err = NULL;

      gst_element_set_bus (element, bus);
      g_assert_cmpint (gst_element_set_state (element, GST_STATE_PAUSED), ==, GST_STATE_CHANGE_FAILURE);
      msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR);
      g_assert_nonnull (msg);
      gst_message_parse_error (msg, &err, NULL);
      g_assert_error (err, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_NOT_FOUND);
      g_clear_error (&err);
      gst_message_unref (msg);
      gst_element_set_state (element, GST_STATE_NULL);
      gst_element_set_bus (element, NULL);
      gst_object_unref (bus);
      gst_object_unref (element);
    }
}

/* The filter's blur on the CPU: [1 2 1] x [1 2 1] / 16, rounded, edges
 * repeated (ds-filter-kernel.cu). */
static void
blur (const guint8 *src,
      guint8       *dst,
      gint          w,
      gint          h)
{
  g_autofree guint16 *tmp = g_new (guint16, (gsize) w * h);

  for (gint y = 0; y < h; y++)
    for (gint x = 0; x < w; x++)
      {
        const guint8 *row = src + (gsize) y * w;

        tmp[(gsize) y * w + x] = row[MAX (x - 1, 0)] + 2 * row[x] + row[MIN (x + 1, w - 1)];
      }
  for (gint y = 0; y < h; y++)
    for (gint x = 0; x < w; x++)
      dst[(gsize) y * w + x] = (tmp[(gsize) MAX (y - 1, 0) * w + x] + 2 * tmp[(gsize) y * w + x] +
                                tmp[(gsize) MIN (y + 1, h - 1) * w + x] + 8) >> 4;
}

/* The planes of @frame packed (rows without padding), the luma plane
 * blurred @n_blur times; its luma sum in *@sum. */
static GBytes *
packed (GstVideoFrame *frame,
        guint          n_blur,
        guint64       *sum)
{
  GByteArray *out = g_byte_array_new ();

  for (guint p = 0; p < GST_VIDEO_FRAME_N_PLANES (frame); p++)
    {
      gint w = GST_VIDEO_FRAME_COMP_WIDTH (frame, p) * GST_VIDEO_FRAME_COMP_PSTRIDE (frame, p);
      gint h = GST_VIDEO_FRAME_COMP_HEIGHT (frame, p);
      g_autofree guint8 *plane = g_malloc ((gsize) w * h), *other = g_malloc ((gsize) w * h);

      for (gint y = 0; y < h; y++)
        memcpy (plane + (gsize) y * w,
                (guint8 *) GST_VIDEO_FRAME_PLANE_DATA (frame, p) + (gsize) y * GST_VIDEO_FRAME_PLANE_STRIDE (frame, p),
                w);
      for (guint i = 0; p == 0 && i < n_blur; i++)
        {
          guint8 *t = plane;

          blur (plane, other, w, h);
          plane = other;
          other = t;
        }
      if (p == 0)
        {
          *sum = 0;
          for (gsize i = 0; i < (gsize) w * h; i++)
            *sum += plane[i];
        }
      g_byte_array_append (out, plane, (guint) w * h);
    }
  return g_byte_array_free_to_bytes (out);
}

static char *
sha1_of (GBytes *bytes)
{
  return g_compute_checksum_for_bytes (G_CHECKSUM_SHA1, bytes);
}

static GstPadProbeReturn
input_probe_cb (GstPad          *pad,
                GstPadProbeInfo *info,
                gpointer         user_data)
{
  Run *run = user_data;
  g_autoptr(GstCaps) caps = gst_pad_get_current_caps (pad);
  g_autoptr(GBytes) want = NULL;
  GstVideoInfo vinfo;
  GstVideoFrame frame;
  guint64 sum = 0;

  g_assert_true (gst_video_info_from_caps (&vinfo, caps));
  g_assert_true (gst_video_frame_map (&frame, &vinfo, GST_PAD_PROBE_INFO_BUFFER (info), GST_MAP_READ));
  want = packed (&frame, run->n_filters, &sum);
  gst_video_frame_unmap (&frame);
  g_mutex_lock (&run->lock);
  g_ptr_array_add (run->want, sha1_of (want));
  g_array_append_val (run->sums, sum);
  g_mutex_unlock (&run->lock);
  return GST_PAD_PROBE_OK;
}

static GstFlowReturn
new_sample_cb (GstElement *sink,
               gpointer    user_data)
{
  Run *run = user_data;
  g_autoptr(GstSample) sample = NULL;
  g_autoptr(GBytes) got = NULL;
  g_autofree char *sha1 = NULL;
  GstVideoInfo vinfo;
  GstVideoFrame frame;
  guint64 sum;

  g_signal_emit_by_name (sink, "pull-sample", &sample);
  g_assert_true (gst_video_info_from_caps (&vinfo, gst_sample_get_caps (sample)));
  g_assert_true (gst_video_frame_map (&frame, &vinfo, gst_sample_get_buffer (sample), GST_MAP_READ));
  got = packed (&frame, 0, &sum);
  gst_video_frame_unmap (&frame);
  sha1 = sha1_of (got);
  g_mutex_lock (&run->lock);
  g_assert_cmpuint (run->n_out, <, run->want->len);
  if (g_strcmp0 (sha1, g_ptr_array_index (run->want, run->n_out)) != 0 && run->n_wrong++ == 0)
    run->first_wrong = (gint) run->n_out;
  if (run->n_out == 0 || run->n_out == n_frames - 1)
    ds_host_wait_counter_read (&run->waits[run->n_out == 0 ? 0 : 1]);
  run->n_out++;
  g_mutex_unlock (&run->lock);
  return GST_FLOW_OK;
}

/* Runs @description (with an identity "before" and an appsink "sink") to
 * EOS; FALSE with *@why on an error message. */
static gboolean
run_pipeline (const char  *description,
              Run         *run,
              guint       *n_sums,
              char       **why)
{
  g_autoptr(GError) error = NULL;
  GstElement *pipeline = gst_parse_launch (description, &error);
  GstElement *before, *sink;
  GstPad *pad;
  GstBus *bus;
  gboolean done = FALSE, ok = TRUE;

  g_assert_no_error (error);
  before = gst_bin_get_by_name (GST_BIN (pipeline), "before");
  sink = gst_bin_get_by_name (GST_BIN (pipeline), "sink");
  pad = gst_element_get_static_pad (before, "src");
  gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER, input_probe_cb, run, NULL);
  g_object_set (sink, "emit-signals", TRUE, "sync", FALSE, NULL);
  g_signal_connect (sink, "new-sample", G_CALLBACK (new_sample_cb), run);

  bus = gst_element_get_bus (pipeline);
  g_assert_cmpint (gst_element_set_state (pipeline, GST_STATE_PLAYING), !=, GST_STATE_CHANGE_FAILURE);
  while (!done)
    {
      GstMessage *msg = gst_bus_timed_pop_filtered (bus, 60 * GST_SECOND, GST_MESSAGE_ERROR |
                                                    GST_MESSAGE_EOS | GST_MESSAGE_ELEMENT);
      const GstStructure *s;
      guint64 frame = G_MAXUINT64, sum = 0;

      g_assert_nonnull (msg);
      if (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ERROR)
        {
          g_autoptr(GError) err = NULL;
          g_autofree char *debug = NULL;

          gst_message_parse_error (msg, &err, &debug);
          *why = g_strdup_printf ("%s (%s)", err->message, debug ? debug : "");
          ok = FALSE;
          done = TRUE;
        }
      else if (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_EOS)
        {
          done = TRUE;
        }
      else if (gst_structure_has_name ((s = gst_message_get_structure (msg)), "ds-template"))
        {
          g_assert_true (gst_structure_get_uint64 (s, "frame", &frame));
          g_assert_true (gst_structure_get_uint64 (s, "sum", &sum));
          g_assert_cmpuint (frame, ==, *n_sums);
          g_mutex_lock (&run->lock);
          g_assert_cmpuint (sum, ==, g_array_index (run->sums, guint64, *n_sums));
          g_mutex_unlock (&run->lock);
          (*n_sums)++;
        }
      gst_message_unref (msg);
    }
  g_assert_cmpint (gst_element_set_state (pipeline, GST_STATE_NULL), ==, GST_STATE_CHANGE_SUCCESS);
  gst_object_unref (bus);
  gst_object_unref (pad);
  gst_object_unref (sink);
  gst_object_unref (before);
  gst_object_unref (pipeline);
  return ok;
}

static gboolean
gst_has_cuda_streams (void)
{
  guint major, minor, micro, nano;

  gst_version (&major, &minor, &micro, &nano);
  return major > 1 || minor >= 24;
}

/* Skips (TRUE) where cudaupload cannot carry @format in CUDA memory. */
static gboolean
skip_without_cuda_format (const char *format)
{
  GstElementFactory *upload = gst_element_factory_find ("cudaupload");
  g_autofree char *str = g_strdup_printf ("video/x-raw(memory:CUDAMemory),format=%s", format);
  g_autoptr(GstCaps) caps = gst_caps_from_string (str);
  gboolean can = upload != NULL && gst_element_factory_can_src_any_caps (upload, caps);

  gst_clear_object (&upload);
  if (!can)
    {
      g_autofree char *version = gst_version_string ();
      g_autofree char *why = g_strdup_printf ("cudaupload of %s has no %s in CUDA memory", version, format);

      g_test_skip (why);
    }
  return !can;
}

/* One line per count, for run-gpu-checks.sh: "host waits per frame: PATH
 * (GStreamer V, N frames): sync by stack: ds 0.00, ...". */
static void
report_waits (const char  *what,
              const Run   *run,
              const char  *no_count,
              double       per_frame[2][DS_WAIT_N_KINDS][DS_WAIT_N_OWNERS])
{
  static const char *const kinds[] = { "sync", "poll" }, *const views[] = { "by stack", "by element" };
  g_autofree char *version = gst_version_string ();
  g_autoptr(GString) line = g_string_new (NULL);

  ds_host_waits_per_frame (&run->waits[0], &run->waits[1], n_frames - 1, per_frame);
  if (no_count != NULL)
    {
      g_test_message ("host waits per frame: %s (%s): not counted: %s", what, version, no_count);
      return;
    }
  g_string_printf (line, "host waits per frame: %s (%s, frames 2 to %d):", what, version, n_frames);
  for (guint k = 0; k < DS_WAIT_N_KINDS; k++)
    for (guint v = 0; v < 2; v++)
      {
        g_string_append_printf (line, "%s %s %s:", k + v > 0 ? ";" : "", kinds[k], views[v]);
        for (guint o = 0; o < DS_WAIT_N_OWNERS; o++)
          {
            if (v == 1 && o == DS_WAIT_UNKNOWN)
              continue;  /* every wait has a scope */
            g_string_append_printf (line, "%s %s %.2f", o > 0 ? "," : "", ds_wait_owner_name (o),
                                    per_frame[v][k][o]);
          }
      }
  g_test_message ("%s", line->str);
}

static void
test_case (gconstpointer data)
{
  const Case *c = data;
  g_autoptr(GString) desc = g_string_new (NULL);
  g_autofree char *why = NULL;
  Run run = { .n_filters = c->n_filters, .first_wrong = -1 };
  guint n_sums = 0;
  double per_frame[2][DS_WAIT_N_KINDS][DS_WAIT_N_OWNERS];
  const char *no_count;

  DS_GST_TEST_REQUIRE_CUDA ();
  no_count = ds_host_wait_counter_start ();
  if (c->cuda)
    {
      DS_GST_TEST_REQUIRE_ELEMENT ("cudaupload");
      DS_GST_TEST_REQUIRE_ELEMENT ("cudadownload");
      if (skip_without_cuda_format (c->format))
        return;
    }

  g_string_printf (desc, "videotestsrc num-buffers=%d pattern=snow ! video/x-raw,format=%s,width=%d,"
                   "height=%d,framerate=30/1 ! identity name=before ! ", n_frames, c->format, c->width, c->height);
  if (c->cuda)
    g_string_append (desc, "cudaupload ! video/x-raw(memory:CUDAMemory) ! ");
  for (guint i = 0; i < c->n_filters; i++)
    g_string_append (desc, "dsfilter ! ");
  if (c->analyzer)
    g_string_append (desc, "dstemplate ! ");
  if (c->cuda)
    g_string_append (desc, "cudadownload ! video/x-raw ! ");
  g_string_append (desc, "appsink name=sink");
  g_test_message ("%s", desc->str);

  g_mutex_init (&run.lock);
  run.want = g_ptr_array_new_with_free_func (g_free);
  run.sums = g_array_new (FALSE, FALSE, sizeof (guint64));
  if (!run_pipeline (desc->str, &run, &n_sums, &why))
    g_error ("%s: %s", desc->str, why);

  g_assert_cmpuint (run.want->len, ==, n_frames);
  g_assert_cmpuint (run.n_out, ==, n_frames);
  if (run.n_wrong > 0)
    g_error ("%u of %u frames differ from the CPU's, the first is frame %d", run.n_wrong, run.n_out,
             run.first_wrong);
  g_assert_cmpuint (n_sums, ==, c->analyzer ? n_frames : 0);
  g_test_message ("%s %dx%d: %u frames equal to the CPU's%s", c->format, c->width, c->height, run.n_out,
                  c->analyzer ? ", sums equal" : "");
  report_waits (g_test_get_path (), &run, no_count, per_frame);
  /* 1.24+: CUDA memory in and out, and ds's elements never block the host. */
  if (c->cuda && gst_has_cuda_streams () && no_count == NULL)
    {
      g_assert_cmpfloat (per_frame[0][DS_WAIT_SYNC][DS_WAIT_DS], ==, 0);
      g_assert_cmpfloat (per_frame[1][DS_WAIT_SYNC][DS_WAIT_DS], ==, 0);
    }

  g_ptr_array_unref (run.want);
  g_array_unref (run.sums);
  g_mutex_clear (&run.lock);
}

/* GStreamer's own two CUDA filters, for the same count: no check of the
 * frames (scaled), and a skip where they cannot run (GStreamer 1.22's NVRTC
 * options are rejected by CUDA 13's). */
static void
test_gstcuda_chain (void)
{
  g_autofree char *description = g_strdup_printf (
    "videotestsrc num-buffers=%u pattern=snow ! video/x-raw,format=NV12,width=333,height=211,"
    "framerate=30/1 ! identity name=before ! cudaupload ! cudaconvertscale ! "
    "video/x-raw(memory:CUDAMemory),width=335,height=213 ! cudaconvertscale ! "
    "video/x-raw(memory:CUDAMemory),width=333,height=211 ! cudadownload ! video/x-raw ! appsink name=sink",
    n_frames);
  g_autofree char *why = NULL;
  Run run = { .first_wrong = -1 };
  guint n_sums = 0;
  double per_frame[2][DS_WAIT_N_KINDS][DS_WAIT_N_OWNERS];
  const char *no_count;

  g_test_summary ("The host's waits per frame in cudaupload ! cudaconvertscale ! cudaconvertscale "
                  "! cudadownload, by owner");
  DS_GST_TEST_REQUIRE_CUDA ();
  DS_GST_TEST_REQUIRE_ELEMENT ("cudaconvertscale");
  no_count = ds_host_wait_counter_start ();

  g_mutex_init (&run.lock);
  run.want = g_ptr_array_new_with_free_func (g_free);
  run.sums = g_array_new (FALSE, FALSE, sizeof (guint64));
  if (!run_pipeline (description, &run, &n_sums, &why))
    {
      g_autofree char *skip = g_strdup_printf ("cudaconvertscale does not run here: %s", why);

      g_test_skip (skip);
    }
  else
    {
      g_assert_cmpuint (run.n_out, ==, n_frames);
      report_waits (g_test_get_path (), &run, no_count, per_frame);
    }
  g_ptr_array_unref (run.want);
  g_array_unref (run.sums);
  g_mutex_clear (&run.lock);
}

/* Which owner each kind of element has (the counter's by-element view). */
static void
test_wait_owners (void)
{
  static const struct { const char *factory; DsWaitOwner owner; } elements[] = {
    { "dsfilter", DS_WAIT_DS }, { "dstemplate", DS_WAIT_DS }, { "identity", DS_WAIT_OTHER_ELEMENT },
    { "cudaupload", DS_WAIT_GST_CUDA }, { "cudadownload", DS_WAIT_GST_CUDA },
  };

  g_test_summary ("The host-wait counter charges ds*, cuda* and other elements to their owners");
  for (guint i = 0; i < G_N_ELEMENTS (elements); i++)
    {
      GstElement *element = gst_element_factory_make (elements[i].factory, NULL);

      if (element == NULL)
        {
          g_assert_true (g_str_has_prefix (elements[i].factory, "cuda"));  /* nvcodec is optional */
          continue;
        }
      g_assert_cmpstr (ds_wait_owner_name (ds_wait_owner_of_element (element)), ==,
                       ds_wait_owner_name (elements[i].owner));
      gst_object_unref (element);
    }
  g_assert_cmpint (ds_host_wait_counter_scope (), ==, DS_WAIT_APP);
}

#if HAVE_CUDA
static GstPadProbeReturn
sync_probe_cb (GstPad          *pad,
               GstPadProbeInfo *info,
               gpointer         user_data)
{
  g_assert_cmpint (cudaStreamSynchronize (user_data), ==, cudaSuccess);
  return GST_PAD_PROBE_OK;
}
#endif

/* The counter sees the waits of the CUDA runtime (the program's), of
 * libds (its static runtime, through cuGetProcAddress ()) and of
 * GStreamer's CUDA library, and charges each to its owner. */
static void
test_counter (void)
{
#if HAVE_CUDA
  g_autoptr(DsAccessOrder) order = NULL;
  g_autoptr(GError) error = NULL;
  GstElement *pipeline, *identity;
  GstMessage *msg;
  GstCudaContext *ctx;
  GstPad *pad;
  DsHostWaits w[6];
  const char *no_count;
  cudaStream_t stream;

  g_test_summary ("The host-wait counter sees the CUDA runtime's, libds's and gstcuda's waits, "
                  "and whose they are");
  DS_GST_TEST_REQUIRE_CUDA ();
  if ((no_count = ds_host_wait_counter_start ()) != NULL)
    {
      g_autofree char *why = g_strdup_printf ("the host's waits are not counted: %s", no_count);

      g_test_skip (why);
      return;
    }
  g_assert_cmpint (cudaStreamCreate (&stream), ==, cudaSuccess);
  ds_host_wait_counter_read (&w[0]);
  g_assert_cmpint (cudaStreamSynchronize (stream), ==, cudaSuccess);
  g_assert_cmpint (cudaStreamQuery (stream), ==, cudaSuccess);
  ds_host_wait_counter_read (&w[1]);
  order = ds_access_order_new_stream (stream, -1);
  g_assert_true (ds_access_order_synchronize (order, NULL));
  ds_host_wait_counter_read (&w[2]);
  g_assert_true (gst_cuda_load_library ());
  ctx = gst_cuda_context_new (0);
  g_assert_true (gst_cuda_context_push (ctx));
  g_assert_cmpint (CuStreamSynchronize (NULL), ==, CUDA_SUCCESS);
  g_assert_true (gst_cuda_context_pop (NULL));
  gst_object_unref (ctx);
  ds_host_wait_counter_read (&w[3]);
  /* Inside an element: a probe on identity's sink pad runs in its scope. */
  pipeline = gst_parse_launch ("fakesrc num-buffers=2 ! identity name=i ! fakesink", &error);
  g_assert_no_error (error);
  identity = gst_bin_get_by_name (GST_BIN (pipeline), "i");
  pad = gst_element_get_static_pad (identity, "sink");
  gst_object_unref (identity);
  gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER, sync_probe_cb, stream, NULL);
  gst_object_unref (pad);
  g_assert_cmpint (gst_element_set_state (pipeline, GST_STATE_PLAYING), !=, GST_STATE_CHANGE_FAILURE);
  msg = gst_bus_timed_pop_filtered (GST_ELEMENT_BUS (pipeline), 10 * GST_SECOND, GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  g_assert_nonnull (msg);
  g_assert_cmpint (GST_MESSAGE_TYPE (msg), ==, GST_MESSAGE_EOS);
  gst_message_unref (msg);
  g_assert_cmpint (gst_element_set_state (pipeline, GST_STATE_NULL), ==, GST_STATE_CHANGE_SUCCESS);
  gst_object_unref (pipeline);
  ds_host_wait_counter_read (&w[4]);
  g_assert_cmpint (cudaStreamDestroy (stream), ==, cudaSuccess);

#define GREW(a, b, view, kind, owner) (w[b].view[kind][owner] - w[a].view[kind][owner])
  g_test_message ("the program's cudaStreamSynchronize: +%" G_GUINT64_FORMAT " app by stack, +%"
                  G_GUINT64_FORMAT " unknown; libds's: +%" G_GUINT64_FORMAT " ds by stack; gstcuda's "
                  "CuStreamSynchronize: +%" G_GUINT64_FORMAT " app; in identity's chain: +%"
                  G_GUINT64_FORMAT " other-element by element",
                  GREW (0, 1, by_stack, DS_WAIT_SYNC, DS_WAIT_APP), GREW (0, 1, by_stack, DS_WAIT_SYNC, DS_WAIT_UNKNOWN),
                  GREW (1, 2, by_stack, DS_WAIT_SYNC, DS_WAIT_DS), GREW (2, 3, by_stack, DS_WAIT_SYNC, DS_WAIT_APP),
                  GREW (3, 4, by_element, DS_WAIT_SYNC, DS_WAIT_OTHER_ELEMENT));
  g_assert_cmpuint (GREW (0, 1, by_stack, DS_WAIT_SYNC, DS_WAIT_APP), >=, 1);
  g_assert_cmpuint (GREW (0, 1, by_element, DS_WAIT_SYNC, DS_WAIT_APP), >=, 1);
  g_assert_cmpuint (GREW (0, 1, by_stack, DS_WAIT_POLL, DS_WAIT_APP), >=, 1);
  g_assert_cmpuint (GREW (1, 2, by_stack, DS_WAIT_SYNC, DS_WAIT_DS), >=, 1);
  g_assert_cmpuint (GREW (1, 2, by_stack, DS_WAIT_SYNC, DS_WAIT_UNKNOWN), ==, 0);
  g_assert_cmpuint (GREW (2, 3, by_stack, DS_WAIT_SYNC, DS_WAIT_APP), ==, 1);
  g_assert_cmpuint (GREW (3, 4, by_element, DS_WAIT_SYNC, DS_WAIT_OTHER_ELEMENT), >=, 2);
  g_assert_cmpuint (GREW (3, 4, by_stack, DS_WAIT_SYNC, DS_WAIT_APP), >=, 2);
#undef GREW
#else
  g_test_skip ("built without CUDA");
#endif
}

int
main (int    argc,
      char **argv)
{
  static const struct { const char *format; gint width, height; } sizes[] = {
    { "GRAY8", 641, 361 }, { "NV12", 333, 211 }, { "I420", 1279, 719 },
  };
  /* The cases' data, for the whole run. */
  static Case cases[G_N_ELEMENTS (sizes) * 5];
  guint n_cases = 0;
  int status, kept = 1;

  for (int i = 1; i < argc; i++)
    if (g_str_has_prefix (argv[i], "--frames="))
      n_frames = MAX (2, (guint) g_ascii_strtoull (argv[i] + strlen ("--frames="), NULL, 10));
    else
      argv[kept++] = argv[i];
  argv[kept] = NULL;
  argc = kept;
  ds_gst_test_init (&argc, &argv);

  ds_gst_test_add_func ("/DsGst/Template/registered", test_registered);
  ds_gst_test_add_func ("/DsGst/Template/no-device", test_no_device);
  ds_gst_test_add_func ("/DsGst/Template/wait-owners", test_wait_owners);
  ds_gst_test_add_func ("/DsGst/Template/gpu/host-wait-counter", test_counter);
  for (guint i = 0; i < G_N_ELEMENTS (sizes); i++)
    for (guint kind = 0; kind < 4; kind++)
      {
        Case *c = &cases[n_cases++];
        char path[128];

        c->format = sizes[i].format;
        c->width = sizes[i].width;
        c->height = sizes[i].height;
        c->cuda = kind % 2 == 1;
        c->n_filters = kind >= 2;
        c->analyzer = kind < 2;
        g_snprintf (path, sizeof path, "/DsGst/Template/gpu/%s-%s-%s", c->analyzer ? "analyzer" : "filter",
                    c->cuda ? "cuda" : "system", c->format);
        ds_gst_test_add_data_func (path, c, test_case);
      }
  for (guint i = 1; i < G_N_ELEMENTS (sizes); i++)
    {
      Case *c = &cases[n_cases++];
      char path[128];

      *c = (Case) { sizes[i].format, sizes[i].width, sizes[i].height, TRUE, 2, TRUE };
      g_snprintf (path, sizeof path, "/DsGst/Template/gpu/chain-%s", c->format);
      ds_gst_test_add_data_func (path, c, test_case);
    }
  ds_gst_test_add_func ("/DsGst/Template/gpu/gstcuda-chain", test_gstcuda_chain);

  status = g_test_run ();
  gst_deinit ();
  return status;
}
