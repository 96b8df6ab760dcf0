/* test-kernel-context-gpu.c: DsKernelContext on a CUDA stream
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Every case needs a CUDA device and skips without one.
 */

#include "config.h"

#include <string.h>

#include "ds-test-utils.h"

#if HAVE_CUDA

typedef struct
{
  cudaStream_t stream;
  guint8      *out;
  gsize        size;
} GpuRunData;

static gboolean
gpu_func (DsKernelContext  *context,
          gpointer          user_data,
          GError          **error)
{
  GpuRunData *data = user_data;
  DsScratchpad *sp = ds_kernel_context_get_scratchpad (context);
  guint8 *dev = DS_SCRATCHPAD_ALLOC_DEVICE (sp, guint8, data->size, error);

  if (dev == NULL)
    return FALSE;
  DS_TEST_CUDA_CHECK (cudaMemsetAsync (dev, 0x61, data->size, data->stream));
  DS_TEST_CUDA_CHECK (cudaMemcpyAsync (data->out, dev, data->size,
                                       cudaMemcpyDeviceToHost, data->stream));
  return TRUE;
}

static void
test_gpu_run (void)
{
  g_autoptr(DsAccessOrder) order = NULL;
  g_autoptr(DsKernelContext) ctx = NULL;
  g_autoptr(GError) error = NULL;
  GpuRunData data;
  gint slept = 0;
  gsize i;

  DS_TEST_REQUIRE_CUDA ();

  g_test_summary ("run() on a stream: device scratch used by queued work "
                  "stays valid until the stream is done with it");

  data.stream = ds_test_stream_new ();
  data.size = 1 << 20;
  DS_TEST_CUDA_CHECK (cudaMallocHost ((void **) &data.out, data.size));
  memset (data.out, 0, data.size);
  order = ds_access_order_new_stream (data.stream, -1);
  ctx = ds_kernel_context_new (order, NULL);

  ds_test_stream_sleep (data.stream, 200, &slept);
  g_assert_true (ds_kernel_context_run (ctx, gpu_func, &data, &error));
  g_assert_no_error (error);
  DS_TEST_CUDA_CHECK (cudaStreamSynchronize (data.stream));

  for (i = 0; i < data.size; i++)
    g_assert_cmpint (data.out[i], ==, 0x61);

  DS_TEST_CUDA_CHECK (cudaFreeHost (data.out));
  ds_test_stream_free (data.stream);
}

#endif /* HAVE_CUDA */

int
main (int    argc,
      char **argv)
{
  ds_test_init (&argc, &argv);

  ds_test_add_gpu_func ("/Ds/KernelContext/gpu/run", test_gpu_run);

  return g_test_run ();
}
