/* test-access-order-gpu.c: DsAccessOrder on a CUDA device
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Real streams: device resolution, stream identity, and waits between
 * streams and the host. Every case needs a CUDA device and skips without
 * one.
 */

#include "config.h"

#include <string.h>

#include "ds-test-utils.h"

#if HAVE_CUDA

#include "ds-access-order-private.h"
#include "ds-cuda-private.h"

static void
test_gpu_stream_order (void)
{
  cudaStream_t s;
  int current = -1;
  g_autoptr(DsAccessOrder) a = NULL;
  g_autoptr(DsAccessOrder) b = NULL;
  g_autoptr(DsAccessOrder) def = NULL;
  g_autoptr(GError) error = NULL;

  DS_TEST_REQUIRE_CUDA ();

  g_test_summary ("On a GPU, device -1 resolves to the stream's (or the "
                  "current) device, and synchronize drains the stream");

  DS_TEST_CUDA_CHECK (cudaGetDevice (&current));
  s = ds_test_stream_new ();

  a = ds_access_order_new_stream (s, -1);
  g_assert_cmpint (ds_access_order_get_device (a), ==, current);
  g_assert_true (ds_access_order_get_stream (a) == (gpointer) s);
  b = ds_access_order_new_for_handle ((guint64) (guintptr) s, current);
  g_assert_true (ds_access_order_equal (a, b));

  def = ds_access_order_new_stream (NULL, -1);
  g_assert_cmpint (ds_access_order_get_device (def), ==, current);
  g_assert_null (ds_access_order_get_stream (def));
  g_assert_false (ds_access_order_equal (a, def));

  {
    gint done = 0;

    ds_test_stream_sleep (s, 100, &done);
    g_assert_true (ds_access_order_synchronize (a, &error));
    g_assert_no_error (error);
    g_assert_cmpint (g_atomic_int_get (&done), ==, 1);
  }

  ds_test_stream_free (s);
}

static void
test_gpu_stream_reuse (void)
{
  cudaStream_t s1, s2 = NULL;
  g_autoptr(DsAccessOrder) a = NULL;
  g_autoptr(DsAccessOrder) b = NULL;
  guint i;

  DS_TEST_REQUIRE_CUDA ();

  g_test_summary ("A destroyed stream whose handle is reused by a new "
                  "stream is not the same order (DALI PR 5348)");

  s1 = ds_test_stream_new ();
  a = ds_access_order_new_stream (s1, -1);
  DS_TEST_CUDA_CHECK (cudaStreamDestroy (s1));

  /* The runtime usually hands the same handle out again soon. */
  for (i = 0; i < 16; i++)
    {
      s2 = ds_test_stream_new ();
      if (s2 == s1)
        break;
      ds_test_stream_free (s2);
      s2 = NULL;
    }

  if (s2 == NULL)
    {
      g_test_skip ("the CUDA runtime did not reuse the stream handle");
      return;
    }

  b = ds_access_order_new_stream (s2, -1);
  g_assert_false (ds_access_order_equal (a, b));
  ds_test_stream_free (s2);
}

static void
check_bytes (const guint8 *data,
             gsize         size,
             guint8        expected)
{
  gsize i;

  for (i = 0; i < size; i++)
    if (data[i] != expected)
      g_error ("byte %" G_GSIZE_FORMAT " is 0x%02x, expected 0x%02x",
               i, data[i], expected);
}

static void
wait_device_device (gboolean default_stream_waits)
{
  const gsize size = 4 << 20;
  cudaStream_t a, b;
  guint8 *buf = NULL, *out = NULL;
  DsTestGate *gate;
  g_autoptr(DsAccessOrder) oa = NULL;
  g_autoptr(DsAccessOrder) ob = NULL;
  g_autoptr(GError) error = NULL;

  a = ds_test_stream_new ();
  b = default_stream_waits ? NULL : ds_test_stream_new ();

  DS_TEST_CUDA_CHECK (cudaMalloc ((void **) &buf, size));
  DS_TEST_CUDA_CHECK (cudaMemset (buf, 0, size));
  DS_TEST_CUDA_CHECK (cudaMallocHost ((void **) &out, size));
  memset (out, 0xff, size);
  DS_TEST_CUDA_CHECK (cudaDeviceSynchronize ());

  /* A: wait at a gate, then write 0x5a. */
  gate = ds_test_gate_new (a);
  DS_TEST_CUDA_CHECK (cudaMemsetAsync (buf, 0x5a, size, a));

  oa = ds_access_order_new_stream (a, -1);
  ob = ds_access_order_new_stream (b, -1);
  g_assert_true (ds_access_order_wait (ob, oa, &error));
  g_assert_no_error (error);
  /* The host did not block. */
  DS_TEST_ASSERT_GATE_HELD (gate);

  /* B: read it back. Without the wait this copy runs before A's write,
   * which waits at the gate until the copy is queued, and reads zeros. */
  DS_TEST_CUDA_CHECK (cudaMemcpyAsync (out, buf, size, cudaMemcpyDeviceToHost, b));
  /* Queued while A is still held. */
  DS_TEST_ASSERT_GATE_HELD (gate);
  ds_test_gate_open (gate);
  DS_TEST_CUDA_CHECK (cudaStreamSynchronize (b));
  ds_test_gate_free (gate);

  check_bytes (out, size, 0x5a);

  ds_test_stream_free (a);
  if (b != NULL)
    ds_test_stream_free (b);
  DS_TEST_CUDA_CHECK (cudaFree (buf));
  DS_TEST_CUDA_CHECK (cudaFreeHost (out));
}

static void
test_gpu_wait_device_device (void)
{
  DS_TEST_REQUIRE_CUDA ();

  g_test_summary ("ds_access_order_wait (B, A) makes work queued on stream B "
                  "after the call run after the work queued on A before it");

  wait_device_device (FALSE);
}

static void
test_gpu_wait_default_stream (void)
{
  DS_TEST_REQUIRE_CUDA ();

  g_test_summary ("The legacy default stream can wait for a non-blocking "
                  "stream through ds_access_order_wait");

  wait_device_device (TRUE);
}

static void
test_gpu_wait_host_device (void)
{
  cudaStream_t a;
  gint slept = 0;
  g_autoptr(DsAccessOrder) oa = NULL;
  g_autoptr(DsAccessOrder) host = ds_access_order_new_host ();
  g_autoptr(GError) error = NULL;

  DS_TEST_REQUIRE_CUDA ();

  g_test_summary ("ds_access_order_wait (host, A) blocks until A has drained");

  a = ds_test_stream_new ();
  oa = ds_access_order_new_stream (a, -1);

  ds_test_stream_sleep (a, 200, &slept);
  g_assert_true (ds_access_order_wait (host, oa, &error));
  g_assert_no_error (error);
  g_assert_cmpint (g_atomic_int_get (&slept), ==, 1);
  g_assert_cmpint (cudaStreamQuery (a), ==, cudaSuccess);

  ds_test_stream_free (a);
}

static void
test_gpu_wait_equal (void)
{
  cudaStream_t a;
  DsTestGate *gate;
  g_autoptr(DsAccessOrder) oa = NULL;
  g_autoptr(DsAccessOrder) oa2 = NULL;
  g_autoptr(GError) error = NULL;

  DS_TEST_REQUIRE_CUDA ();

  g_test_summary ("Waiting for an equal order returns at once, with the "
                  "stream still busy");

  a = ds_test_stream_new ();
  oa = ds_access_order_new_stream (a, -1);
  oa2 = ds_access_order_copy (oa);

  /* A wait that blocked would hold until the gate opened itself, and
   * ds_test_gate_free () would fail. */
  gate = ds_test_gate_new (a);
  g_assert_true (ds_access_order_wait (oa, oa2, &error));
  g_assert_no_error (error);
  DS_TEST_ASSERT_GATE_HELD (gate);
  ds_test_gate_free (gate);

  ds_test_stream_free (a);
}

/* On a thread that has never used CUDA: no context is current. */
typedef struct
{
  guint64      driver_calls;
  guint        runtime_calls;
  DsCudaStatus status;
  GError      *error;
} LegacyQuery;

static gpointer
query_legacy_stream (gpointer data)
{
  LegacyQuery *q = data;
  guint64 before = ds_cuda_get_n_driver_calls ();

  ds_test_cuda_spy_reset ();
  q->status = ds_cuda_stream_query (NULL, &q->error);
  q->runtime_calls = ds_test_cuda_spy_get_count ();
  q->driver_calls = ds_cuda_get_n_driver_calls () - before;

  return NULL;
}

static void
test_gpu_driver_calls (void)
{
  cudaStream_t s;
  unsigned long long runtime_id = 0;
  DsAccessOrder order;
  DsTestGate *gate;
  LegacyQuery q = { 0, };
  guint64 before;
  gboolean spy;

  DS_TEST_REQUIRE_CUDA ();

  g_test_summary ("Stream ids, stream queries and event records of explicit "
                  "streams go to the driver (ds counts them; the runtime sees "
                  "none); those of the legacy stream go to the runtime, which "
                  "answers on a thread with no context current");

  spy = ds_test_cuda_spy_works ();
  s = ds_test_stream_new ();

  /* The identity is the runtime's. */
  DS_TEST_CUDA_CHECK (cudaStreamGetId (s, &runtime_id));
  ds_access_order_init_stream (&order, s, 0);
  g_assert_cmpuint (ds_access_order_get_stream_id (&order), ==, runtime_id);
  DS_TEST_CUDA_CHECK (cudaStreamGetId (cudaStreamPerThread, &runtime_id));
  ds_access_order_init_stream (&order, cudaStreamPerThread, 0);
  g_assert_cmpuint (ds_access_order_get_stream_id (&order), ==, runtime_id);

  /* A stream seen before: one driver call, no runtime call. */
  ds_test_cuda_spy_reset ();
  before = ds_cuda_get_n_driver_calls ();
  ds_access_order_init_stream (&order, s, 0);
  g_assert_cmpuint (ds_cuda_get_n_driver_calls () - before, ==, 1);
  if (spy)
    ds_test_assert_no_cuda_calls ();

  /* Busy, then idle, through the driver only. */
  gate = ds_test_gate_new (s);
  ds_test_cuda_spy_reset ();
  before = ds_cuda_get_n_driver_calls ();
  g_assert_cmpint (ds_cuda_stream_query (s, NULL), ==, DS_CUDA_PENDING);
  g_assert_cmpuint (ds_cuda_get_n_driver_calls () - before, ==, 1);
  if (spy)
    ds_test_assert_no_cuda_calls ();
  DS_TEST_ASSERT_GATE_HELD (gate);
  ds_test_gate_open (gate);
  DS_TEST_CUDA_CHECK (cudaStreamSynchronize (s));
  g_assert_cmpint (ds_cuda_stream_query (s, NULL), ==, DS_CUDA_DONE);
  ds_test_gate_free (gate);

  /* The legacy stream from a thread with no context current, where the
   * driver would refuse (CUDA_ERROR_INVALID_CONTEXT): the runtime sets the
   * primary context up and answers. */
  g_thread_join (g_thread_new ("no-context", query_legacy_stream, &q));
  g_assert_no_error (q.error);
  g_assert_cmpint (q.status, ==, DS_CUDA_DONE);
  g_assert_cmpuint (q.driver_calls, ==, 0);
  if (spy)
    g_assert_cmpuint (q.runtime_calls, >=, 1);

  ds_test_stream_free (s);
}

#endif /* HAVE_CUDA */

int
main (int    argc,
      char **argv)
{
  ds_test_init (&argc, &argv);

  ds_test_add_gpu_func ("/Ds/AccessOrder/gpu/stream", test_gpu_stream_order);
  ds_test_add_gpu_func ("/Ds/AccessOrder/gpu/stream-reuse", test_gpu_stream_reuse);
  ds_test_add_gpu_func ("/Ds/AccessOrder/gpu/wait-device-device", test_gpu_wait_device_device);
  ds_test_add_gpu_func ("/Ds/AccessOrder/gpu/wait-default-stream", test_gpu_wait_default_stream);
  ds_test_add_gpu_func ("/Ds/AccessOrder/gpu/wait-host-device", test_gpu_wait_host_device);
  ds_test_add_gpu_func ("/Ds/AccessOrder/gpu/wait-equal", test_gpu_wait_equal);
  ds_test_add_gpu_func ("/Ds/AccessOrder/gpu/driver-calls", test_gpu_driver_calls);

  return g_test_run ();
}
