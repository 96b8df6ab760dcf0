/* test-scratchpad-gpu.c: DsScratchpad on a CUDA device
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Orders, release in stream order and finalization on other threads and
 * contexts, with real streams and memory. Every case needs a CUDA device
 * and skips without one; the uploads are in test-scratchpad-upload-gpu.c.
 */

#include "config.h"

#include <string.h>

#include "ds-test-fixtures.h"
#include "ds-test-resource.h"
#include "ds-test-utils.h"
#include "ds-cuda-private.h"
#include "ds-fence-private.h"
#include "ds-pool-resource-private.h"

#define KiB ((gsize) 1024)

#if HAVE_CUDA

static void
test_gpu_default_device_order (void)
{
  g_autoptr(GError) error = NULL;
  DsScratchpad *sp;
  const DsAccessOrder *order;
  int current = -1;
  gpointer p;

  DS_TEST_REQUIRE_CUDA ();

  g_test_summary ("A NULL device order becomes the legacy default stream of "
                  "the current device at the first GPU allocation");

  DS_TEST_CUDA_CHECK (cudaGetDevice (&current));
  sp = ds_scratchpad_new (NULL);
  g_assert_false (ds_access_order_is_device (ds_scratchpad_get_device_order (sp)));
  p = ds_scratchpad_alloc (sp, DS_MEMORY_KIND_DEVICE, 1000, 0, &error);
  g_assert_no_error (error);
  DS_TEST_CUDA_CHECK (cudaMemset (p, 0, 1000));
  order = ds_scratchpad_get_device_order (sp);
  g_assert_true (ds_access_order_is_device (order));
  g_assert_null (ds_access_order_get_stream (order));
  g_assert_cmpint (ds_access_order_get_device (order), ==, current);
  g_assert_finalize_object (sp);
}

static void
orders_to_upstream (gboolean own_dealloc_orders)
{
  DsTestResource *res[DS_N_MEMORY_KINDS];
  cudaStream_t s_dev, s_pin, s_man;
  g_autoptr(DsAccessOrder) dev = NULL;
  g_autoptr(DsAccessOrder) pin = NULL;
  g_autoptr(DsAccessOrder) man = NULL;
  g_autoptr(GError) error = NULL;
  DsScratchpad *sp;
  guint kind, i;

  s_dev = ds_test_stream_new ();
  s_pin = ds_test_stream_new ();
  s_man = ds_test_stream_new ();
  dev = ds_access_order_new_stream (s_dev, -1);
  pin = ds_access_order_new_stream (s_pin, -1);
  man = ds_access_order_new_stream (s_man, -1);

  for (kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
    res[kind] = ds_test_resource_new (kind, TRUE);

  sp = g_object_new (DS_TYPE_SCRATCHPAD,
                     "device-order", dev,
                     "pinned-dealloc-order", own_dealloc_orders ? pin : NULL,
                     "managed-dealloc-order", own_dealloc_orders ? man : NULL,
                     "host-resource", res[0], "pinned-resource", res[1],
                     "device-resource", res[2], "managed-resource", res[3],
                     NULL);

  for (kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
    for (i = 0; i < 3; i++)
      {
        g_assert_nonnull (ds_scratchpad_alloc (sp, kind, (64 * KiB) << i, 0, &error));
        g_assert_no_error (error);
      }

  for (kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
    for (i = 0; i < 3; i++)
      {
        DsTestCall call = ds_test_resource_get_call (res[kind], i);

        if (kind == DS_MEMORY_KIND_DEVICE)
          {
            g_assert_cmpint (call.op, ==, DS_TEST_OP_ALLOCATE_ASYNC);
            g_assert_true (ds_access_order_equal (&call.order, dev));
          }
        else if (call.op == DS_TEST_OP_ALLOCATE_ASYNC)
          {
            /* Filled by the CPU: allocated in host order. */
            g_assert_true (ds_access_order_is_host (&call.order));
          }
        else
          {
            g_assert_cmpint (call.op, ==, DS_TEST_OP_ALLOCATE);
          }
      }

  g_assert_finalize_object (sp);

  for (kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
    {
      const DsAccessOrder *expected = !own_dealloc_orders ? dev :
                                      kind == DS_MEMORY_KIND_PINNED ? pin :
                                      kind == DS_MEMORY_KIND_DEVICE ? dev : man;

      ds_test_resource_assert_clean (res[kind]);
      for (i = 0; i < 3; i++)
        {
          DsTestCall call = ds_test_resource_get_call (res[kind], 3 + i);

          g_assert_true (call.ptr == ds_test_resource_get_call (res[kind], 2 - i).ptr);
          if (kind == DS_MEMORY_KIND_HOST)
            {
              g_assert_cmpint (call.op, ==, DS_TEST_OP_DEALLOCATE);
              continue;
            }
          g_assert_cmpint (call.op, ==, DS_TEST_OP_DEALLOCATE_ASYNC);
          g_assert_true (ds_access_order_equal (&call.order, expected));
        }
      g_assert_finalize_object (res[kind]);
    }

  ds_test_stream_free (s_dev);
  ds_test_stream_free (s_pin);
  ds_test_stream_free (s_man);
}

static void
test_gpu_orders_to_upstream (void)
{
  DS_TEST_REQUIRE_CUDA ();

  g_test_summary ("Device memory is allocated in the device order; pinned "
                  "and managed in host order; on release a stream-ordered "
                  "upstream gets deallocate_async in device-order, "
                  "pinned-dealloc-order and managed-dealloc-order");

  orders_to_upstream (TRUE);
}

static void
test_gpu_default_dealloc_orders (void)
{
  DS_TEST_REQUIRE_CUDA ();

  g_test_summary ("Without pinned/managed dealloc orders, pinned and managed "
                  "blocks go back in the device order");

  orders_to_upstream (FALSE);
}

static void
sync_upstream_waits (gboolean use_release)
{
  DsTestResource *res[DS_N_MEMORY_KINDS];
  g_autoptr(DsAccessOrder) order = NULL;
  g_autoptr(GError) error = NULL;
  cudaStream_t s;
  DsScratchpad *sp;
  gint slept = 0;
  guint kind;

  s = ds_test_stream_new ();
  order = ds_access_order_new_stream (s, -1);
  for (kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
    {
      res[kind] = ds_test_resource_new (kind, FALSE);
      ds_test_resource_set_probe (res[kind], &slept);
    }

  sp = g_object_new (DS_TYPE_SCRATCHPAD, "device-order", order,
                     "host-resource", res[0], "pinned-resource", res[1],
                     "device-resource", res[2], "managed-resource", res[3],
                     NULL);
  for (kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
    {
      g_assert_nonnull (ds_scratchpad_alloc (sp, kind, 100, 0, &error));
      g_assert_nonnull (ds_scratchpad_alloc (sp, kind, 100 * KiB, 0, &error));
      g_assert_no_error (error);
    }

  /* The stream is busy for 200 ms after the release point. */
  ds_test_stream_sleep (s, 200, &slept);
  if (use_release)
    ds_scratchpad_release (sp);
  g_assert_finalize_object (sp);

  /* Host memory may go back at once; every other block only after the
   * stream got past the sleep. */
  for (kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
    {
      guint i, n;

      g_assert_true (ds_test_wait_until (ds_test_resource_count_deallocs (res[kind]) == 2, 5000));
      n = ds_test_resource_get_n_calls (res[kind]);
      for (i = 0; i < n; i++)
        {
          DsTestCall call = ds_test_resource_get_call (res[kind], i);

          if (kind != DS_MEMORY_KIND_HOST && call.op == DS_TEST_OP_DEALLOCATE)
            g_assert_cmpint (call.probe, ==, 1);
        }
      ds_test_resource_assert_clean (res[kind]);
      g_assert_finalize_object (res[kind]);
    }

  ds_test_stream_free (s);
}

static void
test_gpu_sync_upstream_finalize (void)
{
  DS_TEST_REQUIRE_CUDA ();

  g_test_summary ("DALI's gap closed: an upstream that is not stream-ordered "
                  "gets no block back (finalize) before the busy device "
                  "stream has passed the release point");

  sync_upstream_waits (FALSE);
}

static void
test_gpu_sync_upstream_release (void)
{
  DS_TEST_REQUIRE_CUDA ();

  g_test_summary ("DALI's gap closed, through ds_scratchpad_release");

  sync_upstream_waits (TRUE);
}

static void
test_gpu_pinned_in_flight (void)
{
  const gsize size = 8 << 20;
  cudaStream_t s, other;
  g_autoptr(DsAccessOrder) order = NULL;
  g_autoptr(DsAccessOrder) other_order = NULL;
  g_autoptr(GError) error = NULL;
  DsScratchpad *sp;
  guint8 *pinned, *device = NULL, *out = NULL;
  DsTestGate *gate;
  gint copied = 0;
  guint i, n_overlaps_early = 0, n_allocs = 0;

  DS_TEST_REQUIRE_CUDA ();

  g_test_summary ("Pinned scratch read by an in-flight cudaMemcpyAsync when "
                  "its scratchpad is finalized: no new pinned allocation "
                  "overlaps it until the copy is done, and the data arrives "
                  "intact");

  s = ds_test_stream_new ();
  other = ds_test_stream_new ();
  order = ds_access_order_new_stream (s, -1);
  other_order = ds_access_order_new_stream (other, -1);
  DS_TEST_CUDA_CHECK (cudaMalloc ((void **) &device, size));
  DS_TEST_CUDA_CHECK (cudaMallocHost ((void **) &out, size));

  sp = ds_scratchpad_new (order);
  pinned = ds_scratchpad_alloc (sp, DS_MEMORY_KIND_PINNED, size, 0, &error);
  g_assert_no_error (error);
  ds_test_fill_pattern (pinned, size, 7);

  /* s: wait at a gate, then read the pinned scratch, then mark the copy
   * done. The gate stays closed until the checks below are made. */
  gate = ds_test_gate_new (s);
  DS_TEST_CUDA_CHECK (cudaMemcpyAsync (device, pinned, size, cudaMemcpyHostToDevice, s));
  ds_test_stream_set_flag (s, &copied);

  g_assert_finalize_object (sp);

  /* Others take pinned scratch and scribble on it at once. */
  for (i = 0; i < 8; i++)
    {
      const DsAccessOrder *orders[] = { other_order, NULL };
      DsScratchpad *sp2 = ds_scratchpad_new (orders[i % 2]);
      gsize sizes[] = { size, 64 << 10, size / 2, 2 * size };
      guint j;

      for (j = 0; j < G_N_ELEMENTS (sizes); j++)
        {
          guint8 *p = ds_scratchpad_alloc (sp2, DS_MEMORY_KIND_PINNED, sizes[j], 0, &error);

          g_assert_no_error (error);
          n_allocs++;
          if (ds_test_ranges_overlap (p, sizes[j], pinned, size) &&
              !g_atomic_int_get (&copied))
            n_overlaps_early++;
          memset (p, 0xee, sizes[j]);
        }
      g_assert_finalize_object (sp2);
    }

  g_assert_cmpuint (n_overlaps_early, ==, 0);
  DS_TEST_ASSERT_GATE_HELD (gate);
  g_assert_cmpint (g_atomic_int_get (&copied), ==, 0);

  ds_test_gate_open (gate);
  DS_TEST_CUDA_CHECK (cudaStreamSynchronize (s));
  g_assert_cmpint (g_atomic_int_get (&copied), ==, 1);
  ds_test_gate_free (gate);
  DS_TEST_CUDA_CHECK (cudaMemcpy (out, device, size, cudaMemcpyDeviceToHost));
  ds_test_check_pattern (out, size, 7);

  DS_TEST_CUDA_CHECK (cudaFree (device));
  DS_TEST_CUDA_CHECK (cudaFreeHost (out));
  ds_test_stream_free (s);
  ds_test_stream_free (other);
}

static void
test_gpu_device_cross_stream (void)
{
  const gsize size = 8 << 20;
  cudaStream_t a, b;
  g_autoptr(DsAccessOrder) oa = NULL;
  g_autoptr(DsAccessOrder) ob = NULL;
  g_autoptr(GError) error = NULL;
  DsScratchpad *sp;
  guint8 *src = NULL, *out = NULL, *scratch;
  DsTestGate *gate;
  guint i;

  DS_TEST_REQUIRE_CUDA ();

  g_test_summary ("Device scratch still in use on stream A when its "
                  "scratchpad dies is not clobbered by a scratchpad on "
                  "stream B");

  a = ds_test_stream_new ();
  b = ds_test_stream_new ();
  oa = ds_access_order_new_stream (a, -1);
  ob = ds_access_order_new_stream (b, -1);
  DS_TEST_CUDA_CHECK (cudaMallocHost ((void **) &src, size));
  DS_TEST_CUDA_CHECK (cudaMallocHost ((void **) &out, size));
  ds_test_fill_pattern (src, size, 3);
  memset (out, 0, size);

  sp = ds_scratchpad_new (oa);
  scratch = ds_scratchpad_alloc (sp, DS_MEMORY_KIND_DEVICE, size, 0, &error);
  g_assert_no_error (error);

  /* A: fill the scratch, wait at a gate, then read it back. The gate
   * opens only after B has done its worst, however slowly this runs. */
  DS_TEST_CUDA_CHECK (cudaMemcpyAsync (scratch, src, size, cudaMemcpyHostToDevice, a));
  gate = ds_test_gate_new (a);
  DS_TEST_CUDA_CHECK (cudaMemcpyAsync (out, scratch, size, cudaMemcpyDeviceToHost, a));

  g_assert_finalize_object (sp);

  /* B: new scratchpads overwrite whatever device scratch they get. */
  for (i = 0; i < 10; i++)
    {
      DsScratchpad *sp2 = ds_scratchpad_new (ob);
      guint8 *p = ds_scratchpad_alloc (sp2, DS_MEMORY_KIND_DEVICE, size, 0, &error);

      g_assert_no_error (error);
      DS_TEST_CUDA_CHECK (cudaMemsetAsync (p, 0xee, size, b));
      p = ds_scratchpad_alloc (sp2, DS_MEMORY_KIND_DEVICE, size / 4, 0, &error);
      g_assert_no_error (error);
      DS_TEST_CUDA_CHECK (cudaMemsetAsync (p, 0xdd, size / 4, b));
      g_assert_finalize_object (sp2);
    }
  DS_TEST_ASSERT_GATE_HELD (gate);

  ds_test_gate_open (gate);
  DS_TEST_CUDA_CHECK (cudaStreamSynchronize (a));
  ds_test_gate_free (gate);
  DS_TEST_CUDA_CHECK (cudaStreamSynchronize (b));
  ds_test_check_pattern (out, size, 3);

  DS_TEST_CUDA_CHECK (cudaFreeHost (src));
  DS_TEST_CUDA_CHECK (cudaFreeHost (out));
  ds_test_stream_free (a);
  ds_test_stream_free (b);
}

static void
test_gpu_managed (void)
{
  const gsize size = 4 << 20;
  cudaStream_t s;
  g_autoptr(DsAccessOrder) order = NULL;
  g_autoptr(GError) error = NULL;
  DsScratchpad *sp;
  guint8 *managed, *managed2, *device, *out = NULL;

  DS_TEST_REQUIRE_CUDA ();

  g_test_summary ("Managed scratch written by the CPU is read by the GPU, "
                  "and written by the GPU is read by the CPU");

  s = ds_test_stream_new ();
  order = ds_access_order_new_stream (s, -1);
  DS_TEST_CUDA_CHECK (cudaMallocHost ((void **) &out, size));

  sp = ds_scratchpad_new (order);
  managed = ds_scratchpad_alloc (sp, DS_MEMORY_KIND_MANAGED, size, 0, &error);
  g_assert_no_error (error);
  device = ds_scratchpad_alloc (sp, DS_MEMORY_KIND_DEVICE, size, 0, &error);
  g_assert_no_error (error);

  ds_test_fill_pattern (managed, size, 11);
  DS_TEST_CUDA_CHECK (cudaMemcpyAsync (device, managed, size, cudaMemcpyDefault, s));
  DS_TEST_CUDA_CHECK (cudaMemcpyAsync (out, device, size, cudaMemcpyDeviceToHost, s));
  DS_TEST_CUDA_CHECK (cudaStreamSynchronize (s));
  ds_test_check_pattern (out, size, 11);

  managed2 = ds_scratchpad_alloc (sp, DS_MEMORY_KIND_MANAGED, size, 0, &error);
  g_assert_no_error (error);
  DS_TEST_CUDA_CHECK (cudaMemsetAsync (managed2, 0x3c, size, s));
  DS_TEST_CUDA_CHECK (cudaStreamSynchronize (s));
  {
    gsize i;

    for (i = 0; i < size; i++)
      g_assert_cmpint (managed2[i], ==, 0x3c);
  }

  g_assert_finalize_object (sp);
  DS_TEST_CUDA_CHECK (cudaFreeHost (out));
  ds_test_stream_free (s);
}

typedef struct
{
  DsScratchpad *sp;
  gboolean      use_own_context;
  gboolean      context_restored;
} ThreadData;

/* Driver functions, asked for by version: cuCtxCreate at 4.0, which is
 * cuCtxCreate_v2 (ctx, flags, dev) — at 12.0 the driver hands out
 * cuCtxCreate_v3, which takes exec-affinity parameters first — and the
 * others at 12.0. */
typedef int (*CuDeviceGetFn) (int *device, int ordinal);
typedef int (*CuCtxCreateFn) (gpointer *ctx, unsigned int flags, int device);
typedef int (*CuCtxDestroyFn) (gpointer ctx);
typedef int (*CuCtxGetCurrentFn) (gpointer *ctx);
typedef int (*CuCtxSetCurrentFn) (gpointer ctx);

static gpointer
driver_fn (const char *name)
{
  void *fn = NULL;
  enum cudaDriverEntryPointQueryResult status;
  unsigned int version = g_str_equal (name, "cuCtxCreate") ? 4000 : 12000;

  DS_TEST_CUDA_CHECK (cudaGetDriverEntryPointByVersion (name, &fn, version, cudaEnableDefault, &status));
  g_assert_cmpint (status, ==, cudaDriverEntryPointSuccess);
  g_assert_nonnull (fn);
  return fn;
}

static gpointer
finalize_thread (gpointer user_data)
{
  ThreadData *data = user_data;
  gpointer ctx = NULL, current = NULL;
  int current_device = -1;

  if (data->use_own_context)
    {
      /* A non-primary context current on this thread, as a GStreamer
       * streaming thread has. */
      CuCtxCreateFn create = driver_fn ("cuCtxCreate");
      CuDeviceGetFn device_get = driver_fn ("cuDeviceGet");
      int dev = 0;

      g_assert_cmpint (device_get (&dev, 0), ==, 0);
      g_assert_cmpint (create (&ctx, 0, dev), ==, 0);
    }

  g_assert_finalize_object (data->sp);

  if (data->use_own_context)
    {
      CuCtxGetCurrentFn get_current = driver_fn ("cuCtxGetCurrent");
      CuCtxDestroyFn destroy = driver_fn ("cuCtxDestroy");

      g_assert_cmpint (get_current (&current), ==, 0);
      data->context_restored = current == ctx;
      g_assert_cmpint (destroy (ctx), ==, 0);
    }
  else
    {
      DS_TEST_CUDA_CHECK (cudaGetDevice (&current_device));
      data->context_restored = current_device == 0;
    }

  return NULL;
}

static void
finalize_on_thread (gboolean use_own_context)
{
  const gsize size = 4 << 20;
  cudaStream_t s;
  g_autoptr(DsAccessOrder) order = NULL;
  g_autoptr(GError) error = NULL;
  ThreadData data = { NULL, use_own_context, FALSE };
  GThread *thread;
  guint8 *dev, *pinned, *out = NULL;
  gint slept = 0;
  guint kind;

  s = ds_test_stream_new ();
  order = ds_access_order_new_stream (s, -1);
  DS_TEST_CUDA_CHECK (cudaMallocHost ((void **) &out, size));

  data.sp = ds_scratchpad_new (order);
  pinned = ds_scratchpad_alloc (data.sp, DS_MEMORY_KIND_PINNED, size, 0, &error);
  g_assert_no_error (error);
  dev = ds_scratchpad_alloc (data.sp, DS_MEMORY_KIND_DEVICE, size, 0, &error);
  g_assert_no_error (error);
  g_assert_nonnull (ds_scratchpad_alloc (data.sp, DS_MEMORY_KIND_MANAGED, 1000, 0, &error));
  g_assert_nonnull (ds_scratchpad_alloc (data.sp, DS_MEMORY_KIND_HOST, 1000, 0, &error));
  ds_test_fill_pattern (pinned, size, 13);

  ds_test_stream_sleep (s, 200, &slept);
  DS_TEST_CUDA_CHECK (cudaMemcpyAsync (dev, pinned, size, cudaMemcpyHostToDevice, s));
  DS_TEST_CUDA_CHECK (cudaMemcpyAsync (out, dev, size, cudaMemcpyDeviceToHost, s));

  thread = g_thread_new ("finalizer", finalize_thread, &data);
  g_thread_join (thread);
  g_assert_true (data.context_restored);

  /* Memory is still handed out correctly on this thread. */
  for (kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
    {
      DsScratchpad *sp = ds_scratchpad_new (order);
      guint8 *p = ds_scratchpad_alloc (sp, kind, size, 0, &error);

      g_assert_no_error (error);
      if (kind == DS_MEMORY_KIND_HOST)
        memset (p, 0xee, size);
      else
        DS_TEST_CUDA_CHECK (cudaMemsetAsync (p, 0xee, size, s));
      g_assert_finalize_object (sp);
    }

  DS_TEST_CUDA_CHECK (cudaStreamSynchronize (s));
  ds_test_check_pattern (out, size, 13);

  DS_TEST_CUDA_CHECK (cudaFreeHost (out));
  ds_test_stream_free (s);
}

static void
keep_blocks_units (DsScratchpad *sp,
                   cudaStream_t  s,
                   gboolean      pinned_kept)
{
  enum { N_UNITS = 24 };
  const gsize dev_size = 256 * KiB, pin_size = 64 * KiB;
  g_autoptr(GError) error = NULL;
  DsMemoryResource *dev_pool;
  DsPoolStats before, after;
  guint8 *out = NULL, *first_dev = NULL, *first_pin = NULL;

  DS_TEST_CUDA_CHECK (cudaMallocHost ((void **) &out, N_UNITS * pin_size));
  dev_pool = ds_memory_resource_get_default (DS_MEMORY_KIND_DEVICE, -1, &error);
  g_assert_no_error (error);
  g_assert_true (DS_IS_POOL_RESOURCE (dev_pool));

  for (guint unit = 0; unit < N_UNITS; unit++)
    {
      guint8 *pin = ds_scratchpad_alloc (sp, DS_MEMORY_KIND_PINNED, pin_size, 0, &error);
      guint8 *dev;

      g_assert_no_error (error);
      if (unit == 2)
        ds_pool_resource_get_stats (DS_POOL_RESOURCE (dev_pool), &before);
      dev = ds_scratchpad_alloc (sp, DS_MEMORY_KIND_DEVICE, dev_size, 0, &error);
      g_assert_no_error (error);
      if (unit == 1)
        {
          first_dev = dev;
          first_pin = pin;
        }
      else if (unit > 1)
        {
          g_assert_true (dev == first_dev);
          if (pinned_kept)
            g_assert_true (pin == first_pin);
        }

      /* Host → pinned → device scratch → out, all queued on s; the next
       * unit overwrites the same device scratch, behind this unit's work
       * in stream order. The last copy waits a little, so that the next
       * units are queued while it is in flight. */
      ds_test_fill_pattern (pin, pin_size, unit + 1);
      DS_TEST_CUDA_CHECK (cudaMemsetAsync (dev, 0xab, dev_size, s));
      DS_TEST_CUDA_CHECK (cudaMemcpyAsync (dev + KiB, pin, pin_size, cudaMemcpyHostToDevice, s));
      if (unit % 8 == 0)
        ds_test_stream_sleep (s, 5, NULL);
      DS_TEST_CUDA_CHECK (cudaMemcpyAsync (out + unit * pin_size, dev + KiB, pin_size,
                                           cudaMemcpyDeviceToHost, s));
      /* A host deallocation order says the host order holds at the
       * release: nothing queued reads the pinned memory any more. */
      if (pinned_kept)
        DS_TEST_CUDA_CHECK (cudaStreamSynchronize (s));
      ds_scratchpad_release (sp);

      /* Unit 0's blocks fit it exactly; the learned first block is
       * larger (an eighth more, for padding, rounded to a doubling), so
       * they go back, and unit 1 takes the block that is kept from then
       * on. */
      if (unit > 0)
        {
          g_assert_cmpuint (ds_scratchpad_get_n_blocks (sp, DS_MEMORY_KIND_DEVICE), ==, 1);
          g_assert_cmpuint (ds_scratchpad_get_n_blocks (sp, DS_MEMORY_KIND_PINNED), ==,
                            pinned_kept ? 1 : 0);
        }
      g_assert_cmpuint (ds_scratchpad_get_allocated (sp, DS_MEMORY_KIND_DEVICE), ==, 0);
    }
  ds_pool_resource_get_stats (DS_POOL_RESOURCE (dev_pool), &after);

  DS_TEST_CUDA_CHECK (cudaStreamSynchronize (s));
  for (guint unit = 0; unit < N_UNITS; unit++)
    ds_test_check_pattern (out + unit * pin_size, pin_size, unit + 1);

  /* The device pool saw no request from this scratchpad after unit 1
   * (nobody else uses it in this program meanwhile). */
  g_assert_cmpuint (after.cache_hits + after.cache_misses, ==,
                    before.cache_hits + before.cache_misses);
  DS_TEST_CUDA_CHECK (cudaFreeHost (out));
}

typedef struct
{
  DsScratchpad *sp;
  cudaStream_t  s;
  gboolean      pinned_kept;
} KeepBlocksUnits;

static gpointer
keep_blocks_units_thread (gpointer data)
{
  KeepBlocksUnits *k = data;

  DS_TEST_CUDA_CHECK (cudaSetDevice (0));
  keep_blocks_units (k->sp, k->s, k->pinned_kept);

  return NULL;
}

/* In a thread of its own, so that the scratchpad learns its units from
 * nothing: a new scratchpad starts from what the thread's last released
 * one took (the other tests' units here), and a block kept from larger
 * units would go back as the hint shrinks. */
static void
keep_blocks_units_fresh (DsScratchpad *sp,
                         cudaStream_t  s,
                         gboolean      pinned_kept)
{
  KeepBlocksUnits k = { sp, s, pinned_kept };

  g_thread_join (g_thread_new ("keep-blocks", keep_blocks_units_thread, &k));
}

static void
test_gpu_keep_blocks (void)
{
  cudaStream_t s;
  g_autoptr(DsAccessOrder) order = NULL;
  g_autoptr(DsAccessOrder) host = NULL;
  DsScratchpad *sp;

  DS_TEST_REQUIRE_CUDA ();

  g_test_summary ("keep-blocks on a stream: each unit takes the same device "
                  "block again, with no pool request, and stream order keeps "
                  "every unit's data intact while earlier units' copies are "
                  "still in flight; pinned memory given back on the stream is "
                  "not kept, pinned memory given back in host order is; "
                  "finalizing gives every kept block back");

  s = ds_test_stream_new ();
  order = ds_access_order_new_stream (s, -1);
  host = ds_access_order_new_host ();

  sp = ds_scratchpad_new (order);
  ds_scratchpad_set_keep_blocks (sp, TRUE);
  keep_blocks_units_fresh (sp, s, FALSE);
  g_assert_finalize_object (sp);

  sp = g_object_new (DS_TYPE_SCRATCHPAD, "device-order", order,
                     "pinned-dealloc-order", host, "keep-blocks", TRUE, NULL);
  keep_blocks_units_fresh (sp, s, TRUE);
  g_assert_finalize_object (sp);

  DS_TEST_CUDA_CHECK (cudaStreamSynchronize (s));
  ds_test_stream_free (s);
}

static void
test_gpu_finalize_other_thread (void)
{
  DS_TEST_REQUIRE_CUDA ();

  g_test_summary ("A scratchpad finalized on another thread gives its "
                  "memory back in stream order");

  finalize_on_thread (FALSE);
}

static void
test_gpu_finalize_other_context (void)
{
  DS_TEST_REQUIRE_CUDA ();

  g_test_summary ("A scratchpad finalized on a thread that has another "
                  "(non-primary) CUDA context current switches to its own "
                  "context and puts the thread's back");

  finalize_on_thread (TRUE);
}

/* One unit of work of test_gpu_own_pools (): a pinned staging buffer the
 * host fills, copied to a device buffer on the stream, and a managed one
 * the host writes too; waited for before the release, so that the lazy
 * checks find the stream idle (one query each, no event). */
static void
own_pools_unit (DsScratchpad *sp,
                cudaStream_t  s,
                guint         i)
{
  g_autoptr(GError) error = NULL;
  guint8 *pinned, *device, *managed;

  pinned = ds_scratchpad_alloc (sp, DS_MEMORY_KIND_PINNED, 64 * KiB, 0, &error);
  g_assert_no_error (error);
  device = ds_scratchpad_alloc (sp, DS_MEMORY_KIND_DEVICE, 1024 * KiB, 0, &error);
  g_assert_no_error (error);
  managed = ds_scratchpad_alloc (sp, DS_MEMORY_KIND_MANAGED, 64 * KiB, 0, &error);
  g_assert_no_error (error);
  memset (pinned, (int) (i & 0xff), 64 * KiB);
  managed[0] = (guint8) i;
  DS_TEST_CUDA_CHECK (cudaMemcpyAsync (device, pinned, 64 * KiB, cudaMemcpyHostToDevice, s));
  DS_TEST_CUDA_CHECK (cudaStreamSynchronize (s));
  ds_scratchpad_release (sp);
}

/* What 400 units of test_gpu_own_pools () asked of CUDA: from
 * own_pools_count_start () to own_pools_count_check (). */
typedef struct
{
  DsMemoryResource **pools;
  DsPoolStats        before[3];
  guint64            n_driver;
} OwnPoolsCount;

static void
own_pools_count_start (OwnPoolsCount     *c,
                       DsMemoryResource **pools)
{
  c->pools = pools;
  for (guint k = 0; k < 3; k++)
    c->before[k] = ds_test_pool_stats (pools[k]);
  ds_test_cuda_spy_reset ();
  c->n_driver = ds_cuda_get_n_driver_calls ();
}

/* The runtime sees the test's copies and waits only; the driver the lazy
 * checks only, and there are some (pinned and managed memory goes back on
 * the stream); nothing comes from upstream, no event is recorded. */
static void
own_pools_count_check (OwnPoolsCount *c,
                       const char    *what,
                       gboolean       spy)
{
  guint64 n_driver = ds_cuda_get_n_driver_calls () - c->n_driver;
  guint n_calls = ds_test_cuda_spy_get_count ();
  guint64 queries = 0, upstream = 0;

  for (guint k = 0; k < 3; k++)
    {
      DsPoolStats after = ds_test_pool_stats (c->pools[k]);

      queries += after.event_queries - c->before[k].event_queries;
      upstream += after.upstream_allocations - c->before[k].upstream_allocations;
      g_assert_cmpuint (after.events_recorded, ==, c->before[k].events_recorded);
    }

  g_test_message ("400 %s: %" G_GUINT64_FORMAT " driver calls, %" G_GUINT64_FORMAT
                  " completion checks, %u runtime calls (800 of them the copies and waits)",
                  what, n_driver, queries, n_calls);
  if (spy)
    g_assert_cmpuint (n_calls, ==, 800);
  g_assert_cmpuint (queries, >, 0);
  g_assert_cmpuint (queries, <=, 400 / 4);
  g_assert_cmpuint (n_driver, ==, queries);
  g_assert_cmpuint (upstream, ==, 0);
}

/* A scratchpad over @pools, as ds-gst makes one per buffer. */
static DsScratchpad *
own_pools_scratchpad_new (const DsAccessOrder *order,
                          DsMemoryResource   **pools)
{
  DsScratchpad *sp = ds_scratchpad_new (order);

  ds_scratchpad_set_resource (sp, DS_MEMORY_KIND_PINNED, pools[0]);
  ds_scratchpad_set_resource (sp, DS_MEMORY_KIND_DEVICE, pools[1]);
  ds_scratchpad_set_resource (sp, DS_MEMORY_KIND_MANAGED, pools[2]);
  return sp;
}

static void
test_gpu_own_pools (void)
{
  g_autoptr(DsMemoryResource) pinned_up = NULL;
  g_autoptr(DsMemoryResource) device_up = NULL;
  g_autoptr(DsMemoryResource) managed_up = NULL;
  DsMemoryResource *pools[3];
  g_autoptr(DsAccessOrder) order = NULL;
  OwnPoolsCount count;
  guint i, k;
  gboolean spy;
  cudaStream_t s;
  DsScratchpad *sp;

  DS_TEST_REQUIRE_CUDA ();
  ds_fence_set_check_every_for_testing (0);

  g_test_summary ("A scratchpad over pools of its own (as ds-gst makes them "
                  "for a GstCudaContext) stops entering the device order's "
                  "context once the pools are bound to it: a unit of pinned, "
                  "device and managed memory, in a reused scratchpad or a new "
                  "one, then makes no CUDA call but the lazy completion checks "
                  "(one driver call each)");

  DS_TEST_CUDA_CHECK (cudaSetDevice (0));
  s = ds_test_stream_new ();
  order = ds_access_order_new_stream (s, 0);
  pinned_up = ds_pinned_memory_resource_new ();
  device_up = ds_device_memory_resource_new (0);
  managed_up = ds_managed_memory_resource_new (0);
  pools[0] = ds_pool_resource_new (pinned_up);
  pools[1] = ds_pool_resource_new (device_up);
  pools[2] = ds_pool_resource_new (managed_up);
  /* Through the properties here, ds_scratchpad_set_resource () below. */
  sp = g_object_new (DS_TYPE_SCRATCHPAD, "device-order", order,
                     "pinned-resource", pools[0], "device-resource", pools[1],
                     "managed-resource", pools[2], NULL);

  /* Warm: the pools bind to the order's device and context at their first
   * upstream allocation, and hold what the units need. */
  for (i = 0; i < 64; i++)
    own_pools_unit (sp, s, i);
  DS_TEST_CUDA_CHECK (cudaStreamSynchronize (s));
  for (k = 0; k < 3; k++)
    g_assert_cmpint (ds_fenced_resource_get_binding (pools[k], ds_access_order_get_device (order),
                                                   order->context), ==, DS_SCOPE_BINDING_SAME);

  spy = ds_test_cuda_spy_works ();
  own_pools_count_start (&count, pools);
  for (i = 0; i < 400; i++)
    own_pools_unit (sp, s, i);
  own_pools_count_check (&count, "units", spy);
  g_assert_finalize_object (sp);

  /* A new scratchpad per unit over the same pools (ds-gst's per buffer):
   * they are bound already, so not even the first block of a kind enters
   * the order's context. Warm first: a new scratchpad's blocks have
   * their initial sizes, not those a reused one learned. */
  for (i = 0; i < 464; i++)
    {
      if (i == 64)
        {
          DS_TEST_CUDA_CHECK (cudaStreamSynchronize (s));
          own_pools_count_start (&count, pools);
        }
      sp = own_pools_scratchpad_new (order, pools);
      own_pools_unit (sp, s, i);
      g_assert_finalize_object (sp);
    }
  own_pools_count_check (&count, "new scratchpads", spy);

  DS_TEST_CUDA_CHECK (cudaStreamSynchronize (s));
  for (k = 0; k < 3; k++)
    g_assert_finalize_object (pools[k]);
  ds_test_stream_free (s);
  ds_test_pool_reset_policies ();
}

#endif /* HAVE_CUDA */

int
main (int    argc,
      char **argv)
{
  ds_test_init (&argc, &argv);

  ds_test_add_gpu_func ("/Ds/Scratchpad/gpu/default-device-order", test_gpu_default_device_order);
  ds_test_add_gpu_func ("/Ds/Scratchpad/gpu/orders-to-upstream", test_gpu_orders_to_upstream);
  ds_test_add_gpu_func ("/Ds/Scratchpad/gpu/default-dealloc-orders", test_gpu_default_dealloc_orders);
  ds_test_add_gpu_func ("/Ds/Scratchpad/gpu/sync-upstream-waits/finalize", test_gpu_sync_upstream_finalize);
  ds_test_add_gpu_func ("/Ds/Scratchpad/gpu/sync-upstream-waits/release", test_gpu_sync_upstream_release);
  ds_test_add_gpu_func ("/Ds/Scratchpad/gpu/pinned-in-flight", test_gpu_pinned_in_flight);
  ds_test_add_gpu_func ("/Ds/Scratchpad/gpu/device-cross-stream", test_gpu_device_cross_stream);
  ds_test_add_gpu_func ("/Ds/Scratchpad/gpu/managed", test_gpu_managed);
  ds_test_add_gpu_func ("/Ds/Scratchpad/gpu/keep-blocks", test_gpu_keep_blocks);
  ds_test_add_gpu_func ("/Ds/Scratchpad/gpu/finalize-other-thread", test_gpu_finalize_other_thread);
  ds_test_add_gpu_func ("/Ds/Scratchpad/gpu/finalize-other-context", test_gpu_finalize_other_context);
  ds_test_add_gpu_func ("/Ds/Scratchpad/gpu/own-pools", test_gpu_own_pools);

  return g_test_run ();
}
