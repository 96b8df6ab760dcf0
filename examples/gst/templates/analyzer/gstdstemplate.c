/* gstdstemplate.c: a CUDA analyzer that takes its scratch from ds; copy it
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Posts the sum of each frame's luma as a "ds-template" message and passes the
 * frame on, as the guide "ds in your CUDA element" describes. */

#include <gst/base/gstbasetransform.h>
#include <gst/video/video.h>
#include <gst/cuda/gstcudabufferpool.h>
#include <gst/cuda/gstcudaloader.h>
#include <gst/cuda/gstcudamemory.h>
#include <gst/cuda/gstcudautils.h>
#include <ds-gst.h>

#include "ds-template-kernel.h"

#define FORMATS "{ GRAY8, I420, NV12 }"
#define CAPS GST_VIDEO_CAPS_MAKE_WITH_FEATURES (GST_CAPS_FEATURE_MEMORY_CUDA_MEMORY, FORMATS) ";" \
             GST_VIDEO_CAPS_MAKE (FORMATS)

G_DECLARE_FINAL_TYPE (GstDsTemplate, gst_ds_template, GST, DS_TEMPLATE, GstBaseTransform)

struct _GstDsTemplate
{
  GstBaseTransform  parent;
  GstCudaContext   *context;
  DsGstStream      *stream;    /* start to stop; ds-gst frees it after its last scratchpad */
  DsScratchpad     *scratch;   /* released after each buffer */
  GstVideoInfo      info;
  guint64           n_frames;
  GMutex            lock;
  GCond             done;
  gint              n_queued;  /* results not posted yet, under lock */
};

typedef struct
{
  GstDsTemplate            *self;
  const unsigned long long *sum;   /* pinned scratch, written on the stream */
  guint64                   frame;
} Result;

G_DEFINE_FINAL_TYPE (GstDsTemplate, gst_ds_template, GST_TYPE_BASE_TRANSFORM)

/* Adds @delta to the results not posted yet; 0: waits (on a condition,
 * not by polling) until all are posted. */
static void
count_results (GstDsTemplate *self,
               gint           delta)
{
  g_mutex_lock (&self->lock);
  self->n_queued += delta;
  if (self->n_queued == 0)
    g_cond_broadcast (&self->done);
  while (delta == 0 && self->n_queued > 0)
    g_cond_wait (&self->done, &self->lock);
  g_mutex_unlock (&self->lock);
}

/* On a CUDA thread once the GPU is done with the frame: no CUDA calls here.
 * The pinned block goes back to its pool only after this returns. */
static void CUDART_CB
result_cb (void *data)
{
  Result *r = data;
  GstStructure *s = gst_structure_new ("ds-template", "frame", G_TYPE_UINT64, r->frame,
                                       "sum", G_TYPE_UINT64, (guint64) *r->sum, NULL);

  gst_element_post_message (GST_ELEMENT (r->self), gst_message_new_element (GST_OBJECT (r->self), s));
  count_results (r->self, -1);
  g_free (r);
}

static gboolean
gst_ds_template_start (GstBaseTransform *trans)
{
  GstDsTemplate *self = GST_DS_TEMPLATE (trans);
  g_autoptr(GError) error = NULL;

  /* The pipeline's context (or the application's), else a new one it shares;
   * -1: any device (../filter has a cuda-device-id property for this). */
  if (!gst_cuda_load_library () ||
      !gst_cuda_ensure_element_context (GST_ELEMENT (self), -1, &self->context) ||
      (self->stream = ds_gst_stream_new (self->context, &error)) == NULL)
    {
      GST_ELEMENT_ERROR (self, RESOURCE, NOT_FOUND, ("No CUDA device"), ("%s", error ? error->message : ""));
      return FALSE;
    }
  self->scratch = ds_gst_stream_new_scratchpad (self->stream);
  self->n_frames = 0;
  return TRUE;
}

static gboolean
gst_ds_template_stop (GstBaseTransform *trans)
{
  GstDsTemplate *self = GST_DS_TEMPLATE (trans);

  count_results (self, 0);
  g_clear_object (&self->scratch);
  g_clear_pointer (&self->stream, ds_gst_stream_unref);  /* then the context's pools trim */
  gst_clear_object (&self->context);
  return TRUE;
}

static gboolean
gst_ds_template_sink_event (GstBaseTransform *trans,
                            GstEvent         *event)
{
  if (GST_EVENT_TYPE (event) == GST_EVENT_EOS)
    count_results (GST_DS_TEMPLATE (trans), 0);  /* the results come before EOS */
  return GST_BASE_TRANSFORM_CLASS (gst_ds_template_parent_class)->sink_event (trans, event);
}

static gboolean
gst_ds_template_set_caps (GstBaseTransform *trans,
                          GstCaps          *incaps,
                          GstCaps          *outcaps)
{
  return gst_video_info_from_caps (&GST_DS_TEMPLATE (trans)->info, incaps);
}

/* The frame is passed on, so upstream writes into the pool downstream
 * proposes; on 1.24+ a CUDA pool of our context gets our stream unless it
 * has one, so that its memory tells everyone which stream its work is on
 * and nobody waits on the host for it (cudaupload's own pool has none). */
static gboolean
gst_ds_template_propose_allocation (GstBaseTransform *trans,
                                    GstQuery         *decide_query,
                                    GstQuery         *query)
{
  GstBufferPool *pool = NULL;

  if (!GST_BASE_TRANSFORM_CLASS (gst_ds_template_parent_class)->propose_allocation (trans, decide_query, query))
    return FALSE;
#if DS_GST_HAVE_CUDA_STREAM
  if (gst_query_get_n_allocation_pools (query) > 0)
    gst_query_parse_nth_allocation_pool (query, 0, &pool, NULL, NULL, NULL);
  if (pool != NULL && GST_IS_CUDA_BUFFER_POOL (pool) && !gst_buffer_pool_is_active (pool) &&
      GST_CUDA_BUFFER_POOL (pool)->context == GST_DS_TEMPLATE (trans)->context)
    {
      GstStructure *config = gst_buffer_pool_get_config (pool);
      GstCudaStream *stream = gst_buffer_pool_config_get_cuda_stream (config);

      if (stream == NULL)
        {
          gst_buffer_pool_config_set_cuda_stream (config, ds_gst_stream_get_cuda_stream (GST_DS_TEMPLATE (trans)->stream));
          gst_buffer_pool_set_config (pool, config);  /* takes config; if refused, the pool stays as it was */
        }
      else
        {
          gst_structure_free (config);
          gst_cuda_stream_unref (stream);
        }
    }
#endif
  gst_clear_object (&pool);
  return TRUE;
}

/* The frame's work on the scratchpad's stream; TRUE once result_cb () will
 * post (and free) @r. System memory is copied to device scratch first. */
static gboolean
queue_work (GstDsTemplate *self,
            GstVideoFrame *frame,
            gboolean       on_device,
            Result        *r)
{
  DsScratchpad *sp = self->scratch;
  cudaStream_t stream = ds_access_order_get_stream (ds_scratchpad_get_device_order (sp));
  int width = GST_VIDEO_FRAME_COMP_WIDTH (frame, 0), height = GST_VIDEO_FRAME_COMP_HEIGHT (frame, 0);
  int stride = GST_VIDEO_FRAME_COMP_STRIDE (frame, 0);
  const uint8_t *luma = GST_VIDEO_FRAME_COMP_DATA (frame, 0);
  unsigned long long *sum = DS_SCRATCHPAD_ALLOC_DEVICE (sp, unsigned long long, 1, NULL);

  r->sum = DS_SCRATCHPAD_ALLOC_PINNED (sp, unsigned long long, 1, NULL);
  if (sum == NULL || r->sum == NULL)
    return FALSE;
  if (!on_device)
    {
      uint8_t *copy = DS_SCRATCHPAD_ALLOC_DEVICE (sp, uint8_t, (gsize) width * height, NULL);

      if (copy == NULL || cudaMemcpy2DAsync (copy, width, luma, stride, width, height,
                                             cudaMemcpyHostToDevice, stream) != cudaSuccess)
        return FALSE;
      luma = copy;
      stride = width;
    }
  return ds_template_sum (luma, width, height, stride, sum, stream) == cudaSuccess &&
         cudaMemcpyAsync ((void *) r->sum, sum, sizeof *sum, cudaMemcpyDeviceToHost, stream) == cudaSuccess &&
         cudaLaunchHostFunc (stream, result_cb, r) == cudaSuccess;
}

static GstFlowReturn
gst_ds_template_transform_ip (GstBaseTransform *trans,
                              GstBuffer        *buffer)
{
  GstDsTemplate *self = GST_DS_TEMPLATE (trans);
  gboolean on_device = gst_is_cuda_memory (gst_buffer_peek_memory (buffer, 0));
  GstVideoFrame frame;
  gboolean queued = FALSE, ok = FALSE;
  Result *r;

  /* The buffer's stream (GStreamer 1.24+), else ours: the scratchpad is released. */
  if (!ds_gst_stream_follow_buffer (self->stream, self->scratch, buffer, NULL) ||
      !gst_video_frame_map (&frame, &self->info, buffer, GST_MAP_READ | (on_device ? GST_MAP_CUDA : 0)))
    {
      GST_ELEMENT_ERROR (self, STREAM, FAILED, ("Could not read the frame"), (NULL));
      return GST_FLOW_ERROR;
    }
  r = g_new (Result, 1);
  *r = (Result) { self, NULL, self->n_frames++ };
  count_results (self, 1);  /* before result_cb () can run */
  if (gst_cuda_context_push (self->context))
    {
      queued = queue_work (self, &frame, on_device, r);
      /* Downstream waits for the work (1.24+: on the GPU; 1.22: the host, here). */
      ok = queued && ds_gst_stream_finish_buffers (self->stream, self->scratch, buffer, NULL, NULL);
      gst_cuda_context_pop (NULL);
    }
  ds_scratchpad_release (self->scratch);  /* while the work is queued: ds keeps stream order */
  gst_video_frame_unmap (&frame);
  if (!queued)
    {
      g_free (r);
      count_results (self, -1);
    }
  if (!ok)
    GST_ELEMENT_ERROR (self, STREAM, FAILED, ("CUDA work failed"), (NULL));
  return ok ? GST_FLOW_OK : GST_FLOW_ERROR;
}

static void
gst_ds_template_set_context (GstElement *element,
                             GstContext *context)
{
  GstDsTemplate *self = GST_DS_TEMPLATE (element);

  gst_cuda_handle_set_context (element, context, -1, &self->context);
  GST_ELEMENT_CLASS (gst_ds_template_parent_class)->set_context (element, context);
}

static void
gst_ds_template_finalize (GObject *object)
{
  GstDsTemplate *self = GST_DS_TEMPLATE (object);

  g_mutex_clear (&self->lock);
  g_cond_clear (&self->done);
  G_OBJECT_CLASS (gst_ds_template_parent_class)->finalize (object);
}

static void
gst_ds_template_class_init (GstDsTemplateClass *klass)
{
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstBaseTransformClass *trans_class = GST_BASE_TRANSFORM_CLASS (klass);
  GstCaps *caps = gst_caps_from_string (CAPS);

  G_OBJECT_CLASS (klass)->finalize = gst_ds_template_finalize;
  gst_element_class_set_static_metadata (element_class, "ds template", "Filter/Analyzer/Video/Hardware",
                                         "Sum of each frame's luma on a CUDA GPU, with ds scratch",
                                         "The ds authors");
  gst_element_class_add_pad_template (element_class, gst_pad_template_new ("sink", GST_PAD_SINK, GST_PAD_ALWAYS, caps));
  gst_element_class_add_pad_template (element_class, gst_pad_template_new ("src", GST_PAD_SRC, GST_PAD_ALWAYS, caps));
  gst_caps_unref (caps);
  element_class->set_context = gst_ds_template_set_context;
  trans_class->passthrough_on_same_caps = TRUE;  /* in place, the buffer passed on as it is */
  trans_class->start = gst_ds_template_start;
  trans_class->stop = gst_ds_template_stop;
  trans_class->sink_event = gst_ds_template_sink_event;
  trans_class->set_caps = gst_ds_template_set_caps;
  trans_class->propose_allocation = gst_ds_template_propose_allocation;
  trans_class->transform_ip = gst_ds_template_transform_ip;
}

static void
gst_ds_template_init (GstDsTemplate *self)
{
  g_mutex_init (&self->lock);
  g_cond_init (&self->done);
  gst_base_transform_set_qos_enabled (GST_BASE_TRANSFORM (self), TRUE);
}

static gboolean
plugin_init (GstPlugin *plugin)
{
  return gst_element_register (plugin, "dstemplate", GST_RANK_NONE, gst_ds_template_get_type ());
}

GST_PLUGIN_DEFINE (GST_VERSION_MAJOR, GST_VERSION_MINOR, dstemplate, "A CUDA analyzer with ds scratch memory",
                   plugin_init, VERSION, "LGPL", PACKAGE, "https://example.org/your-plugin")
