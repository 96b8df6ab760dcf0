/* ds-gst-timeline.c: a memory timeline of a GPU pipeline with a pause
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Runs
 *
 *   videotestsrc is-live=true ! video/x-raw,format=I420,WIDTHxHEIGHT,60/1
 *     ! dslumastats ! fakesink
 *
 * PLAYING for P seconds, PAUSED for the pools' idle timeout and Q seconds
 * more, PLAYING again for P seconds, then stops, with a DsRecorder writing
 * OUT/recording.csv and the dsmemory tracer logging to OUT/tracer.log
 * (GST_DEBUG=GST_TRACER:7), each phase marked in both ("playing",
 * "paused", "stopped"). tools/ds-memory-plot draws them.
 *
 * The pipeline gets an application GstCudaContext (the standard
 * need-context way), so the program can reach the pools the element uses:
 * those pools, and the default pools of device 0 in case the element uses
 * them, get a release threshold of 0 (the few MiB of a 1080p pipeline are
 * far below the default 32 MiB, which keeps them for good) and an idle
 * timeout of T ms. A pool gives idle blocks back only inside its own calls,
 * so a heartbeat thread stands for the rest of an application: a 4 KiB
 * pinned and a 4 KiB device allocation on the same pools every millisecond
 * (--no-heartbeat leaves it out; then a pool gives back at the pause only
 * if the element makes it, e.g. by trimming when it stops). Either way the
 * marks and the recorder's looks at every pool every 100 ms show the pause.
 *
 *   ds-gst-timeline [--out DIR] [--plugin-path DIR]... [--play S] [--extra S]
 *                   [--idle-timeout MS] [--width W] [--height H]
 *                   [--no-heartbeat] [--if-asked]
 *
 * OUT defaults to $OUT, else the current folder. --plugin-path folders
 * are put on GST_PLUGIN_PATH before GStreamer starts (the tracer is a
 * plugin: it must be found by gst_init ()). Exits 77 (skip) without a
 * usable CUDA device or without the dslumastats element; registered as a
 * benchmark with --if-asked (DS_TIMELINE=1 to run it).
 */

#include "config.h"

#include <stdio.h>
#include <string.h>

#include <ds-gst.h>
#include <ds-recorder.h>
#include <glib/gstdio.h>
#if DS_GST_HAVE_CUDA
# include <gst/cuda/gstcudaloader.h>
# include <gst/cuda/gstcudautils.h>
#endif

#define SKIP 77

static char *opt_out;
static char **opt_plugin_paths;
static gint opt_play = 8;
static gint opt_extra = 5;
static gint opt_idle_timeout = 3000;
static gint opt_width = 1920;
static gint opt_height = 1080;
static gboolean opt_no_heartbeat;
static gboolean opt_if_asked;

static DsRecorder *recorder;
static gint stop_heartbeat;

static void
phase (const char *label)
{
  printf ("%8.3f s: %s\n", g_get_monotonic_time () / 1e6, label);
  fflush (stdout);
  ds_recorder_mark (recorder, label);
}

static void
tune_pool (DsMemoryResource *resource,
           const char       *what)
{
  if (resource == NULL || !DS_IS_POOL_RESOURCE (resource))
    return;

  ds_pool_resource_set_release_threshold (DS_POOL_RESOURCE (resource), 0);
  ds_pool_resource_set_idle_timeout (DS_POOL_RESOURCE (resource), (guint) opt_idle_timeout);
  printf ("pool of %s: release-threshold 0, idle-timeout %d ms\n", what, opt_idle_timeout);
}

static gpointer
heartbeat_thread (gpointer data)
{
  DsScratchpad *sp = data;

  while (!g_atomic_int_get (&stop_heartbeat))
    {
      ds_scratchpad_alloc (sp, DS_MEMORY_KIND_PINNED, 4096, 0, NULL);
      ds_scratchpad_alloc (sp, DS_MEMORY_KIND_DEVICE, 4096, 0, NULL);
      ds_scratchpad_release (sp);
      g_usleep (1000);
    }

  return NULL;
}

static gboolean
wait_state (GstElement *pipeline,
            GstState    state)
{
  GstStateChangeReturn ret = gst_element_set_state (pipeline, state);

  if (ret == GST_STATE_CHANGE_FAILURE)
    return FALSE;
  return gst_element_get_state (pipeline, NULL, NULL, 20 * GST_SECOND) != GST_STATE_CHANGE_FAILURE;
}

/* Waits @seconds, or until an error on the bus (FALSE). */
static gboolean
run_for (GstElement *pipeline,
         gint        seconds)
{
  GstMessage *msg = gst_bus_timed_pop_filtered (GST_ELEMENT_BUS (pipeline), seconds * GST_SECOND,
                                                GST_MESSAGE_ERROR | GST_MESSAGE_EOS);

  if (msg == NULL)
    return TRUE;
  if (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ERROR)
    {
      g_autoptr(GError) error = NULL;

      gst_message_parse_error (msg, &error, NULL);
      g_printerr ("pipeline error: %s\n", error->message);
    }
  gst_message_unref (msg);
  return FALSE;
}

static int
usable_gpu (char **why)
{
  g_autoptr(DsScratchpad) sp = ds_scratchpad_new (NULL);
  g_autoptr(GError) error = NULL;

  if (ds_scratchpad_alloc (sp, DS_MEMORY_KIND_DEVICE, 16, 0, &error) != NULL)
    return TRUE;
  *why = g_strdup (error->message);
  return FALSE;
}

int
main (int    argc,
      char **argv)
{
  GOptionEntry entries[] = {
    { "out", 0, 0, G_OPTION_ARG_FILENAME, &opt_out, "Where to write (default: $OUT, else .)", "DIR" },
    { "plugin-path", 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &opt_plugin_paths,
      "A folder of GStreamer plugins to load (repeatable)", "DIR" },
    { "play", 0, 0, G_OPTION_ARG_INT, &opt_play, "Seconds of each PLAYING phase (8)", "S" },
    { "extra", 0, 0, G_OPTION_ARG_INT, &opt_extra, "Seconds of pause beyond the idle timeout (5)", "S" },
    { "idle-timeout", 0, 0, G_OPTION_ARG_INT, &opt_idle_timeout, "The pools' idle timeout (3000)", "MS" },
    { "width", 0, 0, G_OPTION_ARG_INT, &opt_width, "Frame width (1920)", "W" },
    { "height", 0, 0, G_OPTION_ARG_INT, &opt_height, "Frame height (1080)", "H" },
    { "no-heartbeat", 0, 0, G_OPTION_ARG_NONE, &opt_no_heartbeat, "No other pool traffic", NULL },
    { "if-asked", 0, 0, G_OPTION_ARG_NONE, &opt_if_asked, "Skip (77) unless DS_TIMELINE=1", NULL },
    { NULL },
  };
  g_autoptr(GOptionContext) context = g_option_context_new ("- a memory timeline of a GPU pipeline with a pause");
  g_autoptr(GError) error = NULL;
  g_autofree char *recording = NULL, *log = NULL, *launch = NULL, *why = NULL;
  GstElement *pipeline;
  GThread *heartbeat = NULL;
  DsScratchpad *beat = NULL;
  int status = 0;
#if DS_GST_HAVE_CUDA
  GstCudaContext *cuda = NULL;
#endif

  g_option_context_add_main_entries (context, entries, NULL);
  if (!g_option_context_parse (context, &argc, &argv, &error))
    {
      g_printerr ("%s\n", error->message);
      return 2;
    }
  if (opt_if_asked && g_strcmp0 (g_getenv ("DS_TIMELINE"), "1") != 0)
    {
      printf ("SKIP: the pipeline timeline runs on a GPU for about %d s; set DS_TIMELINE=1 to run it\n",
              2 * opt_play + opt_idle_timeout / 1000 + opt_extra);
      return SKIP;
    }
  if (opt_out == NULL)
    opt_out = g_strdup (g_getenv ("OUT") != NULL ? g_getenv ("OUT") : ".");
  g_mkdir_with_parents (opt_out, 0755);
  recording = g_build_filename (opt_out, "recording.csv", NULL);
  log = g_build_filename (opt_out, "tracer.log", NULL);

  /* What gst_init () reads: the plugins (the tracer's among them), the
   * tracer, and where its log goes. */
  if (opt_plugin_paths != NULL)
    {
      g_autofree char *joined = g_strjoinv (G_SEARCHPATH_SEPARATOR_S, opt_plugin_paths);
      const char *old = g_getenv ("GST_PLUGIN_PATH");
      g_autofree char *path = old != NULL && *old != '\0' ?
                              g_strconcat (joined, G_SEARCHPATH_SEPARATOR_S, old, NULL) :
                              g_strdup (joined);

      g_setenv ("GST_PLUGIN_PATH", path, TRUE);
    }
  g_setenv ("GST_TRACERS", "dsmemory", FALSE);
  g_setenv ("GST_DEBUG", "GST_TRACER:7", FALSE);
  g_setenv ("GST_DEBUG_FILE", log, TRUE);
  g_setenv ("GST_DEBUG_NO_COLOR", "1", TRUE);

  /* Before GStreamer: the tracer watches this recorder, and the file
   * holds the whole run. */
  recorder = ds_recorder_new_for_file (recording, 0);
  if (!ds_recorder_start (recorder, &error))
    {
      g_printerr ("%s\n", error->message);
      return 1;
    }

  gst_init (&argc, &argv);

  if (!usable_gpu (&why))
    {
      printf ("SKIP: no usable CUDA device: %s\n", why);
      status = SKIP;
      goto out;
    }
  {
    GstElementFactory *f = gst_element_factory_find ("dslumastats");

    if (f == NULL)
      {
        printf ("SKIP: no dslumastats element (give its plugin's folder with --plugin-path)\n");
        status = SKIP;
        goto out;
      }
    gst_object_unref (f);
  }

  launch = g_strdup_printf ("videotestsrc is-live=true pattern=ball "
                            "! video/x-raw,format=I420,width=%d,height=%d,framerate=60/1 "
                            "! dslumastats name=stats ! fakesink sync=true",
                            opt_width, opt_height);
  printf ("gst-launch-1.0 %s\n", launch);
  pipeline = gst_parse_launch (launch, &error);
  if (pipeline == NULL)
    {
      g_printerr ("%s\n", error->message);
      status = 1;
      goto out;
    }

  /* The pools the element will use, tuned so that an idle release can
   * happen within the pause. */
  for (DsMemoryKind kind = DS_MEMORY_KIND_PINNED; kind <= DS_MEMORY_KIND_MANAGED; kind++)
    {
      g_autoptr(GError) ignored = NULL;

      tune_pool (ds_memory_resource_get_default (kind, 0, &ignored), "the default of device 0");
    }
#if DS_GST_HAVE_CUDA
  if (gst_cuda_load_library ())
    cuda = gst_cuda_context_new (0);
  if (cuda != NULL)
    {
      GstContext *gst_context = gst_context_new_cuda_context (cuda);

      gst_element_set_context (pipeline, gst_context);
      gst_context_unref (gst_context);
      for (DsMemoryKind kind = DS_MEMORY_KIND_PINNED; kind <= DS_MEMORY_KIND_MANAGED; kind++)
        {
          g_autoptr(GError) ignored = NULL;

          tune_pool (ds_gst_cuda_context_get_resource (cuda, kind, &ignored),
                     "the application's GstCudaContext");
        }
      beat = ds_gst_cuda_context_new_scratchpad (cuda, NULL, NULL);
    }
#endif
  if (beat == NULL)
    beat = ds_scratchpad_new (NULL);
  if (!opt_no_heartbeat)
    heartbeat = g_thread_new ("heartbeat", heartbeat_thread, beat);

  phase ("playing");
  if (!wait_state (pipeline, GST_STATE_PLAYING) || !run_for (pipeline, opt_play))
    status = 1;
  if (status == 0)
    {
      phase ("paused");
      if (!wait_state (pipeline, GST_STATE_PAUSED) ||
          !run_for (pipeline, opt_idle_timeout / 1000 + opt_extra))
        status = 1;
    }
  if (status == 0)
    {
      phase ("playing");
      if (!wait_state (pipeline, GST_STATE_PLAYING) || !run_for (pipeline, opt_play))
        status = 1;
    }
  phase ("stopped");
  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_object_unref (pipeline);
  /* A last look at the pools once the element has gone. */
  g_usleep (G_USEC_PER_SEC);

  if (heartbeat != NULL)
    {
      g_atomic_int_set (&stop_heartbeat, 1);
      g_thread_join (heartbeat);
    }
  g_clear_object (&beat);
#if DS_GST_HAVE_CUDA
  gst_clear_object (&cuda);
#endif

out:
  ds_recorder_stop (recorder);
  printf ("%s: %" G_GUINT64_FORMAT " samples (%" G_GUINT64_FORMAT " lost); tracer log %s\n",
          recording, ds_recorder_get_n_samples (recorder), ds_recorder_get_n_lost (recorder), log);
  g_object_unref (recorder);
  g_free (opt_out);
  g_strfreev (opt_plugin_paths);
  gst_deinit ();

  return status;
}
