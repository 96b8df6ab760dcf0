/* test-gst-tracer.c: the dsmemory tracer under GstHarness (host memory)
 * and in a GPU pipeline (skipped without a GPU)
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The test sets GST_TRACERS=dsmemory and GST_DEBUG=GST_TRACER:7 before
 * GStreamer starts, catches the tracer log with a log function of its
 * own and reads each record back with gst_structure_from_string (), as
 * GStreamer's own tools read tracer logs.
 */

#include "ds-gst-test.h"

#include <string.h>

#include <ds-recorder.h>

/* A test element: each buffer takes host scratch and passes on. ------------------ */

#define DS_TEST_TYPE_SCRATCHER (ds_test_scratcher_get_type ())
G_DECLARE_FINAL_TYPE (DsTestScratcher, ds_test_scratcher, DS_TEST, SCRATCHER, GstElement)

typedef enum
{
  MODE_REUSE,   /* one scratchpad, released after each buffer */
  MODE_META,    /* a scratchpad per buffer, tied to it by a DsGstScratchMeta */
} Mode;

struct _DsTestScratcher
{
  GstElement    parent_instance;
  GstPad       *sinkpad;
  GstPad       *srcpad;
  Mode          mode;
  gsize         size;
  DsScratchpad *reused;
  DsScratchpad *started;   /* taken at start, given back at stop */
};

G_DEFINE_FINAL_TYPE (DsTestScratcher, ds_test_scratcher, GST_TYPE_ELEMENT)

static GstStaticPadTemplate any_sink = GST_STATIC_PAD_TEMPLATE ("sink", GST_PAD_SINK,
                                                                GST_PAD_ALWAYS, GST_STATIC_CAPS_ANY);
static GstStaticPadTemplate any_src = GST_STATIC_PAD_TEMPLATE ("src", GST_PAD_SRC,
                                                               GST_PAD_ALWAYS, GST_STATIC_CAPS_ANY);

static GstFlowReturn
scratcher_chain (GstPad    *pad,
                 GstObject *parent,
                 GstBuffer *buffer)
{
  DsTestScratcher *self = DS_TEST_SCRATCHER (parent);
  g_autoptr(GError) error = NULL;
  guint8 *p;

  if (self->mode == MODE_REUSE)
    {
      p = ds_scratchpad_alloc (self->reused, DS_MEMORY_KIND_HOST, self->size, 0, &error);
      g_assert_no_error (error);
      memset (p, 1, self->size);
      ds_scratchpad_release (self->reused);
    }
  else
    {
      DsScratchpad *sp = ds_scratchpad_new (NULL);

      p = ds_scratchpad_alloc (sp, DS_MEMORY_KIND_HOST, self->size, 0, &error);
      g_assert_no_error (error);
      memset (p, 2, self->size);
      buffer = gst_buffer_make_writable (buffer);
      ds_gst_buffer_add_scratch_meta (buffer, sp);
      g_object_unref (sp);
    }

  return gst_pad_push (self->srcpad, buffer);
}

static GstStateChangeReturn
scratcher_change_state (GstElement     *element,
                        GstStateChange  transition)
{
  DsTestScratcher *self = DS_TEST_SCRATCHER (element);
  GstStateChangeReturn ret;

  if (transition == GST_STATE_CHANGE_READY_TO_PAUSED)
    {
      self->started = ds_scratchpad_new (NULL);
      g_assert_nonnull (ds_scratchpad_alloc (self->started, DS_MEMORY_KIND_HOST, 1000, 0, NULL));
    }

  ret = GST_ELEMENT_CLASS (ds_test_scratcher_parent_class)->change_state (element, transition);

  if (transition == GST_STATE_CHANGE_PAUSED_TO_READY)
    g_clear_object (&self->started);

  return ret;
}

static void
scratcher_finalize (GObject *object)
{
  DsTestScratcher *self = DS_TEST_SCRATCHER (object);

  g_clear_object (&self->reused);
  g_clear_object (&self->started);

  G_OBJECT_CLASS (ds_test_scratcher_parent_class)->finalize (object);
}

static void
ds_test_scratcher_class_init (DsTestScratcherClass *klass)
{
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);

  G_OBJECT_CLASS (klass)->finalize = scratcher_finalize;
  element_class->change_state = scratcher_change_state;
  gst_element_class_add_static_pad_template (element_class, &any_sink);
  gst_element_class_add_static_pad_template (element_class, &any_src);
  gst_element_class_set_static_metadata (element_class, "Scratcher", "Filter",
                                         "Takes host scratch per buffer", "ds");
}

static void
ds_test_scratcher_init (DsTestScratcher *self)
{
  self->sinkpad = gst_pad_new_from_static_template (&any_sink, "sink");
  gst_pad_set_chain_function (self->sinkpad, scratcher_chain);
  GST_PAD_SET_PROXY_CAPS (self->sinkpad);
  gst_element_add_pad (GST_ELEMENT (self), self->sinkpad);
  self->srcpad = gst_pad_new_from_static_template (&any_src, "src");
  GST_PAD_SET_PROXY_CAPS (self->srcpad);
  gst_element_add_pad (GST_ELEMENT (self), self->srcpad);
  self->size = 100 * 1024;
  self->reused = ds_scratchpad_new (NULL);
}

/* The tracer log ------------------------------------------------------------------ */

static GMutex log_lock;
static GPtrArray *records;   /* GstStructure *, every dsmemory record logged */

static void
log_cb (GstDebugCategory *category,
        GstDebugLevel     level,
        const gchar      *file,
        const gchar      *function,
        gint              line,
        GObject          *object,
        GstDebugMessage  *message,
        gpointer          user_data)
{
  const char *text;
  GstStructure *s;

  if (strcmp (gst_debug_category_get_name (category), "GST_TRACER") != 0)
    return;
  text = gst_debug_message_get (message);
  if (text == NULL || !g_str_has_prefix (text, "dsmemory-"))
    return;

  s = gst_structure_from_string (text, NULL);
  g_assert_nonnull (s);
  g_mutex_lock (&log_lock);
  g_ptr_array_add (records, s);
  g_mutex_unlock (&log_lock);
}

static void
records_clear (void)
{
  g_mutex_lock (&log_lock);
  g_ptr_array_set_size (records, 0);
  g_mutex_unlock (&log_lock);
}

/* The dsmemory-scratch records of @element and @pad (@event or any when
 * NULL; any pad when NULL). */
static GPtrArray *
scratch_records (const char *element,
                 const char *pad,
                 const char *event)
{
  GPtrArray *found = g_ptr_array_new ();

  g_mutex_lock (&log_lock);
  for (guint i = 0; i < records->len; i++)
    {
      GstStructure *s = records->pdata[i];

      if (gst_structure_has_name (s, "dsmemory-scratch") &&
          g_strcmp0 (gst_structure_get_string (s, "element"), element) == 0 &&
          (pad == NULL || g_strcmp0 (gst_structure_get_string (s, "pad"), pad) == 0) &&
          (event == NULL || g_strcmp0 (gst_structure_get_string (s, "event"), event) == 0))
        g_ptr_array_add (found, s);
    }
  g_mutex_unlock (&log_lock);

  return found;
}

static guint64
field_u64 (const GstStructure *s,
           const char         *name)
{
  guint64 v = 0;

  g_assert_true (gst_structure_get_uint64 (s, name, &v));
  return v;
}

static gboolean
tracer_active (void)
{
  GList *tracers = gst_tracing_get_active_tracers ();
  gboolean found = FALSE;

  for (GList *l = tracers; l != NULL; l = l->next)
    if (g_str_equal (G_OBJECT_TYPE_NAME (l->data), "DsGstMemoryTracer"))
      found = TRUE;
  g_list_free_full (tracers, gst_object_unref);

  return found;
}

#define REQUIRE_TRACER() \
  G_STMT_START { \
    if (!tracer_active ()) \
      { \
        g_test_fail_printf ("the dsmemory tracer is not active: is the dstracers plugin on " \
                            "GST_PLUGIN_PATH?"); \
        return; \
      } \
  } G_STMT_END

/* Cases --------------------------------------------------------------------------- */

static void
test_harness_reuse (void)
{
  GstElement *element;
  GstHarness *h;
  g_autoptr(GPtrArray) blocks = NULL;
  g_autoptr(GPtrArray) releases = NULL;
  gboolean pool_seen = FALSE;

  g_test_summary ("Under GstHarness, the blocks an element's scratchpad takes "
                  "per buffer are attributed to it and its sink pad, and its "
                  "releases bring what it holds back to 0; the pools' samples "
                  "are logged too");
  REQUIRE_TRACER ();
  records_clear ();

  element = g_object_new (DS_TEST_TYPE_SCRATCHER, "name", "scratcher", NULL);
  h = gst_harness_new_with_element (element, "sink", "src");
  gst_harness_set_src_caps_str (h, "application/x-test");
  for (guint i = 0; i < 10; i++)
    gst_buffer_unref (gst_harness_push_and_pull (h, gst_buffer_new_allocate (NULL, 16, NULL)));
  gst_harness_teardown (h);
  gst_object_unref (element);

  /* Its start took a block too (the state-change case looks at it). */
  blocks = scratch_records ("scratcher", "sink", "block");
  releases = scratch_records ("scratcher", "sink", "release");
  g_assert_cmpuint (blocks->len, ==, 10);
  g_assert_cmpuint (releases->len, ==, 10);
  for (guint i = 0; i < blocks->len; i++)
    {
      GstStructure *b = blocks->pdata[i], *r = releases->pdata[i];

      g_assert_cmpstr (gst_structure_get_string (b, "pad"), ==, "sink");
      g_assert_cmpstr (gst_structure_get_string (b, "kind"), ==, "host");
      g_assert_cmpuint (field_u64 (b, "bytes"), ==, 128 * 1024);   /* the first block that fits */
      /* With the 64 KiB block its start took. */
      g_assert_cmpuint (field_u64 (b, "held"), ==, (128 + 64) * 1024);
      g_assert_cmpuint (field_u64 (r, "bytes"), ==, 128 * 1024);
      g_assert_cmpuint (field_u64 (r, "held"), ==, 64 * 1024);
      g_assert_cmpuint (field_u64 (b, "pool"), !=, 0);
      g_assert_cmpuint (field_u64 (b, "ts"), <=, field_u64 (r, "ts"));
    }

  g_mutex_lock (&log_lock);
  for (guint i = 0; i < records->len; i++)
    if (gst_structure_has_name (records->pdata[i], "dsmemory-pool") &&
        g_strcmp0 (gst_structure_get_string (records->pdata[i], "label"), "default") == 0 &&
        g_strcmp0 (gst_structure_get_string (records->pdata[i], "kind"), "host") == 0)
      pool_seen = TRUE;
  g_mutex_unlock (&log_lock);
  g_assert_true (pool_seen);
}

static void
test_harness_meta (void)
{
  GstElement *element;
  GstHarness *h;
  GstBuffer *out[3];
  g_autoptr(GPtrArray) blocks = NULL;
  g_autoptr(GPtrArray) releases = NULL;

  g_test_summary ("Scratch tied to buffers by a DsGstScratchMeta stays the "
                  "element's while the buffers live downstream, and goes when "
                  "they are freed, on another thread or outside any push");
  REQUIRE_TRACER ();
  records_clear ();

  element = g_object_new (DS_TEST_TYPE_SCRATCHER, "name", "meta-scratcher", NULL);
  DS_TEST_SCRATCHER (element)->mode = MODE_META;
  h = gst_harness_new_with_element (element, "sink", "src");
  gst_harness_set_src_caps_str (h, "application/x-test");
  for (guint i = 0; i < G_N_ELEMENTS (out); i++)
    out[i] = gst_harness_push_and_pull (h, gst_buffer_new_allocate (NULL, 16, NULL));

  /* Three buffers alive downstream: three blocks held. */
  blocks = scratch_records ("meta-scratcher", "sink", "block");
  g_assert_cmpuint (blocks->len, ==, 3);
  g_assert_cmpuint (field_u64 (blocks->pdata[2], "held"), ==, (3 * 128 + 64) * 1024);

  for (guint i = 0; i < G_N_ELEMENTS (out); i++)
    gst_buffer_unref (out[i]);
  releases = scratch_records ("meta-scratcher", "sink", "release");
  g_assert_cmpuint (releases->len, ==, 3);
  g_assert_cmpuint (field_u64 (releases->pdata[0], "held"), ==, (2 * 128 + 64) * 1024);
  g_assert_cmpuint (field_u64 (releases->pdata[2], "held"), ==, 64 * 1024);
  g_assert_cmpstr (gst_structure_get_string (releases->pdata[2], "pad"), ==, "sink");

  gst_harness_teardown (h);
  gst_object_unref (element);
}

static void
test_state_change (void)
{
  GstElement *pipeline, *element;
  g_autoptr(GPtrArray) blocks = NULL;
  g_autoptr(GPtrArray) releases = NULL;

  g_test_summary ("Scratch taken while an element changes state (its start) "
                  "is attributed to it, with no pad, and given back at stop");
  REQUIRE_TRACER ();
  records_clear ();

  pipeline = gst_pipeline_new (NULL);
  element = g_object_new (DS_TEST_TYPE_SCRATCHER, "name", "starter", NULL);
  gst_bin_add (GST_BIN (pipeline), element);
  g_assert_cmpint (gst_element_set_state (pipeline, GST_STATE_PAUSED), !=, GST_STATE_CHANGE_FAILURE);
  blocks = scratch_records ("starter", NULL, "block");
  g_assert_cmpuint (blocks->len, ==, 1);
  g_assert_cmpstr (gst_structure_get_string (blocks->pdata[0], "pad"), ==, "none");
  g_assert_cmpuint (field_u64 (blocks->pdata[0], "held"), ==, 64 * 1024);

  gst_element_set_state (pipeline, GST_STATE_NULL);
  releases = scratch_records ("starter", NULL, "release");
  g_assert_cmpuint (releases->len, ==, 1);
  g_assert_cmpuint (field_u64 (releases->pdata[0], "held"), ==, 0);
  gst_object_unref (pipeline);
}

static void
test_mark (void)
{
  g_autoptr(DsRecorder) recorder = ds_recorder_dup_running ();
  gboolean seen = FALSE;

  g_test_summary ("A recorder mark is logged as a dsmemory-mark record, its "
                  "label one word");
  REQUIRE_TRACER ();
  g_assert_nonnull (recorder);
  records_clear ();

  ds_recorder_mark (recorder, "paused for 8 s");
  g_mutex_lock (&log_lock);
  for (guint i = 0; i < records->len; i++)
    if (gst_structure_has_name (records->pdata[i], "dsmemory-mark"))
      {
        g_assert_cmpstr (gst_structure_get_string (records->pdata[i], "label"), ==, "paused_for_8_s");
        seen = TRUE;
      }
  g_mutex_unlock (&log_lock);
  g_assert_true (seen);
}

static void
test_gpu_pipeline (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) blocks = NULL;
  GstElement *pipeline;
  GstMessage *msg;
  gboolean pinned = FALSE, device = FALSE;

  g_test_summary ("videotestsrc ! dslumastats ! fakesink on a GPU: the "
                  "element's pinned and device scratch is attributed to it");
  DS_GST_TEST_REQUIRE_CUDA ();
  DS_GST_TEST_REQUIRE_ELEMENT ("dslumastats");
  REQUIRE_TRACER ();
  records_clear ();

  pipeline = gst_parse_launch ("videotestsrc num-buffers=60 "
                               "! video/x-raw,format=I420,width=1280,height=720 "
                               "! dslumastats name=stats ! fakesink", &error);
  g_assert_no_error (error);
  g_assert_cmpint (gst_element_set_state (pipeline, GST_STATE_PLAYING), !=, GST_STATE_CHANGE_FAILURE);
  msg = gst_bus_timed_pop_filtered (GST_ELEMENT_BUS (pipeline), 60 * GST_SECOND,
                                    GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  g_assert_nonnull (msg);
  g_assert_cmpint (GST_MESSAGE_TYPE (msg), ==, GST_MESSAGE_EOS);
  gst_message_unref (msg);
  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_object_unref (pipeline);

  blocks = scratch_records ("stats", NULL, "block");
  for (guint i = 0; i < blocks->len; i++)
    {
      const char *kind = gst_structure_get_string (blocks->pdata[i], "kind");

      pinned |= g_strcmp0 (kind, "pinned") == 0;
      device |= g_strcmp0 (kind, "device") == 0;
    }
  g_assert_true (pinned || device);
}

int
main (int    argc,
      char **argv)
{
  int status;

  /* Before GStreamer starts: the tracers are made by gst_init (). */
  g_setenv ("GST_TRACERS", "dsmemory", TRUE);
  g_setenv ("GST_DEBUG", "GST_TRACER:7", TRUE);
  records = g_ptr_array_new_with_free_func ((GDestroyNotify) gst_structure_free);
  ds_gst_test_init (&argc, &argv);
  gst_debug_remove_log_function (gst_debug_log_default);
  gst_debug_add_log_function (log_cb, NULL, NULL);

  ds_gst_test_add_func ("/DsGst/Tracer/harness-reuse", test_harness_reuse);
  ds_gst_test_add_func ("/DsGst/Tracer/harness-meta", test_harness_meta);
  ds_gst_test_add_func ("/DsGst/Tracer/state-change", test_state_change);
  ds_gst_test_add_func ("/DsGst/Tracer/mark", test_mark);
  ds_gst_test_add_func ("/DsGst/Tracer/gpu/pipeline", test_gpu_pipeline);

  status = g_test_run ();
  gst_debug_remove_log_function (log_cb);
  g_ptr_array_unref (records);
  gst_deinit ();
  return status;
}
