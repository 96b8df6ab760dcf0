/* ds-gst-stream.h: a CUDA stream of a GstCudaContext that ds-gst owns
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined (DS_GST_INSIDE) && !defined (DS_GST_COMPILATION)
# error "Only <ds-gst.h> can be included directly."
#endif

#include <ds.h>
#include <gst/gst.h>
#include <gst/cuda/gstcudacontext.h>
#if DS_GST_HAVE_CUDA_STREAM
# include <gst/cuda/gstcudastream.h>
#endif

#include "ds-gst-version-macros.h"

G_BEGIN_DECLS

typedef struct _DsGstStream DsGstStream;

#define DS_GST_TYPE_STREAM (ds_gst_stream_get_type ())

DS_GST_AVAILABLE_IN_ALL
GType                ds_gst_stream_get_type       (void) G_GNUC_CONST;
DS_GST_AVAILABLE_IN_ALL
DsGstStream         *ds_gst_stream_new            (GstCudaContext  *context,
                                                   GError         **error) G_GNUC_WARN_UNUSED_RESULT;
DS_GST_AVAILABLE_IN_ALL
DsGstStream         *ds_gst_stream_ref            (DsGstStream     *self);
DS_GST_AVAILABLE_IN_ALL
void                 ds_gst_stream_unref          (DsGstStream     *self);
DS_GST_AVAILABLE_IN_ALL
GstCudaContext      *ds_gst_stream_get_context    (DsGstStream     *self);
DS_GST_AVAILABLE_IN_ALL
gpointer             ds_gst_stream_get_handle     (DsGstStream     *self);
DS_GST_AVAILABLE_IN_ALL
const DsAccessOrder *ds_gst_stream_get_order      (DsGstStream     *self);
DS_GST_AVAILABLE_IN_ALL
DsScratchpad        *ds_gst_stream_new_scratchpad (DsGstStream     *self) G_GNUC_WARN_UNUSED_RESULT;
DS_GST_AVAILABLE_IN_ALL
gboolean             ds_gst_stream_follow_buffer  (DsGstStream     *self,
                                                   DsScratchpad    *scratchpad,
                                                   GstBuffer       *buffer,
                                                   GError         **error);
DS_GST_AVAILABLE_IN_ALL
gboolean             ds_gst_stream_follow_buffers (DsGstStream     *self,
                                                   DsScratchpad    *scratchpad,
                                                   GstBuffer       *inbuf,
                                                   GstBuffer       *outbuf,
                                                   GError         **error);
DS_GST_AVAILABLE_IN_ALL
gboolean             ds_gst_stream_finish_buffers (DsGstStream     *self,
                                                   DsScratchpad    *scratchpad,
                                                   GstBuffer       *inbuf,
                                                   GstBuffer       *outbuf,
                                                   GError         **error);
#if DS_GST_HAVE_CUDA_STREAM
DS_GST_AVAILABLE_IN_ALL
GstCudaStream       *ds_gst_stream_get_cuda_stream (DsGstStream    *self);
#endif

G_DEFINE_AUTOPTR_CLEANUP_FUNC (DsGstStream, ds_gst_stream_unref)

G_END_DECLS
