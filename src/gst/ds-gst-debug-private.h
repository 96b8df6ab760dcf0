/* ds-gst-debug-private.h: the GStreamer debug categories of libds-gst
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <gst/gst.h>

G_BEGIN_DECLS

/* "dsgst": libds-gst itself. */
GST_DEBUG_CATEGORY_EXTERN (ds_gst_debug);
#define GST_CAT_DEFAULT ds_gst_debug

/* Makes the categories and routes libds's log messages (domain "Ds") to
 * the category "ds"; once per process, from every entry point. */
void ds_gst_debug_init (void);

G_END_DECLS
