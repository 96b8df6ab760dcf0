/* test-gst-scratch-meta.c: DsGstScratchMeta
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The scratchpads here hold host memory, so every case runs without a GPU:
 * the meta's job is the scratchpad's lifetime, which is the same for every
 * kind (the GPU kinds on a GstCudaContext are in test-gst-cuda-context and
 * test-gst-element).
 */

#include "ds-gst-test.h"

typedef struct
{
  guint    finalized;
  GThread *thread;
} Watch;

static void
scratchpad_finalized_cb (gpointer  data,
                         GObject  *where_the_object_was)
{
  Watch *watch = data;

  watch->finalized++;
  watch->thread = g_thread_self ();
}

/* A scratchpad with one host allocation, watched; the caller's reference
 * is the only one. */
static DsScratchpad *
new_watched_scratchpad (Watch    *watch,
                        gpointer *data)
{
  g_autoptr(GError) error = NULL;
  DsScratchpad *sp = ds_scratchpad_new (NULL);
  gpointer p;

  p = ds_scratchpad_alloc (sp, DS_MEMORY_KIND_HOST, 256, 0, &error);
  g_assert_no_error (error);
  g_assert_nonnull (p);
  memset (p, 0x5a, 256);
  if (data != NULL)
    *data = p;

  memset (watch, 0, sizeof *watch);
  g_object_weak_ref (G_OBJECT (sp), scratchpad_finalized_cb, watch);
  return sp;
}

static void
test_api (void)
{
  const GstMetaInfo *info = ds_gst_scratch_meta_get_info ();

  g_test_summary ("The meta API is registered, tagged 'memory', and the meta is not pooled");

  g_assert_nonnull (info);
  g_assert_true (info == DS_GST_SCRATCH_META_INFO);
  g_assert_true (info->api == DS_GST_SCRATCH_META_API_TYPE);
  g_assert_cmpuint (info->size, ==, sizeof (DsGstScratchMeta));
  g_assert_true (gst_meta_api_type_has_tag (info->api,
                                            g_quark_from_string (GST_META_TAG_MEMORY_STR)));
  g_assert_cmpstr (g_type_name (info->api), ==, "DsGstScratchMetaAPI");
}

static void
test_plain_buffer (void)
{
  Watch watch;
  gpointer data;
  DsScratchpad *sp = new_watched_scratchpad (&watch, &data);
  GstBuffer *buf = gst_buffer_new_allocate (NULL, 64, NULL);
  DsGstScratchMeta *meta;

  g_test_summary ("A plain buffer's meta keeps the scratchpad until the buffer is freed");

  meta = ds_gst_buffer_add_scratch_meta_full (buf, sp, g_quark_from_static_string ("t"),
                                              DS_MEMORY_KIND_HOST, data, 256);
  g_assert_nonnull (meta);
  g_assert_true (meta->scratchpad == sp);
  g_assert_true (meta->data == data);
  g_assert_cmpuint (meta->size, ==, 256);
  g_assert_cmpint (meta->kind, ==, DS_MEMORY_KIND_HOST);
  g_object_unref (sp);
  g_assert_cmpuint (watch.finalized, ==, 0);
  g_assert_cmpuint (((guint8 *) meta->data)[255], ==, 0x5a);

  gst_buffer_unref (buf);
  g_assert_cmpuint (watch.finalized, ==, 1);
}

static void
test_pooled_buffer (void)
{
  GstBufferPool *pool = gst_buffer_pool_new ();
  GstStructure *config = gst_buffer_pool_get_config (pool);
  GstBuffer *buf = NULL, *again = NULL;
  Watch watch;
  DsScratchpad *sp = new_watched_scratchpad (&watch, NULL);

  g_test_summary ("A pooled buffer's meta goes when the buffer returns to its pool, "
                  "and never a second time");

  gst_buffer_pool_config_set_params (config, NULL, 1024, 1, 1);
  g_assert_true (gst_buffer_pool_set_config (pool, config));
  g_assert_true (gst_buffer_pool_set_active (pool, TRUE));

  g_assert_cmpint (gst_buffer_pool_acquire_buffer (pool, &buf, NULL), ==, GST_FLOW_OK);
  ds_gst_buffer_add_scratch_meta (buf, sp);
  g_object_unref (sp);
  g_assert_cmpuint (watch.finalized, ==, 0);

  /* Back to the pool: the buffer lives on, the meta (and the scratchpad)
   * do not. */
  gst_buffer_unref (buf);
  g_assert_cmpuint (watch.finalized, ==, 1);

  /* The pool holds one buffer: this is the same one, without the meta. */
  g_assert_cmpint (gst_buffer_pool_acquire_buffer (pool, &again, NULL), ==, GST_FLOW_OK);
  g_assert_true (again == buf);
  g_assert_null (ds_gst_buffer_get_scratch_meta (again, 0));
  gst_buffer_unref (again);

  g_assert_true (gst_buffer_pool_set_active (pool, FALSE));
  gst_object_unref (pool);
  g_assert_cmpuint (watch.finalized, ==, 1);
}

static void
test_copy_shares (void)
{
  Watch watch;
  DsScratchpad *sp = new_watched_scratchpad (&watch, NULL);
  GstBuffer *buf = gst_buffer_new_allocate (NULL, 64, NULL);
  GstBuffer *copy, *deep, *writable;
  DsGstScratchMeta *meta;

  g_test_summary ("Copies, deep copies and make_writable share the scratchpad; the "
                  "last buffer that carries it gives it back");

  ds_gst_buffer_add_scratch_meta (buf, sp);
  g_object_unref (sp);

  copy = gst_buffer_copy (buf);
  meta = ds_gst_buffer_get_scratch_meta (copy, 0);
  g_assert_nonnull (meta);
  g_assert_true (meta->scratchpad == sp);

  deep = gst_buffer_copy_deep (buf);
  g_assert_nonnull (ds_gst_buffer_get_scratch_meta (deep, 0));

  writable = gst_buffer_make_writable (gst_buffer_ref (buf));
  g_assert_true (writable != buf);
  g_assert_nonnull (ds_gst_buffer_get_scratch_meta (writable, 0));

  gst_buffer_unref (buf);
  gst_buffer_unref (copy);
  gst_buffer_unref (deep);
  g_assert_cmpuint (watch.finalized, ==, 0);
  gst_buffer_unref (writable);
  g_assert_cmpuint (watch.finalized, ==, 1);
}

static void
test_region_copy_drops (void)
{
  Watch watch;
  DsScratchpad *sp = new_watched_scratchpad (&watch, NULL);
  GstBuffer *buf = gst_buffer_new_allocate (NULL, 64, NULL);
  GstBuffer *region;

  g_test_summary ("A copy of part of the buffer does not carry the meta (it is tagged "
                  "'memory'), and holds no reference");

  ds_gst_buffer_add_scratch_meta (buf, sp);
  g_object_unref (sp);

  region = gst_buffer_copy_region (buf, GST_BUFFER_COPY_ALL, 8, 16);
  g_assert_null (ds_gst_buffer_get_scratch_meta (region, 0));
  gst_buffer_unref (buf);
  g_assert_cmpuint (watch.finalized, ==, 1);
  gst_buffer_unref (region);
  g_assert_cmpuint (watch.finalized, ==, 1);
}

static void
test_other_transform_drops (void)
{
  Watch watch;
  DsScratchpad *sp = new_watched_scratchpad (&watch, NULL);
  GstBuffer *buf = gst_buffer_new_allocate (NULL, 64, NULL);
  GstBuffer *dest = gst_buffer_new_allocate (NULL, 64, NULL);
  GstMeta *meta;

  g_test_summary ("Any transform but a copy (scaling, conversion) is refused");

  meta = (GstMeta *) ds_gst_buffer_add_scratch_meta (buf, sp);
  g_object_unref (sp);

  g_assert_false (meta->info->transform_func (dest, meta, buf,
                                              g_quark_from_static_string ("gst-video-scale"),
                                              NULL));
  g_assert_null (ds_gst_buffer_get_scratch_meta (dest, 0));

  gst_buffer_unref (buf);
  g_assert_cmpuint (watch.finalized, ==, 1);
  gst_buffer_unref (dest);
}

static void
test_tags (void)
{
  Watch wa, wb;
  DsScratchpad *a = new_watched_scratchpad (&wa, NULL);
  DsScratchpad *b = new_watched_scratchpad (&wb, NULL);
  GstBuffer *buf = gst_buffer_new_allocate (NULL, 64, NULL);
  GQuark qa = g_quark_from_static_string ("test-a");
  GQuark qb = g_quark_from_static_string ("test-b");

  g_test_summary ("Several metas on one buffer are told apart by tag");

  ds_gst_buffer_add_scratch_meta_full (buf, a, qa, DS_MEMORY_KIND_HOST, NULL, 0);
  ds_gst_buffer_add_scratch_meta_full (buf, b, qb, DS_MEMORY_KIND_HOST, NULL, 0);
  g_object_unref (a);
  g_object_unref (b);

  g_assert_true (ds_gst_buffer_get_scratch_meta (buf, qa)->scratchpad == a);
  g_assert_true (ds_gst_buffer_get_scratch_meta (buf, qb)->scratchpad == b);
  g_assert_nonnull (ds_gst_buffer_get_scratch_meta (buf, 0));
  g_assert_null (ds_gst_buffer_get_scratch_meta (buf, g_quark_from_static_string ("none")));

  gst_buffer_unref (buf);
  g_assert_cmpuint (wa.finalized, ==, 1);
  g_assert_cmpuint (wb.finalized, ==, 1);
}

static gpointer
unref_buffer_thread (gpointer data)
{
  gst_buffer_unref (data);
  return NULL;
}

static void
test_other_thread (void)
{
  Watch watch;
  DsScratchpad *sp = new_watched_scratchpad (&watch, NULL);
  GstBuffer *buf = gst_buffer_new_allocate (NULL, 64, NULL);
  GThread *thread;

  g_test_summary ("A buffer freed on another thread gives the scratchpad back there");

  ds_gst_buffer_add_scratch_meta (buf, sp);
  g_object_unref (sp);

  thread = g_thread_new ("unref", unref_buffer_thread, buf);
  g_thread_join (thread);
  g_assert_cmpuint (watch.finalized, ==, 1);
  g_assert_true (watch.thread == thread);
}

static void
test_base_transform (void)
{
  GstHarness *h;
  GstBuffer *in, *out;
  Watch watch;
  DsScratchpad *sp;

  g_test_summary ("A converting GstBaseTransform (videoconvert) does not carry the "
                  "meta over; an in-place one (identity) keeps it on the buffer");

  DS_GST_TEST_REQUIRE_ELEMENT ("videoconvert");
  DS_GST_TEST_REQUIRE_ELEMENT ("identity");

  /* Converting: the output is new memory. */
  sp = new_watched_scratchpad (&watch, NULL);
  h = gst_harness_new ("videoconvert");
  gst_harness_set_src_caps_str (h, "video/x-raw,format=I420,width=16,height=16,framerate=30/1");
  gst_harness_set_sink_caps_str (h, "video/x-raw,format=RGBA,width=16,height=16,framerate=30/1");
  in = gst_harness_create_buffer (h, 16 * 16 * 3 / 2);
  ds_gst_buffer_add_scratch_meta (in, sp);
  g_object_unref (sp);
  out = gst_harness_push_and_pull (h, in);
  g_assert_nonnull (out);
  g_assert_null (ds_gst_buffer_get_scratch_meta (out, 0));
  g_assert_cmpuint (watch.finalized, ==, 1);
  gst_buffer_unref (out);
  gst_harness_teardown (h);

  /* In place: the same buffer, the same meta. */
  sp = new_watched_scratchpad (&watch, NULL);
  h = gst_harness_new ("identity");
  gst_harness_set_src_caps_str (h, "video/x-raw,format=I420,width=16,height=16,framerate=30/1");
  in = gst_harness_create_buffer (h, 16 * 16 * 3 / 2);
  ds_gst_buffer_add_scratch_meta (in, sp);
  g_object_unref (sp);
  out = gst_harness_push_and_pull (h, in);
  g_assert_nonnull (ds_gst_buffer_get_scratch_meta (out, 0));
  g_assert_cmpuint (watch.finalized, ==, 0);
  gst_buffer_unref (out);
  g_assert_cmpuint (watch.finalized, ==, 1);
  gst_harness_teardown (h);
}

static void
test_preconditions (void)
{
  GstBuffer *buf = gst_buffer_new_allocate (NULL, 64, NULL);
  DsScratchpad *sp = ds_scratchpad_new (NULL);
  gpointer p;

  g_test_summary ("Programmer errors are criticals and add nothing");

  if (!g_test_undefined ())
    {
      gst_buffer_unref (buf);
      g_object_unref (sp);
      return;
    }

  g_test_expect_message ("DsGst", G_LOG_LEVEL_CRITICAL, "*DS_IS_SCRATCHPAD*");
  p = ds_gst_buffer_add_scratch_meta (buf, NULL);
  g_test_assert_expected_messages ();
  g_assert_null (p);

  g_test_expect_message ("DsGst", G_LOG_LEVEL_CRITICAL, "*(data == NULL) == (size == 0)*");
  p = ds_gst_buffer_add_scratch_meta_full (buf, sp, 0, DS_MEMORY_KIND_HOST, NULL, 16);
  g_test_assert_expected_messages ();
  g_assert_null (p);

  g_test_expect_message ("DsGst", G_LOG_LEVEL_CRITICAL, "*KIND_IS_VALID*");
  p = ds_gst_buffer_add_scratch_meta_full (buf, sp, 0, (DsMemoryKind) 7, NULL, 0);
  g_test_assert_expected_messages ();
  g_assert_null (p);

  /* A buffer with two references is not writable. */
  gst_buffer_ref (buf);
  g_test_expect_message ("DsGst", G_LOG_LEVEL_CRITICAL, "*gst_buffer_is_writable*");
  p = ds_gst_buffer_add_scratch_meta (buf, sp);
  g_test_assert_expected_messages ();
  g_assert_null (p);
  gst_buffer_unref (buf);

  g_assert_null (ds_gst_buffer_get_scratch_meta (buf, 0));
  gst_buffer_unref (buf);
  g_assert_finalize_object (sp);
}

int
main (int    argc,
      char **argv)
{
  int status;

  ds_gst_test_init (&argc, &argv);

  ds_gst_test_add_func ("/DsGst/ScratchMeta/api", test_api);
  ds_gst_test_add_func ("/DsGst/ScratchMeta/plain-buffer", test_plain_buffer);
  ds_gst_test_add_func ("/DsGst/ScratchMeta/pooled-buffer", test_pooled_buffer);
  ds_gst_test_add_func ("/DsGst/ScratchMeta/copy-shares", test_copy_shares);
  ds_gst_test_add_func ("/DsGst/ScratchMeta/region-copy-drops", test_region_copy_drops);
  ds_gst_test_add_func ("/DsGst/ScratchMeta/other-transform-drops", test_other_transform_drops);
  ds_gst_test_add_func ("/DsGst/ScratchMeta/tags", test_tags);
  ds_gst_test_add_func ("/DsGst/ScratchMeta/other-thread", test_other_thread);
  ds_gst_test_add_func ("/DsGst/ScratchMeta/base-transform", test_base_transform);
  ds_gst_test_add_func ("/DsGst/ScratchMeta/preconditions", test_preconditions);

  status = g_test_run ();
  gst_deinit ();
  return status;
}
