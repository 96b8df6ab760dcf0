/* test-gst-exit.c: nothing of ds is left allocated at exit
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 *   test-gst-exit [--no-trim]
 *
 * A process that uses ds both ways: a pipeline with dslumastats (its
 * scratch comes from the pools of the pipeline's GstCudaContext, which go
 * with the context) and a scratchpad on ds's process-wide default pools
 * (which keep their blocks for the next user). Before it exits it calls
 * ds_memory_resource_trim_defaults (), as the documentation says a
 * program should for a clean leak report: run under
 * `compute-sanitizer --leak-check full` it must report no leak.
 * With --no-trim it leaves that call out (to show what a leak checker
 * reports then). Exits 77 (skip) without a CUDA device.
 */

#include "ds-gst-test.h"

#include <stdlib.h>

#define EXIT_SKIP 77

static gboolean
run_pipeline (void)
{
  g_autoptr(GError) error = NULL;
  GstElement *pipeline;
  GstBus *bus;
  GstMessage *msg;
  gboolean ok;

  pipeline = gst_parse_launch ("videotestsrc num-buffers=30 "
                               "! video/x-raw,format=I420,width=640,height=480 "
                               "! dslumastats ! fakesink", &error);
  g_assert_no_error (error);
  bus = gst_element_get_bus (pipeline);
  gst_element_set_state (pipeline, GST_STATE_PLAYING);
  msg = gst_bus_timed_pop_filtered (bus, 60 * GST_SECOND, GST_MESSAGE_ERROR | GST_MESSAGE_EOS);
  ok = msg != NULL && GST_MESSAGE_TYPE (msg) == GST_MESSAGE_EOS;
  g_clear_pointer (&msg, gst_message_unref);
  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_object_unref (bus);
  gst_object_unref (pipeline);
  return ok;
}

static void
use_default_pools (void)
{
  g_autoptr(GError) error = NULL;
  cudaStream_t stream = NULL;
  g_autoptr(DsAccessOrder) order = NULL;
  DsScratchpad *sp;

  g_assert_cmpint (cudaSetDevice (0), ==, cudaSuccess);
  g_assert_cmpint (cudaStreamCreateWithFlags (&stream, cudaStreamNonBlocking), ==, cudaSuccess);
  order = ds_access_order_new_stream (stream, 0);
  sp = ds_scratchpad_new (order);
  for (guint unit = 0; unit < 10; unit++)
    {
      g_assert_nonnull (ds_scratchpad_alloc (sp, DS_MEMORY_KIND_PINNED, 256 << 10, 0, &error));
      g_assert_nonnull (ds_scratchpad_alloc (sp, DS_MEMORY_KIND_DEVICE, 1 << 20, 0, &error));
      g_assert_nonnull (ds_scratchpad_alloc (sp, DS_MEMORY_KIND_MANAGED, 64 << 10, 0, &error));
      g_assert_no_error (error);
      ds_scratchpad_release (sp);
    }
  g_object_unref (sp);
  g_assert_cmpint (cudaStreamSynchronize (stream), ==, cudaSuccess);
  g_assert_cmpint (cudaStreamDestroy (stream), ==, cudaSuccess);
}

int
main (int    argc,
      char **argv)
{
  gboolean trim = !(argc > 1 && g_strcmp0 (argv[1], "--no-trim") == 0);

  gst_init (&argc, &argv);
  if (!ds_gst_test_cuda_available ())
    {
      g_print ("SKIP: %s\n", ds_gst_test_cuda_unavailable_reason ());
      return EXIT_SKIP;
    }

  if (!run_pipeline ())
    {
      g_printerr ("the pipeline did not reach EOS\n");
      return EXIT_FAILURE;
    }
  use_default_pools ();

  if (trim)
    g_print ("ds_memory_resource_trim_defaults () gave back %" G_GUINT64_FORMAT " bytes\n",
             ds_memory_resource_trim_defaults ());
  else
    g_print ("no trim: ds's default pools keep their blocks until exit\n");
  gst_deinit ();
  return EXIT_SUCCESS;
}
