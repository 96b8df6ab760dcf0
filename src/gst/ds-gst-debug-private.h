/* ds-gst-debug-private.h: the GStreamer debug category of libds-gst
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <gst/gst.h>

G_BEGIN_DECLS

/* "dsgst", under GST_DEBUG. */
GST_DEBUG_CATEGORY_EXTERN (ds_gst_debug);
#define GST_CAT_DEFAULT ds_gst_debug

void ds_gst_debug_init (void);

G_END_DECLS
