/* ds-gst-memory-tracer.h: the dsmemory GStreamer tracer
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <gst/gst.h>

G_BEGIN_DECLS

#define DS_GST_TYPE_MEMORY_TRACER (ds_gst_memory_tracer_get_type ())

G_DECLARE_FINAL_TYPE (DsGstMemoryTracer, ds_gst_memory_tracer, DS_GST, MEMORY_TRACER, GstTracer)

G_END_DECLS
