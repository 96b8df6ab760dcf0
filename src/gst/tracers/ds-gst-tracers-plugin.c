/* ds-gst-tracers-plugin.c: the dstracers GStreamer plugin (dsmemory)
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <gst/gst.h>

#include "ds-gst-memory-tracer.h"

static gboolean
plugin_init (GstPlugin *plugin)
{
  return gst_tracer_register (plugin, "dsmemory", DS_GST_TYPE_MEMORY_TRACER);
}

#define PACKAGE "ds"
#define GST_PACKAGE_NAME "ds"
#define GST_PACKAGE_ORIGIN "the ds project"

GST_PLUGIN_DEFINE (GST_VERSION_MAJOR,
                   GST_VERSION_MINOR,
                   dstracers,
                   "Tracers of ds scratch memory: which element takes it, what the pools do",
                   plugin_init,
                   PACKAGE_VERSION,
                   "LGPL",
                   GST_PACKAGE_NAME,
                   GST_PACKAGE_ORIGIN)
