/* gstdslumastats.c: per-frame luma statistics on the GPU, with ds scratch
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

/**
 * SECTION:element-dslumastats
 *
 * Computes, for every frame of raw video, the histogram, mean, minimum and
 * maximum of its luma (the 8-bit Y or GRAY plane) on a CUDA GPU, and posts
 * them as element messages named `ds-luma-stats` on the bus. The video
 * passes through unchanged.
 *
 * Each frame needs scratch memory: pinned memory to stage the plane of
 * system-memory video, device memory for the plane and the partial results
 * of the first kernel pass, device memory for the result and pinned memory
 * to read it back. All of it comes from one ds scratchpad, released — in
 * stream order — as soon as the frame's work is queued: once ds's pools
 * are warm, no object and no CUDA allocation is made per frame, and the
 * streaming thread never waits for the GPU. The results are posted from a
 * CUDA host function when the GPU is done with the frame.
 *
 * `video/x-raw(memory:CUDAMemory)` is read in place. With GStreamer 1.24 or
 * newer the frame's work runs on the stream of the buffer's CUDA memory,
 * after the producer's work; with 1.22, whose CUDA memory has no stream,
 * on the element's own stream, and the element waits for it before it lets
 * the buffer go. CUDA memory of another context is adopted with that
 * context when `cuda-device-id` allows it (-1, or the same device), as
 * GStreamer's own CUDA filters do.
 *
 * Messages: `frame` (guint64, from 0 at start), `timestamp` and
 * `running-time` (GstClockTime), `width`, `height` (gint), and per the
 * `statistics` property `mean` (gdouble) and `sum` (guint64), `min`, `max`
 * (guint) and `histogram` (a #GstValueArray of 256 guint). A message is
 * posted from a thread of the CUDA driver: a bus sync handler must not
 * call CUDA.
 *
 * ## Example launch line
 * |[
 * gst-launch-1.0 -m videotestsrc num-buffers=10 ! dslumastats ! fakesink
 * ]|
 */

#include "config.h"

#include <string.h>

#include <gst/video/video.h>
#include <gst/cuda/gstcudaloader.h>
#include <gst/cuda/gstcudamemory.h>
#include <gst/cuda/gstcudautils.h>
#include <ds-gst.h>

#include "gstdslumastats.h"
#include "ds-luma-stats.h"

GST_DEBUG_CATEGORY_STATIC (gst_ds_luma_stats_debug);
#define GST_CAT_DEFAULT gst_ds_luma_stats_debug

#define FORMATS "{ GRAY8, I420, YV12, NV12, NV21, Y42B, Y444 }"
#define TEMPLATE_CAPS \
  GST_VIDEO_CAPS_MAKE_WITH_FEATURES (GST_CAPS_FEATURE_MEMORY_CUDA_MEMORY, FORMATS) "; " \
  GST_VIDEO_CAPS_MAKE (FORMATS)

#define DEFAULT_DEVICE_ID  -1
#define DEFAULT_STATISTICS (GST_DS_LUMA_STATISTICS_MEAN | GST_DS_LUMA_STATISTICS_MIN_MAX | \
                            GST_DS_LUMA_STATISTICS_HISTOGRAM)

enum
{
  PROP_0,
  PROP_CUDA_DEVICE_ID,
  PROP_STATISTICS,
};

/* A frame whose results are on their way from the GPU to the bus. */
typedef struct
{
  GstDsLumaStats     *self;
  const DsLumaResult *readback;     /* pinned scratch, filled on the stream */
  GstStructure       *message;      /* the fields known on the host */
  guint               statistics;
  gdouble             n_pixels;
} Frame;

struct _GstDsLumaStats
{
  GstBaseTransform parent;

  gint             device_id;       /* properties, under the object lock */
  guint            statistics;

  GstCudaContext  *context;         /* start to stop */
  DsGstStream     *stream;
  DsScratchpad    *scratch;
  GstVideoInfo     info;
  guint64          n_frames;

  GMutex           lock;            /* frames queued, not yet posted */
  GCond            cond;
  guint            n_queued;
};

GType
gst_ds_luma_statistics_get_type (void)
{
  static gsize type_id;
  static const GFlagsValue values[] = {
    { GST_DS_LUMA_STATISTICS_MEAN, "Mean and sum of the luma values", "mean" },
    { GST_DS_LUMA_STATISTICS_MIN_MAX, "Minimum and maximum luma value", "min-max" },
    { GST_DS_LUMA_STATISTICS_HISTOGRAM, "Histogram of the 256 luma values", "histogram" },
    { 0, NULL, NULL },
  };

  if (g_once_init_enter (&type_id))
    g_once_init_leave (&type_id, g_flags_register_static ("GstDsLumaStatistics", values));

  return (GType) type_id;
}

G_DEFINE_FINAL_TYPE (GstDsLumaStats, gst_ds_luma_stats, GST_TYPE_BASE_TRANSFORM)

GST_ELEMENT_REGISTER_DEFINE_WITH_CODE (dslumastats, "dslumastats", GST_RANK_NONE,
                                       GST_TYPE_DS_LUMA_STATS,
                                       GST_DEBUG_CATEGORY_INIT (gst_ds_luma_stats_debug,
                                                                "dslumastats", 0,
                                                                "ds luma statistics on the GPU"));

static GstStaticPadTemplate sink_template =
  GST_STATIC_PAD_TEMPLATE ("sink", GST_PAD_SINK, GST_PAD_ALWAYS, GST_STATIC_CAPS (TEMPLATE_CAPS));
static GstStaticPadTemplate src_template =
  GST_STATIC_PAD_TEMPLATE ("src", GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS (TEMPLATE_CAPS));

static gboolean
cuda_ok (cudaError_t   status,
         const char   *call,
         GError      **error)
{
  if (status == cudaSuccess)
    return TRUE;
  (void) cudaGetLastError ();
  g_set_error (error, DS_ERROR, DS_ERROR_CUDA, "%s failed: %s", call, cudaGetErrorString (status));
  return FALSE;
}

/* --- Results: posted when the GPU is done ------------------------------ */

/* A CUDA host function: runs on a driver thread once the frame's read-back
 * has landed, and must not call CUDA. The pinned block it reads goes back
 * to the pool only after it returns (the release came after it, in the
 * stream's order). */
static void CUDART_CB
frame_done_cb (void *data)
{
  Frame *f = data;
  GstDsLumaStats *self = f->self;
  const DsLumaResult *r = f->readback;

  if (f->statistics & GST_DS_LUMA_STATISTICS_MEAN)
    gst_structure_set (f->message, "mean", G_TYPE_DOUBLE, r->sum / f->n_pixels,
                       "sum", G_TYPE_UINT64, (guint64) r->sum, NULL);
  if (f->statistics & GST_DS_LUMA_STATISTICS_MIN_MAX)
    gst_structure_set (f->message, "min", G_TYPE_UINT, (guint) r->min,
                       "max", G_TYPE_UINT, (guint) r->max, NULL);
  if (f->statistics & GST_DS_LUMA_STATISTICS_HISTOGRAM)
    {
      GValue array = G_VALUE_INIT, bin = G_VALUE_INIT;

      g_value_init (&array, GST_TYPE_ARRAY);
      g_value_init (&bin, G_TYPE_UINT);
      for (guint i = 0; i < DS_LUMA_BINS; i++)
        {
          g_value_set_uint (&bin, r->histogram[i]);
          gst_value_array_append_value (&array, &bin);
        }
      gst_structure_take_value (f->message, "histogram", &array);
    }
  gst_element_post_message (GST_ELEMENT (self),
                            gst_message_new_element (GST_OBJECT (self), f->message));
  g_free (f);

  g_mutex_lock (&self->lock);
  if (--self->n_queued == 0)
    g_cond_broadcast (&self->cond);
  g_mutex_unlock (&self->lock);
}

/* Waits until every queued frame has been posted (EOS, stop). */
static void
wait_for_frames (GstDsLumaStats *self)
{
  gint64 end = g_get_monotonic_time () + 20 * G_TIME_SPAN_SECOND;

  g_mutex_lock (&self->lock);
  while (self->n_queued > 0)
    if (!g_cond_wait_until (&self->cond, &self->lock, end))
      {
        GST_WARNING_OBJECT (self, "%u frame(s) of results never came back from the GPU",
                            self->n_queued);
        break;
      }
  g_mutex_unlock (&self->lock);
}

/* --- The CUDA context, its stream, the scratchpad ----------------------- */

static gboolean
use_context (GstDsLumaStats *self,
             GstCudaContext *context,
             GError        **error)
{
  g_clear_object (&self->scratch);
  g_clear_pointer (&self->stream, ds_gst_stream_unref);
  if (context != self->context)
    gst_object_replace ((GstObject **) &self->context, GST_OBJECT (context));

  /* ds-gst owns the stream: it lives as long as the scratchpad on it. */
  self->stream = ds_gst_stream_new (context, error);
  if (self->stream == NULL)
    return FALSE;
  self->scratch = ds_gst_stream_new_scratchpad (self->stream);
  return TRUE;
}

static gboolean
gst_ds_luma_stats_start (GstBaseTransform *trans)
{
  GstDsLumaStats *self = GST_DS_LUMA_STATS (trans);
  g_autoptr(GError) error = NULL;
  gint device_id;

  GST_OBJECT_LOCK (self);
  device_id = self->device_id;
  GST_OBJECT_UNLOCK (self);
  self->n_frames = 0;

  /* gstcuda opens libcuda itself; without it a context cannot be made. */
  if (!gst_cuda_load_library ())
    {
      GST_ELEMENT_ERROR (self, RESOURCE, NOT_FOUND,
                         ("No CUDA device: the CUDA driver library could not be loaded"),
                         ("gst_cuda_load_library () failed: is the NVIDIA driver installed?"));
      return FALSE;
    }
  /* The pipeline's context if there is one (neighbours, the application),
   * else a new one, shared with the rest of the pipeline. */
  if (!gst_cuda_ensure_element_context (GST_ELEMENT (self), device_id, &self->context))
    {
      GST_ELEMENT_ERROR (self, RESOURCE, NOT_FOUND,
                         ("No CUDA device: no CUDA context for device %d", device_id), (NULL));
      return FALSE;
    }
  if (!use_context (self, self->context, &error))
    {
      GST_ELEMENT_ERROR (self, RESOURCE, FAILED, ("%s", error->message), (NULL));
      return FALSE;
    }
  return TRUE;
}

static gboolean
gst_ds_luma_stats_stop (GstBaseTransform *trans)
{
  GstDsLumaStats *self = GST_DS_LUMA_STATS (trans);

  wait_for_frames (self);
  /* Once the last of its streams is gone, the context's pools give back
   * what they hold (ds-gst does it). */
  g_clear_object (&self->scratch);
  g_clear_pointer (&self->stream, ds_gst_stream_unref);
  gst_clear_object (&self->context);
  return TRUE;
}

static gboolean
gst_ds_luma_stats_sink_event (GstBaseTransform *trans,
                              GstEvent         *event)
{
  /* Results come before EOS, and are not left behind by a flush. */
  if (GST_EVENT_TYPE (event) == GST_EVENT_EOS || GST_EVENT_TYPE (event) == GST_EVENT_FLUSH_STOP)
    wait_for_frames (GST_DS_LUMA_STATS (trans));

  return GST_BASE_TRANSFORM_CLASS (gst_ds_luma_stats_parent_class)->sink_event (trans, event);
}

static void
gst_ds_luma_stats_set_context (GstElement *element,
                               GstContext *context)
{
  GstDsLumaStats *self = GST_DS_LUMA_STATS (element);

  gst_cuda_handle_set_context (element, context, self->device_id, &self->context);
  GST_ELEMENT_CLASS (gst_ds_luma_stats_parent_class)->set_context (element, context);
}

static gboolean
gst_ds_luma_stats_query (GstBaseTransform *trans,
                         GstPadDirection   direction,
                         GstQuery         *query)
{
  GstDsLumaStats *self = GST_DS_LUMA_STATS (trans);

  if (GST_QUERY_TYPE (query) == GST_QUERY_CONTEXT &&
      gst_cuda_handle_context_query (GST_ELEMENT (trans), query, self->context))
    return TRUE;

  return GST_BASE_TRANSFORM_CLASS (gst_ds_luma_stats_parent_class)->query (trans, direction, query);
}

static gboolean
gst_ds_luma_stats_set_caps (GstBaseTransform *trans,
                            GstCaps          *incaps,
                            GstCaps          *outcaps)
{
  GstDsLumaStats *self = GST_DS_LUMA_STATS (trans);

  return gst_video_info_from_caps (&self->info, incaps);
}

/* CUDA memory of another context: take that context, as GStreamer's CUDA
 * filters do, unless the element was told to use another device. */
static void
gst_ds_luma_stats_before_transform (GstBaseTransform *trans,
                                    GstBuffer        *buffer)
{
  GstDsLumaStats *self = GST_DS_LUMA_STATS (trans);
  GstMemory *mem = gst_buffer_peek_memory (buffer, 0);
  g_autoptr(GError) error = NULL;
  GstCudaContext *context;
  guint device = 0;

  if (!gst_is_cuda_memory (mem) || GST_CUDA_MEMORY_CAST (mem)->context == self->context)
    return;
  context = GST_CUDA_MEMORY_CAST (mem)->context;
  g_object_get (context, "cuda-device-id", &device, NULL);
  if (self->device_id >= 0 && (guint) self->device_id != device)
    return;

  GST_INFO_OBJECT (self, "adopting %" GST_PTR_FORMAT ", the context of the input", context);
  wait_for_frames (self);
  if (!use_context (self, context, &error))
    GST_ELEMENT_ERROR (self, RESOURCE, FAILED, ("%s", error->message), (NULL));
}

/* --- Per frame ---------------------------------------------------------- */

/* Queues the statistics of the 8-bit plane at @plane (device memory when
 * @on_device, else host memory) on the scratchpad's stream, with the
 * frame's context current. Sets *@queued once the host function that
 * posts @f (and frees it) is queued. */
static gboolean
queue_frame (GstDsLumaStats  *self,
             const guint8    *plane,
             gint             stride,
             gboolean         on_device,
             Frame           *f,
             gboolean        *queued,
             GError         **error)
{
  DsScratchpad *sp = self->scratch;
  cudaStream_t stream = ds_access_order_get_stream (ds_scratchpad_get_device_order (sp));
  gint width = GST_VIDEO_INFO_COMP_WIDTH (&self->info, 0);
  gint height = GST_VIDEO_INFO_COMP_HEIGHT (&self->info, 0);
  gsize n_partials = (gsize) ds_luma_stats_n_partials (height);
  DsLumaPartial *partials;
  DsLumaResult *result;

  if (!on_device)
    {
      /* Staged through pinned scratch so that the upload is asynchronous. */
      guint8 *upload = ds_scratchpad_alloc (sp, DS_MEMORY_KIND_PINNED, (gsize) width * height, 0, error);
      guint8 *copy = upload != NULL ? ds_scratchpad_alloc (sp, DS_MEMORY_KIND_DEVICE, (gsize) width * height, 0, error) : NULL;

      if (copy == NULL)
        return FALSE;
      for (gint y = 0; y < height; y++)
        memcpy (upload + (gsize) y * width, plane + (gsize) y * stride, width);
      if (!cuda_ok (cudaMemcpyAsync (copy, upload, (gsize) width * height, cudaMemcpyHostToDevice,
                                     stream), "cudaMemcpyAsync", error))
        return FALSE;
      plane = copy;
      stride = width;
    }

  partials = DS_SCRATCHPAD_ALLOC_DEVICE (sp, DsLumaPartial, n_partials, error);
  result = partials != NULL ? DS_SCRATCHPAD_ALLOC_DEVICE (sp, DsLumaResult, 1, error) : NULL;
  f->readback = result != NULL ? DS_SCRATCHPAD_ALLOC_PINNED (sp, DsLumaResult, 1, error) : NULL;
  if (f->readback == NULL)
    return FALSE;

  *queued = cuda_ok (ds_luma_stats_launch (plane, width, height, stride, partials, result, stream),
                     "ds_luma_stats_launch", error) &&
            cuda_ok (cudaMemcpyAsync ((void *) f->readback, result, sizeof (DsLumaResult),
                                      cudaMemcpyDeviceToHost, stream), "cudaMemcpyAsync", error) &&
            cuda_ok (cudaLaunchHostFunc (stream, frame_done_cb, f), "cudaLaunchHostFunc", error);
  return *queued;
}

static GstFlowReturn
gst_ds_luma_stats_transform_ip (GstBaseTransform *trans,
                                GstBuffer        *buffer)
{
  GstDsLumaStats *self = GST_DS_LUMA_STATS (trans);
  GstMemory *mem = gst_buffer_peek_memory (buffer, 0);
  gboolean on_device = gst_buffer_n_memory (buffer) == 1 && gst_is_cuda_memory (mem) &&
                       GST_CUDA_MEMORY_CAST (mem)->context == self->context;
  GstClockTime pts = GST_BUFFER_PTS (buffer);
  g_autoptr(GError) error = NULL;
  GstVideoFrame frame;
  GstMapInfo map;
  const guint8 *plane;
  gint stride;
  gboolean ok, own_stream, queued = FALSE;
  Frame *f;

  if (self->stream == NULL)  /* a context that could not be adopted */
    return GST_FLOW_ERROR;
  /* The buffer's own stream where it has one (GStreamer 1.24+), else ours;
   * the scratchpad is released, so it may change. */
  if (!ds_gst_stream_follow_buffer (self->stream, self->scratch, buffer, &error))
    goto failed;
  own_stream = ds_access_order_equal (ds_scratchpad_get_device_order (self->scratch),
                                      ds_gst_stream_get_order (self->stream));

  if (on_device)
    {
      GstCudaMemory *cmem = GST_CUDA_MEMORY_CAST (mem);

      if (!gst_memory_map (mem, &map, GST_MAP_READ | GST_MAP_CUDA))
        goto map_failed;
      plane = (const guint8 *) map.data + GST_VIDEO_INFO_PLANE_OFFSET (&cmem->info, 0);
      stride = GST_VIDEO_INFO_PLANE_STRIDE (&cmem->info, 0);
    }
  else
    {
      if (!gst_video_frame_map (&frame, &self->info, buffer, GST_MAP_READ))
        goto map_failed;
      plane = GST_VIDEO_FRAME_COMP_DATA (&frame, 0);
      stride = GST_VIDEO_FRAME_COMP_STRIDE (&frame, 0);
    }

  f = g_new0 (Frame, 1);
  f->self = self;
  f->n_pixels = (gdouble) GST_VIDEO_INFO_COMP_WIDTH (&self->info, 0) *
                GST_VIDEO_INFO_COMP_HEIGHT (&self->info, 0);
  GST_OBJECT_LOCK (self);
  f->statistics = self->statistics;
  GST_OBJECT_UNLOCK (self);
  f->message = gst_structure_new ("ds-luma-stats",
                                  "frame", G_TYPE_UINT64, self->n_frames,
                                  "timestamp", G_TYPE_UINT64, pts,
                                  "running-time", G_TYPE_UINT64,
                                  gst_segment_to_running_time (&trans->segment, GST_FORMAT_TIME, pts),
                                  "width", G_TYPE_INT, GST_VIDEO_INFO_COMP_WIDTH (&self->info, 0),
                                  "height", G_TYPE_INT, GST_VIDEO_INFO_COMP_HEIGHT (&self->info, 0),
                                  NULL);

  g_mutex_lock (&self->lock);
  self->n_queued++;
  g_mutex_unlock (&self->lock);
  ok = gst_cuda_context_push (self->context);
  if (!ok)
    g_set_error_literal (&error, DS_ERROR, DS_ERROR_CUDA, "Could not make the CUDA context current");
  else
    {
      ok = queue_frame (self, plane, stride, on_device, f, &queued, &error);
      /* GStreamer 1.22's CUDA memory has no stream: whoever writes it next
       * does not wait for this one, so the read must be over before the
       * buffer goes. (With 1.24+ the work is on the buffer's stream.) */
      if (ok && on_device && own_stream)
        ok = cuda_ok (cudaStreamSynchronize (ds_gst_stream_get_handle (self->stream)),
                      "cudaStreamSynchronize", &error);
      gst_cuda_context_pop (NULL);
    }
  /* Given back while the work is queued: ds reuses it in stream order. */
  ds_scratchpad_release (self->scratch);

  if (on_device)
    gst_memory_unmap (mem, &map);
  else
    gst_video_frame_unmap (&frame);

  if (!queued)
    {
      /* Nothing was queued that will post it. */
      gst_structure_free (f->message);
      g_free (f);
      g_mutex_lock (&self->lock);
      self->n_queued--;
      g_mutex_unlock (&self->lock);
    }
  if (!ok)
    goto failed;
  self->n_frames++;
  return GST_FLOW_OK;

map_failed:
  GST_ELEMENT_ERROR (self, STREAM, FAILED, ("Could not map the video frame"), (NULL));
  return GST_FLOW_ERROR;

failed:
  GST_ELEMENT_ERROR (self, STREAM, FAILED,
                     ("Could not compute the frame's statistics on the GPU: %s", error->message),
                     (NULL));
  return GST_FLOW_ERROR;
}

/* --- Class ------------------------------------------------------------ */

static void
gst_ds_luma_stats_set_property (GObject      *object,
                                guint         prop_id,
                                const GValue *value,
                                GParamSpec   *pspec)
{
  GstDsLumaStats *self = GST_DS_LUMA_STATS (object);

  GST_OBJECT_LOCK (self);
  if (prop_id == PROP_CUDA_DEVICE_ID)
    self->device_id = g_value_get_int (value);
  else if (prop_id == PROP_STATISTICS)
    self->statistics = g_value_get_flags (value);
  else
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
  GST_OBJECT_UNLOCK (self);
}

static void
gst_ds_luma_stats_get_property (GObject    *object,
                                guint       prop_id,
                                GValue     *value,
                                GParamSpec *pspec)
{
  GstDsLumaStats *self = GST_DS_LUMA_STATS (object);

  GST_OBJECT_LOCK (self);
  if (prop_id == PROP_CUDA_DEVICE_ID)
    g_value_set_int (value, self->device_id);
  else if (prop_id == PROP_STATISTICS)
    g_value_set_flags (value, self->statistics);
  else
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
  GST_OBJECT_UNLOCK (self);
}

static void
gst_ds_luma_stats_finalize (GObject *object)
{
  GstDsLumaStats *self = GST_DS_LUMA_STATS (object);

  gst_clear_object (&self->context);
  g_mutex_clear (&self->lock);
  g_cond_clear (&self->cond);

  G_OBJECT_CLASS (gst_ds_luma_stats_parent_class)->finalize (object);
}

static void
gst_ds_luma_stats_class_init (GstDsLumaStatsClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstBaseTransformClass *trans_class = GST_BASE_TRANSFORM_CLASS (klass);

  object_class->set_property = gst_ds_luma_stats_set_property;
  object_class->get_property = gst_ds_luma_stats_get_property;
  object_class->finalize = gst_ds_luma_stats_finalize;

  g_object_class_install_property (object_class, PROP_CUDA_DEVICE_ID,
    g_param_spec_int ("cuda-device-id", "CUDA device ID",
                      "The CUDA device to use (-1 = auto: the pipeline's context, or the input's)",
                      -1, G_MAXINT, DEFAULT_DEVICE_ID,
                      G_PARAM_READWRITE | GST_PARAM_MUTABLE_READY | G_PARAM_STATIC_STRINGS));
  g_object_class_install_property (object_class, PROP_STATISTICS,
    g_param_spec_flags ("statistics", "Statistics", "Which statistics the element messages carry",
                        GST_TYPE_DS_LUMA_STATISTICS, DEFAULT_STATISTICS,
                        G_PARAM_READWRITE | GST_PARAM_MUTABLE_PLAYING | G_PARAM_STATIC_STRINGS));

  gst_element_class_set_static_metadata (element_class,
    "ds luma statistics", "Filter/Analyzer/Video/Hardware",
    "Per-frame luma histogram, mean, minimum and maximum of raw video, "
    "computed on a CUDA GPU with ds scratch memory",
    "The ds authors");
  gst_element_class_add_static_pad_template (element_class, &sink_template);
  gst_element_class_add_static_pad_template (element_class, &src_template);
  element_class->set_context = GST_DEBUG_FUNCPTR (gst_ds_luma_stats_set_context);

  trans_class->passthrough_on_same_caps = TRUE;
  trans_class->transform_ip_on_passthrough = TRUE;
  trans_class->start = GST_DEBUG_FUNCPTR (gst_ds_luma_stats_start);
  trans_class->stop = GST_DEBUG_FUNCPTR (gst_ds_luma_stats_stop);
  trans_class->sink_event = GST_DEBUG_FUNCPTR (gst_ds_luma_stats_sink_event);
  trans_class->set_caps = GST_DEBUG_FUNCPTR (gst_ds_luma_stats_set_caps);
  trans_class->query = GST_DEBUG_FUNCPTR (gst_ds_luma_stats_query);
  trans_class->before_transform = GST_DEBUG_FUNCPTR (gst_ds_luma_stats_before_transform);
  trans_class->transform_ip = GST_DEBUG_FUNCPTR (gst_ds_luma_stats_transform_ip);

  gst_type_mark_as_plugin_api (GST_TYPE_DS_LUMA_STATISTICS, 0);
}

static void
gst_ds_luma_stats_init (GstDsLumaStats *self)
{
  self->device_id = DEFAULT_DEVICE_ID;
  self->statistics = DEFAULT_STATISTICS;
  g_mutex_init (&self->lock);
  g_cond_init (&self->cond);

  gst_base_transform_set_in_place (GST_BASE_TRANSFORM (self), TRUE);
  gst_base_transform_set_passthrough (GST_BASE_TRANSFORM (self), TRUE);
  gst_base_transform_set_qos_enabled (GST_BASE_TRANSFORM (self), TRUE);
}
