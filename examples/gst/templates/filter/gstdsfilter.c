/* gstdsfilter.c: a CUDA filter (input -> output) with ds scratch; copy it
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Blurs the luma plane 3x3 and copies the others, in CUDA or system memory.
 * A GstBaseTransform with transform (), as GStreamer's CUDA filters are: a
 * GstVideoFilter maps frames for the host (it would download CUDA memory),
 * and one that overrides transform without transform_frame runs in place.
 */

#include <gst/base/gstbasetransform.h>
#include <gst/video/video.h>
#include <gst/cuda/gstcudabufferpool.h>
#include <gst/cuda/gstcudaloader.h>
#include <gst/cuda/gstcudamemory.h>
#include <gst/cuda/gstcudautils.h>
#include <ds-gst.h>

#include "ds-filter-kernel.h"

#define FORMATS "{ GRAY8, I420, NV12 }"
#define CAPS GST_VIDEO_CAPS_MAKE_WITH_FEATURES (GST_CAPS_FEATURE_MEMORY_CUDA_MEMORY, FORMATS) ";" \
             GST_VIDEO_CAPS_MAKE (FORMATS)

G_DECLARE_FINAL_TYPE (GstDsFilter, gst_ds_filter, GST, DS_FILTER, GstBaseTransform)

struct _GstDsFilter
{
  GstBaseTransform  parent;
  gint              device_id;  /* cuda-device-id: -1, any */
  GstCudaContext   *context;
  DsGstStream      *stream;     /* start to stop; also the stream of our buffer pools */
  DsScratchpad     *scratch;    /* released after each buffer */
  GstVideoInfo      info;       /* the same caps in and out */
};

G_DEFINE_FINAL_TYPE (GstDsFilter, gst_ds_filter, GST_TYPE_BASE_TRANSFORM)

static GstStaticPadTemplate sink_template =
  GST_STATIC_PAD_TEMPLATE ("sink", GST_PAD_SINK, GST_PAD_ALWAYS, GST_STATIC_CAPS (CAPS));
static GstStaticPadTemplate src_template =
  GST_STATIC_PAD_TEMPLATE ("src", GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS (CAPS));

static gboolean
is_cuda (GstCaps *caps)
{
  GstCapsFeatures *features = gst_caps_get_features (caps, 0);

  return features != NULL && gst_caps_features_contains (features, GST_CAPS_FEATURE_MEMORY_CUDA_MEMORY);
}

static gboolean
gst_ds_filter_start (GstBaseTransform *trans)
{
  GstDsFilter *self = GST_DS_FILTER (trans);
  g_autoptr(GError) error = NULL;

  if (!gst_cuda_load_library () ||
      !gst_cuda_ensure_element_context (GST_ELEMENT (self), self->device_id, &self->context) ||
      (self->stream = ds_gst_stream_new (self->context, &error)) == NULL)
    {
      GST_ELEMENT_ERROR (self, RESOURCE, NOT_FOUND, ("No CUDA device"), ("%s", error ? error->message : ""));
      return FALSE;
    }
  self->scratch = ds_gst_stream_new_scratchpad (self->stream);
  return TRUE;
}

static gboolean
gst_ds_filter_stop (GstBaseTransform *trans)
{
  GstDsFilter *self = GST_DS_FILTER (trans);

  g_clear_object (&self->scratch);
  g_clear_pointer (&self->stream, ds_gst_stream_unref);
  gst_clear_object (&self->context);
  return TRUE;
}

static gboolean
gst_ds_filter_set_caps (GstBaseTransform *trans,
                        GstCaps          *incaps,
                        GstCaps          *outcaps)
{
  return gst_video_info_from_caps (&GST_DS_FILTER (trans)->info, incaps);
}

/* @pool (taken; NULL: a new one) configured for @caps; for CUDA caps, a
 * CUDA pool of our context, on GStreamer 1.24+ with a stream: the pool's
 * own (downstream's), else ours. NULL on failure. */
static GstBufferPool *
configure_pool (GstDsFilter   *self,
                GstBufferPool *pool,
                GstCaps       *caps,
                guint         *size,
                guint          min,
                guint          max)
{
  GstStructure *config;
  GstVideoInfo info;

  if (caps == NULL || !gst_video_info_from_caps (&info, caps))
    {
      gst_clear_object (&pool);
      return NULL;
    }
  if (pool != NULL && is_cuda (caps) &&
      (!GST_IS_CUDA_BUFFER_POOL (pool) || GST_CUDA_BUFFER_POOL (pool)->context != self->context))
    gst_clear_object (&pool);
  if (pool == NULL)
    pool = is_cuda (caps) ? gst_cuda_buffer_pool_new (self->context) : gst_video_buffer_pool_new ();
  config = gst_buffer_pool_get_config (pool);
  gst_buffer_pool_config_add_option (config, GST_BUFFER_POOL_OPTION_VIDEO_META);
  gst_buffer_pool_config_set_params (config, caps, MAX (*size, (guint) info.size), min, max);
#if DS_GST_HAVE_CUDA_STREAM
  if (GST_IS_CUDA_BUFFER_POOL (pool))
    {
      GstCudaStream *stream = gst_buffer_pool_config_get_cuda_stream (config);

      if (stream == NULL)
        gst_buffer_pool_config_set_cuda_stream (config, ds_gst_stream_get_cuda_stream (self->stream));
      gst_clear_cuda_stream (&stream);
    }
#endif
  if (!gst_buffer_pool_set_config (pool, config))
    {
      gst_object_unref (pool);
      return NULL;
    }
  config = gst_buffer_pool_get_config (pool);  /* the pool may have changed the size */
  gst_buffer_pool_config_get_params (config, NULL, size, NULL, NULL);
  gst_structure_free (config);
  return pool;
}

/* Upstream writes into buffers of our pool: CUDA memory on our stream. */
static gboolean
gst_ds_filter_propose_allocation (GstBaseTransform *trans,
                                  GstQuery         *decide_query,
                                  GstQuery         *query)
{
  GstBufferPool *pool;
  GstCaps *caps;
  guint size = 0;

  gst_query_parse_allocation (query, &caps, NULL);
  if (caps == NULL)
    return FALSE;
  if (gst_query_get_n_allocation_pools (query) == 0)
    {
      if ((pool = configure_pool (GST_DS_FILTER (trans), NULL, caps, &size, 0, 0)) == NULL)
        return FALSE;
      gst_query_add_allocation_pool (query, pool, size, 0, 0);
      gst_object_unref (pool);
    }
  gst_query_add_allocation_meta (query, GST_VIDEO_META_API_TYPE, NULL);
  return TRUE;
}

/* Our output buffers: downstream's pool (for CUDA, one of our context), else ours. */
static gboolean
gst_ds_filter_decide_allocation (GstBaseTransform *trans,
                                 GstQuery         *query)
{
  GstBufferPool *pool = NULL;
  GstCaps *caps;
  guint size = 0, min = 0, max = 0;

  gst_query_parse_allocation (query, &caps, NULL);
  if (gst_query_get_n_allocation_pools (query) > 0)
    gst_query_parse_nth_allocation_pool (query, 0, &pool, &size, &min, &max);
  if ((pool = configure_pool (GST_DS_FILTER (trans), pool, caps, &size, min, max)) == NULL)
    return FALSE;
  if (gst_query_get_n_allocation_pools (query) > 0)
    gst_query_set_nth_allocation_pool (query, 0, pool, size, min, max);
  else
    gst_query_add_allocation_pool (query, pool, size, min, max);
  gst_object_unref (pool);
  return GST_BASE_TRANSFORM_CLASS (gst_ds_filter_parent_class)->decide_allocation (trans, query);
}

/* Each plane, on the scratchpad's stream: system memory through device scratch. */
static gboolean
queue_work (GstDsFilter   *self,
            GstVideoFrame *in,
            GstVideoFrame *out)
{
  DsScratchpad *sp = self->scratch;
  cudaStream_t stream = ds_access_order_get_stream (ds_scratchpad_get_device_order (sp));
  gboolean in_dev = gst_is_cuda_memory (gst_buffer_peek_memory (in->buffer, 0));
  gboolean out_dev = gst_is_cuda_memory (gst_buffer_peek_memory (out->buffer, 0));

  for (guint p = 0; p < GST_VIDEO_FRAME_N_PLANES (in); p++)
    {
      /* Bytes of a row: plane p starts with component p in these formats. */
      int w = GST_VIDEO_FRAME_COMP_WIDTH (in, p) * GST_VIDEO_FRAME_COMP_PSTRIDE (in, p);
      int h = GST_VIDEO_FRAME_COMP_HEIGHT (in, p);
      const uint8_t *src = GST_VIDEO_FRAME_PLANE_DATA (in, p);
      uint8_t *dst = GST_VIDEO_FRAME_PLANE_DATA (out, p);
      int src_stride = GST_VIDEO_FRAME_PLANE_STRIDE (in, p), dst_stride = GST_VIDEO_FRAME_PLANE_STRIDE (out, p);
      uint8_t *src_dev = in_dev ? (uint8_t *) src : DS_SCRATCHPAD_ALLOC_DEVICE (sp, uint8_t, (gsize) w * h, NULL);
      uint8_t *dst_dev = out_dev ? dst : DS_SCRATCHPAD_ALLOC_DEVICE (sp, uint8_t, (gsize) w * h, NULL);
      int src_dev_stride = in_dev ? src_stride : w, dst_dev_stride = out_dev ? dst_stride : w;

      if (src_dev == NULL || dst_dev == NULL ||
          (!in_dev && cudaMemcpy2DAsync (src_dev, w, src, src_stride, w, h, cudaMemcpyHostToDevice,
                                         stream) != cudaSuccess))
        return FALSE;
      if (p == 0)
        {
          uint16_t *tmp = DS_SCRATCHPAD_ALLOC_DEVICE (sp, uint16_t, (gsize) w * h, NULL);

          if (tmp == NULL ||
              ds_filter_blur (src_dev, src_dev_stride, dst_dev, dst_dev_stride, tmp, w, h, stream) != cudaSuccess)
            return FALSE;
        }
      else if (cudaMemcpy2DAsync (dst_dev, dst_dev_stride, src_dev, src_dev_stride, w, h,
                                  cudaMemcpyDeviceToDevice, stream) != cudaSuccess)
        {
          return FALSE;
        }
      if (!out_dev && cudaMemcpy2DAsync (dst, dst_stride, dst_dev, w, w, h, cudaMemcpyDeviceToHost,
                                         stream) != cudaSuccess)
        return FALSE;
    }
  return TRUE;
}

static GstFlowReturn
gst_ds_filter_transform (GstBaseTransform *trans,
                         GstBuffer        *inbuf,
                         GstBuffer        *outbuf)
{
  GstDsFilter *self = GST_DS_FILTER (trans);
  GstMapFlags in_cuda = gst_is_cuda_memory (gst_buffer_peek_memory (inbuf, 0)) ? GST_MAP_CUDA : 0;
  GstMapFlags out_cuda = gst_is_cuda_memory (gst_buffer_peek_memory (outbuf, 0)) ? GST_MAP_CUDA : 0;
  GstVideoFrame in, out;
  gboolean ok = FALSE;

  /* The output memory's stream, else the input's, else ours (1.24+); the
   * GPU waits where they differ. */
  if (!ds_gst_stream_follow_buffers (self->stream, self->scratch, inbuf, outbuf, NULL) ||
      !gst_video_frame_map (&in, &self->info, inbuf, GST_MAP_READ | in_cuda))
    return GST_FLOW_ERROR;
  if (!gst_video_frame_map (&out, &self->info, outbuf, GST_MAP_WRITE | out_cuda))
    {
      gst_video_frame_unmap (&in);
      return GST_FLOW_ERROR;
    }
  if (gst_cuda_context_push (self->context))
    {
      /* Then downstream and the input's pool wait for the work (1.24+: on
       * the GPU; 1.22 or system memory out: the host, here). */
      ok = queue_work (self, &in, &out) &&
           ds_gst_stream_finish_buffers (self->stream, self->scratch, inbuf, outbuf, NULL);
      gst_cuda_context_pop (NULL);
    }
  ds_scratchpad_release (self->scratch);  /* while the work is queued: ds keeps stream order */
  gst_video_frame_unmap (&out);
  gst_video_frame_unmap (&in);
  if (!ok)
    GST_ELEMENT_ERROR (self, STREAM, FAILED, ("CUDA work failed"), (NULL));
  return ok ? GST_FLOW_OK : GST_FLOW_ERROR;
}

static gboolean
gst_ds_filter_query (GstBaseTransform *trans,
                     GstPadDirection   direction,
                     GstQuery         *query)
{
  if (GST_QUERY_TYPE (query) == GST_QUERY_CONTEXT &&
      gst_cuda_handle_context_query (GST_ELEMENT (trans), query, GST_DS_FILTER (trans)->context))
    return TRUE;
  return GST_BASE_TRANSFORM_CLASS (gst_ds_filter_parent_class)->query (trans, direction, query);
}

static void
gst_ds_filter_set_context (GstElement *element,
                           GstContext *context)
{
  GstDsFilter *self = GST_DS_FILTER (element);

  gst_cuda_handle_set_context (element, context, self->device_id, &self->context);
  GST_ELEMENT_CLASS (gst_ds_filter_parent_class)->set_context (element, context);
}

static void
gst_ds_filter_set_property (GObject *object, guint id, const GValue *value, GParamSpec *pspec)
{
  GST_DS_FILTER (object)->device_id = g_value_get_int (value);
}

static void
gst_ds_filter_get_property (GObject *object, guint id, GValue *value, GParamSpec *pspec)
{
  g_value_set_int (value, GST_DS_FILTER (object)->device_id);
}

static void
gst_ds_filter_class_init (GstDsFilterClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstBaseTransformClass *trans_class = GST_BASE_TRANSFORM_CLASS (klass);

  object_class->set_property = gst_ds_filter_set_property;
  object_class->get_property = gst_ds_filter_get_property;
  g_object_class_install_property (object_class, 1,
    g_param_spec_int ("cuda-device-id", "CUDA device ID", "The CUDA device to use (-1: any)", -1, G_MAXINT, -1,
                      G_PARAM_READWRITE | GST_PARAM_MUTABLE_READY | G_PARAM_STATIC_STRINGS));
  gst_element_class_set_static_metadata (element_class, "ds filter", "Filter/Effect/Video/Hardware",
                                         "3x3 blur of the luma on a CUDA GPU, with ds scratch",
                                         "The ds authors");
  gst_element_class_add_static_pad_template (element_class, &sink_template);
  gst_element_class_add_static_pad_template (element_class, &src_template);
  element_class->set_context = gst_ds_filter_set_context;
  trans_class->passthrough_on_same_caps = FALSE;
  trans_class->start = gst_ds_filter_start;
  trans_class->stop = gst_ds_filter_stop;
  trans_class->set_caps = gst_ds_filter_set_caps;
  trans_class->query = gst_ds_filter_query;
  trans_class->propose_allocation = gst_ds_filter_propose_allocation;
  trans_class->decide_allocation = gst_ds_filter_decide_allocation;
  trans_class->transform = gst_ds_filter_transform;
}

static void
gst_ds_filter_init (GstDsFilter *self)
{
  self->device_id = -1;
  gst_base_transform_set_qos_enabled (GST_BASE_TRANSFORM (self), TRUE);
}

static gboolean
plugin_init (GstPlugin *plugin)
{
  return gst_element_register (plugin, "dsfilter", GST_RANK_NONE, gst_ds_filter_get_type ());
}

GST_PLUGIN_DEFINE (GST_VERSION_MAJOR, GST_VERSION_MINOR, dsfilter, "A CUDA filter with ds scratch memory",
                   plugin_init, VERSION, "LGPL", PACKAGE, "https://example.org/your-plugin")
