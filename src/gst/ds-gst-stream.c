/* ds-gst-stream.c: DsGstStream, a CUDA stream libds-gst makes for an element
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"
#include "ds-gst-config.h"   /* DS_GST_HAVE_CUDA_STREAM, before its first use */

#include <gst/cuda/cuda-gst.h>
#include <gst/cuda/gstcudamemory.h>
#if DS_GST_HAVE_CUDA_STREAM
# include <gst/cuda/gstcudastream.h>
#endif

#include "ds-gst-stream.h"
#include "ds-gst-cuda-context-private.h"
#include "ds-gst-debug-private.h"

/**
 * DsGstStream:
 *
 * A CUDA stream of a #GstCudaContext that libds-gst makes and owns: what
 * an element runs its work on, and what its scratchpads give memory back
 * in. With GStreamer 1.24 or newer it is a `GstCudaStream` (made by
 * `gst_cuda_stream_new()`, handed out by `ds_gst_stream_get_cuda_stream()`),
 * so that one stream serves the element, its buffer pools
 * (`gst_buffer_pool_config_set_cuda_stream()`) and its scratch; with 1.22
 * a non-blocking stream of the context.
 *
 * It is reference counted, and every scratchpad made on it
 * ([method@DsGst.Stream.new_scratchpad]) holds a reference, so the stream
 * lives until the last of them has given its memory back, however long a
 * buffer that carries one ([struct@DsGst.ScratchMeta]) outlives the
 * element. An element makes one in `start` and drops it in `stop`; it
 * writes no reference counting of its own.
 *
 * While a stream of a context is alive, ds takes the elements of that
 * context to be running. When the last one goes, the context's pools
 * ([func@DsGst.cuda_context_get_resource]) give back every block they
 * hold idle, so a pipeline that stopped (READY) holds no scratch memory;
 * see "ds in your CUDA element" for each state.
 */

struct _DsGstStream
{
  gatomicrefcount  ref_count;
  GstCudaContext  *context;
#if DS_GST_HAVE_CUDA_STREAM
  GstCudaStream   *cuda_stream;   /* what the handle is; goes to buffer pools */
#endif
  CUstream         handle;
  DsAccessOrder    order;
};

G_DEFINE_BOXED_TYPE (DsGstStream, ds_gst_stream, ds_gst_stream_ref, ds_gst_stream_unref)

/* The scratchpad's qdata: what keeps the stream of its device order
 * alive (a DsGstStream, or with GStreamer 1.24 a GstCudaStream). */
static GQuark
stream_owner_quark (void)
{
  return g_quark_from_static_string ("ds-gst-stream-owner");
}

#if !DS_GST_HAVE_CUDA_STREAM
static void
set_cuda_error (GError     **error,
                CUresult     result,
                const char  *call)
{
  const char *name = NULL;

  if (CuGetErrorName (result, &name) != CUDA_SUCCESS || name == NULL)
    name = "unknown error";
  g_set_error (error, DS_ERROR, DS_ERROR_CUDA, "%s failed: %s (%d)", call, name, (int) result);
}
#endif

/* Destroys the stream of @self (the GstCudaStream's reference with 1.24+). */
static void
destroy_handle (DsGstStream *self)
{
#if DS_GST_HAVE_CUDA_STREAM
  gst_clear_cuda_stream (&self->cuda_stream);
#else
  if (gst_cuda_context_push (self->context))
    {
      CuStreamDestroy (self->handle);
      gst_cuda_context_pop (NULL);
    }
  else
    {
      GST_WARNING ("could not push %" GST_PTR_FORMAT " to destroy stream %p", self->context,
                   self->handle);
    }
#endif
}

/**
 * ds_gst_stream_new:
 * @context: a #GstCudaContext
 * @error: return location for a #GError
 *
 * Creates a CUDA stream in @context: a `GstCudaStream` with GStreamer 1.24
 * or newer, a non-blocking stream with 1.22.
 *
 * Returns: (transfer full) (nullable): a new #DsGstStream, or `NULL` with
 *   @error set (%DS_ERROR_CUDA when @context cannot be made current or the
 *   stream cannot be created)
 */
DsGstStream *
ds_gst_stream_new (GstCudaContext  *context,
                   GError         **error)
{
  DsGstStream *self;
  CUstream handle = NULL;
#if DS_GST_HAVE_CUDA_STREAM
  GstCudaStream *cuda_stream;
#else
  CUresult result;
#endif

  g_return_val_if_fail (GST_IS_CUDA_CONTEXT (context), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  ds_gst_debug_init ();
#if DS_GST_HAVE_CUDA_STREAM
  if ((cuda_stream = gst_cuda_stream_new (context)) == NULL)
    {
      g_set_error (error, DS_ERROR, DS_ERROR_CUDA,
                   "Could not create a CUDA stream in %s (gst_cuda_stream_new failed)",
                   GST_OBJECT_NAME (context));
      return NULL;
    }
  handle = gst_cuda_stream_get_handle (cuda_stream);
#else
  if (!gst_cuda_context_push (context))
    {
      g_set_error (error, DS_ERROR, DS_ERROR_CUDA,
                   "Could not make the CUDA context of %s current (cuCtxPushCurrent failed)",
                   GST_OBJECT_NAME (context));
      return NULL;
    }
  result = CuStreamCreate (&handle, CU_STREAM_NON_BLOCKING);
  gst_cuda_context_pop (NULL);
  if (result != CUDA_SUCCESS)
    {
      set_cuda_error (error, result, "cuStreamCreate");
      return NULL;
    }
#endif

  self = g_new0 (DsGstStream, 1);
  g_atomic_ref_count_init (&self->ref_count);
  self->context = gst_object_ref (context);
  self->handle = handle;
#if DS_GST_HAVE_CUDA_STREAM
  self->cuda_stream = cuda_stream;
#endif
  if (!ds_gst_cuda_context_init_order (context, handle, &self->order, error))
    {
      /* Not held yet: nothing to give back. */
      destroy_handle (self);
      gst_object_unref (context);
      g_free (self);
      return NULL;
    }
  ds_gst_cuda_context_hold (context);

  GST_DEBUG ("new stream %p of %" GST_PTR_FORMAT, handle, context);
  return self;
}

/**
 * ds_gst_stream_ref: (skip)
 * @self: a #DsGstStream
 *
 * Takes a reference on @self.
 *
 * Returns: (transfer full): @self
 */
DsGstStream *
ds_gst_stream_ref (DsGstStream *self)
{
  g_return_val_if_fail (self != NULL, NULL);

  g_atomic_ref_count_inc (&self->ref_count);
  return self;
}

/**
 * ds_gst_stream_unref: (skip)
 * @self: (transfer full): a #DsGstStream
 *
 * Drops a reference. The last one waits for the work queued on the stream,
 * destroys it and, when it was the last stream of its context, lets the
 * context's pools give back what they hold.
 */
void
ds_gst_stream_unref (DsGstStream *self)
{
  g_autoptr(GError) error = NULL;
  GstCudaContext *context;

  g_return_if_fail (self != NULL);

  if (!g_atomic_ref_count_dec (&self->ref_count))
    return;

  context = self->context;
  GST_DEBUG ("destroying stream %p of %" GST_PTR_FORMAT, self->handle, context);
  /* Its work finishes first, so that what its scratchpads gave back is
   * idle for the trim below, whichever thread lets the stream go (an
   * element's stop, or the last buffer that carried its scratch). */
  if (!ds_access_order_synchronize (&self->order, &error))
    GST_WARNING ("stream %p: %s", self->handle, error->message);
  destroy_handle (self);
  g_free (self);

  ds_gst_cuda_context_release (context);
  gst_object_unref (context);
}

/**
 * ds_gst_stream_get_context:
 * @self: a #DsGstStream
 *
 * The context of @self.
 *
 * Returns: (transfer none): the #GstCudaContext of @self
 */
GstCudaContext *
ds_gst_stream_get_context (DsGstStream *self)
{
  g_return_val_if_fail (self != NULL, NULL);

  return self->context;
}

/**
 * ds_gst_stream_get_handle:
 * @self: a #DsGstStream
 *
 * The stream: a `CUstream`, which is also a `cudaStream_t`.
 *
 * Returns: (transfer none): the `CUstream` of @self
 */
gpointer
ds_gst_stream_get_handle (DsGstStream *self)
{
  g_return_val_if_fail (self != NULL, NULL);

  return self->handle;
}

#if DS_GST_HAVE_CUDA_STREAM
/**
 * ds_gst_stream_get_cuda_stream:
 * @self: a #DsGstStream
 *
 * The `GstCudaStream` that @self is: what an element sets on the buffer
 * pools it proposes and decides (`gst_buffer_pool_config_set_cuda_stream()`),
 * so that its output memory carries the stream its work runs on.
 *
 * Only with GStreamer 1.24 or newer (%DS_GST_HAVE_CUDA_STREAM).
 *
 * Returns: (transfer none): the `GstCudaStream` of @self
 */
GstCudaStream *
ds_gst_stream_get_cuda_stream (DsGstStream *self)
{
  g_return_val_if_fail (self != NULL, NULL);

  return self->cuda_stream;
}
#endif

/**
 * ds_gst_stream_get_order:
 * @self: a #DsGstStream
 *
 * The order of @self, in its context (as
 * [func@DsGst.cuda_context_new_order] makes it).
 *
 * Returns: (transfer none): the #DsAccessOrder of @self
 */
const DsAccessOrder *
ds_gst_stream_get_order (DsGstStream *self)
{
  g_return_val_if_fail (self != NULL, NULL);

  return &self->order;
}

/**
 * ds_gst_stream_new_scratchpad:
 * @self: a #DsGstStream
 *
 * Creates a scratchpad whose device order is @self and whose pinned,
 * device and managed memory come from the pools of @self's context
 * ([func@DsGst.cuda_context_get_resource]). It holds a reference on @self
 * (and on the context) until it is finalized, so its memory goes back in
 * @self's order whenever and on whatever thread that happens.
 *
 * An element keeps one, and calls `ds_scratchpad_release()` after each
 * buffer's work is queued: no object is made per buffer.
 *
 * Returns: (transfer full): a new #DsScratchpad
 */
DsScratchpad *
ds_gst_stream_new_scratchpad (DsGstStream *self)
{
  DsScratchpad *scratchpad;

  g_return_val_if_fail (self != NULL, NULL);

  scratchpad = ds_scratchpad_new (&self->order);
  ds_gst_cuda_context_bind_scratchpad (self->context, scratchpad);
  g_object_set_qdata_full (G_OBJECT (scratchpad), stream_owner_quark (),
                           ds_gst_stream_ref (self), (GDestroyNotify) ds_gst_stream_unref);

  return scratchpad;
}

/* Whether @scratchpad holds allocations (settings cannot change then). */
static gboolean
holds_allocations (DsScratchpad *scratchpad)
{
  for (guint kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
    if (ds_scratchpad_get_allocated (scratchpad, kind) != 0)
      return TRUE;
  return FALSE;
}

/* Points @scratchpad at @order, kept alive by @owner (a reference taken
 * here, dropped with @destroy), unless @owner is already its owner. */
static void
point_at (DsScratchpad        *scratchpad,
          GstCudaContext      *context,
          const DsAccessOrder *order,
          gpointer             owner,
          gpointer           (*ref) (gpointer),
          GDestroyNotify       destroy)
{
  if (g_object_get_qdata (G_OBJECT (scratchpad), stream_owner_quark ()) == owner)
    return;

  /* The order first: blocks kept from the last buffer go back in the old
   * stream's order while its owner still holds it. */
  g_object_set (scratchpad, "device-order", order, NULL);
  ds_gst_cuda_context_bind_scratchpad (context, scratchpad);
  g_object_set_qdata_full (G_OBJECT (scratchpad), stream_owner_quark (), ref (owner), destroy);
}

static gpointer
stream_ref (gpointer stream)
{
  return ds_gst_stream_ref (stream);
}

#if DS_GST_HAVE_CUDA_STREAM
static gpointer
cuda_stream_ref (gpointer stream)
{
  return gst_cuda_stream_ref (stream);
}
#endif

/* The first memory of @buffer when it is CUDA memory, else NULL. */
static GstCudaMemory *
cuda_memory_of (GstBuffer *buffer)
{
  GstMemory *mem;

  if (buffer == NULL || gst_buffer_n_memory (buffer) == 0)
    return NULL;
  mem = gst_buffer_peek_memory (buffer, 0);
  return gst_is_cuda_memory (mem) ? GST_CUDA_MEMORY_CAST (mem) : NULL;
}

#if DS_GST_HAVE_CUDA_STREAM
/* The stream of @cmem when it has one of @self's context, else NULL. */
static GstCudaStream *
stream_of (DsGstStream   *self,
           GstCudaMemory *cmem)
{
  if (cmem == NULL || cmem->context != self->context)
    return NULL;
  return gst_cuda_memory_get_stream (cmem);
}

/* Makes the stream @waiter wait, on the GPU, for the work queued so far on
 * @order (an event; the host does not block). */
static gboolean
stream_waits (DsGstStream          *self,
              GstCudaStream        *waiter,
              const DsAccessOrder  *order,
              GError              **error)
{
  DsAccessOrder waiter_order;

  return ds_gst_cuda_context_init_order (self->context, gst_cuda_stream_get_handle (waiter),
                                         &waiter_order, error) &&
         ds_access_order_wait (&waiter_order, order, error);
}
#endif

/**
 * ds_gst_stream_follow_buffers:
 * @self: the element's own #DsGstStream
 * @scratchpad: a scratchpad that holds no allocation (new, or released)
 * @inbuf: the input buffer of the work that comes next
 * @outbuf: (nullable): its output buffer, or `NULL` (an analyzer, or work
 *   in place)
 * @error: return location for a #GError
 *
 * Points @scratchpad at the stream that the work on @inbuf and @outbuf
 * runs on, as GStreamer's own CUDA filters choose it. With GStreamer 1.24
 * or newer that is the stream of @outbuf's CUDA memory, else the stream of
 * @inbuf's, else @self (memory of @self's context only): with a buffer
 * pool configured with `ds_gst_stream_get_cuda_stream()`, output
 * memory carries @self. When @inbuf's stream is not the one picked, the
 * picked stream waits on the GPU for the work queued on @inbuf's (an
 * event): the host does not block. CUDA memory of another context is
 * synchronized (`gst_cuda_memory_sync()`) first. With GStreamer 1.22,
 * whose memory has no stream, it is always @self.
 *
 * The scratchpad then allocates in that stream's order, gives its memory
 * back in it, and holds the stream until it follows another. Read the
 * stream with `ds_access_order_get_stream (ds_scratchpad_get_device_order
 * (scratchpad))`, queue the work on it, then call
 * [method@DsGst.Stream.finish_buffers]. Nothing is called when the stream
 * is the one of the last buffer and no wait is needed, the common case.
 *
 * Returns: `TRUE` on success, `FALSE` with @error set:
 *   %DS_ERROR_INVALID_ARGUMENT when @scratchpad holds allocations (release
 *   it first), or an error of [func@DsGst.cuda_context_new_order]
 */
gboolean
ds_gst_stream_follow_buffers (DsGstStream   *self,
                              DsScratchpad  *scratchpad,
                              GstBuffer     *inbuf,
                              GstBuffer     *outbuf,
                              GError       **error)
{
  GstCudaMemory *in = cuda_memory_of (inbuf);

  g_return_val_if_fail (self != NULL, FALSE);
  g_return_val_if_fail (DS_IS_SCRATCHPAD (scratchpad), FALSE);
  g_return_val_if_fail (GST_IS_BUFFER (inbuf), FALSE);
  g_return_val_if_fail (outbuf == NULL || GST_IS_BUFFER (outbuf), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (holds_allocations (scratchpad))
    {
      g_set_error (error, DS_ERROR, DS_ERROR_INVALID_ARGUMENT,
                   "Scratchpad %p holds allocations: release it before it follows "
                   "the next buffer", scratchpad);
      return FALSE;
    }

#if DS_GST_HAVE_CUDA_STREAM
  {
    GstCudaStream *in_stream = stream_of (self, in);
    GstCudaStream *pick = stream_of (self, cuda_memory_of (outbuf));

    if (in != NULL && in_stream == NULL && gst_cuda_memory_get_stream (in) != NULL)
      gst_cuda_memory_sync (in);   /* another context's: no event crosses contexts */
    if (pick == NULL)
      pick = in_stream;

    if (pick == NULL || pick == self->cuda_stream)
      {
        point_at (scratchpad, self->context, &self->order, self, stream_ref,
                  (GDestroyNotify) ds_gst_stream_unref);
      }
    else if (g_object_get_qdata (G_OBJECT (scratchpad), stream_owner_quark ()) != pick)
      {
        DsAccessOrder order;

        if (!ds_gst_cuda_context_init_order (self->context, gst_cuda_stream_get_handle (pick),
                                             &order, error))
          return FALSE;
        GST_LOG ("scratchpad %p follows the stream %p of %" GST_PTR_FORMAT, scratchpad,
                 gst_cuda_stream_get_handle (pick), outbuf != NULL ? outbuf : inbuf);
        point_at (scratchpad, self->context, &order, pick, cuda_stream_ref,
                  (GDestroyNotify) gst_cuda_stream_unref);
      }

    if (in_stream != NULL && in_stream != (pick != NULL ? pick : self->cuda_stream))
      {
        DsAccessOrder in_order;

        if (!ds_gst_cuda_context_init_order (self->context, gst_cuda_stream_get_handle (in_stream),
                                             &in_order, error) ||
            !ds_access_order_wait (ds_scratchpad_get_device_order (scratchpad), &in_order, error))
          return FALSE;
      }
  }
#else
  (void) in;
  point_at (scratchpad, self->context, &self->order, self, stream_ref,
            (GDestroyNotify) ds_gst_stream_unref);
#endif
  return TRUE;
}

/**
 * ds_gst_stream_follow_buffer:
 * @self: the element's own #DsGstStream
 * @scratchpad: a scratchpad that holds no allocation (new, or released)
 * @buffer: the buffer whose work comes next
 * @error: return location for a #GError
 *
 * [method@DsGst.Stream.follow_buffers] for work with no output buffer
 * (an analyzer, or work in place): the stream of @buffer's CUDA memory
 * with GStreamer 1.24 or newer, @self otherwise.
 *
 * Returns: `TRUE` on success, `FALSE` with @error set as
 *   [method@DsGst.Stream.follow_buffers] sets it
 */
gboolean
ds_gst_stream_follow_buffer (DsGstStream   *self,
                             DsScratchpad  *scratchpad,
                             GstBuffer     *buffer,
                             GError       **error)
{
  return ds_gst_stream_follow_buffers (self, scratchpad, buffer, NULL, error);
}

/* Whether the work on @order is over, or waited for, as far as @cmem's
 * users are concerned, without the host: on GStreamer 1.24+ memory of
 * @self's context with a stream, which then waits on the GPU for @order
 * and says it has work pending (GST_CUDA_MEMORY_TRANSFER_NEED_SYNC), as
 * gstcuda's own elements mark their output. */
static gboolean
mark_memory (DsGstStream          *self,
             GstBuffer            *buffer,
             const DsAccessOrder  *order,
             gboolean             *host_waits,
             GError              **error)
{
  GstCudaMemory *cmem = cuda_memory_of (buffer);
#if DS_GST_HAVE_CUDA_STREAM
  GstCudaStream *stream = stream_of (self, cmem);

  if (stream != NULL)
    {
      if (gst_cuda_stream_get_handle (stream) != ds_access_order_get_stream (order) &&
          !stream_waits (self, stream, order, error))
        return FALSE;
      for (guint i = 0; i < gst_buffer_n_memory (buffer); i++)
        GST_MINI_OBJECT_FLAG_SET (gst_buffer_peek_memory (buffer, i), GST_CUDA_MEMORY_TRANSFER_NEED_SYNC);
      return TRUE;
    }
#endif
  /* CUDA memory without a stream (GStreamer 1.22), or of another context:
   * whoever uses it next does not wait for @order. */
  if (cmem != NULL)
    *host_waits = TRUE;
  return TRUE;
}

/**
 * ds_gst_stream_finish_buffers:
 * @self: the element's own #DsGstStream
 * @scratchpad: the scratchpad that [method@DsGst.Stream.follow_buffers]
 *   pointed at the work's stream, before it is released
 * @inbuf: the input buffer of the work just queued
 * @outbuf: (nullable): its output buffer, or `NULL` (an analyzer, or work
 *   in place)
 * @error: return location for a #GError
 *
 * Hands the buffers of the work just queued on @scratchpad's stream to
 * whoever uses them next, so that nobody reads the output before the work
 * wrote it, and nobody writes the input (its pool's next user) before the
 * work read it:
 *
 * - with GStreamer 1.24 or newer, CUDA memory of @self's context whose
 *   stream is another waits for the work on the GPU (an event), and the
 *   memory of both buffers is marked `GST_CUDA_MEMORY_TRANSFER_NEED_SYNC`,
 *   so that gstcuda elements downstream synchronize as they do for each
 *   other's output; the host does not wait;
 * - the host waits for the work (`cuStreamSynchronize()`) when either
 *   buffer is CUDA memory without a stream (always with GStreamer 1.22) or
 *   of another context, and when @outbuf is system memory, which the host
 *   reads next.
 *
 * System memory that the work only read (copies to the device from
 * pageable memory) needs nothing.
 *
 * Returns: `TRUE` on success, `FALSE` with @error set (%DS_ERROR_CUDA)
 */
gboolean
ds_gst_stream_finish_buffers (DsGstStream   *self,
                              DsScratchpad  *scratchpad,
                              GstBuffer     *inbuf,
                              GstBuffer     *outbuf,
                              GError       **error)
{
  const DsAccessOrder *order;
  gboolean host_waits = FALSE;

  g_return_val_if_fail (self != NULL, FALSE);
  g_return_val_if_fail (DS_IS_SCRATCHPAD (scratchpad), FALSE);
  g_return_val_if_fail (GST_IS_BUFFER (inbuf), FALSE);
  g_return_val_if_fail (outbuf == NULL || GST_IS_BUFFER (outbuf), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  order = ds_scratchpad_get_device_order (scratchpad);
  if (!mark_memory (self, inbuf, order, &host_waits, error))
    return FALSE;
  if (outbuf != NULL)
    {
      if (!mark_memory (self, outbuf, order, &host_waits, error))
        return FALSE;
      if (cuda_memory_of (outbuf) == NULL)
        host_waits = TRUE;
    }
  if (host_waits)
    return ds_access_order_synchronize (order, error);
  return TRUE;
}
