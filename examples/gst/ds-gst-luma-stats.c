/* ds-gst-luma-stats.c: run dslumastats in a pipeline, read its messages
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 *   ds-gst-luma-stats [N_FRAMES [FORMAT]]
 *
 * Runs
 *   videotestsrc num-buffers=N pattern=ball ! video/x-raw,format=FORMAT,...
 *     ! dslumastats ! fakesink
 * and prints, for every frame, the statistics the element posts on the bus
 * (element messages named "ds-luma-stats"). An application needs nothing
 * but GStreamer for this: the element takes its GPU scratch memory from ds
 * itself. The one call into ds is at the end, for leak checkers.
 *
 * Without a GPU the element fails to start with a "No CUDA device" error;
 * the example says so and exits 77, which meson reports as SKIP.
 */

#include <stdlib.h>

#include <ds.h>
#include <gst/gst.h>

#define EXIT_SKIP 77

int
main (int    argc,
      char **argv)
{
  guint n_frames = argc > 1 ? (guint) g_ascii_strtoull (argv[1], NULL, 10) : 30;
  const char *format = argc > 2 ? argv[2] : "I420";
  g_autoptr(GError) error = NULL;
  g_autofree char *description = NULL;
  GstElement *pipeline;
  GstBus *bus;
  guint n_messages = 0;
  int status = EXIT_SUCCESS;
  gboolean done = FALSE;

  gst_init (&argc, &argv);

  description = g_strdup_printf ("videotestsrc num-buffers=%u pattern=ball "
                                 "! video/x-raw,format=%s,width=320,height=240 "
                                 "! dslumastats ! fakesink",
                                 n_frames, format);
  pipeline = gst_parse_launch (description, &error);
  if (pipeline == NULL)
    {
      g_printerr ("Could not build '%s': %s\n", description, error->message);
      return EXIT_FAILURE;
    }

  bus = gst_element_get_bus (pipeline);
  gst_element_set_state (pipeline, GST_STATE_PLAYING);

  while (!done)
    {
      GstMessage *msg = gst_bus_timed_pop_filtered (bus, 60 * GST_SECOND,
                                                    GST_MESSAGE_ERROR | GST_MESSAGE_EOS |
                                                    GST_MESSAGE_ELEMENT);
      const GstStructure *s;

      if (msg == NULL)
        {
          g_printerr ("No message for 60 s: the pipeline hangs\n");
          status = EXIT_FAILURE;
          break;
        }

      switch (GST_MESSAGE_TYPE (msg))
        {
        case GST_MESSAGE_ELEMENT:
          s = gst_message_get_structure (msg);
          if (gst_structure_has_name (s, "ds-luma-stats"))
            {
              guint64 frame = 0;
              gdouble mean = 0;
              guint min = 0, max = 0;

              gst_structure_get (s, "frame", G_TYPE_UINT64, &frame,
                                 "mean", G_TYPE_DOUBLE, &mean,
                                 "min", G_TYPE_UINT, &min,
                                 "max", G_TYPE_UINT, &max, NULL);
              g_print ("frame %3" G_GUINT64_FORMAT ": mean %7.3f  min %3u  max %3u\n",
                       frame, mean, min, max);
              n_messages++;
            }
          break;

        case GST_MESSAGE_ERROR:
          {
            g_autoptr(GError) err = NULL;
            g_autofree char *debug = NULL;

            gst_message_parse_error (msg, &err, &debug);
            if (g_error_matches (err, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_NOT_FOUND) &&
                g_str_has_prefix (err->message, "No CUDA device"))
              {
                g_print ("SKIP: %s (%s)\n", err->message, debug ? debug : "");
                status = EXIT_SKIP;
              }
            else
              {
                g_printerr ("Error from %s: %s (%s)\n", GST_OBJECT_NAME (msg->src),
                            err->message, debug ? debug : "");
                status = EXIT_FAILURE;
              }
            done = TRUE;
          }
          break;

        case GST_MESSAGE_EOS:
          done = TRUE;
          break;

        default:
          break;
        }
      gst_message_unref (msg);
    }

  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_object_unref (bus);
  gst_object_unref (pipeline);

  if (status == EXIT_SUCCESS && n_messages != n_frames)
    {
      g_printerr ("%u statistics messages for %u frames\n", n_messages, n_frames);
      status = EXIT_FAILURE;
    }
  if (status == EXIT_SUCCESS)
    g_print ("%u frames, %u statistics messages\n", n_frames, n_messages);

  /* Every pool of the pipeline's CUDA context went with the context. What
   * ds's process-wide default pools keep cached (here nothing: the
   * element's memory is the context's) would otherwise stay until exit,
   * where a leak checker (compute-sanitizer --leak-check full, valgrind)
   * reports it. */
  ds_memory_resource_trim_defaults ();
  gst_deinit ();
  return status;
}
