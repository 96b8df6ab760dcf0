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
 * Each frame needs scratch memory: pinned memory to upload the plane,
 * device memory for the plane and for the partial results of the first
 * kernel pass, device memory for the result and pinned memory to read it
 * back. With the default scratch-mode (`ds-reuse`) all of it comes from one
 * ds scratchpad per stream that is released — in stream order — right
 * after the work is queued, while the read-back is still in flight; no
 * object and no CUDA allocation is made per frame once ds's pools are warm.
 *
 * System-memory video in GRAY8, I420, YV12, NV12, NV21, Y42B and Y444 is
 * uploaded; where GStreamer's CUDA library was available at build time,
 * `video/x-raw(memory:CUDAMemory)` is read in place (mapped with
 * `GST_MAP_CUDA`), and the element shares the pipeline's `GstCudaContext`.
 *
 * Messages: `frame` (guint64, from 0 at start), `timestamp` and
 * `running-time` (GstClockTime), `width`, `height` (gint), and per the
 * `statistics` property `mean` (gdouble) and `sum` (guint64), `min`, `max`
 * (guint) and `histogram` (a #GstValueArray of 256 guint).
 *
 * ## Example launch line
 * |[
 * gst-launch-1.0 -m videotestsrc num-buffers=10 ! dslumastats ! fakesink
 * ]|
 */

#include "config.h"

#include <string.h>
#include <time.h>

#include <gst/video/video.h>
#include <ds-gst.h>
#if DS_GST_HAVE_CUDA
# include <gst/cuda/gstcudaloader.h>
# include <gst/cuda/gstcudamemory.h>
# include <gst/cuda/gstcudautils.h>
#endif

#include "gstdslumastats.h"
#include "ds-luma-stats.h"

GST_DEBUG_CATEGORY_STATIC (gst_ds_luma_stats_debug);
#define GST_CAT_DEFAULT gst_ds_luma_stats_debug

#define VIDEO_FORMATS "{ GRAY8, I420, YV12, NV12, NV21, Y42B, Y444 }"

#if DS_GST_HAVE_CUDA
# define TEMPLATE_CAPS \
  GST_VIDEO_CAPS_MAKE_WITH_FEATURES (GST_CAPS_FEATURE_MEMORY_CUDA_MEMORY, VIDEO_FORMATS) "; " \
  GST_VIDEO_CAPS_MAKE (VIDEO_FORMATS)
#else
# define TEMPLATE_CAPS GST_VIDEO_CAPS_MAKE (VIDEO_FORMATS)
#endif

#define DEFAULT_DEVICE_ID     -1
#define DEFAULT_SCRATCH_MODE  GST_DS_SCRATCH_MODE_DS_REUSE
#define DEFAULT_STATISTICS    (GST_DS_LUMA_STATISTICS_MEAN | \
                               GST_DS_LUMA_STATISTICS_MIN_MAX | \
                               GST_DS_LUMA_STATISTICS_HISTOGRAM)
#define DEFAULT_POST_MESSAGES TRUE
#define DEFAULT_RELEASE_BEFORE_WAIT TRUE
#define DEFAULT_KEEP_BLOCKS FALSE

enum
{
  PROP_0,
  PROP_DEVICE_ID,
  PROP_SCRATCH_MODE,
  PROP_STATISTICS,
  PROP_POST_MESSAGES,
  PROP_RELEASE_BEFORE_WAIT,
  PROP_KEEP_BLOCKS,
  PROP_FRAMES_PROCESSED,
  PROP_SCRATCH_TIME,
  PROP_LAST_SCRATCH_TIME,
  PROP_LAST_PROCESS_TIME,
};

/* The element's CUDA stream, shared with the scratchpads that scratch-mode
 * ds-meta ties to buffers: a buffer may outlive the element's stop, and its
 * scratchpad gives its memory back in this stream's order, so the stream
 * goes only with the last of them. (GStreamer 1.24's GstCudaStream is such
 * a refcounted stream; 1.22 has none.) */
typedef struct
{
  gatomicrefcount  ref_count;
  cudaStream_t     handle;
#if DS_GST_HAVE_CUDA
  GstCudaContext  *context;
#else
  gint             device;
#endif
} SharedStream;

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

struct _GstDsLumaStats
{
  GstBaseTransform parent;

  /* Properties and counters, under the object lock. */
  gint             device_id;
  GstDsScratchMode scratch_mode;
  guint            statistics;
  gboolean         post_messages;
  gboolean         release_before_wait;
  gboolean         keep_blocks;
  guint64          frames;
  guint64          scratch_ns;
  guint64          last_scratch_ns;
  guint64          last_process_ns;

  /* Streaming state (start to stop). */
  GstDsScratchMode mode;
  gboolean         release_early;
  gboolean         keep;
  GstVideoInfo     info;
  gboolean         cuda_caps;
  gboolean         warned_foreign;
#if DS_GST_HAVE_CUDA
  GstCudaContext  *context;
#endif
  SharedStream    *stream;
  DsScratchpad    *scratch;        /* ds-reuse */
  FrameScratch     prealloc;       /* preallocated */
  gsize            prealloc_plane;
  gint             prealloc_partials;
  DsLumaResult     host_result;
  ReadbackJob      job;
};

GType
gst_ds_scratch_mode_get_type (void)
{
  static gsize type_id;
  static const GEnumValue values[] = {
    { GST_DS_SCRATCH_MODE_DS_REUSE,
      "One ds scratchpad per stream, released after each buffer (the fast path)",
      "ds-reuse" },
    { GST_DS_SCRATCH_MODE_DS_NEW,
      "A new ds scratchpad per buffer", "ds-new" },
    { GST_DS_SCRATCH_MODE_DS_META,
      "A new ds scratchpad per buffer, tied to the buffer by a DsGstScratchMeta "
      "that publishes the results in device memory", "ds-meta" },
    { GST_DS_SCRATCH_MODE_CUDA_MALLOC,
      "cudaMallocHost/cudaMalloc per buffer, freed after its work (baseline)",
      "cuda-malloc" },
    { GST_DS_SCRATCH_MODE_PREALLOCATED,
      "Buffers allocated once per caps and kept (baseline)", "preallocated" },
    { 0, NULL, NULL },
  };

  if (g_once_init_enter (&type_id))
    g_once_init_leave (&type_id, g_enum_register_static ("GstDsScratchMode", values));

  return (GType) type_id;
}

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
  GST_STATIC_PAD_TEMPLATE ("sink", GST_PAD_SINK, GST_PAD_ALWAYS,
                           GST_STATIC_CAPS (TEMPLATE_CAPS));
static GstStaticPadTemplate src_template =
  GST_STATIC_PAD_TEMPLATE ("src", GST_PAD_SRC, GST_PAD_ALWAYS,
                           GST_STATIC_CAPS (TEMPLATE_CAPS));

static guint64
now_ns (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (guint64) ts.tv_sec * G_GUINT64_CONSTANT (1000000000) + (guint64) ts.tv_nsec;
}

static GQuark
meta_tag (void)
{
  return g_quark_from_static_string (GST_DS_LUMA_STATS_META_TAG);
}

static GQuark
stream_quark (void)
{
  return g_quark_from_static_string ("gst-ds-luma-stats-stream");
}

/* --- The CUDA context: GStreamer's where gstcuda is there, else the
 * runtime's primary context of a device. ------------------------------- */

static gboolean
stream_context_push (SharedStream *stream)
{
#if DS_GST_HAVE_CUDA
  return gst_cuda_context_push (stream->context);
#else
  return cudaSetDevice (stream->device) == cudaSuccess;
#endif
}

static void
stream_context_pop (SharedStream *stream)
{
#if DS_GST_HAVE_CUDA
  gst_cuda_context_pop (NULL);
#endif
}

static SharedStream *
shared_stream_ref (SharedStream *stream)
{
  g_atomic_ref_count_inc (&stream->ref_count);
  return stream;
}

static void
shared_stream_unref (gpointer data)
{
  SharedStream *stream = data;

  if (!g_atomic_ref_count_dec (&stream->ref_count))
    return;

  /* Work still queued on the stream completes after destroy. */
  if (stream_context_push (stream))
    {
      cudaError_t status = cudaStreamDestroy (stream->handle);

      if (status != cudaSuccess)
        GST_WARNING ("cudaStreamDestroy failed: %s", cudaGetErrorName (status));
      stream_context_pop (stream);
    }
#if DS_GST_HAVE_CUDA
  gst_object_unref (stream->context);
#endif
  g_free (stream);
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

static DsScratchpad *
new_scratchpad (GstDsLumaStats  *self,
                GError         **error)
{
#if DS_GST_HAVE_CUDA
  return ds_gst_cuda_context_new_scratchpad (self->context, self->stream->handle, error);
#else
  g_autoptr(DsAccessOrder) order = ds_access_order_new_stream (self->stream->handle,
                                                               self->stream->device);

  return ds_scratchpad_new (order);
#endif
}

/* --- Properties ------------------------------------------------------ */

static void
gst_ds_luma_stats_set_property (GObject      *object,
                                guint         prop_id,
                                const GValue *value,
                                GParamSpec   *pspec)
{
  GstDsLumaStats *self = GST_DS_LUMA_STATS (object);

  GST_OBJECT_LOCK (self);
  switch (prop_id)
    {
    case PROP_DEVICE_ID:
      self->device_id = g_value_get_int (value);
      break;
    case PROP_SCRATCH_MODE:
      self->scratch_mode = g_value_get_enum (value);
      break;
    case PROP_STATISTICS:
      self->statistics = g_value_get_flags (value);
      break;
    case PROP_POST_MESSAGES:
      self->post_messages = g_value_get_boolean (value);
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
gst_ds_luma_stats_get_property (GObject    *object,
                                guint       prop_id,
                                GValue     *value,
                                GParamSpec *pspec)
{
  GstDsLumaStats *self = GST_DS_LUMA_STATS (object);

  GST_OBJECT_LOCK (self);
  switch (prop_id)
    {
    case PROP_DEVICE_ID:
      g_value_set_int (value, self->device_id);
      break;
    case PROP_SCRATCH_MODE:
      g_value_set_enum (value, self->scratch_mode);
      break;
    case PROP_STATISTICS:
      g_value_set_flags (value, self->statistics);
      break;
    case PROP_POST_MESSAGES:
      g_value_set_boolean (value, self->post_messages);
      break;
    case PROP_RELEASE_BEFORE_WAIT:
      g_value_set_boolean (value, self->release_before_wait);
      break;
    case PROP_KEEP_BLOCKS:
      g_value_set_boolean (value, self->keep_blocks);
      break;
    case PROP_FRAMES_PROCESSED:
      g_value_set_uint64 (value, self->frames);
      break;
    case PROP_SCRATCH_TIME:
      g_value_set_uint64 (value, self->scratch_ns);
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

/* --- Context sharing (gstcuda) ---------------------------------------- */

static void
gst_ds_luma_stats_set_context (GstElement *element,
                               GstContext *context)
{
#if DS_GST_HAVE_CUDA
  GstDsLumaStats *self = GST_DS_LUMA_STATS (element);
  gint device_id;

  GST_OBJECT_LOCK (self);
  device_id = self->device_id;
  GST_OBJECT_UNLOCK (self);

  gst_cuda_handle_set_context (element, context, device_id, &self->context);
#endif

  GST_ELEMENT_CLASS (gst_ds_luma_stats_parent_class)->set_context (element, context);
}

static gboolean
gst_ds_luma_stats_query (GstBaseTransform *trans,
                         GstPadDirection   direction,
                         GstQuery         *query)
{
#if DS_GST_HAVE_CUDA
  GstDsLumaStats *self = GST_DS_LUMA_STATS (trans);

  if (GST_QUERY_TYPE (query) == GST_QUERY_CONTEXT &&
      gst_cuda_handle_context_query (GST_ELEMENT (trans), query, self->context))
    return TRUE;
#endif

  return GST_BASE_TRANSFORM_CLASS (gst_ds_luma_stats_parent_class)->query (trans, direction, query);
}

/* --- Preallocated buffers (a baseline) ------------------------------- */

static void
free_prealloc (GstDsLumaStats *self)
{
  FrameScratch *p = &self->prealloc;

  /* With the context current and the stream drained. */
  if (p->upload != NULL)
    cudaFreeHost (p->upload);
  if (p->readback != NULL)
    cudaFreeHost (p->readback);
  if (p->plane != NULL)
    cudaFree (p->plane);
  if (p->partials != NULL)
    cudaFree (p->partials);
  if (p->result != NULL)
    cudaFree (p->result);
  memset (p, 0, sizeof *p);
  self->prealloc_plane = 0;
  self->prealloc_partials = 0;
}

static gboolean
cuda_malloc_frame (FrameScratch  *s,
                   gsize          plane_size,
                   gint           n_partials,
                   gboolean       on_device,
                   GError       **error)
{
  memset (s, 0, sizeof *s);

  if (!on_device &&
      (!CUDA_CHECK (cudaMallocHost ((void **) &s->upload, plane_size), error) ||
       !CUDA_CHECK (cudaMalloc ((void **) &s->plane, plane_size), error)))
    return FALSE;

  return CUDA_CHECK (cudaMalloc ((void **) &s->partials, n_partials * sizeof (DsLumaPartial)), error) &&
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

/* --- start / stop / caps ---------------------------------------------- */

static void
update_passthrough (GstDsLumaStats *self)
{
  /* The video is never changed; only scratch-mode ds-meta adds a meta, and
   * needs a writable buffer for it. */
  gst_base_transform_set_passthrough (GST_BASE_TRANSFORM (self),
                                      self->mode != GST_DS_SCRATCH_MODE_DS_META);
}

static gboolean
gst_ds_luma_stats_start (GstBaseTransform *trans)
{
  GstDsLumaStats *self = GST_DS_LUMA_STATS (trans);
  g_autoptr(GError) error = NULL;
  SharedStream *stream;
  cudaError_t status;
  gint device_id;

  GST_OBJECT_LOCK (self);
  device_id = self->device_id;
  self->mode = self->scratch_mode;
  self->release_early = self->release_before_wait;
  self->keep = self->keep_blocks;
  self->frames = 0;
  self->scratch_ns = 0;
  self->last_scratch_ns = 0;
  self->last_process_ns = 0;
  GST_OBJECT_UNLOCK (self);

  stream = g_new0 (SharedStream, 1);
  g_atomic_ref_count_init (&stream->ref_count);

#if DS_GST_HAVE_CUDA
  /* gstcuda opens libcuda with dlopen; without it, creating a context
   * would abort, so ask first. */
  if (!gst_cuda_load_library ())
    {
      GST_ELEMENT_ERROR (self, RESOURCE, NOT_FOUND,
                         ("No CUDA device: the CUDA driver library (libcuda.so.1) "
                          "could not be loaded"),
                         ("gst_cuda_load_library () failed: is the NVIDIA driver installed?"));
      g_free (stream);
      return FALSE;
    }
  if (!gst_cuda_ensure_element_context (GST_ELEMENT (self), device_id, &self->context))
    {
      GST_ELEMENT_ERROR (self, RESOURCE, NOT_FOUND,
                         ("No CUDA device: could not create a CUDA context for device %d",
                          device_id),
                         ("gst_cuda_ensure_element_context () failed"));
      g_free (stream);
      return FALSE;
    }
  stream->context = gst_object_ref (self->context);
#else
  {
    int count = 0;

    status = cudaGetDeviceCount (&count);
    if (status == cudaSuccess && count == 0)
      status = cudaErrorNoDevice;
    if (status == cudaSuccess && device_id >= count)
      status = cudaErrorInvalidDevice;
    if (status != cudaSuccess)
      {
        (void) cudaGetLastError ();
        GST_ELEMENT_ERROR (self, RESOURCE, NOT_FOUND,
                           ("No CUDA device: %s", cudaGetErrorString (status)),
                           ("cudaGetDeviceCount: %s", cudaGetErrorName (status)));
        g_free (stream);
        return FALSE;
      }
    stream->device = device_id < 0 ? 0 : device_id;
  }
#endif

  if (!stream_context_push (stream))
    {
      GST_ELEMENT_ERROR (self, RESOURCE, FAILED,
                         ("Could not make the CUDA context current"), (NULL));
      shared_stream_unref (stream);
      return FALSE;
    }

  status = cudaStreamCreateWithFlags (&stream->handle, cudaStreamNonBlocking);
  if (status != cudaSuccess)
    {
      (void) cudaGetLastError ();
      stream_context_pop (stream);
      GST_ELEMENT_ERROR (self, RESOURCE, FAILED,
                         ("Could not create a CUDA stream: %s", cudaGetErrorString (status)),
                         ("cudaStreamCreateWithFlags: %s", cudaGetErrorName (status)));
#if DS_GST_HAVE_CUDA
      gst_object_unref (stream->context);
#endif
      g_free (stream);
      return FALSE;
    }
  self->stream = stream;

  /* The fast path: one scratchpad for the stream, released per buffer.
   * With keep-blocks, each release keeps the device block (taken again on
   * the same stream, so stream order alone makes that safe); the pinned
   * upload and read-back blocks go back on the stream as before. */
  if (self->mode == GST_DS_SCRATCH_MODE_DS_REUSE)
    {
      self->scratch = new_scratchpad (self, &error);
      if (self->scratch != NULL && self->keep)
        ds_scratchpad_set_keep_blocks (self->scratch, TRUE);
    }
  stream_context_pop (stream);

  if (self->mode == GST_DS_SCRATCH_MODE_DS_REUSE && self->scratch == NULL)
    {
      GST_ELEMENT_ERROR (self, RESOURCE, FAILED,
                         ("Could not create a ds scratchpad: %s", error->message), (NULL));
      g_clear_pointer (&self->stream, shared_stream_unref);
      return FALSE;
    }

  GST_DEBUG_OBJECT (self, "started on stream %p, scratch-mode %d",
                    self->stream->handle, self->mode);
  update_passthrough (self);
  return TRUE;
}

static gboolean
gst_ds_luma_stats_stop (GstBaseTransform *trans)
{
  GstDsLumaStats *self = GST_DS_LUMA_STATS (trans);

  if (self->stream != NULL)
    {
      if (stream_context_push (self->stream))
        {
          (void) cudaStreamSynchronize (self->stream->handle);
          free_prealloc (self);
          stream_context_pop (self->stream);
        }
      /* ds switches to the scratchpad's context itself. */
      g_clear_object (&self->scratch);
      g_clear_pointer (&self->stream, shared_stream_unref);
    }

#if DS_GST_HAVE_CUDA
  gst_clear_object (&self->context);
#endif
  return TRUE;
}

static gboolean
gst_ds_luma_stats_set_caps (GstBaseTransform *trans,
                            GstCaps          *incaps,
                            GstCaps          *outcaps)
{
  GstDsLumaStats *self = GST_DS_LUMA_STATS (trans);
  GstCapsFeatures *features;

  if (!gst_video_info_from_caps (&self->info, incaps))
    {
      GST_ERROR_OBJECT (self, "invalid caps %" GST_PTR_FORMAT, incaps);
      return FALSE;
    }

  features = gst_caps_get_features (incaps, 0);
#if DS_GST_HAVE_CUDA
  self->cuda_caps = features != NULL &&
                    gst_caps_features_contains (features, GST_CAPS_FEATURE_MEMORY_CUDA_MEMORY);
#else
  (void) features;
  self->cuda_caps = FALSE;
#endif
  self->warned_foreign = FALSE;

  if (self->mode == GST_DS_SCRATCH_MODE_PREALLOCATED && self->stream != NULL)
    {
      g_autoptr(GError) error = NULL;
      gsize plane = (gsize) GST_VIDEO_INFO_COMP_WIDTH (&self->info, 0) *
                    GST_VIDEO_INFO_COMP_HEIGHT (&self->info, 0);
      gint n_partials = ds_luma_stats_n_partials (GST_VIDEO_INFO_COMP_HEIGHT (&self->info, 0));
      gboolean ok;

      if (!stream_context_push (self->stream))
        return FALSE;
      (void) cudaStreamSynchronize (self->stream->handle);
      free_prealloc (self);
      /* Upload buffers too, in case the memory is mapped to the host. */
      ok = cuda_malloc_frame (&self->prealloc, plane, n_partials, FALSE, &error);
      if (ok)
        {
          self->prealloc_plane = plane;
          self->prealloc_partials = n_partials;
        }
      else
        {
          free_prealloc (self);
        }
      stream_context_pop (self->stream);

      if (!ok)
        {
          GST_ELEMENT_ERROR (self, RESOURCE, NO_SPACE_LEFT,
                             ("Could not preallocate frame buffers: %s", error->message), (NULL));
          return FALSE;
        }
    }

  GST_DEBUG_OBJECT (self, "caps %" GST_PTR_FORMAT " (%s)", incaps,
                    self->cuda_caps ? "CUDA memory" : "system memory");
  return TRUE;
}

/* --- Per frame -------------------------------------------------------- */

static void CUDART_CB
readback_done_cb (void *data)
{
  ReadbackJob *job = data;

  memcpy (job->to, job->from, sizeof (DsLumaResult));
}

static gboolean
alloc_from_scratchpad (DsScratchpad  *sp,
                       FrameScratch  *s,
                       gsize          plane_size,
                       gint           n_partials,
                       gboolean       on_device,
                       GError       **error)
{
  memset (s, 0, sizeof *s);

  if (!on_device)
    {
      s->upload = ds_scratchpad_alloc (sp, DS_MEMORY_KIND_PINNED, plane_size, 0, error);
      if (s->upload == NULL)
        return FALSE;
      s->plane = ds_scratchpad_alloc (sp, DS_MEMORY_KIND_DEVICE, plane_size, 0, error);
      if (s->plane == NULL)
        return FALSE;
    }
  s->partials = DS_SCRATCHPAD_ALLOC_DEVICE (sp, DsLumaPartial, (gsize) n_partials, error);
  if (s->partials == NULL)
    return FALSE;
  s->result = DS_SCRATCHPAD_ALLOC_DEVICE (sp, DsLumaResult, 1, error);
  if (s->result == NULL)
    return FALSE;
  s->readback = DS_SCRATCHPAD_ALLOC_PINNED (sp, DsLumaResult, 1, error);
  return s->readback != NULL;
}

/* Queues the frame's work and takes it back to the host; called with the
 * context current. Adds to *scratch_ns the time spent getting and giving
 * back scratch memory. */
typedef struct
{
  const guint8 *data;     /* host or (on_device) device memory */
  gint          width;
  gint          height;
  gint          stride;
  gboolean      on_device;
} LumaPlane;

static gboolean
process_frame (GstDsLumaStats  *self,
               GstBuffer       *buffer,
               const LumaPlane *luma,
               guint64         *scratch_ns,
               GError         **error)
{
  cudaStream_t stream = self->stream->handle;
  gboolean on_device = luma->on_device;
  gint width = luma->width;
  gint height = luma->height;
  gint stride = luma->stride;
  const guint8 *plane = luma->data;
  gsize plane_size = (gsize) width * height;
  gint n_partials = ds_luma_stats_n_partials (height);
  DsScratchpad *sp = NULL;
  FrameScratch s = { 0, };
  const guint8 *src;
  gint src_stride;
  gboolean ok;
  guint64 t0, t1;

  /* 1. Scratch. */
  t0 = now_ns ();
  switch (self->mode)
    {
    case GST_DS_SCRATCH_MODE_DS_REUSE:
      sp = g_object_ref (self->scratch);
      ok = alloc_from_scratchpad (sp, &s, plane_size, n_partials, on_device, error);
      break;
    case GST_DS_SCRATCH_MODE_DS_NEW:
    case GST_DS_SCRATCH_MODE_DS_META:
      sp = new_scratchpad (self, error);
      /* A scratchpad that rides on the buffer keeps the stream alive: it
       * gives its memory back in that stream's order, maybe after stop. */
      if (sp != NULL && self->mode == GST_DS_SCRATCH_MODE_DS_META)
        g_object_set_qdata_full (G_OBJECT (sp), stream_quark (),
                                 shared_stream_ref (self->stream), shared_stream_unref);
      ok = sp != NULL &&
           alloc_from_scratchpad (sp, &s, plane_size, n_partials, on_device, error);
      break;
    case GST_DS_SCRATCH_MODE_CUDA_MALLOC:
      ok = cuda_malloc_frame (&s, plane_size, n_partials, on_device, error);
      break;
    case GST_DS_SCRATCH_MODE_PREALLOCATED:
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

  /* 2. The work: upload (system memory), two kernel passes, read-back,
   * and a host function that takes the result out of the pinned scratch
   * before the scratch is given back. */
  if (ok)
    {
      if (on_device)
        {
          src = plane;
          src_stride = stride;
        }
      else
        {
          if (stride == width)
            memcpy (s.upload, plane, plane_size);
          else
            for (gint y = 0; y < height; y++)
              memcpy (s.upload + (gsize) y * width, plane + (gsize) y * stride, width);
          ok = CUDA_CHECK (cudaMemcpyAsync (s.plane, s.upload, plane_size,
                                            cudaMemcpyHostToDevice, stream), error);
          src = s.plane;
          src_stride = width;
        }

      self->job.from = s.readback;
      self->job.to = &self->host_result;
      ok = ok &&
           CUDA_CHECK (ds_luma_stats_launch (src, width, height, src_stride,
                                             s.partials, s.result, stream), error) &&
           CUDA_CHECK (cudaMemcpyAsync (s.readback, s.result, sizeof (DsLumaResult),
                                        cudaMemcpyDeviceToHost, stream), error) &&
           CUDA_CHECK (cudaLaunchHostFunc (stream, readback_done_cb, &self->job), error);
    }

  /* 3. Give the scratch back while the work is still queued: ds hands it
   * to others only in stream order (the pinned read-back block only once
   * the host function above has run). With release-before-wait=false the
   * element waits first (for comparison). 4. The element posts the
   * results of this frame, so it waits for them. */
  if (!self->release_early &&
      !CUDA_CHECK (cudaStreamSynchronize (stream), ok ? error : NULL))
    ok = FALSE;

  t0 = now_ns ();
  switch (self->mode)
    {
    case GST_DS_SCRATCH_MODE_DS_REUSE:
      ds_scratchpad_release (sp);
      break;
    case GST_DS_SCRATCH_MODE_DS_META:
      if (ok)
        ds_gst_buffer_add_scratch_meta_full (buffer, sp, meta_tag (), DS_MEMORY_KIND_DEVICE,
                                             s.result, sizeof (DsLumaResult), NULL);
      break;
    default:
      break;
    }
  g_clear_object (&sp);
  t1 = now_ns ();
  *scratch_ns += t1 - t0;

  if (self->release_early &&
      !CUDA_CHECK (cudaStreamSynchronize (stream), ok ? error : NULL))
    ok = FALSE;

  if (self->mode == GST_DS_SCRATCH_MODE_CUDA_MALLOC)
    {
      t0 = now_ns ();
      cuda_free_frame (&s);
      *scratch_ns += now_ns () - t0;
    }

  return ok;
}

static void
post_statistics (GstDsLumaStats     *self,
                 GstBuffer          *buffer,
                 guint64             frame_index,
                 guint               statistics,
                 gint                width,
                 gint                height)
{
  GstBaseTransform *trans = GST_BASE_TRANSFORM (self);
  const DsLumaResult *r = &self->host_result;
  GstClockTime pts = GST_BUFFER_PTS (buffer);
  GstStructure *s;

  s = gst_structure_new ("ds-luma-stats",
                         "frame", G_TYPE_UINT64, frame_index,
                         "timestamp", G_TYPE_UINT64, pts,
                         "running-time", G_TYPE_UINT64,
                         gst_segment_to_running_time (&trans->segment, GST_FORMAT_TIME, pts),
                         "width", G_TYPE_INT, width,
                         "height", G_TYPE_INT, height,
                         NULL);
  if (statistics & GST_DS_LUMA_STATISTICS_MEAN)
    gst_structure_set (s,
                       "mean", G_TYPE_DOUBLE, (gdouble) r->sum / ((gdouble) width * height),
                       "sum", G_TYPE_UINT64, (guint64) r->sum,
                       NULL);
  if (statistics & GST_DS_LUMA_STATISTICS_MIN_MAX)
    gst_structure_set (s,
                       "min", G_TYPE_UINT, (guint) r->min,
                       "max", G_TYPE_UINT, (guint) r->max,
                       NULL);
  if (statistics & GST_DS_LUMA_STATISTICS_HISTOGRAM)
    {
      GValue array = G_VALUE_INIT;
      GValue bin = G_VALUE_INIT;

      g_value_init (&array, GST_TYPE_ARRAY);
      g_value_init (&bin, G_TYPE_UINT);
      for (guint i = 0; i < DS_LUMA_BINS; i++)
        {
          g_value_set_uint (&bin, r->histogram[i]);
          gst_value_array_append_value (&array, &bin);
        }
      gst_structure_take_value (s, "histogram", &array);
      g_value_unset (&bin);
    }

  gst_element_post_message (GST_ELEMENT (self),
                            gst_message_new_element (GST_OBJECT (self), s));
}

static GstFlowReturn
gst_ds_luma_stats_transform_ip (GstBaseTransform *trans,
                                GstBuffer        *buffer)
{
  GstDsLumaStats *self = GST_DS_LUMA_STATS (trans);
  g_autoptr(GError) error = NULL;
  GstVideoFrame frame;
  GstMapInfo map;
  GstMemory *cuda_mem = NULL;
  LumaPlane luma = { NULL, };
  gboolean ok;
  guint64 t0 = now_ns (), scratch_ns = 0, frame_index;
  guint statistics;
  gboolean post;

  if (self->stream == NULL)
    return GST_FLOW_NOT_NEGOTIATED;

  luma.width = GST_VIDEO_INFO_COMP_WIDTH (&self->info, 0);
  luma.height = GST_VIDEO_INFO_COMP_HEIGHT (&self->info, 0);

#if DS_GST_HAVE_CUDA
  if (self->cuda_caps && gst_buffer_n_memory (buffer) == 1)
    {
      GstMemory *mem = gst_buffer_peek_memory (buffer, 0);

      if (gst_is_cuda_memory (mem) && GST_CUDA_MEMORY_CAST (mem)->context == self->context)
        {
          GstCudaMemory *cmem = GST_CUDA_MEMORY_CAST (mem);

#if GST_CHECK_VERSION (1, 24, 0)
          /* 1.24+: the producer's stream may still be writing it. */
          gst_cuda_memory_sync (cmem);
#endif
          /* The device pointer, and the memory's own (pitched) layout. */
          if (gst_memory_map (mem, &map, GST_MAP_READ | GST_MAP_CUDA))
            {
              cuda_mem = mem;
              luma.on_device = TRUE;
              luma.data = (const guint8 *) map.data + GST_VIDEO_INFO_PLANE_OFFSET (&cmem->info, 0);
              luma.stride = GST_VIDEO_INFO_PLANE_STRIDE (&cmem->info, 0);
            }
        }
      if (!luma.on_device && !self->warned_foreign)
        {
          GST_WARNING_OBJECT (self, "CUDA memory this element cannot read in place (another "
                              "context?): reading it through system memory");
          self->warned_foreign = TRUE;
        }
    }
#endif

  if (!luma.on_device)
    {
      /* NO_REF: a mapped frame's own reference would make the buffer
       * unwritable, and scratch-mode ds-meta adds a meta to it. */
      if (!gst_video_frame_map (&frame, &self->info, buffer,
                                GST_MAP_READ | GST_VIDEO_FRAME_MAP_FLAG_NO_REF))
        {
          GST_ELEMENT_ERROR (self, STREAM, FAILED, ("Could not map the video frame"), (NULL));
          return GST_FLOW_ERROR;
        }
      luma.data = GST_VIDEO_FRAME_COMP_DATA (&frame, 0);
      luma.stride = GST_VIDEO_FRAME_COMP_STRIDE (&frame, 0);
    }

  ok = stream_context_push (self->stream);
  if (!ok)
    g_set_error_literal (&error, DS_ERROR, DS_ERROR_CUDA,
                         "Could not make the CUDA context current");
  else
    {
      ok = process_frame (self, buffer, &luma, &scratch_ns, &error);
      stream_context_pop (self->stream);
    }

  if (cuda_mem != NULL)
    gst_memory_unmap (cuda_mem, &map);
  else
    gst_video_frame_unmap (&frame);

  if (!ok)
    {
      GST_ELEMENT_ERROR (self, STREAM, FAILED,
                         ("Could not compute the frame's statistics on the GPU: %s",
                          error->message), (NULL));
      return GST_FLOW_ERROR;
    }

  GST_OBJECT_LOCK (self);
  frame_index = self->frames++;
  self->scratch_ns += scratch_ns;
  self->last_scratch_ns = scratch_ns;
  self->last_process_ns = now_ns () - t0;
  statistics = self->statistics;
  post = self->post_messages;
  GST_OBJECT_UNLOCK (self);

  if (post)
    post_statistics (self, buffer, frame_index, statistics, luma.width, luma.height);

  return GST_FLOW_OK;
}

/* --- Class ------------------------------------------------------------ */

static void
gst_ds_luma_stats_finalize (GObject *object)
{
  GstDsLumaStats *self = GST_DS_LUMA_STATS (object);

#if DS_GST_HAVE_CUDA
  gst_clear_object (&self->context);
#else
  (void) self;
#endif

  G_OBJECT_CLASS (gst_ds_luma_stats_parent_class)->finalize (object);
}

static void
gst_ds_luma_stats_class_init (GstDsLumaStatsClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstBaseTransformClass *trans_class = GST_BASE_TRANSFORM_CLASS (klass);
  GParamFlags rw = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS;
  GParamFlags ro = G_PARAM_READABLE | G_PARAM_STATIC_STRINGS;

  object_class->set_property = gst_ds_luma_stats_set_property;
  object_class->get_property = gst_ds_luma_stats_get_property;
  object_class->finalize = gst_ds_luma_stats_finalize;

  g_object_class_install_property (object_class, PROP_DEVICE_ID,
    g_param_spec_int ("device-id", "Device ID",
                      "The CUDA device to use, -1 for any (a CUDA context shared "
                      "by the pipeline decides)",
                      -1, G_MAXINT, DEFAULT_DEVICE_ID,
                      rw | GST_PARAM_MUTABLE_READY));
  g_object_class_install_property (object_class, PROP_SCRATCH_MODE,
    g_param_spec_enum ("scratch-mode", "Scratch mode",
                       "Where the scratch memory of each frame comes from",
                       GST_TYPE_DS_SCRATCH_MODE, DEFAULT_SCRATCH_MODE,
                       rw | GST_PARAM_MUTABLE_READY));
  g_object_class_install_property (object_class, PROP_STATISTICS,
    g_param_spec_flags ("statistics", "Statistics",
                        "Which statistics the element messages carry",
                        GST_TYPE_DS_LUMA_STATISTICS, DEFAULT_STATISTICS,
                        rw | GST_PARAM_MUTABLE_PLAYING));
  g_object_class_install_property (object_class, PROP_POST_MESSAGES,
    g_param_spec_boolean ("post-messages", "Post messages",
                          "Post a ds-luma-stats element message on the bus for "
                          "each frame",
                          DEFAULT_POST_MESSAGES, rw | GST_PARAM_MUTABLE_PLAYING));
  g_object_class_install_property (object_class, PROP_RELEASE_BEFORE_WAIT,
    g_param_spec_boolean ("release-before-wait", "Release before wait",
                          "Give a frame's ds scratch back as soon as its work is queued "
                          "(the point of stream-ordered release), or only after waiting "
                          "for the work (for comparison); ds-reuse and ds-new",
                          DEFAULT_RELEASE_BEFORE_WAIT, rw | GST_PARAM_MUTABLE_READY));
  g_object_class_install_property (object_class, PROP_KEEP_BLOCKS,
    g_param_spec_boolean ("keep-blocks", "Keep blocks",
                          "ds-reuse: keep the scratchpad's device block from frame to "
                          "frame (ds_scratchpad_set_keep_blocks) instead of giving it "
                          "back to the pool after each frame",
                          DEFAULT_KEEP_BLOCKS, rw | GST_PARAM_MUTABLE_READY));
  g_object_class_install_property (object_class, PROP_FRAMES_PROCESSED,
    g_param_spec_uint64 ("frames-processed", "Frames processed",
                         "Frames processed since the element started",
                         0, G_MAXUINT64, 0, ro));
  g_object_class_install_property (object_class, PROP_SCRATCH_TIME,
    g_param_spec_uint64 ("scratch-time", "Scratch time",
                         "Nanoseconds spent getting and giving back scratch memory "
                         "since the element started",
                         0, G_MAXUINT64, 0, ro));
  g_object_class_install_property (object_class, PROP_LAST_SCRATCH_TIME,
    g_param_spec_uint64 ("last-scratch-time", "Last scratch time",
                         "Nanoseconds spent getting and giving back the scratch "
                         "memory of the last frame",
                         0, G_MAXUINT64, 0, ro));
  g_object_class_install_property (object_class, PROP_LAST_PROCESS_TIME,
    g_param_spec_uint64 ("last-process-time", "Last process time",
                         "Nanoseconds the last frame took in the element, "
                         "GPU work and read-back included",
                         0, G_MAXUINT64, 0, ro));

  gst_element_class_set_static_metadata (element_class,
    "ds luma statistics", "Filter/Analyzer/Video/Hardware",
    "Per-frame luma histogram, mean, minimum and maximum of raw video, "
    "computed on a CUDA GPU with ds scratch memory",
    "The ds authors");
  gst_element_class_add_static_pad_template (element_class, &sink_template);
  gst_element_class_add_static_pad_template (element_class, &src_template);
  element_class->set_context = GST_DEBUG_FUNCPTR (gst_ds_luma_stats_set_context);

  trans_class->passthrough_on_same_caps = FALSE;
  trans_class->transform_ip_on_passthrough = TRUE;
  trans_class->start = GST_DEBUG_FUNCPTR (gst_ds_luma_stats_start);
  trans_class->stop = GST_DEBUG_FUNCPTR (gst_ds_luma_stats_stop);
  trans_class->set_caps = GST_DEBUG_FUNCPTR (gst_ds_luma_stats_set_caps);
  trans_class->query = GST_DEBUG_FUNCPTR (gst_ds_luma_stats_query);
  trans_class->transform_ip = GST_DEBUG_FUNCPTR (gst_ds_luma_stats_transform_ip);

  gst_type_mark_as_plugin_api (GST_TYPE_DS_SCRATCH_MODE, 0);
  gst_type_mark_as_plugin_api (GST_TYPE_DS_LUMA_STATISTICS, 0);
}

static void
gst_ds_luma_stats_init (GstDsLumaStats *self)
{
  self->device_id = DEFAULT_DEVICE_ID;
  self->scratch_mode = DEFAULT_SCRATCH_MODE;
  self->statistics = DEFAULT_STATISTICS;
  self->post_messages = DEFAULT_POST_MESSAGES;
  self->release_before_wait = DEFAULT_RELEASE_BEFORE_WAIT;
  self->keep_blocks = DEFAULT_KEEP_BLOCKS;
  self->mode = DEFAULT_SCRATCH_MODE;
  self->release_early = DEFAULT_RELEASE_BEFORE_WAIT;

  gst_base_transform_set_in_place (GST_BASE_TRANSFORM (self), TRUE);
  gst_base_transform_set_passthrough (GST_BASE_TRANSFORM (self), TRUE);
}
