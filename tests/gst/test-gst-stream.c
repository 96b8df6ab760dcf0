/* test-gst-stream.c: DsGstStream, and a scratchpad that follows each
 * buffer's stream
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * CPU cases: programmer errors. /gpu/ cases (they skip without a device):
 * the stream lives until the last scratchpad on it has given its memory
 * back; the context's pools give back what they hold idle once its last
 * stream is gone; ds_gst_stream_follow_buffer () picks the stream of the
 * buffer's CUDA memory with GStreamer 1.24+ and the element's own stream
 * otherwise.
 */

#include "ds-gst-test.h"

#include <gst/cuda/gstcudacontext.h>
#include <gst/cuda/gstcudamemory.h>
#if DS_GST_HAVE_CUDA_STREAM
# include <gst/cuda/gstcudastream.h>
#endif

static void
test_preconditions (void)
{
  GstBuffer *buf = gst_buffer_new ();
  DsScratchpad *sp = ds_scratchpad_new (NULL);

  g_test_summary ("NULL contexts, streams, scratchpads and buffers are programmer errors");

  if (!g_test_undefined ())
    {
      gst_buffer_unref (buf);
      g_object_unref (sp);
      return;
    }

  g_test_expect_message ("DsGst", G_LOG_LEVEL_CRITICAL, "*GST_IS_CUDA_CONTEXT*");
  g_assert_null (ds_gst_stream_new (NULL, NULL));
  g_test_assert_expected_messages ();
  g_test_expect_message ("DsGst", G_LOG_LEVEL_CRITICAL, "*self != NULL*");
  g_assert_null (ds_gst_stream_new_scratchpad (NULL));
  g_test_assert_expected_messages ();
  g_test_expect_message ("DsGst", G_LOG_LEVEL_CRITICAL, "*self != NULL*");
  g_assert_null (ds_gst_stream_get_handle (NULL));
  g_test_assert_expected_messages ();
  g_test_expect_message ("DsGst", G_LOG_LEVEL_CRITICAL, "*self != NULL*");
  g_assert_null (ds_gst_stream_get_order (NULL));
  g_test_assert_expected_messages ();
  g_test_expect_message ("DsGst", G_LOG_LEVEL_CRITICAL, "*self != NULL*");
  g_assert_null (ds_gst_stream_get_context (NULL));
  g_test_assert_expected_messages ();
  g_test_expect_message ("DsGst", G_LOG_LEVEL_CRITICAL, "*self != NULL*");
  g_assert_false (ds_gst_stream_follow_buffer (NULL, sp, buf, NULL));
  g_test_assert_expected_messages ();
  g_test_expect_message ("DsGst", G_LOG_LEVEL_CRITICAL, "*self != NULL*");
  g_assert_false (ds_gst_stream_follow_buffers (NULL, sp, buf, NULL, NULL));
  g_test_assert_expected_messages ();
  g_test_expect_message ("DsGst", G_LOG_LEVEL_CRITICAL, "*self != NULL*");
  g_assert_false (ds_gst_stream_finish_buffers (NULL, sp, buf, NULL, NULL));
  g_test_assert_expected_messages ();
  g_test_expect_message ("DsGst", G_LOG_LEVEL_CRITICAL, "*self != NULL*");
  ds_gst_stream_unref (NULL);
  g_test_assert_expected_messages ();

  gst_buffer_unref (buf);
  g_object_unref (sp);
}

static void
test_type (void)
{
  g_test_summary ("DsGstStream is a boxed type (for bindings)");

  g_assert_true (G_TYPE_IS_BOXED (DS_GST_TYPE_STREAM));
  g_assert_cmpstr (g_type_name (DS_GST_TYPE_STREAM), ==, "DsGstStream");
}

/* --- GPU ------------------------------------------------------------------ */

static void
pool_stats (GstCudaContext *ctx,
            DsMemoryKind    kind,
            DsPoolStats    *stats)
{
  g_autoptr(GError) error = NULL;
  DsMemoryResource *res = ds_gst_cuda_context_get_resource (ctx, kind, &error);

  g_assert_no_error (error);
  ds_pool_resource_get_stats (DS_POOL_RESOURCE (res), stats);
}

/* Takes and gives back pinned and device scratch on @sp, with work queued
 * on its stream in between. */
static void
one_unit (GstCudaContext *ctx,
          DsScratchpad   *sp)
{
  g_autoptr(GError) error = NULL;
  cudaStream_t stream = ds_access_order_get_stream (ds_scratchpad_get_device_order (sp));
  guint8 *pinned = ds_scratchpad_alloc (sp, DS_MEMORY_KIND_PINNED, 1 << 16, 0, &error);
  guint8 *device = ds_scratchpad_alloc (sp, DS_MEMORY_KIND_DEVICE, 1 << 20, 0, &error);

  g_assert_no_error (error);
  memset (pinned, 7, 1 << 16);
  g_assert_true (gst_cuda_context_push (ctx));
  g_assert_cmpint (cudaMemcpyAsync (device, pinned, 1 << 16, cudaMemcpyHostToDevice, stream), ==,
                   cudaSuccess);
  g_assert_true (gst_cuda_context_pop (NULL));
  ds_scratchpad_release (sp);
}

static void
test_gpu_lifetime_and_trim (void)
{
  g_autoptr(GError) error = NULL;
  GstCudaContext *ctx;
  DsGstStream *a, *b;
  DsScratchpad *sp;
  DsPoolStats dev, pin;

  g_test_summary ("A stream lives as long as the scratchpads on it; the context's pools "
                  "keep their blocks while any stream of the context is alive, and give "
                  "them all back once the last one has gone");
  DS_GST_TEST_REQUIRE_CUDA ();

  ctx = gst_cuda_context_new (0);
  a = ds_gst_stream_new (ctx, &error);
  g_assert_no_error (error);
  b = ds_gst_stream_new (ctx, &error);
  g_assert_no_error (error);
  g_assert_true (ds_gst_stream_get_context (a) == ctx);
  g_assert_nonnull (ds_gst_stream_get_handle (a));
  g_assert_true (ds_gst_stream_get_handle (a) != ds_gst_stream_get_handle (b));
  g_assert_true (ds_access_order_is_device (ds_gst_stream_get_order (a)));
  g_assert_true (ds_access_order_get_stream (ds_gst_stream_get_order (a)) == ds_gst_stream_get_handle (a));

  sp = ds_gst_stream_new_scratchpad (a);
  one_unit (ctx, sp);
  one_unit (ctx, sp);

  /* The element stops: its reference goes, the scratchpad keeps the stream. */
  ds_gst_stream_unref (a);
  one_unit (ctx, sp);
  pool_stats (ctx, DS_MEMORY_KIND_DEVICE, &dev);
  pool_stats (ctx, DS_MEMORY_KIND_PINNED, &pin);
  g_assert_cmpuint (dev.bytes_held, >=, 1 << 20);
  g_assert_cmpuint (pin.bytes_held, >=, 1 << 16);

  /* Stream A goes with its last scratchpad; B is alive: nothing trimmed. */
  g_assert_finalize_object (sp);
  pool_stats (ctx, DS_MEMORY_KIND_DEVICE, &dev);
  g_assert_cmpuint (dev.bytes_held, >=, 1 << 20);

  /* The last stream of the context: the pools give everything back. */
  ds_gst_stream_unref (b);
  pool_stats (ctx, DS_MEMORY_KIND_DEVICE, &dev);
  pool_stats (ctx, DS_MEMORY_KIND_PINNED, &pin);
  g_test_message ("after the last stream: device pool %" G_GUINT64_FORMAT " bytes held, pinned %"
                  G_GUINT64_FORMAT, dev.bytes_held, pin.bytes_held);
  g_assert_cmpuint (dev.bytes_held, ==, 0);
  g_assert_cmpuint (pin.bytes_held, ==, 0);

  /* A new stream: the pools fill again on demand. */
  a = ds_gst_stream_new (ctx, &error);
  g_assert_no_error (error);
  sp = ds_gst_stream_new_scratchpad (a);
  one_unit (ctx, sp);
  g_assert_finalize_object (sp);
  ds_gst_stream_unref (a);

  gst_object_unref (ctx);
}

static GstBuffer *
cuda_buffer (GstCudaContext *ctx,
             gpointer        stream)
{
  GstVideoInfo info;
  GstMemory *mem;
  GstBuffer *buf;

  /* GstCudaMemory has no GRAY8. */
  gst_video_info_set_format (&info, GST_VIDEO_FORMAT_NV12, 64, 16);
  mem = ds_gst_test_cuda_alloc (ctx, stream, &info);
  buf = gst_buffer_new ();
  gst_buffer_append_memory (buf, mem);
  return buf;
}

static gpointer
stream_of (DsScratchpad *sp)
{
  return ds_access_order_get_stream (ds_scratchpad_get_device_order (sp));
}

static void
test_gpu_follow_own (void)
{
  g_autoptr(GError) error = NULL;
  GstCudaContext *ctx;
  DsGstStream *own;
  DsScratchpad *sp;
  GstBuffer *sys, *cuda;

  g_test_summary ("System memory, and CUDA memory without a stream, run on the element's "
                  "own stream; a scratchpad that holds allocations cannot follow "
                  "(DS_ERROR_INVALID_ARGUMENT), and can once released");
  DS_GST_TEST_REQUIRE_CUDA ();

  ctx = gst_cuda_context_new (0);
  own = ds_gst_stream_new (ctx, &error);
  g_assert_no_error (error);
  /* A scratchpad made elsewhere (ds's default device order) follows too. */
  sp = ds_scratchpad_new (NULL);
  sys = gst_buffer_new_allocate (NULL, 64, NULL);
  cuda = cuda_buffer (ctx, NULL);

  g_assert_true (ds_gst_stream_follow_buffer (own, sp, sys, &error));
  g_assert_no_error (error);
  g_assert_true (stream_of (sp) == ds_gst_stream_get_handle (own));
  g_assert_true (ds_gst_cuda_context_get_resource (ctx, DS_MEMORY_KIND_DEVICE, NULL) ==
                 ds_scratchpad_get_resource (sp, DS_MEMORY_KIND_DEVICE));
  g_assert_true (ds_gst_stream_follow_buffer (own, sp, cuda, &error));
  g_assert_no_error (error);
  g_assert_true (stream_of (sp) == ds_gst_stream_get_handle (own));

  g_assert_nonnull (ds_scratchpad_alloc (sp, DS_MEMORY_KIND_DEVICE, 4096, 0, &error));
  g_assert_false (ds_gst_stream_follow_buffer (own, sp, sys, &error));
  g_assert_error (error, DS_ERROR, DS_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  ds_scratchpad_release (sp);
  g_assert_true (ds_gst_stream_follow_buffer (own, sp, sys, &error));
  g_assert_no_error (error);

  /* The scratchpad holds the stream: the element's reference may go. */
  ds_gst_stream_unref (own);
  one_unit (ctx, sp);
  g_assert_finalize_object (sp);
  gst_buffer_unref (sys);
  gst_buffer_unref (cuda);
  gst_object_unref (ctx);
}

#if DS_GST_HAVE_CUDA_STREAM
static void
stream_gone_cb (gpointer       data,
                GstMiniObject *where_the_object_was)
{
  *(gboolean *) data = TRUE;
}

static void
test_gpu_follow_buffer_stream (void)
{
  g_autoptr(GError) error = NULL;
  GstCudaContext *ctx, *other;
  GstCudaStream *upstream, *foreign;
  DsGstStream *own;
  DsScratchpad *sp;
  GstBuffer *buf, *next, *foreign_buf;
  gboolean gone = FALSE;
  gpointer dev;

  g_test_summary ("GStreamer 1.24+: a scratchpad follows the stream of the buffer's CUDA "
                  "memory, allocates in its order and holds it until it follows another; "
                  "CUDA memory of another context runs on the element's own stream");
  DS_GST_TEST_REQUIRE_CUDA ();

  ctx = gst_cuda_context_new (0);
  own = ds_gst_stream_new (ctx, &error);
  g_assert_no_error (error);
  upstream = gst_cuda_stream_new (ctx);
  g_assert_nonnull (upstream);
  sp = ds_gst_stream_new_scratchpad (own);
  buf = cuda_buffer (ctx, upstream);
  next = cuda_buffer (ctx, upstream);

  g_assert_true (ds_gst_stream_follow_buffer (own, sp, buf, &error));
  g_assert_no_error (error);
  g_assert_true (stream_of (sp) == gst_cuda_stream_get_handle (upstream));
  dev = ds_scratchpad_alloc (sp, DS_MEMORY_KIND_DEVICE, 1 << 20, 0, &error);
  g_assert_no_error (error);
  g_assert_nonnull (dev);
  ds_scratchpad_release (sp);
  /* The next buffer of the same stream: nothing changes. */
  g_assert_true (ds_gst_stream_follow_buffer (own, sp, next, &error));
  g_assert_true (stream_of (sp) == gst_cuda_stream_get_handle (upstream));

  /* The scratchpad holds the upstream stream until it follows another. */
  gst_buffer_unref (buf);
  gst_buffer_unref (next);
  gst_mini_object_weak_ref (GST_MINI_OBJECT_CAST (upstream), stream_gone_cb, &gone);
  gst_cuda_stream_unref (upstream);
  g_assert_false (gone);

  other = gst_cuda_context_new (0);
  foreign = gst_cuda_stream_new (other);
  foreign_buf = cuda_buffer (other, foreign);
  g_assert_true (ds_gst_stream_follow_buffer (own, sp, foreign_buf, &error));
  g_assert_no_error (error);
  g_assert_true (stream_of (sp) == ds_gst_stream_get_handle (own));
  g_assert_true (gone);

  g_assert_finalize_object (sp);
  gst_buffer_unref (foreign_buf);
  gst_cuda_stream_unref (foreign);
  gst_object_unref (other);
  ds_gst_stream_unref (own);
  gst_object_unref (ctx);
}
#endif

static void CUDART_CB
set_flag_later (void *data)
{
  g_usleep (20000);
  g_atomic_int_set ((gint *) data, 1);
}

static void
test_gpu_follow_finish (void)
{
  g_autoptr(GError) error = NULL;
  GstCudaContext *ctx;
  DsGstStream *own;
  DsScratchpad *sp;
  GstBuffer *sys;
  gint flag = 0;

  g_test_summary ("A filter's step: the output's stream is picked and waits for the input's on "
                  "the GPU; finishing makes the input's stream wait for the work and marks the "
                  "output (1.24+), and the host waits only for system memory out");
  DS_GST_TEST_REQUIRE_CUDA ();

  ctx = gst_cuda_context_new (0);
  own = ds_gst_stream_new (ctx, &error);
  g_assert_no_error (error);
  sp = ds_gst_stream_new_scratchpad (own);
  sys = gst_buffer_new_allocate (NULL, 64, NULL);
  g_assert_true (gst_cuda_context_push (ctx));
#if DS_GST_HAVE_CUDA_STREAM
  {
    GstCudaStream *upstream = gst_cuda_stream_new (ctx);
    GstBuffer *in = cuda_buffer (ctx, upstream);
    GstBuffer *out = cuda_buffer (ctx, ds_gst_stream_get_cuda_stream (own));
    DsGstTestGate *gate;
    cudaEvent_t event;

    g_assert_true (gst_cuda_stream_get_handle (ds_gst_stream_get_cuda_stream (own)) ==
                   ds_gst_stream_get_handle (own));
    g_assert_cmpint (cudaEventCreateWithFlags (&event, cudaEventDisableTiming), ==, cudaSuccess);

    /* The input's producer is held back: the picked stream waits for it. */
    gate = ds_gst_test_gate_new (gst_cuda_stream_get_handle (upstream));
    g_assert_true (ds_gst_stream_follow_buffers (own, sp, in, out, &error));
    g_assert_no_error (error);
    g_assert_true (stream_of (sp) == ds_gst_stream_get_handle (own));
    g_assert_cmpint (cudaEventRecord (event, stream_of (sp)), ==, cudaSuccess);
    g_assert_cmpint (cudaEventQuery (event), ==, cudaErrorNotReady);
    ds_gst_test_gate_free (gate);
    g_assert_cmpint (cudaEventSynchronize (event), ==, cudaSuccess);

    /* The work is held back: the input's stream (its pool's next writer)
     * waits for it, the output is marked, and the host does not wait (it
     * would until the gate timed out, which the gate reports). */
    gate = ds_gst_test_gate_new (stream_of (sp));
    g_assert_true (ds_gst_stream_finish_buffers (own, sp, in, out, &error));
    g_assert_no_error (error);
    g_assert_true (GST_MEMORY_FLAG_IS_SET (gst_buffer_peek_memory (out, 0),
                                           GST_CUDA_MEMORY_TRANSFER_NEED_SYNC));
    g_assert_cmpint (cudaEventRecord (event, gst_cuda_stream_get_handle (upstream)), ==, cudaSuccess);
    g_assert_cmpint (cudaEventQuery (event), ==, cudaErrorNotReady);
    ds_gst_test_gate_free (gate);
    g_assert_cmpint (cudaEventSynchronize (event), ==, cudaSuccess);

    g_assert_cmpint (cudaEventDestroy (event), ==, cudaSuccess);
    gst_buffer_unref (in);
    gst_buffer_unref (out);
    gst_cuda_stream_unref (upstream);
  }
#endif
  /* System memory out: the host waits for the work. */
  g_assert_true (ds_gst_stream_follow_buffers (own, sp, sys, sys, &error));
  g_assert_no_error (error);
  g_assert_cmpint (cudaLaunchHostFunc (stream_of (sp), set_flag_later, &flag), ==, cudaSuccess);
  g_assert_true (ds_gst_stream_finish_buffers (own, sp, sys, sys, &error));
  g_assert_no_error (error);
  g_assert_cmpint (g_atomic_int_get (&flag), ==, 1);
  g_assert_true (gst_cuda_context_pop (NULL));

  g_object_unref (sp);
  gst_buffer_unref (sys);
  ds_gst_stream_unref (own);
  gst_object_unref (ctx);
}

int
main (int    argc,
      char **argv)
{
  int status;

  ds_gst_test_init (&argc, &argv);

  ds_gst_test_add_func ("/DsGst/Stream/preconditions", test_preconditions);
  ds_gst_test_add_func ("/DsGst/Stream/type", test_type);
  ds_gst_test_add_func ("/DsGst/Stream/gpu/lifetime-and-trim", test_gpu_lifetime_and_trim);
  ds_gst_test_add_func ("/DsGst/Stream/gpu/follow-own", test_gpu_follow_own);
  ds_gst_test_add_func ("/DsGst/Stream/gpu/follow-finish", test_gpu_follow_finish);
#if DS_GST_HAVE_CUDA_STREAM
  ds_gst_test_add_func ("/DsGst/Stream/gpu/follow-buffer-stream", test_gpu_follow_buffer_stream);
#endif

  status = g_test_run ();
  gst_deinit ();
  return status;
}
