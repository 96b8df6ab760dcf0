/* test-order-mark-gpu.c: DsOrderMark on a CUDA device
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Gated streams (DsTestGate): what a mark covers and what it leaves out,
 * whatever the machine's speed. Every case needs a CUDA device.
 */

#include "config.h"

#include <string.h>

#include "ds-test-utils.h"

#if HAVE_CUDA

static void
test_gpu_stream_waits_for_mark (void)
{
  const gsize size = 1 << 20;
  cudaStream_t a, b;
  g_autoptr(DsAccessOrder) oa = NULL;
  g_autoptr(DsAccessOrder) ob = NULL;
  g_autoptr(GError) error = NULL;
  DsOrderMark *mark;
  DsTestGate *gate;
  guint8 *buf, *out;

  g_test_summary ("A stream that waits for a mark runs after the marked work (a write "
                  "held at a gate) and reads what it wrote");
  DS_TEST_REQUIRE_CUDA ();

  a = ds_test_stream_new ();
  b = ds_test_stream_new ();
  oa = ds_access_order_new_stream (a, -1);
  ob = ds_access_order_new_stream (b, -1);

  DS_TEST_CUDA_CHECK (cudaMalloc ((void **) &buf, size));
  DS_TEST_CUDA_CHECK (cudaMemset (buf, 0, size));
  DS_TEST_CUDA_CHECK (cudaMallocHost ((void **) &out, size));
  DS_TEST_CUDA_CHECK (cudaDeviceSynchronize ());

  gate = ds_test_gate_new (a);
  DS_TEST_CUDA_CHECK (cudaMemsetAsync (buf, 0x5a, size, a));
  mark = ds_order_mark_new (oa, &error);
  g_assert_no_error (error);
  g_assert_true (ds_order_mark_wait (mark, ob, &error));
  g_assert_no_error (error);
  /* Dropped before the work it marks ran: B still waits. */
  ds_order_mark_unref (mark);
  DS_TEST_CUDA_CHECK (cudaMemcpyAsync (out, buf, size, cudaMemcpyDeviceToHost, b));
  DS_TEST_ASSERT_GATE_HELD (gate);
  g_assert_cmpint (cudaStreamQuery (b), ==, cudaErrorNotReady);
  ds_test_gate_open (gate);
  DS_TEST_CUDA_CHECK (cudaStreamSynchronize (b));
  ds_test_gate_free (gate);
  for (gsize i = 0; i < size; i++)
    if (out[i] != 0x5a)
      g_error ("byte %" G_GSIZE_FORMAT " is 0x%02x", i, out[i]);

  DS_TEST_CUDA_CHECK (cudaFree (buf));
  DS_TEST_CUDA_CHECK (cudaFreeHost (out));
  ds_test_stream_free (a);
  ds_test_stream_free (b);
}

static void
test_gpu_later_work_not_waited (void)
{
  cudaStream_t a, b;
  g_autoptr(DsAccessOrder) oa = NULL;
  g_autoptr(DsAccessOrder) ob = NULL;
  g_autoptr(DsOrderMark) mark = NULL;
  g_autoptr(GError) error = NULL;
  DsTestGate *gate;

  g_test_summary ("Work submitted to the marked order after the mark is not waited for: "
                  "B runs while A is held at a gate queued after the mark");
  DS_TEST_REQUIRE_CUDA ();

  a = ds_test_stream_new ();
  b = ds_test_stream_new ();
  oa = ds_access_order_new_stream (a, -1);
  ob = ds_access_order_new_stream (b, -1);

  mark = ds_order_mark_new (oa, &error);
  g_assert_no_error (error);
  gate = ds_test_gate_new (a);
  g_assert_true (ds_order_mark_wait (mark, ob, &error));
  g_assert_no_error (error);
  /* The host waits for B alone: it must not need A's gate. */
  DS_TEST_CUDA_CHECK (cudaStreamSynchronize (b));
  DS_TEST_ASSERT_GATE_HELD (gate);
  ds_test_gate_open (gate);
  ds_test_gate_free (gate);

  ds_test_stream_free (a);
  ds_test_stream_free (b);
}

static void
test_gpu_host_waits (void)
{
  cudaStream_t a;
  g_autoptr(DsAccessOrder) oa = NULL;
  g_autoptr(DsAccessOrder) host = ds_access_order_new_host ();
  g_autoptr(DsOrderMark) mark = NULL;
  g_autoptr(GError) error = NULL;
  DsTestGate *gate;

  g_test_summary ("Host order waits for a mark by blocking until the marked work is done; "
                  "the marked order itself need not wait");
  DS_TEST_REQUIRE_CUDA ();

  a = ds_test_stream_new ();
  oa = ds_access_order_new_stream (a, -1);

  gate = ds_test_gate_new (a);
  mark = ds_order_mark_new (oa, &error);
  g_assert_no_error (error);
  g_assert_true (ds_order_mark_wait (mark, oa, &error));
  DS_TEST_ASSERT_GATE_HELD (gate);
  ds_test_gate_open_later (gate, 100);
  g_assert_true (ds_order_mark_wait (mark, host, &error));
  g_assert_no_error (error);
  g_assert_true (ds_test_gate_passed (gate));
  ds_test_gate_free (gate);

  ds_test_stream_free (a);
}

static gpointer
unref_mark_thread (gpointer data)
{
  ds_order_mark_unref (data);
  return NULL;
}

static void
test_gpu_other_thread (void)
{
  cudaStream_t a;
  g_autoptr(DsAccessOrder) oa = NULL;
  g_autoptr(GError) error = NULL;
  DsOrderMark *mark;

  g_test_summary ("A mark outlives its stream and is dropped on a thread that has no "
                  "CUDA context current");
  DS_TEST_REQUIRE_CUDA ();

  a = ds_test_stream_new ();
  oa = ds_access_order_new_stream (a, -1);

  mark = ds_order_mark_new (oa, &error);
  g_assert_no_error (error);
  ds_test_stream_free (a);
  g_thread_join (g_thread_new ("unref", unref_mark_thread, mark));
}

#endif /* HAVE_CUDA */

int
main (int    argc,
      char **argv)
{
  ds_test_init (&argc, &argv);

  ds_test_add_gpu_func ("/Ds/OrderMark/gpu/stream-waits", test_gpu_stream_waits_for_mark);
  ds_test_add_gpu_func ("/Ds/OrderMark/gpu/later-work", test_gpu_later_work_not_waited);
  ds_test_add_gpu_func ("/Ds/OrderMark/gpu/host-waits", test_gpu_host_waits);
  ds_test_add_gpu_func ("/Ds/OrderMark/gpu/other-thread", test_gpu_other_thread);

  return g_test_run ();
}
