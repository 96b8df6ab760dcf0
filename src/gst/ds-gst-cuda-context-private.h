/* ds-gst-cuda-context-private.h: what the rest of libds-gst uses of a
 * GstCudaContext's data
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "ds-gst-cuda-context.h"

G_BEGIN_DECLS

/* Fills @order with that of @stream (a CUstream of @context, or NULL for
 * its legacy default stream); as ds_gst_cuda_context_new_order (). */
gboolean ds_gst_cuda_context_init_order       (GstCudaContext      *context,
                                               gpointer             stream,
                                               DsAccessOrder       *order,
                                               GError             **error);
/* Gives @scratchpad the pinned, device and managed pools of @context and
 * a reference on @context for its life. */
void     ds_gst_cuda_context_bind_scratchpad  (GstCudaContext      *context,
                                               DsScratchpad        *scratchpad);
/* A DsGstStream of @context was made / is gone. When the last one goes,
 * the context's pools give back what they hold idle. */
void     ds_gst_cuda_context_hold             (GstCudaContext      *context);
void     ds_gst_cuda_context_release          (GstCudaContext      *context);

G_END_DECLS
