/* test-gst-template.c: the template element of "ds in your CUDA element"
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * CPU: dstemplate registers and fails cleanly without a device. /gpu/
 * (needs cudaupload, from gst-plugins-bad's nvcodec): 300 frames of each
 * format uploaded to CUDA memory, the sum of each frame's luma posted by
 * the element equal to the CPU's, in order.
 */

#include "ds-gst-test.h"

#define N_FRAMES 300

static void
test_registered (void)
{
  GstElementFactory *factory = gst_element_factory_find ("dstemplate");
  g_autoptr(GstCaps) cuda = gst_caps_from_string ("video/x-raw(memory:CUDAMemory),format=NV12,"
                                                  "width=64,height=48,framerate=30/1");

  g_test_summary ("dstemplate registers and takes CUDA memory");

  g_assert_nonnull (factory);
  g_assert_true (gst_element_factory_can_sink_all_caps (factory, cuda));
  gst_object_unref (factory);
}

static void
test_no_device (void)
{
  g_autoptr(GError) error = NULL;
  GstElement *element = gst_element_factory_make ("dstemplate", NULL);
  GstBus *bus = gst_bus_new ();
  GstMessage *msg;
  GError *err = NULL;

  g_test_summary ("Without a CUDA device the element fails to start with RESOURCE NOT_FOUND");
  DS_GST_TEST_REQUIRE_NO_CUDA ();

  gst_element_set_bus (element, bus);
  g_assert_cmpint (gst_element_set_state (element, GST_STATE_PAUSED), ==, GST_STATE_CHANGE_FAILURE);
  msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR);
  g_assert_nonnull (msg);
  gst_message_parse_error (msg, &err, NULL);
  g_assert_error (err, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_NOT_FOUND);
  g_clear_error (&err);
  gst_message_unref (msg);
  gst_element_set_state (element, GST_STATE_NULL);
  gst_element_set_bus (element, NULL);
  gst_object_unref (bus);
  gst_object_unref (element);
}

typedef struct
{
  GMutex        lock;
  GstVideoInfo  info;
  GArray       *sums;   /* guint64, of the frames before the upload */
} Sums;

static GstPadProbeReturn
sum_probe_cb (GstPad          *pad,
              GstPadProbeInfo *info,
              gpointer         user_data)
{
  Sums *sums = user_data;

  if (GST_PAD_PROBE_INFO_TYPE (info) & GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM)
    {
      GstEvent *event = GST_PAD_PROBE_INFO_EVENT (info);
      GstCaps *caps;

      if (GST_EVENT_TYPE (event) == GST_EVENT_CAPS)
        {
          gst_event_parse_caps (event, &caps);
          g_mutex_lock (&sums->lock);
          g_assert_true (gst_video_info_from_caps (&sums->info, caps));
          g_mutex_unlock (&sums->lock);
        }
    }
  else
    {
      DsGstTestLuma ref;

      g_mutex_lock (&sums->lock);
      g_assert_true (ds_gst_test_luma_of_buffer (&sums->info, GST_PAD_PROBE_INFO_BUFFER (info), &ref));
      g_array_append_val (sums->sums, ref.sum);
      g_mutex_unlock (&sums->lock);
    }
  return GST_PAD_PROBE_OK;
}

static void
test_pipeline (gconstpointer data)
{
  const char *caps = data;
  g_autoptr(GError) error = NULL;
  g_autofree char *description = NULL;
  GstElement *pipeline, *before;
  GstPad *pad;
  GstBus *bus;
  Sums sums = { 0, };
  guint n = 0;
  gboolean done = FALSE;

  g_test_summary ("videotestsrc ! cudaupload ! dstemplate ! fakesink, 300 frames: each "
                  "message's sum is the CPU's, in order, before EOS");
  DS_GST_TEST_REQUIRE_CUDA ();
  DS_GST_TEST_REQUIRE_ELEMENT ("cudaupload");

  description = g_strdup_printf ("videotestsrc num-buffers=%d pattern=snow ! %s,framerate=30/1 "
                                 "! identity name=before ! cudaupload "
                                 "! video/x-raw(memory:CUDAMemory) ! dstemplate ! fakesink",
                                 N_FRAMES, caps);
  pipeline = gst_parse_launch (description, &error);
  g_assert_no_error (error);
  g_mutex_init (&sums.lock);
  sums.sums = g_array_new (FALSE, FALSE, sizeof (guint64));
  before = gst_bin_get_by_name (GST_BIN (pipeline), "before");
  pad = gst_element_get_static_pad (before, "src");
  gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER | GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM,
                     sum_probe_cb, &sums, NULL);

  bus = gst_element_get_bus (pipeline);
  g_assert_cmpint (gst_element_set_state (pipeline, GST_STATE_PLAYING), !=, GST_STATE_CHANGE_FAILURE);
  while (!done)
    {
      GstMessage *msg = gst_bus_timed_pop_filtered (bus, 60 * GST_SECOND, GST_MESSAGE_ERROR |
                                                    GST_MESSAGE_EOS | GST_MESSAGE_ELEMENT);
      const GstStructure *s;
      guint64 frame = G_MAXUINT64, sum = 0;

      g_assert_nonnull (msg);
      g_assert_cmpint (GST_MESSAGE_TYPE (msg), !=, GST_MESSAGE_ERROR);
      done = GST_MESSAGE_TYPE (msg) == GST_MESSAGE_EOS;
      s = gst_message_get_structure (msg);
      if (!done && gst_structure_has_name (s, "ds-template"))
        {
          g_assert_true (gst_structure_get_uint64 (s, "frame", &frame));
          g_assert_true (gst_structure_get_uint64 (s, "sum", &sum));
          g_assert_cmpuint (frame, ==, n);
          g_mutex_lock (&sums.lock);
          g_assert_cmpuint (sum, ==, g_array_index (sums.sums, guint64, n));
          g_mutex_unlock (&sums.lock);
          n++;
        }
      gst_message_unref (msg);
    }
  g_assert_cmpuint (n, ==, N_FRAMES);
  g_test_message ("%s: %u frames, sums equal to the CPU's", caps, n);

  g_assert_cmpint (gst_element_set_state (pipeline, GST_STATE_NULL), ==, GST_STATE_CHANGE_SUCCESS);
  gst_object_unref (bus);
  gst_object_unref (pad);
  gst_object_unref (before);
  gst_object_unref (pipeline);
  g_array_unref (sums.sums);
  g_mutex_clear (&sums.lock);
}

int
main (int    argc,
      char **argv)
{
  int status;

  ds_gst_test_init (&argc, &argv);

  ds_gst_test_add_func ("/DsGst/Template/registered", test_registered);
  ds_gst_test_add_func ("/DsGst/Template/no-device", test_no_device);
  ds_gst_test_add_data_func ("/DsGst/Template/gpu/I420",
                             "video/x-raw,format=I420,width=641,height=361", test_pipeline);
  ds_gst_test_add_data_func ("/DsGst/Template/gpu/I420-1080p",
                             "video/x-raw,format=I420,width=1920,height=1080", test_pipeline);
  ds_gst_test_add_data_func ("/DsGst/Template/gpu/NV12",
                             "video/x-raw,format=NV12,width=1280,height=720", test_pipeline);

  status = g_test_run ();
  gst_deinit ();
  return status;
}
