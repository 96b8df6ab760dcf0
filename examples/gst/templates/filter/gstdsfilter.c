/* gstdsfilter.c: a CUDA filter (input -> output) with ds scratch; copy it
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Blurs the luma plane 3x3 and copies the others, in CUDA or system memory.
 * A GstBaseTransform, as GStreamer's CUDA filters are: a GstVideoFilter maps
 * frames for the host, and runs in place with transform but no transform_frame. */

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

/* Puts first in @query a pool for its caps: the query's first (downstream's;
 * for CUDA caps only a CUDA pool of our context), else a new one; on 1.24+ a
 * CUDA pool gets our stream unless it has one (downstream's). */
static gboolean
put_pool (GstDsFilter *self,
          GstQuery    *query)
{
  GstBufferPool *pool = NULL;
  GstStructure *config;
  GstCaps *caps;
  GstVideoInfo info;
  guint size = 0, min = 0, max = 0;
  gboolean cuda, ok;

  gst_query_parse_allocation (query, &caps, NULL);
  if (caps == NULL || !gst_video_info_from_caps (&info, caps))
    return FALSE;
  cuda = gst_caps_features_contains (gst_caps_get_features (caps, 0), GST_CAPS_FEATURE_MEMORY_CUDA_MEMORY);
  if (gst_query_get_n_allocation_pools (query) > 0)
    gst_query_parse_nth_allocation_pool (query, 0, &pool, &size, &min, &max);
  if (pool != NULL && cuda &&
      (!GST_IS_CUDA_BUFFER_POOL (pool) || GST_CUDA_BUFFER_POOL (pool)->context != self->context))
    gst_clear_object (&pool);
  if (pool == NULL)
    pool = cuda ? gst_cuda_buffer_pool_new (self->context) : gst_video_buffer_pool_new ();
  config = gst_buffer_pool_get_config (pool);
  gst_buffer_pool_config_add_option (config, GST_BUFFER_POOL_OPTION_VIDEO_META);
  gst_buffer_pool_config_set_params (config, caps, MAX (size, (guint) info.size), min, max);
#if DS_GST_HAVE_CUDA_STREAM
  if (GST_IS_CUDA_BUFFER_POOL (pool))
    {
      GstCudaStream *stream = gst_buffer_pool_config_get_cuda_stream (config);

      if (stream == NULL)
        gst_buffer_pool_config_set_cuda_stream (config, ds_gst_stream_get_cuda_stream (self->stream));
      gst_clear_cuda_stream (&stream);
    }
#endif
  if ((ok = gst_buffer_pool_set_config (pool, config)))
    {
      config = gst_buffer_pool_get_config (pool);  /* the pool may have changed the size */
      gst_buffer_pool_config_get_params (config, NULL, &size, NULL, NULL);
      gst_structure_free (config);
      if (gst_query_get_n_allocation_pools (query) > 0)
        gst_query_set_nth_allocation_pool (query, 0, pool, size, min, max);
      else
        gst_query_add_allocation_pool (query, pool, size, min, max);
    }
  gst_object_unref (pool);
  return ok;
}

/* Upstream writes into buffers of our pool: CUDA memory on our stream. */
static gboolean
gst_ds_filter_propose_allocation (GstBaseTransform *trans,
                                  GstQuery         *decide_query,
                                  GstQuery         *query)
{
  gst_query_add_allocation_meta (query, GST_VIDEO_META_API_TYPE, NULL);
  return put_pool (GST_DS_FILTER (trans), query);
}

static gboolean
gst_ds_filter_decide_allocation (GstBaseTransform *trans,
                                 GstQuery         *query)
{
  return put_pool (GST_DS_FILTER (trans), query) &&
         GST_BASE_TRANSFORM_CLASS (gst_ds_filter_parent_class)->decide_allocation (trans, query);
}

/* Each plane on the scratchpad's stream; system memory through device scratch. */
static gboolean
queue_work (GstDsFilter   *self,
            GstVideoFrame *in,
            GstVideoFrame *out)
{
  DsScratchpad *sp = self->scratch;
  cudaStream_t stream = ds_access_order_get_stream (ds_scratchpad_get_device_order (sp));
  gboolean in_dev = gst_is_cuda_memory (gst_buffer_peek_memory (in->buffer, 0));
  gboolean out_dev = gst_is_cuda_memory (gst_buffer_peek_memory (out->buffer, 0));
  gboolean ok = TRUE;

  for (guint p = 0; ok && p < GST_VIDEO_FRAME_N_PLANES (in); p++)
    {
      /* Bytes of a row: plane p starts with component p in these formats. */
      int w = GST_VIDEO_FRAME_COMP_WIDTH (in, p) * GST_VIDEO_FRAME_COMP_PSTRIDE (in, p);
      int h = GST_VIDEO_FRAME_COMP_HEIGHT (in, p);
      int in_stride = GST_VIDEO_FRAME_PLANE_STRIDE (in, p), out_stride = GST_VIDEO_FRAME_PLANE_STRIDE (out, p);
      uint8_t *src = GST_VIDEO_FRAME_PLANE_DATA (in, p), *dst = GST_VIDEO_FRAME_PLANE_DATA (out, p);
      /* On the device: the frame's own memory, else scratch with rows w bytes apart. */
      uint8_t *s = in_dev ? src : DS_SCRATCHPAD_ALLOC_DEVICE (sp, uint8_t, (gsize) w * h, NULL);
      uint8_t *d = out_dev ? dst : DS_SCRATCHPAD_ALLOC_DEVICE (sp, uint8_t, (gsize) w * h, NULL);
      uint16_t *tmp = p == 0 ? DS_SCRATCHPAD_ALLOC_DEVICE (sp, uint16_t, (gsize) w * h, NULL) : NULL;
      int s_stride = in_dev ? in_stride : w, d_stride = out_dev ? out_stride : w;

      ok = s != NULL && d != NULL && (p > 0 || tmp != NULL) &&
           (in_dev || cudaMemcpy2DAsync (s, w, src, in_stride, w, h, cudaMemcpyHostToDevice, stream) == cudaSuccess) &&
           (p == 0 ? ds_filter_blur (s, s_stride, d, d_stride, tmp, w, h, stream)
                   : cudaMemcpy2DAsync (d, d_stride, s, s_stride, w, h, cudaMemcpyDeviceToDevice,
                                        stream)) == cudaSuccess &&
           (out_dev || cudaMemcpy2DAsync (dst, out_stride, d, w, w, h, cudaMemcpyDeviceToHost, stream) == cudaSuccess);
    }
  return ok;
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
  GstCaps *caps = gst_caps_from_string (CAPS);

  object_class->set_property = gst_ds_filter_set_property;
  object_class->get_property = gst_ds_filter_get_property;
  g_object_class_install_property (object_class, 1,
    g_param_spec_int ("cuda-device-id", "CUDA device ID", "The CUDA device to use (-1: any)", -1, G_MAXINT, -1,
                      G_PARAM_READWRITE | GST_PARAM_MUTABLE_READY | G_PARAM_STATIC_STRINGS));
  gst_element_class_set_static_metadata (element_class, "ds filter", "Filter/Effect/Video/Hardware",
                                         "3x3 blur of the luma on a CUDA GPU, with ds scratch",
                                         "The ds authors");
  gst_element_class_add_pad_template (element_class, gst_pad_template_new ("sink", GST_PAD_SINK, GST_PAD_ALWAYS, caps));
  gst_element_class_add_pad_template (element_class, gst_pad_template_new ("src", GST_PAD_SRC, GST_PAD_ALWAYS, caps));
  gst_caps_unref (caps);
  element_class->set_context = gst_ds_filter_set_context;
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
