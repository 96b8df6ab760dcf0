/* gstdsplugin.c: the dsexamples GStreamer plugin
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <gst/gst.h>

#include "gstdslumastats.h"

static gboolean
plugin_init (GstPlugin *plugin)
{
  return GST_ELEMENT_REGISTER (dslumastats, plugin);
}

#define PACKAGE "ds"
#define GST_PACKAGE_NAME "ds examples"
#define GST_PACKAGE_ORIGIN "the ds project"

GST_PLUGIN_DEFINE (GST_VERSION_MAJOR,
                   GST_VERSION_MINOR,
                   dsexamples,
                   "Example elements that take per-buffer GPU scratch memory from ds",
                   plugin_init,
                   PACKAGE_VERSION,
                   "LGPL",
                   GST_PACKAGE_NAME,
                   GST_PACKAGE_ORIGIN)
