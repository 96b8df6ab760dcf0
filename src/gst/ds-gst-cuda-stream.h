/* ds-gst-cuda-stream.h: orders and scratchpads for a GstCudaStream (1.24+)
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Built only against GStreamer 1.24 or newer (DS_GST_HAVE_CUDA_STREAM),
 * where gstcuda has GstCudaStream.
 */

#pragma once

#if !defined (DS_GST_INSIDE) && !defined (DS_GST_COMPILATION)
# error "Only <ds-gst.h> can be included directly."
#endif

#include <ds.h>
#include <gst/gst.h>
#include <gst/cuda/gstcudastream.h>

#include "ds-gst-version-macros.h"

G_BEGIN_DECLS

DS_GST_AVAILABLE_IN_ALL
DsAccessOrder *ds_gst_cuda_stream_new_order      (GstCudaStream  *stream,
                                                  GError        **error) G_GNUC_WARN_UNUSED_RESULT;
DS_GST_AVAILABLE_IN_ALL
DsScratchpad  *ds_gst_cuda_stream_new_scratchpad (GstCudaStream  *stream,
                                                  GError        **error) G_GNUC_WARN_UNUSED_RESULT;

G_END_DECLS
