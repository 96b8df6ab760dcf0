/* test-gst-scratch-meta.c: DsGstScratchMeta
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The CPU cases use scratchpads of host memory: the meta's job there is
 * the scratchpad's lifetime, which is the same for every kind, and its
 * consumer API in host order, which calls no CUDA.
 *
 * The /gpu/ cases are the cross-stream contract on a GstCudaContext: a
 * producer on stream A publishes device scratch, a consumer on stream B
 * waits for the write and reads it under a gate (DsGstTestGate) while the
 * buffer is freed and the next producer on A gets the same block at once
 * and overwrites it. Registered as a reader, the consumer reads the first
 * producer's bytes; not registered, it reads the second's: the
 * registration is what makes it safe.
 */

#include "ds-gst-test.h"

#if DS_GST_HAVE_CUDA
# include <gst/cuda/gstcudacontext.h>
#endif

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
                                              DS_MEMORY_KIND_HOST, data, 256, NULL);
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

  ds_gst_buffer_add_scratch_meta_full (buf, a, qa, DS_MEMORY_KIND_HOST, NULL, 0, NULL);
  ds_gst_buffer_add_scratch_meta_full (buf, b, qb, DS_MEMORY_KIND_HOST, NULL, 0, NULL);
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
  p = ds_gst_buffer_add_scratch_meta_full (buf, sp, 0, DS_MEMORY_KIND_HOST, NULL, 16, NULL);
  g_test_assert_expected_messages ();
  g_assert_null (p);

  g_test_expect_message ("DsGst", G_LOG_LEVEL_CRITICAL, "*KIND_IS_VALID*");
  p = ds_gst_buffer_add_scratch_meta_full (buf, sp, 0, (DsMemoryKind) 7, NULL, 0, NULL);
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

  g_test_expect_message ("DsGst", G_LOG_LEVEL_CRITICAL, "*self != NULL*");
  g_assert_false (ds_gst_scratch_meta_wait (NULL, NULL, NULL));
  g_test_assert_expected_messages ();
  g_test_expect_message ("DsGst", G_LOG_LEVEL_CRITICAL, "*self != NULL*");
  g_assert_false (ds_gst_scratch_meta_add_reader (NULL, NULL, NULL));
  g_test_assert_expected_messages ();
  g_test_expect_message ("DsGst", G_LOG_LEVEL_CRITICAL, "*self != NULL*");
  g_assert_null (ds_gst_scratch_meta_get_order (NULL));
  g_test_assert_expected_messages ();
  {
    DsGstScratchMeta *meta = ds_gst_buffer_add_scratch_meta (buf, sp);

    g_test_expect_message ("DsGst", G_LOG_LEVEL_CRITICAL, "*order != NULL*");
    g_assert_false (ds_gst_scratch_meta_wait (meta, NULL, NULL));
    g_test_assert_expected_messages ();
    g_test_expect_message ("DsGst", G_LOG_LEVEL_CRITICAL, "*order != NULL*");
    g_assert_false (ds_gst_scratch_meta_add_reader (meta, NULL, NULL));
    g_test_assert_expected_messages ();
  }

  gst_buffer_unref (buf);
  g_assert_finalize_object (sp);
}

static void
test_consumer_host (void)
{
  Watch watch;
  gpointer data;
  DsScratchpad *sp = new_watched_scratchpad (&watch, &data);
  GstBuffer *buf = gst_buffer_new_allocate (NULL, 64, NULL);
  g_autoptr(DsAccessOrder) host = ds_access_order_new_host ();
  g_autoptr(GError) error = NULL;
  DsGstScratchMeta *meta;

  g_test_summary ("Host memory published by a scratchpad without a device order: the "
                  "meta has no producer order, and a host consumer's wait and reader "
                  "registration succeed without a CUDA call");

  meta = ds_gst_buffer_add_scratch_meta_full (buf, sp, 0, DS_MEMORY_KIND_HOST, data, 256, &error);
  g_assert_no_error (error);
  g_object_unref (sp);
  g_assert_null (ds_gst_scratch_meta_get_order (meta));
  g_assert_true (ds_gst_scratch_meta_wait (meta, host, &error));
  g_assert_no_error (error);
  g_assert_true (ds_gst_scratch_meta_add_reader (meta, host, &error));
  g_assert_no_error (error);
  gst_buffer_unref (buf);
  g_assert_cmpuint (watch.finalized, ==, 1);
}

static void
test_reader_no_device (void)
{
  Watch watch;
  DsScratchpad *sp = new_watched_scratchpad (&watch, NULL);
  GstBuffer *buf = gst_buffer_new_allocate (NULL, 64, NULL);
  g_autoptr(DsAccessOrder) stream = NULL;
  g_autoptr(GError) error = NULL;
  DsGstScratchMeta *meta;

  g_test_summary ("Without a CUDA device, registering a stream reader fails with a "
                  "GError (no crash, nothing registered) and the scratch still goes");
  DS_GST_TEST_REQUIRE_NO_CUDA ();

  meta = ds_gst_buffer_add_scratch_meta (buf, sp);
  g_object_unref (sp);
  stream = ds_access_order_new_stream (GSIZE_TO_POINTER (0x1000), 0);
  g_assert_false (ds_gst_scratch_meta_add_reader (meta, stream, &error));
  g_assert_nonnull (error);
  g_assert_true (error->domain == DS_ERROR);
  gst_buffer_unref (buf);
  g_assert_cmpuint (watch.finalized, ==, 1);
}

#if DS_GST_HAVE_CUDA
/* --- GPU: the cross-stream contract -------------------------------------- */

#define REGION (1 << 20)
#define FIRST  0xa1
#define SECOND 0xb2

typedef enum
{
  READER_NONE,        /* the consumer does not register */
  READER_REGISTERED,  /* it does, on the buffer it read */
  READER_ON_COPY,     /* it does, on a copy of the buffer freed last */
} Reader;

static void
check_bytes (const guint8 *p,
             guint8        expected)
{
  for (gsize i = 0; i < REGION; i++)
    if (p[i] != expected)
      g_error ("byte %" G_GSIZE_FORMAT " is 0x%02x, expected 0x%02x", i, p[i], expected);
}

static void
cross_stream (Reader how)
{
  g_autoptr(GError) error = NULL;
  GQuark tag = g_quark_from_static_string ("test-region");
  GstCudaContext *ctx;
  DsGstStream *a, *b;
  cudaStream_t sa, sb;
  DsScratchpad *sp;
  GstBuffer *buf, *copy = NULL;
  DsGstScratchMeta *meta;
  DsGstTestGate *gate;
  guint8 *data, *again, *out;

  ctx = gst_cuda_context_new (0);
  g_assert_nonnull (ctx);
  a = ds_gst_stream_new (ctx, &error);
  g_assert_no_error (error);
  b = ds_gst_stream_new (ctx, &error);
  g_assert_no_error (error);
  sa = ds_gst_stream_get_handle (a);
  sb = ds_gst_stream_get_handle (b);
  g_assert_true (gst_cuda_context_push (ctx));
  g_assert_cmpint (cudaMallocHost ((void **) &out, REGION), ==, cudaSuccess);
  memset (out, 0, REGION);
  g_assert_true (gst_cuda_context_pop (NULL));

  /* The producer on A writes the region, then publishes it. */
  sp = ds_gst_stream_new_scratchpad (a);
  data = ds_scratchpad_alloc (sp, DS_MEMORY_KIND_DEVICE, REGION, 0, &error);
  g_assert_no_error (error);
  g_assert_true (gst_cuda_context_push (ctx));
  g_assert_cmpint (cudaMemsetAsync (data, FIRST, REGION, sa), ==, cudaSuccess);
  g_assert_true (gst_cuda_context_pop (NULL));
  buf = gst_buffer_new ();
  meta = ds_gst_buffer_add_scratch_meta_full (buf, sp, tag, DS_MEMORY_KIND_DEVICE, data, REGION, &error);
  g_assert_no_error (error);
  g_assert_nonnull (meta);
  g_assert_true (ds_access_order_equal (ds_gst_scratch_meta_get_order (meta), ds_gst_stream_get_order (a)));
  g_object_unref (sp);

  /* The consumer on B: held at a gate, waits for the write, queues its
   * read, and (maybe) registers as a reader. */
  g_assert_true (gst_cuda_context_push (ctx));
  gate = ds_gst_test_gate_new (sb);
  meta = ds_gst_buffer_get_scratch_meta (buf, tag);
  g_assert_true (ds_gst_scratch_meta_wait (meta, ds_gst_stream_get_order (b), &error));
  g_assert_no_error (error);
  g_assert_cmpint (cudaMemcpyAsync (out, meta->data, REGION, cudaMemcpyDeviceToHost, sb), ==, cudaSuccess);
  if (how == READER_ON_COPY)
    {
      copy = gst_buffer_copy (buf);
      meta = ds_gst_buffer_get_scratch_meta (copy, tag);
    }
  if (how != READER_NONE)
    {
      g_assert_true (ds_gst_scratch_meta_add_reader (meta, ds_gst_stream_get_order (b), &error));
      g_assert_no_error (error);
    }
  g_assert_true (gst_cuda_context_pop (NULL));

  /* The buffer goes while the read is still queued behind the gate. */
  gst_buffer_unref (buf);
  if (copy != NULL)
    gst_buffer_unref (copy);

  /* The next producer on A is pushed to take the same block at once (a
   * block given back on A is A's again without a wait) and overwrites it. */
  sp = ds_gst_stream_new_scratchpad (a);
  again = ds_scratchpad_alloc (sp, DS_MEMORY_KIND_DEVICE, REGION, 0, &error);
  g_assert_no_error (error);
  g_assert_true (again == data);
  g_assert_true (gst_cuda_context_push (ctx));
  g_assert_cmpint (cudaMemsetAsync (again, SECOND, REGION, sa), ==, cudaSuccess);
  if (how == READER_NONE)
    {
      /* Nothing holds A back: the overwrite is done before B reads. */
      g_assert_cmpint (cudaStreamSynchronize (sa), ==, cudaSuccess);
    }
  else
    {
      /* A waits for the reader, which waits at the gate. */
      g_assert_cmpint (cudaStreamQuery (sa), ==, cudaErrorNotReady);
      g_assert_false (ds_gst_test_gate_passed (gate));
    }
  ds_gst_test_gate_open (gate);
  g_assert_cmpint (cudaStreamSynchronize (sb), ==, cudaSuccess);
  g_assert_cmpint (cudaStreamSynchronize (sa), ==, cudaSuccess);
  g_assert_true (gst_cuda_context_pop (NULL));
  ds_gst_test_gate_free (gate);

  check_bytes (out, how == READER_NONE ? SECOND : FIRST);
  g_test_message ("the consumer read the %s producer's bytes",
                  how == READER_NONE ? "next" : "publishing");

  g_object_unref (sp);
  g_assert_true (gst_cuda_context_push (ctx));
  g_assert_cmpint (cudaFreeHost (out), ==, cudaSuccess);
  g_assert_true (gst_cuda_context_pop (NULL));
  ds_gst_stream_unref (a);
  ds_gst_stream_unref (b);
  gst_object_unref (ctx);
}

static void
test_gpu_reader_registered (void)
{
  g_test_summary ("A consumer on another stream that waits for the write and registers as a "
                  "reader reads the producer's bytes, although the buffer is freed and the "
                  "block handed to the next producer on the producer's stream while the read "
                  "is still queued");
  DS_GST_TEST_REQUIRE_CUDA ();

  cross_stream (READER_REGISTERED);
}

static void
test_gpu_reader_on_copy (void)
{
  g_test_summary ("A reader registered on a copy of the buffer holds the scratch of the "
                  "original as well: the last of them gives it back after the read");
  DS_GST_TEST_REQUIRE_CUDA ();

  cross_stream (READER_ON_COPY);
}

static void
test_gpu_reader_not_registered (void)
{
  g_test_summary ("The same consumer without the reader registration reads the next "
                  "producer's bytes: the registration is what makes the read safe");
  DS_GST_TEST_REQUIRE_CUDA ();

  cross_stream (READER_NONE);
}

typedef struct
{
  DsGstTestGate *gate;
  guint          ms;
} Opener;

static gpointer
open_later (gpointer data)
{
  Opener *o = data;

  g_usleep (o->ms * G_TIME_SPAN_MILLISECOND);
  ds_gst_test_gate_open (o->gate);
  return NULL;
}

static void
test_gpu_host_consumer (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(DsAccessOrder) host = ds_access_order_new_host ();
  GstCudaContext *ctx;
  DsGstStream *a;
  DsScratchpad *sp;
  GstBuffer *buf;
  DsGstScratchMeta *meta;
  Opener opener;
  GThread *thread;
  guint8 *data, *out;

  g_test_summary ("A consumer in host order waits for the write by blocking until it is "
                  "done (a gate held before the write, opened by another thread), and needs "
                  "no reader registration");
  DS_GST_TEST_REQUIRE_CUDA ();

  out = g_malloc (REGION);
  ctx = gst_cuda_context_new (0);
  a = ds_gst_stream_new (ctx, &error);
  g_assert_no_error (error);
  sp = ds_gst_stream_new_scratchpad (a);
  data = ds_scratchpad_alloc (sp, DS_MEMORY_KIND_DEVICE, REGION, 0, &error);
  g_assert_no_error (error);
  g_assert_true (gst_cuda_context_push (ctx));
  opener.gate = ds_gst_test_gate_new (ds_gst_stream_get_handle (a));
  opener.ms = 100;
  g_assert_cmpint (cudaMemsetAsync (data, FIRST, REGION, ds_gst_stream_get_handle (a)), ==, cudaSuccess);
  g_assert_true (gst_cuda_context_pop (NULL));
  buf = gst_buffer_new ();
  meta = ds_gst_buffer_add_scratch_meta_full (buf, sp, 0, DS_MEMORY_KIND_DEVICE, data, REGION, &error);
  g_assert_no_error (error);
  g_object_unref (sp);

  thread = g_thread_new ("opener", open_later, &opener);
  g_assert_true (ds_gst_scratch_meta_wait (meta, host, &error));
  g_assert_no_error (error);
  g_assert_true (ds_gst_test_gate_passed (opener.gate));
  g_assert_true (ds_gst_scratch_meta_add_reader (meta, host, &error));
  g_assert_true (gst_cuda_context_push (ctx));
  g_assert_cmpint (cudaMemcpy (out, meta->data, REGION, cudaMemcpyDeviceToHost), ==, cudaSuccess);
  g_assert_true (gst_cuda_context_pop (NULL));
  check_bytes (out, FIRST);

  g_thread_join (thread);
  ds_gst_test_gate_free (opener.gate);
  gst_buffer_unref (buf);
  ds_gst_stream_unref (a);
  gst_object_unref (ctx);
  g_free (out);
}
#else
/* The cross-stream cases need a GstCudaContext: say why they are not here. */
static void
test_gpu_not_built (void)
{
  g_test_skip (HAVE_CUDA ? "ds-gst was built without GStreamer's CUDA library (gstreamer-cuda-1.0)"
                         : DS_NO_CUDA_REASON);
}
#endif /* DS_GST_HAVE_CUDA */

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
  ds_gst_test_add_func ("/DsGst/ScratchMeta/consumer-host", test_consumer_host);
  ds_gst_test_add_func ("/DsGst/ScratchMeta/reader-no-device", test_reader_no_device);
#if DS_GST_HAVE_CUDA
  ds_gst_test_add_func ("/DsGst/ScratchMeta/gpu/reader-registered", test_gpu_reader_registered);
  ds_gst_test_add_func ("/DsGst/ScratchMeta/gpu/reader-on-copy", test_gpu_reader_on_copy);
  ds_gst_test_add_func ("/DsGst/ScratchMeta/gpu/reader-not-registered", test_gpu_reader_not_registered);
  ds_gst_test_add_func ("/DsGst/ScratchMeta/gpu/host-consumer", test_gpu_host_consumer);
#else
  ds_gst_test_add_func ("/DsGst/ScratchMeta/gpu/cross-stream", test_gpu_not_built);
#endif

  status = g_test_run ();
  gst_deinit ();
  return status;
}
