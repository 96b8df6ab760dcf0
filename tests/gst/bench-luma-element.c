/* bench-luma-element.c: dslumastats's work with a choice of where its
 * scratch comes from, for bench-gst-scratch
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The work of the example element (upload the luma plane of system-memory
 * video through pinned memory, two kernel passes, read the result back)
 * with its scratch taken in one of five ways (scratch-mode), given back
 * before or after waiting for the frame's work (release-before-wait), and
 * the time spent getting and giving back that scratch measured per frame
 * (last-scratch-time) next to the whole transform (last-process-time).
 * The element waits for each frame's work, as the example element did
 * before it posted from a host function, so that the modes compare alike.
 */

#include "config.h"

#include <string.h>
#include <time.h>

#include <gst/video/video.h>
#include <gst/cuda/gstcudaloader.h>
#include <gst/cuda/gstcudautils.h>
#include <ds-gst.h>

#include "bench-luma-element.h"
#include "ds-luma-stats.h"

GST_DEBUG_CATEGORY_STATIC (gst_ds_bench_luma_debug);
#define GST_CAT_DEFAULT gst_ds_bench_luma_debug

#define CAPS GST_VIDEO_CAPS_MAKE ("{ GRAY8, I420, NV12, Y444 }")

enum
{
  PROP_0,
  PROP_SCRATCH_MODE,
  PROP_RELEASE_BEFORE_WAIT,
  PROP_KEEP_BLOCKS,
  PROP_LAST_SCRATCH_TIME,
  PROP_LAST_PROCESS_TIME,
};

/* The scratch of one frame. */
typedef struct
{
  guint8        *upload;     /* pinned: the plane, packed */
  guint8        *plane;      /* device: the plane, packed */
  DsLumaPartial *partials;   /* device: one per block of the first pass */
  DsLumaResult  *result;     /* device */
  DsLumaResult  *readback;   /* pinned */
} FrameScratch;

/* What the host function queued after the read-back copies, on a CUDA
 * thread; it must not call CUDA. */
typedef struct
{
  const DsLumaResult *from;
  DsLumaResult       *to;
} ReadbackJob;

struct _GstDsBenchLuma
{
  GstBaseTransform parent;

  /* Properties, under the object lock. */
  GstDsBenchScratchMode scratch_mode;
  gboolean         release_before_wait;
  gboolean         keep_blocks;
  guint64          last_scratch_ns;
  guint64          last_process_ns;

  /* Start to stop. */
  GstDsBenchScratchMode mode;
  gboolean         release_early;
  GstVideoInfo     info;
  GstCudaContext  *context;
  DsGstStream     *stream;
  DsScratchpad    *scratch;        /* ds-reuse */
  FrameScratch     prealloc;       /* preallocated */
  gsize            prealloc_plane;
  gint             prealloc_partials;
  DsLumaResult     host_result;
  ReadbackJob      job;
};

GType
gst_ds_bench_scratch_mode_get_type (void)
{
  static gsize type_id;
  static const GEnumValue values[] = {
    { GST_DS_BENCH_SCRATCH_MODE_DS_REUSE,
      "One ds scratchpad per stream, released after each buffer", "ds-reuse" },
    { GST_DS_BENCH_SCRATCH_MODE_DS_NEW, "A new ds scratchpad per buffer", "ds-new" },
    { GST_DS_BENCH_SCRATCH_MODE_DS_META,
      "A new ds scratchpad per buffer, tied to the buffer by a DsGstScratchMeta "
      "that publishes the results in device memory", "ds-meta" },
    { GST_DS_BENCH_SCRATCH_MODE_CUDA_MALLOC,
      "cudaMallocHost/cudaMalloc per buffer, freed after its work", "cuda-malloc" },
    { GST_DS_BENCH_SCRATCH_MODE_PREALLOCATED,
      "Buffers allocated once per caps and kept", "preallocated" },
    { 0, NULL, NULL },
  };

  if (g_once_init_enter (&type_id))
    g_once_init_leave (&type_id, g_enum_register_static ("GstDsBenchScratchMode", values));

  return (GType) type_id;
}

G_DEFINE_FINAL_TYPE (GstDsBenchLuma, gst_ds_bench_luma, GST_TYPE_BASE_TRANSFORM)

static GstStaticPadTemplate sink_template =
  GST_STATIC_PAD_TEMPLATE ("sink", GST_PAD_SINK, GST_PAD_ALWAYS, GST_STATIC_CAPS (CAPS));
static GstStaticPadTemplate src_template =
  GST_STATIC_PAD_TEMPLATE ("src", GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS (CAPS));

gboolean
gst_ds_bench_luma_register (void)
{
  GST_DEBUG_CATEGORY_INIT (gst_ds_bench_luma_debug, "dsbenchluma", 0, "ds scratch benchmark");
  return gst_element_register (NULL, "dsbenchluma", GST_RANK_NONE, GST_TYPE_DS_BENCH_LUMA);
}

static guint64
now_ns (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (guint64) ts.tv_sec * G_GUINT64_CONSTANT (1000000000) + (guint64) ts.tv_nsec;
}

static gboolean
set_cuda_error (GError     **error,
                cudaError_t  status,
                const char  *call)
{
  (void) cudaGetLastError ();
  g_set_error (error, DS_ERROR, DS_ERROR_CUDA, "%s failed: %s (%s)", call,
               cudaGetErrorName (status), cudaGetErrorString (status));
  return FALSE;
}

#define CUDA_CHECK(call, error) \
  ({ cudaError_t check_status_ = (call); \
     check_status_ == cudaSuccess ? TRUE : set_cuda_error ((error), check_status_, #call); })

static cudaStream_t
stream_of (GstDsBenchLuma *self)
{
  return ds_gst_stream_get_handle (self->stream);
}

/* --- cudaMalloc per buffer, preallocated (the baselines) ---------------- */

static gboolean
cuda_malloc_frame (FrameScratch  *s,
                   gsize          plane_size,
                   gint           n_partials,
                   GError       **error)
{
  memset (s, 0, sizeof *s);

  return CUDA_CHECK (cudaMallocHost ((void **) &s->upload, plane_size), error) &&
         CUDA_CHECK (cudaMalloc ((void **) &s->plane, plane_size), error) &&
         CUDA_CHECK (cudaMalloc ((void **) &s->partials, n_partials * sizeof (DsLumaPartial)), error) &&
         CUDA_CHECK (cudaMalloc ((void **) &s->result, sizeof (DsLumaResult)), error) &&
         CUDA_CHECK (cudaMallocHost ((void **) &s->readback, sizeof (DsLumaResult)), error);
}

static void
cuda_free_frame (FrameScratch *s)
{
  if (s->upload != NULL)
    cudaFreeHost (s->upload);
  if (s->plane != NULL)
    cudaFree (s->plane);
  if (s->partials != NULL)
    cudaFree (s->partials);
  if (s->result != NULL)
    cudaFree (s->result);
  if (s->readback != NULL)
    cudaFreeHost (s->readback);
  memset (s, 0, sizeof *s);
}

static gboolean
alloc_from_scratchpad (DsScratchpad  *sp,
                       FrameScratch  *s,
                       gsize          plane_size,
                       gint           n_partials,
                       GError       **error)
{
  memset (s, 0, sizeof *s);

  return (s->upload = ds_scratchpad_alloc (sp, DS_MEMORY_KIND_PINNED, plane_size, 0, error)) != NULL &&
         (s->plane = ds_scratchpad_alloc (sp, DS_MEMORY_KIND_DEVICE, plane_size, 0, error)) != NULL &&
         (s->partials = DS_SCRATCHPAD_ALLOC_DEVICE (sp, DsLumaPartial, (gsize) n_partials, error)) != NULL &&
         (s->result = DS_SCRATCHPAD_ALLOC_DEVICE (sp, DsLumaResult, 1, error)) != NULL &&
         (s->readback = DS_SCRATCHPAD_ALLOC_PINNED (sp, DsLumaResult, 1, error)) != NULL;
}

/* --- start / stop / caps ------------------------------------------------ */

static gboolean
gst_ds_bench_luma_start (GstBaseTransform *trans)
{
  GstDsBenchLuma *self = GST_DS_BENCH_LUMA (trans);
  g_autoptr(GError) error = NULL;

  GST_OBJECT_LOCK (self);
  self->mode = self->scratch_mode;
  self->release_early = self->release_before_wait;
  GST_OBJECT_UNLOCK (self);

  if (!gst_cuda_load_library () ||
      !gst_cuda_ensure_element_context (GST_ELEMENT (self), -1, &self->context))
    {
      GST_ELEMENT_ERROR (self, RESOURCE, NOT_FOUND, ("No CUDA device"), (NULL));
      return FALSE;
    }
  self->stream = ds_gst_stream_new (self->context, &error);
  if (self->stream == NULL)
    {
      GST_ELEMENT_ERROR (self, RESOURCE, FAILED, ("%s", error->message), (NULL));
      return FALSE;
    }

  /* ds-reuse: one scratchpad for the stream, released per buffer. With
   * keep-blocks, each release keeps the device block (taken again on the
   * same stream, so stream order alone makes that safe). */
  if (self->mode == GST_DS_BENCH_SCRATCH_MODE_DS_REUSE)
    {
      self->scratch = ds_gst_stream_new_scratchpad (self->stream);
      ds_scratchpad_set_keep_blocks (self->scratch, self->keep_blocks);
    }
  /* Only ds-meta adds a meta, and needs a writable buffer for it. */
  gst_base_transform_set_passthrough (trans, self->mode != GST_DS_BENCH_SCRATCH_MODE_DS_META);
  return TRUE;
}

static void
free_prealloc (GstDsBenchLuma *self)
{
  cuda_free_frame (&self->prealloc);
  self->prealloc_plane = 0;
  self->prealloc_partials = 0;
}

static gboolean
gst_ds_bench_luma_stop (GstBaseTransform *trans)
{
  GstDsBenchLuma *self = GST_DS_BENCH_LUMA (trans);

  if (self->stream != NULL && gst_cuda_context_push (self->context))
    {
      (void) cudaStreamSynchronize (stream_of (self));
      free_prealloc (self);
      gst_cuda_context_pop (NULL);
    }
  g_clear_object (&self->scratch);
  g_clear_pointer (&self->stream, ds_gst_stream_unref);
  gst_clear_object (&self->context);
  return TRUE;
}

static void
gst_ds_bench_luma_set_context (GstElement *element,
                               GstContext *context)
{
  gst_cuda_handle_set_context (element, context, -1, &GST_DS_BENCH_LUMA (element)->context);
  GST_ELEMENT_CLASS (gst_ds_bench_luma_parent_class)->set_context (element, context);
}

static gboolean
gst_ds_bench_luma_set_caps (GstBaseTransform *trans,
                            GstCaps          *incaps,
                            GstCaps          *outcaps)
{
  GstDsBenchLuma *self = GST_DS_BENCH_LUMA (trans);
  g_autoptr(GError) error = NULL;
  gsize plane;
  gint n_partials;
  gboolean ok;

  if (!gst_video_info_from_caps (&self->info, incaps))
    return FALSE;
  if (self->mode != GST_DS_BENCH_SCRATCH_MODE_PREALLOCATED)
    return TRUE;

  plane = (gsize) GST_VIDEO_INFO_COMP_WIDTH (&self->info, 0) * GST_VIDEO_INFO_COMP_HEIGHT (&self->info, 0);
  n_partials = ds_luma_stats_n_partials (GST_VIDEO_INFO_COMP_HEIGHT (&self->info, 0));
  if (!gst_cuda_context_push (self->context))
    return FALSE;
  (void) cudaStreamSynchronize (stream_of (self));
  free_prealloc (self);
  ok = cuda_malloc_frame (&self->prealloc, plane, n_partials, &error);
  if (ok)
    {
      self->prealloc_plane = plane;
      self->prealloc_partials = n_partials;
    }
  else
    {
      free_prealloc (self);
    }
  gst_cuda_context_pop (NULL);

  if (!ok)
    GST_ELEMENT_ERROR (self, RESOURCE, NO_SPACE_LEFT,
                       ("Could not preallocate frame buffers: %s", error->message), (NULL));
  return ok;
}

/* --- Per frame ------------------------------------------------------------ */

static void CUDART_CB
readback_done_cb (void *data)
{
  ReadbackJob *job = data;

  memcpy (job->to, job->from, sizeof (DsLumaResult));
}

/* Queues the frame's work and waits for it; called with the context
 * current. Adds to *scratch_ns the time spent getting and giving back
 * scratch memory. */
static gboolean
process_frame (GstDsBenchLuma  *self,
               GstBuffer       *buffer,
               const guint8    *plane,
               gint             stride,
               guint64         *scratch_ns,
               GError         **error)
{
  cudaStream_t stream = stream_of (self);
  gint width = GST_VIDEO_INFO_COMP_WIDTH (&self->info, 0);
  gint height = GST_VIDEO_INFO_COMP_HEIGHT (&self->info, 0);
  gsize plane_size = (gsize) width * height;
  gint n_partials = ds_luma_stats_n_partials (height);
  DsScratchpad *sp = NULL;
  FrameScratch s = { 0, };
  gboolean ok;
  guint64 t0, t1;

  /* 1. Scratch. */
  t0 = now_ns ();
  switch (self->mode)
    {
    case GST_DS_BENCH_SCRATCH_MODE_DS_REUSE:
      sp = g_object_ref (self->scratch);
      ok = alloc_from_scratchpad (sp, &s, plane_size, n_partials, error);
      break;
    case GST_DS_BENCH_SCRATCH_MODE_DS_NEW:
    case GST_DS_BENCH_SCRATCH_MODE_DS_META:
      /* The scratchpad holds the stream: a buffer that carries it may
       * outlive the element's stop. */
      sp = ds_gst_stream_new_scratchpad (self->stream);
      ok = alloc_from_scratchpad (sp, &s, plane_size, n_partials, error);
      break;
    case GST_DS_BENCH_SCRATCH_MODE_CUDA_MALLOC:
      ok = cuda_malloc_frame (&s, plane_size, n_partials, error);
      break;
    case GST_DS_BENCH_SCRATCH_MODE_PREALLOCATED:
    default:
      s = self->prealloc;
      ok = self->prealloc_plane >= plane_size && self->prealloc_partials >= n_partials;
      if (!ok)
        g_set_error (error, DS_ERROR, DS_ERROR_INVALID_ARGUMENT,
                     "The preallocated buffers do not fit a %dx%d frame", width, height);
      break;
    }
  t1 = now_ns ();
  *scratch_ns += t1 - t0;

  /* 2. The work: upload, two kernel passes, read-back, and a host function
   * that takes the result out of the pinned scratch before the scratch is
   * given back. */
  if (ok)
    {
      for (gint y = 0; y < height; y++)
        memcpy (s.upload + (gsize) y * width, plane + (gsize) y * stride, width);
      self->job.from = s.readback;
      self->job.to = &self->host_result;
      ok = CUDA_CHECK (cudaMemcpyAsync (s.plane, s.upload, plane_size, cudaMemcpyHostToDevice,
                                        stream), error) &&
           CUDA_CHECK (ds_luma_stats_launch (s.plane, width, height, width, s.partials, s.result,
                                             stream), error) &&
           CUDA_CHECK (cudaMemcpyAsync (s.readback, s.result, sizeof (DsLumaResult),
                                        cudaMemcpyDeviceToHost, stream), error) &&
           CUDA_CHECK (cudaLaunchHostFunc (stream, readback_done_cb, &self->job), error);
    }

  /* 3. Give the scratch back while the work is still queued (or, with
   * release-before-wait=false, after waiting for it). 4. Wait for the
   * frame's results. */
  if (!self->release_early && !CUDA_CHECK (cudaStreamSynchronize (stream), ok ? error : NULL))
    ok = FALSE;

  t0 = now_ns ();
  if (self->mode == GST_DS_BENCH_SCRATCH_MODE_DS_REUSE)
    ds_scratchpad_release (sp);
  else if (self->mode == GST_DS_BENCH_SCRATCH_MODE_DS_META && ok &&
           ds_gst_buffer_add_scratch_meta_full (buffer, sp,
                                                g_quark_from_static_string (GST_DS_BENCH_LUMA_META_TAG),
                                                DS_MEMORY_KIND_DEVICE, s.result,
                                                sizeof (DsLumaResult), error) == NULL)
    ok = FALSE;
  g_clear_object (&sp);
  t1 = now_ns ();
  *scratch_ns += t1 - t0;

  if (self->release_early && !CUDA_CHECK (cudaStreamSynchronize (stream), ok ? error : NULL))
    ok = FALSE;

  if (self->mode == GST_DS_BENCH_SCRATCH_MODE_CUDA_MALLOC)
    {
      t0 = now_ns ();
      cuda_free_frame (&s);
      *scratch_ns += now_ns () - t0;
    }

  return ok;
}

static GstFlowReturn
gst_ds_bench_luma_transform_ip (GstBaseTransform *trans,
                                GstBuffer        *buffer)
{
  GstDsBenchLuma *self = GST_DS_BENCH_LUMA (trans);
  g_autoptr(GError) error = NULL;
  GstVideoFrame frame;
  guint64 t0 = now_ns (), scratch_ns = 0;
  gboolean ok;

  /* NO_REF: a mapped frame's own reference would make the buffer
   * unwritable, and scratch-mode ds-meta adds a meta to it. */
  if (!gst_video_frame_map (&frame, &self->info, buffer,
                            GST_MAP_READ | GST_VIDEO_FRAME_MAP_FLAG_NO_REF))
    {
      GST_ELEMENT_ERROR (self, STREAM, FAILED, ("Could not map the video frame"), (NULL));
      return GST_FLOW_ERROR;
    }

  ok = gst_cuda_context_push (self->context);
  if (!ok)
    g_set_error_literal (&error, DS_ERROR, DS_ERROR_CUDA, "Could not make the CUDA context current");
  else
    {
      ok = process_frame (self, buffer, GST_VIDEO_FRAME_COMP_DATA (&frame, 0),
                          GST_VIDEO_FRAME_COMP_STRIDE (&frame, 0), &scratch_ns, &error);
      gst_cuda_context_pop (NULL);
    }
  gst_video_frame_unmap (&frame);

  if (!ok)
    {
      GST_ELEMENT_ERROR (self, STREAM, FAILED, ("%s", error->message), (NULL));
      return GST_FLOW_ERROR;
    }

  GST_OBJECT_LOCK (self);
  self->last_scratch_ns = scratch_ns;
  self->last_process_ns = now_ns () - t0;
  GST_OBJECT_UNLOCK (self);
  return GST_FLOW_OK;
}

/* --- Class ------------------------------------------------------------ */

static void
gst_ds_bench_luma_set_property (GObject      *object,
                                guint         prop_id,
                                const GValue *value,
                                GParamSpec   *pspec)
{
  GstDsBenchLuma *self = GST_DS_BENCH_LUMA (object);

  GST_OBJECT_LOCK (self);
  switch (prop_id)
    {
    case PROP_SCRATCH_MODE:
      self->scratch_mode = g_value_get_enum (value);
      break;
    case PROP_RELEASE_BEFORE_WAIT:
      self->release_before_wait = g_value_get_boolean (value);
      break;
    case PROP_KEEP_BLOCKS:
      self->keep_blocks = g_value_get_boolean (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
    }
  GST_OBJECT_UNLOCK (self);
}

static void
gst_ds_bench_luma_get_property (GObject    *object,
                                guint       prop_id,
                                GValue     *value,
                                GParamSpec *pspec)
{
  GstDsBenchLuma *self = GST_DS_BENCH_LUMA (object);

  GST_OBJECT_LOCK (self);
  switch (prop_id)
    {
    case PROP_SCRATCH_MODE:
      g_value_set_enum (value, self->scratch_mode);
      break;
    case PROP_RELEASE_BEFORE_WAIT:
      g_value_set_boolean (value, self->release_before_wait);
      break;
    case PROP_KEEP_BLOCKS:
      g_value_set_boolean (value, self->keep_blocks);
      break;
    case PROP_LAST_SCRATCH_TIME:
      g_value_set_uint64 (value, self->last_scratch_ns);
      break;
    case PROP_LAST_PROCESS_TIME:
      g_value_set_uint64 (value, self->last_process_ns);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
    }
  GST_OBJECT_UNLOCK (self);
}

static void
gst_ds_bench_luma_dispose (GObject *object)
{
  gst_clear_object (&GST_DS_BENCH_LUMA (object)->context);
  G_OBJECT_CLASS (gst_ds_bench_luma_parent_class)->dispose (object);
}

static void
gst_ds_bench_luma_class_init (GstDsBenchLumaClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstBaseTransformClass *trans_class = GST_BASE_TRANSFORM_CLASS (klass);
  GParamFlags rw = G_PARAM_READWRITE | GST_PARAM_MUTABLE_READY | G_PARAM_STATIC_STRINGS;
  GParamFlags ro = G_PARAM_READABLE | G_PARAM_STATIC_STRINGS;

  object_class->set_property = gst_ds_bench_luma_set_property;
  object_class->get_property = gst_ds_bench_luma_get_property;
  object_class->dispose = gst_ds_bench_luma_dispose;

  g_object_class_install_property (object_class, PROP_SCRATCH_MODE,
    g_param_spec_enum ("scratch-mode", NULL, NULL, GST_TYPE_DS_BENCH_SCRATCH_MODE,
                       GST_DS_BENCH_SCRATCH_MODE_DS_REUSE, rw));
  g_object_class_install_property (object_class, PROP_RELEASE_BEFORE_WAIT,
    g_param_spec_boolean ("release-before-wait", NULL, NULL, TRUE, rw));
  g_object_class_install_property (object_class, PROP_KEEP_BLOCKS,
    g_param_spec_boolean ("keep-blocks", NULL, NULL, FALSE, rw));
  g_object_class_install_property (object_class, PROP_LAST_SCRATCH_TIME,
    g_param_spec_uint64 ("last-scratch-time", NULL, NULL, 0, G_MAXUINT64, 0, ro));
  g_object_class_install_property (object_class, PROP_LAST_PROCESS_TIME,
    g_param_spec_uint64 ("last-process-time", NULL, NULL, 0, G_MAXUINT64, 0, ro));

  gst_element_class_set_static_metadata (element_class, "ds scratch benchmark",
                                         "Filter/Analyzer/Video/Hardware",
                                         "dslumastats's work with a choice of scratch",
                                         "The ds authors");
  gst_element_class_add_static_pad_template (element_class, &sink_template);
  gst_element_class_add_static_pad_template (element_class, &src_template);
  element_class->set_context = GST_DEBUG_FUNCPTR (gst_ds_bench_luma_set_context);

  trans_class->passthrough_on_same_caps = FALSE;
  trans_class->transform_ip_on_passthrough = TRUE;
  trans_class->start = GST_DEBUG_FUNCPTR (gst_ds_bench_luma_start);
  trans_class->stop = GST_DEBUG_FUNCPTR (gst_ds_bench_luma_stop);
  trans_class->set_caps = GST_DEBUG_FUNCPTR (gst_ds_bench_luma_set_caps);
  trans_class->transform_ip = GST_DEBUG_FUNCPTR (gst_ds_bench_luma_transform_ip);
}

static void
gst_ds_bench_luma_init (GstDsBenchLuma *self)
{
  self->release_before_wait = TRUE;
  gst_base_transform_set_in_place (GST_BASE_TRANSFORM (self), TRUE);
  gst_base_transform_set_passthrough (GST_BASE_TRANSFORM (self), TRUE);
}
