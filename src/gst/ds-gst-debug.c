/* ds-gst-debug.c
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "ds-gst-debug-private.h"

GST_DEBUG_CATEGORY (ds_gst_debug);

void
ds_gst_debug_init (void)
{
  static gsize once;

  if (g_once_init_enter (&once))
    {
      GST_DEBUG_CATEGORY_INIT (ds_gst_debug, "dsgst", 0,
                               "ds scratch memory for GStreamer CUDA elements");
      g_once_init_leave (&once, 1);
    }
}
