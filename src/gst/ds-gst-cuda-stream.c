/* ds-gst-cuda-stream.c: ds orders and scratchpads on a GstCudaStream
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "ds-gst-cuda-stream.h"
#include "ds-gst-cuda-context.h"

static GQuark
scratchpad_stream_quark (void)
{
  return g_quark_from_static_string ("ds-gst-cuda-stream");
}

/**
 * ds_gst_cuda_stream_new_order:
 * @stream: a #GstCudaStream (for the legacy default stream of a context,
 *   use [func@DsGst.cuda_context_new_order] with `NULL`)
 * @error: return location for a #GError
 *
 * Creates the order of @stream, in the context it belongs to, as
 * [func@DsGst.cuda_context_new_order] does for a `CUstream`.
 *
 * Returns: (transfer full) (nullable): a new #DsAccessOrder, or `NULL`
 *   with @error set
 */
DsAccessOrder *
ds_gst_cuda_stream_new_order (GstCudaStream  *stream,
                              GError        **error)
{
  g_return_val_if_fail (stream != NULL, NULL);
  g_return_val_if_fail (GST_IS_CUDA_CONTEXT (stream->context), NULL);

  return ds_gst_cuda_context_new_order (stream->context,
                                        gst_cuda_stream_get_handle (stream),
                                        error);
}

/**
 * ds_gst_cuda_stream_new_scratchpad:
 * @stream: a #GstCudaStream
 * @error: return location for a #GError
 *
 * Creates a scratchpad on @stream, in the context it belongs to, as
 * [func@DsGst.cuda_context_new_scratchpad] does for a `CUstream`. The
 * scratchpad holds a reference on @stream (and on its context) until it is
 * finalized.
 *
 * Returns: (transfer full) (nullable): a new #DsScratchpad, or `NULL` with
 *   @error set
 */
DsScratchpad *
ds_gst_cuda_stream_new_scratchpad (GstCudaStream  *stream,
                                   GError        **error)
{
  DsScratchpad *scratchpad;

  g_return_val_if_fail (stream != NULL, NULL);
  g_return_val_if_fail (GST_IS_CUDA_CONTEXT (stream->context), NULL);

  scratchpad = ds_gst_cuda_context_new_scratchpad (stream->context,
                                                   gst_cuda_stream_get_handle (stream),
                                                   error);
  if (scratchpad != NULL)
    g_object_set_qdata_full (G_OBJECT (scratchpad), scratchpad_stream_quark (),
                             gst_cuda_stream_ref (stream),
                             (GDestroyNotify) gst_cuda_stream_unref);

  return scratchpad;
}
