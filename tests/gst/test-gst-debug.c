/* test-gst-debug.c: libds's log messages in GStreamer's debug log
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "ds-gst-test.h"

typedef struct
{
  GMutex     lock;
  GPtrArray *lines;   /* "CATEGORY LEVEL message" */
} Capture;

static Capture capture;

static void
capture_cb (GstDebugCategory *category,
            GstDebugLevel     level,
            const gchar      *file,
            const gchar      *function,
            gint              line,
            GObject          *object,
            GstDebugMessage  *message,
            gpointer          user_data)
{
  g_autofree char *level_name = g_strstrip (g_strdup (gst_debug_level_get_name (level)));

  g_mutex_lock (&capture.lock);
  g_ptr_array_add (capture.lines,
                   g_strdup_printf ("%s %s %s", gst_debug_category_get_name (category),
                                    level_name, gst_debug_message_get (message)));
  g_mutex_unlock (&capture.lock);
}

static gboolean
captured (const char *category,
          const char *level,
          const char *pattern)
{
  g_autofree char *glob = g_strdup_printf ("%s %s %s", category, level, pattern);
  gboolean found = FALSE;

  g_mutex_lock (&capture.lock);
  for (guint i = 0; i < capture.lines->len && !found; i++)
    found = g_pattern_match_simple (glob, capture.lines->pdata[i]);
  g_mutex_unlock (&capture.lock);
  return found;
}

static gboolean
category_exists (const char *name)
{
  GSList *all = gst_debug_get_all_categories ();
  gboolean found = FALSE;

  for (GSList *l = all; l != NULL && !found; l = l->next)
    found = g_strcmp0 (gst_debug_category_get_name (l->data), name) == 0;
  g_slist_free (all);
  return found;
}

static void
test_ds_messages (void)
{
  g_test_summary ("Once libds-gst is in use, libds's log messages (domain \"Ds\") reach "
                  "GST_DEBUG under the category \"ds\", at the matching level: the debug "
                  "message of its first CUDA check (with CUDA), and an info message");

  gst_debug_set_active (TRUE);
  gst_debug_set_threshold_for_name ("ds", GST_LEVEL_DEBUG);
  gst_debug_remove_log_function (gst_debug_log_default);
  gst_debug_add_log_function (capture_cb, NULL, NULL);

  /* Any entry point of libds-gst installs the handler. */
  g_assert_nonnull (ds_gst_scratch_meta_get_info ());
  g_assert_true (category_exists ("dsgst"));
  g_assert_true (category_exists ("ds"));

#if HAVE_CUDA
  {
    g_autoptr(DsScratchpad) sp = ds_scratchpad_new (NULL);
    g_autoptr(GError) error = NULL;

    /* libds's first look at CUDA logs what it found (a device or why not). */
    (void) ds_scratchpad_alloc (sp, DS_MEMORY_KIND_DEVICE, 16, 0, &error);
    g_assert_true (captured ("ds", "DEBUG", "CUDA*"));
  }
#endif

  g_log ("Ds", G_LOG_LEVEL_INFO, "test message %d", 42);
  g_assert_true (captured ("ds", "INFO", "test message 42"));

  /* Below the category's threshold: not logged. */
  gst_debug_set_threshold_for_name ("ds", GST_LEVEL_WARNING);
  g_log ("Ds", G_LOG_LEVEL_INFO, "quiet message");
  g_assert_false (captured ("ds", "*", "quiet message"));

  gst_debug_remove_log_function (capture_cb);
}

int
main (int    argc,
      char **argv)
{
  int status;

  g_mutex_init (&capture.lock);
  capture.lines = g_ptr_array_new_with_free_func (g_free);
  ds_gst_test_init (&argc, &argv);

  ds_gst_test_add_func ("/DsGst/Debug/ds-messages", test_ds_messages);

  status = g_test_run ();
  gst_deinit ();
  g_ptr_array_unref (capture.lines);
  g_mutex_clear (&capture.lock);
  return status;
}
