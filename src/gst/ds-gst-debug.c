/* ds-gst-debug.c: libds-gst's debug categories, and libds's messages in
 * GStreamer's debug log
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * libds logs with g_log () under the domain "Ds" and knows nothing of
 * GStreamer. In a GStreamer process its messages belong in GST_DEBUG like
 * everything else, so the first call into libds-gst installs a log handler
 * for that domain: each message goes to the category "ds" at the matching
 * level, then on to GLib's default handler, so what GLib printed before
 * (warnings, criticals, G_MESSAGES_DEBUG=Ds) it still prints.
 */

#include "config.h"

#include "ds-gst-debug-private.h"

GST_DEBUG_CATEGORY (ds_gst_debug);
GST_DEBUG_CATEGORY_STATIC (ds_debug);

static G_GNUC_UNUSED GstDebugLevel
level_of (GLogLevelFlags flags)
{
  if (flags & (G_LOG_LEVEL_ERROR | G_LOG_LEVEL_CRITICAL))
    return GST_LEVEL_ERROR;
  if (flags & G_LOG_LEVEL_WARNING)
    return GST_LEVEL_WARNING;
  if (flags & (G_LOG_LEVEL_MESSAGE | G_LOG_LEVEL_INFO))
    return GST_LEVEL_INFO;
  return GST_LEVEL_DEBUG;
}

static void
ds_log_cb (const gchar    *log_domain,
           GLogLevelFlags  log_level,
           const gchar    *message,
           gpointer        user_data)
{
  GST_CAT_LEVEL_LOG (ds_debug, level_of (log_level), NULL, "%s", message);
  g_log_default_handler (log_domain, log_level, message, NULL);
}

void
ds_gst_debug_init (void)
{
  static gsize once;

  if (g_once_init_enter (&once))
    {
      GST_DEBUG_CATEGORY_INIT (ds_gst_debug, "dsgst", 0,
                               "ds scratch memory for GStreamer CUDA elements");
      GST_DEBUG_CATEGORY_INIT (ds_debug, "ds", 0,
                               "libds's own log messages (GLib log domain \"Ds\")");
      g_log_set_handler ("Ds", G_LOG_LEVEL_MASK | G_LOG_FLAG_FATAL | G_LOG_FLAG_RECURSION,
                         ds_log_cb, NULL);
      g_once_init_leave (&once, 1);
    }
}
