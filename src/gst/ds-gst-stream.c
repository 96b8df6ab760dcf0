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
 * A non-blocking CUDA stream of a #GstCudaContext that libds-gst makes and
 * owns: what an element runs its work on, and what its scratchpads give
 * memory back in.
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

/**
 * ds_gst_stream_new:
 * @context: a #GstCudaContext
 * @error: return location for a #GError
 *
 * Creates a non-blocking CUDA stream in @context.
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
  CUresult result;

  g_return_val_if_fail (GST_IS_CUDA_CONTEXT (context), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  ds_gst_debug_init ();
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

  self = g_new0 (DsGstStream, 1);
  g_atomic_ref_count_init (&self->ref_count);
  self->context = gst_object_ref (context);
  self->handle = handle;
  if (!ds_gst_cuda_context_init_order (context, handle, &self->order, error))
    {
      /* Not held yet: nothing to give back. */
      if (gst_cuda_context_push (context))
        {
          CuStreamDestroy (handle);
          gst_cuda_context_pop (NULL);
        }
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
  if (gst_cuda_context_push (context))
    {
      CuStreamDestroy (self->handle);
      gst_cuda_context_pop (NULL);
    }
  else
    {
      GST_WARNING ("could not push %" GST_PTR_FORMAT " to destroy stream %p", context,
                   self->handle);
    }
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

/**
 * ds_gst_stream_follow_buffer:
 * @self: the element's own #DsGstStream
 * @scratchpad: a scratchpad that holds no allocation (new, or released)
 * @buffer: the buffer whose work comes next
 * @error: return location for a #GError
 *
 * Points @scratchpad at the stream that @buffer's work runs on, as
 * GStreamer's own CUDA elements choose it: with GStreamer 1.24 or newer,
 * the stream of @buffer's CUDA memory (`gst_cuda_memory_get_stream()`)
 * when the memory is of @self's context and has one, so that the work
 * follows the producer's in stream order with no wait; @self otherwise.
 * When @buffer's CUDA memory has a stream that is not taken (another
 * context's), it is synchronized (`gst_cuda_memory_sync()`) first. With
 * GStreamer 1.22, whose memory has no stream, it is always @self.
 *
 * The scratchpad then allocates in that stream's order, gives its memory
 * back in it, and holds the stream until it follows another. Read the
 * stream with `ds_access_order_get_stream (ds_scratchpad_get_device_order
 * (scratchpad))`. Nothing changes, and nothing is called, when the stream
 * is the one of the last buffer, which is the common case.
 *
 * Returns: `TRUE` on success, `FALSE` with @error set:
 *   %DS_ERROR_INVALID_ARGUMENT when @scratchpad holds allocations (release
 *   it first), or an error of [func@DsGst.cuda_context_new_order]
 */
gboolean
ds_gst_stream_follow_buffer (DsGstStream   *self,
                             DsScratchpad  *scratchpad,
                             GstBuffer     *buffer,
                             GError       **error)
{
  g_return_val_if_fail (self != NULL, FALSE);
  g_return_val_if_fail (DS_IS_SCRATCHPAD (scratchpad), FALSE);
  g_return_val_if_fail (GST_IS_BUFFER (buffer), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (holds_allocations (scratchpad))
    {
      g_set_error (error, DS_ERROR, DS_ERROR_INVALID_ARGUMENT,
                   "Scratchpad %p holds allocations: release it before it follows "
                   "the next buffer", scratchpad);
      return FALSE;
    }

#if DS_GST_HAVE_CUDA_STREAM
  if (gst_buffer_n_memory (buffer) > 0 && gst_is_cuda_memory (gst_buffer_peek_memory (buffer, 0)))
    {
      GstCudaMemory *cmem = GST_CUDA_MEMORY_CAST (gst_buffer_peek_memory (buffer, 0));
      GstCudaStream *stream = gst_cuda_memory_get_stream (cmem);

      if (stream != NULL && cmem->context == self->context)
        {
          DsAccessOrder order;

          if (g_object_get_qdata (G_OBJECT (scratchpad), stream_owner_quark ()) == stream)
            return TRUE;
          if (!ds_gst_cuda_context_init_order (self->context, gst_cuda_stream_get_handle (stream),
                                               &order, error))
            return FALSE;
          GST_LOG ("scratchpad %p follows the stream %p of %" GST_PTR_FORMAT, scratchpad,
                   gst_cuda_stream_get_handle (stream), buffer);
          point_at (scratchpad, self->context, &order, stream, cuda_stream_ref,
                    (GDestroyNotify) gst_cuda_stream_unref);
          return TRUE;
        }
      if (stream != NULL)
        gst_cuda_memory_sync (cmem);
    }
#endif

  point_at (scratchpad, self->context, &self->order, self, stream_ref,
            (GDestroyNotify) ds_gst_stream_unref);
  return TRUE;
}
