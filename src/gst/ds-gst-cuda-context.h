/* ds-gst-cuda-context.h: orders, scratchpads and pools for a GstCudaContext
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

#include "ds-gst-version-macros.h"

G_BEGIN_DECLS

DS_GST_AVAILABLE_IN_ALL
DsAccessOrder    *ds_gst_cuda_context_new_order      (GstCudaContext *context,
                                                      gpointer        stream,
                                                      GError        **error) G_GNUC_WARN_UNUSED_RESULT;
DS_GST_AVAILABLE_IN_ALL
DsScratchpad     *ds_gst_cuda_context_new_scratchpad (GstCudaContext *context,
                                                      gpointer        stream,
                                                      GError        **error) G_GNUC_WARN_UNUSED_RESULT;
DS_GST_AVAILABLE_IN_ALL
DsMemoryResource *ds_gst_cuda_context_get_resource   (GstCudaContext *context,
                                                      DsMemoryKind    kind,
                                                      GError        **error);

G_END_DECLS
