/* test-gst-cuda-context.c: ds on a GstCudaContext (non-primary CUDA context)
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The /gpu/ cases need a CUDA device; without one they skip with the
 * reason. They check that scratch memory for a GstCudaContext is taken in
 * that context whatever the calling thread has current, given back there
 * from any thread, pooled per context, and that the pools go with the
 * context; with GStreamer 1.24+, the same for a GstCudaStream.
 */

#include "ds-gst-test.h"

#include <gst/cuda/gstcudacontext.h>
#include <gst/cuda/gstcudaloader.h>
#if DS_GST_HAVE_CUDA_STREAM
# include <gst/cuda/gstcudastream.h>
#endif

#define CU_POINTER_ATTRIBUTE_CONTEXT_ 1

typedef int (*CuPointerGetAttributeFunc) (void *data, int attribute, guintptr ptr);
typedef int (*CuCtxGetCurrentFunc) (gpointer *ctx);
typedef int (*CuCtxSetCurrentFunc) (gpointer ctx);

static gpointer
driver_entry_point (const char *symbol)
{
  void *fn = NULL;
  enum cudaDriverEntryPointQueryResult status;

  if (cudaGetDriverEntryPointByVersion (symbol, &fn, 12000, cudaEnableDefault,
                                        &status) != cudaSuccess ||
      status != cudaDriverEntryPointSuccess)
    g_error ("no driver entry point %s", symbol);
  return fn;
}

/* The driver context a device pointer was allocated in. */
static gpointer
pointer_context (gconstpointer ptr)
{
  CuPointerGetAttributeFunc get_attribute = driver_entry_point ("cuPointerGetAttribute");
  gpointer ctx = NULL;

  g_assert_cmpint (get_attribute (&ctx, CU_POINTER_ATTRIBUTE_CONTEXT_, (guintptr) ptr), ==, 0);
  return ctx;
}

static gpointer
current_context (void)
{
  CuCtxGetCurrentFunc get_current = driver_entry_point ("cuCtxGetCurrent");
  gpointer ctx = NULL;

  g_assert_cmpint (get_current (&ctx), ==, 0);
  return ctx;
}

static void
make_primary_current (void)
{
  g_assert_cmpint (cudaSetDevice (0), ==, cudaSuccess);
  g_assert_cmpint (cudaFree (NULL), ==, cudaSuccess);
}

static void
pool_stats (GstCudaContext *ctx,
            DsMemoryKind    kind,
            DsPoolStats    *stats)
{
  g_autoptr(GError) error = NULL;
  DsMemoryResource *res = ds_gst_cuda_context_get_resource (ctx, kind, &error);

  g_assert_no_error (error);
  g_assert_true (DS_IS_POOL_RESOURCE (res));
  ds_pool_resource_get_stats (DS_POOL_RESOURCE (res), stats);
}

static cudaStream_t
stream_in (GstCudaContext *ctx)
{
  cudaStream_t stream = NULL;

  g_assert_true (gst_cuda_context_push (ctx));
  g_assert_cmpint (cudaStreamCreateWithFlags (&stream, cudaStreamNonBlocking), ==, cudaSuccess);
  g_assert_true (gst_cuda_context_pop (NULL));
  return stream;
}

static void
stream_destroy (GstCudaContext *ctx,
                cudaStream_t    stream)
{
  g_assert_true (gst_cuda_context_push (ctx));
  g_assert_cmpint (cudaStreamDestroy (stream), ==, cudaSuccess);
  g_assert_true (gst_cuda_context_pop (NULL));
}

static void
test_preconditions (void)
{
  g_test_summary ("A NULL context is a programmer error");

  if (!g_test_undefined ())
    return;

  g_test_expect_message ("DsGst", G_LOG_LEVEL_CRITICAL, "*GST_IS_CUDA_CONTEXT*");
  g_assert_null (ds_gst_cuda_context_new_order (NULL, NULL, NULL));
  g_test_assert_expected_messages ();
  g_test_expect_message ("DsGst", G_LOG_LEVEL_CRITICAL, "*GST_IS_CUDA_CONTEXT*");
  g_assert_null (ds_gst_cuda_context_new_scratchpad (NULL, NULL, NULL));
  g_test_assert_expected_messages ();
  g_test_expect_message ("DsGst", G_LOG_LEVEL_CRITICAL, "*GST_IS_CUDA_CONTEXT*");
  g_assert_null (ds_gst_cuda_context_get_resource (NULL, DS_MEMORY_KIND_DEVICE, NULL));
  g_test_assert_expected_messages ();
}

static void
test_alloc_in_context (void)
{
  g_autoptr(GError) error = NULL;
  GstCudaContext *ctx;
  cudaStream_t stream;
  DsScratchpad *sp;
  gpointer dev, primary;

  g_test_summary ("Device scratch for a GstCudaContext is allocated in that (non-primary) "
                  "context while the calling thread has the primary context current, "
                  "and the caller's context is current again afterwards");
  DS_GST_TEST_REQUIRE_CUDA ();

  ctx = gst_cuda_context_new (0);
  g_assert_nonnull (ctx);
  stream = stream_in (ctx);

  make_primary_current ();
  primary = current_context ();
  g_assert_true (primary != gst_cuda_context_get_handle (ctx));

  for (guint round = 0; round < 2; round++)
    {
      sp = ds_gst_cuda_context_new_scratchpad (ctx, round == 0 ? stream : NULL, &error);
      g_assert_no_error (error);
      dev = ds_scratchpad_alloc (sp, DS_MEMORY_KIND_DEVICE, 4096, 0, &error);
      g_assert_no_error (error);
      g_assert_true (pointer_context (dev) == gst_cuda_context_get_handle (ctx));
      g_assert_true (current_context () == primary);
      g_assert_nonnull (ds_scratchpad_alloc (sp, DS_MEMORY_KIND_PINNED, 4096, 0, &error));
      g_assert_no_error (error);
      g_assert_nonnull (ds_scratchpad_alloc (sp, DS_MEMORY_KIND_MANAGED, 4096, 0, &error));
      g_assert_no_error (error);
      g_assert_true (current_context () == primary);
      g_assert_finalize_object (sp);
      g_assert_true (current_context () == primary);
    }

  stream_destroy (ctx, stream);
  gst_object_unref (ctx);
}

typedef struct
{
  DsScratchpad *sp;
  gpointer      context_after;
} ThreadData;

static gpointer
finalize_thread (gpointer data)
{
  ThreadData *td = data;

  /* A fresh thread: no CUDA context is current here. */
  g_clear_object (&td->sp);
  td->context_after = current_context ();
  return NULL;
}

static void
test_finalize_other_thread (void)
{
  g_autoptr(GError) error = NULL;
  GstCudaContext *ctx;
  cudaStream_t stream;
  ThreadData td = { NULL, };
  guint8 *dev;
  DsPoolStats before, after;
  GThread *thread;

  g_test_summary ("A scratchpad whose work is still queued, finalized on a thread that "
                  "has no CUDA context current, gives its blocks back to the context's "
                  "pools, in stream order");
  DS_GST_TEST_REQUIRE_CUDA ();

  ctx = gst_cuda_context_new (0);
  stream = stream_in (ctx);

  td.sp = ds_gst_cuda_context_new_scratchpad (ctx, stream, &error);
  g_assert_no_error (error);
  dev = ds_scratchpad_alloc (td.sp, DS_MEMORY_KIND_DEVICE, 1 << 20, 0, &error);
  g_assert_no_error (error);
  g_assert_nonnull (ds_scratchpad_alloc (td.sp, DS_MEMORY_KIND_PINNED, 1 << 16, 0, &error));
  pool_stats (ctx, DS_MEMORY_KIND_DEVICE, &before);
  g_assert_cmpuint (before.bytes_in_use, >=, 1 << 20);

  /* Work on the stream that uses the block, still queued at finalize. */
  g_assert_true (gst_cuda_context_push (ctx));
  for (guint i = 0; i < 64; i++)
    g_assert_cmpint (cudaMemsetAsync (dev, i, 1 << 20, stream), ==, cudaSuccess);
  g_assert_true (gst_cuda_context_pop (NULL));

  thread = g_thread_new ("finalize", finalize_thread, &td);
  g_thread_join (thread);
  g_assert_null (td.context_after);

  pool_stats (ctx, DS_MEMORY_KIND_DEVICE, &after);
  g_assert_cmpuint (after.bytes_in_use, ==, 0);
  g_assert_cmpuint (after.upstream_deallocations, ==, before.upstream_deallocations);
  g_assert_cmpuint (after.bytes_held, ==, before.bytes_held);

  g_assert_true (gst_cuda_context_push (ctx));
  g_assert_cmpint (cudaStreamSynchronize (stream), ==, cudaSuccess);
  g_assert_true (gst_cuda_context_pop (NULL));
  stream_destroy (ctx, stream);
  gst_object_unref (ctx);
}

static void
test_reuse_steady (void)
{
  g_autoptr(GError) error = NULL;
  GstCudaContext *ctx;
  cudaStream_t stream;
  DsScratchpad *sp;
  DsPoolStats dev_first, dev_last, pin_first, pin_last;

  g_test_summary ("A long-lived scratchpad released after each unit of work takes "
                  "nothing more from upstream after the first unit");
  DS_GST_TEST_REQUIRE_CUDA ();

  ctx = gst_cuda_context_new (0);
  stream = stream_in (ctx);
  sp = ds_gst_cuda_context_new_scratchpad (ctx, stream, &error);
  g_assert_no_error (error);

  for (guint unit = 0; unit < 200; unit++)
    {
      guint8 *pinned = ds_scratchpad_alloc (sp, DS_MEMORY_KIND_PINNED, 300 * 1024, 0, &error);
      guint8 *dev = ds_scratchpad_alloc (sp, DS_MEMORY_KIND_DEVICE, 300 * 1024, 0, &error);

      g_assert_no_error (error);
      memset (pinned, unit & 0xff, 300 * 1024);
      g_assert_true (gst_cuda_context_push (ctx));
      g_assert_cmpint (cudaMemcpyAsync (dev, pinned, 300 * 1024, cudaMemcpyHostToDevice,
                                        stream), ==, cudaSuccess);
      /* Released while the copy is queued; then, as an element that
       * posts its results does, wait for the unit's work. */
      ds_scratchpad_release (sp);
      g_assert_cmpint (cudaStreamSynchronize (stream), ==, cudaSuccess);
      g_assert_true (gst_cuda_context_pop (NULL));

      /* Pinned blocks go back in the stream's order and the host takes
       * them again: with lazy fences the pool checks the stream every 8th
       * release, so it rotates up to 9 blocks, all taken in the first
       * units. Steady from then on. */
      if (unit == 49)
        {
          pool_stats (ctx, DS_MEMORY_KIND_DEVICE, &dev_first);
          pool_stats (ctx, DS_MEMORY_KIND_PINNED, &pin_first);
        }
    }
  pool_stats (ctx, DS_MEMORY_KIND_DEVICE, &dev_last);
  pool_stats (ctx, DS_MEMORY_KIND_PINNED, &pin_last);
  g_test_message ("device pool after unit 50: %" G_GUINT64_FORMAT " upstream allocations, "
                  "%" G_GUINT64_FORMAT " bytes held; after unit 200: %" G_GUINT64_FORMAT
                  ", %" G_GUINT64_FORMAT, dev_first.upstream_allocations, dev_first.bytes_held,
                  dev_last.upstream_allocations, dev_last.bytes_held);
  g_test_message ("pinned pool after unit 50: %" G_GUINT64_FORMAT " upstream allocations, "
                  "%" G_GUINT64_FORMAT " bytes held; after unit 200: %" G_GUINT64_FORMAT
                  ", %" G_GUINT64_FORMAT, pin_first.upstream_allocations, pin_first.bytes_held,
                  pin_last.upstream_allocations, pin_last.bytes_held);
  g_assert_cmpuint (dev_last.upstream_allocations, ==, dev_first.upstream_allocations);
  g_assert_cmpuint (dev_last.bytes_held, ==, dev_first.bytes_held);
  g_assert_cmpuint (pin_last.upstream_allocations, ==, pin_first.upstream_allocations);
  g_assert_cmpuint (pin_last.bytes_held, ==, pin_first.bytes_held);
  g_assert_cmpuint (pin_last.upstream_allocations, <=, 9);

  g_assert_finalize_object (sp);
  stream_destroy (ctx, stream);
  gst_object_unref (ctx);
}

static void
pool_finalized_cb (gpointer  data,
                   GObject  *where_the_object_was)
{
  (*(guint *) data)++;
}

static void
test_pools_go_with_context (void)
{
  g_autoptr(GError) error = NULL;
  GstCudaContext *ctx, *other;
  DsScratchpad *sp;
  DsMemoryResource *dev_pool, *other_pool;
  guint finalized = 0;

  g_test_summary ("Each GstCudaContext has its own pools; a scratchpad keeps its context "
                  "alive; the pools are torn down when the context goes");
  DS_GST_TEST_REQUIRE_CUDA ();

  ctx = gst_cuda_context_new (0);
  other = gst_cuda_context_new (0);
  dev_pool = ds_gst_cuda_context_get_resource (ctx, DS_MEMORY_KIND_DEVICE, &error);
  other_pool = ds_gst_cuda_context_get_resource (other, DS_MEMORY_KIND_DEVICE, &error);
  g_assert_no_error (error);
  g_assert_true (dev_pool != other_pool);
  g_assert_true (ds_gst_cuda_context_get_resource (ctx, DS_MEMORY_KIND_DEVICE, NULL) == dev_pool);
  g_assert_true (ds_gst_cuda_context_get_resource (ctx, DS_MEMORY_KIND_HOST, NULL) ==
                 ds_memory_resource_get_default (DS_MEMORY_KIND_HOST, 0, NULL));
  g_assert_null (ds_gst_cuda_context_get_resource (ctx, (DsMemoryKind) 9, &error));
  g_assert_error (error, DS_ERROR, DS_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  g_object_weak_ref (G_OBJECT (dev_pool), pool_finalized_cb, &finalized);

  sp = ds_gst_cuda_context_new_scratchpad (ctx, NULL, &error);
  g_assert_no_error (error);
  g_assert_nonnull (ds_scratchpad_alloc (sp, DS_MEMORY_KIND_DEVICE, 1 << 16, 0, &error));
  g_assert_no_error (error);

  /* The scratchpad holds the context: dropping ours keeps the pools. */
  gst_object_unref (ctx);
  g_assert_cmpuint (finalized, ==, 0);
  g_assert_finalize_object (sp);
  g_assert_cmpuint (finalized, ==, 1);

  gst_object_unref (other);
}

static void
test_wrong_stream (void)
{
  g_autoptr(GError) error = NULL;
  GstCudaContext *ctx;
  cudaStream_t primary_stream = NULL;

  g_test_summary ("A stream of another context is refused with DS_ERROR_INVALID_ARGUMENT");
  DS_GST_TEST_REQUIRE_CUDA ();

  ctx = gst_cuda_context_new (0);
  make_primary_current ();
  g_assert_cmpint (cudaStreamCreateWithFlags (&primary_stream, cudaStreamNonBlocking), ==,
                   cudaSuccess);

  g_assert_null (ds_gst_cuda_context_new_order (ctx, primary_stream, &error));
  g_assert_error (error, DS_ERROR, DS_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  g_assert_null (ds_gst_cuda_context_new_scratchpad (ctx, primary_stream, &error));
  g_assert_error (error, DS_ERROR, DS_ERROR_INVALID_ARGUMENT);

  g_assert_cmpint (cudaStreamDestroy (primary_stream), ==, cudaSuccess);
  gst_object_unref (ctx);
}

#if DS_GST_HAVE_CUDA_STREAM
static void
test_stream_preconditions (void)
{
  g_test_summary ("A NULL GstCudaStream is a programmer error");

  if (!g_test_undefined ())
    return;

  g_test_expect_message ("DsGst", G_LOG_LEVEL_CRITICAL, "*stream != NULL*");
  g_assert_null (ds_gst_cuda_stream_new_order (NULL, NULL));
  g_test_assert_expected_messages ();
  g_test_expect_message ("DsGst", G_LOG_LEVEL_CRITICAL, "*stream != NULL*");
  g_assert_null (ds_gst_cuda_stream_new_scratchpad (NULL, NULL));
  g_test_assert_expected_messages ();
}

static void
stream_gone_cb (gpointer       data,
                GstMiniObject *where_the_object_was)
{
  *(gboolean *) data = TRUE;
}

static void
test_cuda_stream (void)
{
  g_autoptr(GError) error = NULL;
  GstCudaContext *ctx;
  GstCudaStream *stream;
  DsAccessOrder *order;
  DsScratchpad *sp;
  gpointer dev, primary;
  gboolean gone = FALSE;

  g_test_summary ("The order of a GstCudaStream is its handle, in its context; a scratchpad "
                  "on it allocates in that context and holds the stream until it is "
                  "finalized (GStreamer 1.24+)");
  DS_GST_TEST_REQUIRE_CUDA ();

  ctx = gst_cuda_context_new (0);
  g_assert_nonnull (ctx);
  stream = gst_cuda_stream_new (ctx);
  g_assert_nonnull (stream);

  order = ds_gst_cuda_stream_new_order (stream, &error);
  g_assert_no_error (error);
  g_assert_true (ds_access_order_is_device (order));
  g_assert_true (ds_access_order_get_stream (order) == gst_cuda_stream_get_handle (stream));
  g_assert_cmpint (ds_access_order_get_device (order), ==, 0);

  make_primary_current ();
  primary = current_context ();
  sp = ds_gst_cuda_stream_new_scratchpad (stream, &error);
  g_assert_no_error (error);
  dev = ds_scratchpad_alloc (sp, DS_MEMORY_KIND_DEVICE, 4096, 0, &error);
  g_assert_no_error (error);
  g_assert_true (pointer_context (dev) == gst_cuda_context_get_handle (ctx));
  g_assert_true (current_context () == primary);

  /* The scratchpad keeps the stream alive until its memory is back. */
  gst_mini_object_weak_ref (GST_MINI_OBJECT_CAST (stream), stream_gone_cb, &gone);
  gst_cuda_stream_unref (stream);
  g_assert_false (gone);
  g_assert_finalize_object (sp);
  g_assert_true (gone);
  g_assert_true (current_context () == primary);

  ds_access_order_free (order);
  gst_object_unref (ctx);
}
#endif

static void
count_warning (const gchar    *log_domain,
               GLogLevelFlags  log_level,
               const gchar    *message,
               gpointer        user_data)
{
  g_test_message ("warning: %s", message);
  (*(guint *) user_data)++;
}

static void
test_restart (void)
{
  g_autoptr(GError) error = NULL;
  guint n_warnings = 0, handler;

  g_test_summary ("Pipelines that restart: contexts made and destroyed one after another "
                  "(often at the same address), each with a stream that had scratch given "
                  "back in its order; ds forgets each context in its dispose, so the fences "
                  "and events it kept never outlive it (70 rounds: past the point where "
                  "unused stream states are reaped)");
  DS_GST_TEST_REQUIRE_CUDA ();

  handler = g_log_set_handler ("Ds", G_LOG_LEVEL_WARNING | G_LOG_LEVEL_CRITICAL, count_warning, &n_warnings);
  for (guint round = 0; round < 70; round++)
    {
      GstCudaContext *ctx = gst_cuda_context_new (0);
      cudaStream_t stream = stream_in (ctx);
      DsScratchpad *sp = ds_gst_cuda_context_new_scratchpad (ctx, stream, &error);
      guint8 *pinned;
      gpointer device;

      g_assert_no_error (error);
      for (guint unit = 0; unit < 3; unit++)
        {
          pinned = ds_scratchpad_alloc (sp, DS_MEMORY_KIND_PINNED, 4096, 0, &error);
          g_assert_no_error (error);
          device = ds_scratchpad_alloc (sp, DS_MEMORY_KIND_DEVICE, 4096, 0, &error);
          g_assert_no_error (error);
          memset (pinned, (int) round, 4096);
          g_assert_true (gst_cuda_context_push (ctx));
          g_assert_cmpint (cudaMemcpyAsync (device, pinned, 4096, cudaMemcpyHostToDevice, stream), ==, cudaSuccess);
          g_assert_true (gst_cuda_context_pop (NULL));
          ds_scratchpad_release (sp);
        }
      g_assert_finalize_object (sp);
      g_assert_true (gst_cuda_context_push (ctx));
      g_assert_cmpint (cudaStreamSynchronize (stream), ==, cudaSuccess);
      g_assert_true (gst_cuda_context_pop (NULL));
      stream_destroy (ctx, stream);
      gst_object_unref (ctx);
    }
  g_log_remove_handler ("Ds", handler);
  g_assert_cmpuint (n_warnings, ==, 0);
}

/* First use from many threads at once -------------------------------------- */

#define N_RACERS 8

typedef struct
{
  GstCudaContext   *ctx;
  gint              ready;      /* atomic: racers at the start line */
  gint              go;         /* atomic */
  DsMemoryResource *seen[N_RACERS][DS_N_MEMORY_KINDS];
} Race;

typedef struct
{
  Race  *race;
  guint  index;
} Racer;

static gpointer
racer_main (gpointer data)
{
  Racer *r = data;
  Race *race = r->race;
  g_autoptr(GError) error = NULL;
  DsScratchpad *sp = NULL;
  gpointer device;

  g_atomic_int_inc (&race->ready);
  while (!g_atomic_int_get (&race->go))
    ;
  /* Half of them start with a scratchpad, half with the pools. */
  if (r->index % 2 == 0)
    {
      sp = ds_gst_cuda_context_new_scratchpad (race->ctx, NULL, &error);
      g_assert_no_error (error);
    }
  for (DsMemoryKind kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
    {
      race->seen[r->index][kind] = ds_gst_cuda_context_get_resource (race->ctx, kind, &error);
      g_assert_no_error (error);
    }
  if (r->index % 2 != 0)
    {
      sp = ds_gst_cuda_context_new_scratchpad (race->ctx, NULL, &error);
      g_assert_no_error (error);
    }
  device = ds_scratchpad_alloc (sp, DS_MEMORY_KIND_DEVICE, 4096, 0, &error);
  g_assert_no_error (error);
  g_assert_true (pointer_context (device) == gst_cuda_context_get_handle (race->ctx));
  g_object_unref (sp);

  return NULL;
}

static void
test_first_use_threads (void)
{
  g_test_summary ("A context's pools are made once, whichever of 8 threads asks first: every "
                  "thread sees the same pinned, device and managed pools (and the default host "
                  "resource), and its scratchpad's device memory is in the context (20 fresh "
                  "contexts; the pools are looked up without a lock once made)");
  DS_GST_TEST_REQUIRE_CUDA ();

  for (guint round = 0; round < 20; round++)
    {
      Race race = { gst_cuda_context_new (0), 0, 0, { { NULL, }, } };
      Racer racers[N_RACERS];
      GThread *threads[N_RACERS];
      DsPoolStats stats;

      g_assert_nonnull (race.ctx);
      for (guint i = 0; i < N_RACERS; i++)
        {
          racers[i] = (Racer) { &race, i };
          threads[i] = g_thread_new ("racer", racer_main, &racers[i]);
        }
      while (g_atomic_int_get (&race.ready) < N_RACERS)
        g_thread_yield ();
      g_atomic_int_set (&race.go, 1);
      for (guint i = 0; i < N_RACERS; i++)
        g_thread_join (threads[i]);

      for (DsMemoryKind kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
        {
          g_assert_nonnull (race.seen[0][kind]);
          for (guint i = 1; i < N_RACERS; i++)
            g_assert_true (race.seen[i][kind] == race.seen[0][kind]);
        }
      g_assert_true (DS_IS_POOL_RESOURCE (race.seen[0][DS_MEMORY_KIND_DEVICE]));
      /* One device pool served all eight: it holds what they took. */
      pool_stats (race.ctx, DS_MEMORY_KIND_DEVICE, &stats);
      g_assert_cmpuint (stats.cache_hits + stats.cache_misses, ==, N_RACERS);
      g_assert_cmpuint (stats.bytes_in_use, ==, 0);
      gst_object_unref (race.ctx);
    }
}

int
main (int    argc,
      char **argv)
{
  int status;

  ds_gst_test_init (&argc, &argv);

  ds_gst_test_add_func ("/DsGst/CudaContext/preconditions", test_preconditions);
  ds_gst_test_add_func ("/DsGst/CudaContext/gpu/alloc-in-context", test_alloc_in_context);
  ds_gst_test_add_func ("/DsGst/CudaContext/gpu/finalize-other-thread", test_finalize_other_thread);
  ds_gst_test_add_func ("/DsGst/CudaContext/gpu/reuse-steady", test_reuse_steady);
  ds_gst_test_add_func ("/DsGst/CudaContext/gpu/pools-go-with-context", test_pools_go_with_context);
  ds_gst_test_add_func ("/DsGst/CudaContext/gpu/wrong-stream", test_wrong_stream);
  ds_gst_test_add_func ("/DsGst/CudaContext/gpu/restart", test_restart);
  ds_gst_test_add_func ("/DsGst/CudaContext/gpu/first-use-threads", test_first_use_threads);
#if DS_GST_HAVE_CUDA_STREAM
  ds_gst_test_add_func ("/DsGst/CudaContext/stream-preconditions", test_stream_preconditions);
  ds_gst_test_add_func ("/DsGst/CudaContext/gpu/cuda-stream", test_cuda_stream);
#endif

  status = g_test_run ();
  gst_deinit ();
  return status;
}
