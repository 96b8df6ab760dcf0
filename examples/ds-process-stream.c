/* ds-process-stream.c: a function-local scratchpad on a CUDA stream
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The first usage from DALI's DynamicScratchpad documentation, the ds way:
 *
 *   void process (cudaStream_t stream) {
 *     DynamicScratchpad scratch (AccessOrder (stream));
 *     char  *pinned  = scratch.Allocate<mm::memory_kind::pinned, char> (4096);
 *     float *gpu_buf = scratch.AllocateGPU<float> (1024);
 *     KernelContext ctx;  ctx.gpu.stream = stream;  ctx.scratchpad = &scratch;
 *     ...
 *   }  // all memory freed when scratch goes out of scope
 *
 * Here the scratchpad is a g_autoptr: when process() returns, its last
 * reference goes and every block is given back *in stream order*. The
 * caller does not synchronise before that: nothing the copies queued on
 * the stream still read or write is handed to anyone else before the
 * stream has passed the point where the scratchpad died.
 *
 * Needs a GPU: without one (or with ds built without CUDA) it says why
 * and exits 77, which meson reports as SKIP.
 */

#include <ds.h>

#if DS_HAVE_CUDA
# include <cuda_runtime_api.h>
#endif

#define EXIT_SKIP 77

#if DS_HAVE_CUDA

#define N_VALUES 1024

typedef struct
{
  const float *input;    /* device scratch, N_VALUES */
  float       *output;   /* the caller's pinned memory, N_VALUES */
} Work;

static gboolean
cuda_ok (cudaError_t   result,
         const char   *call,
         GError      **error)
{
  if (result == cudaSuccess)
    return TRUE;
  g_set_error (error, DS_ERROR, DS_ERROR_CUDA, "%s: %s (%s)", call,
               cudaGetErrorString (result), cudaGetErrorName (result));
  return FALSE;
}

/* The "kernel": it gets the stream and its temporary memory from the
 * context, like a DALI kernel's Run (KernelContext &ctx, ...). A real one
 * would launch a CUDA kernel on the stream; copies keep this example free
 * of nvcc. */
static gboolean
run_work (DsKernelContext  *context,
          gpointer          user_data,
          GError          **error)
{
  Work *work = user_data;
  DsScratchpad *scratch = ds_kernel_context_get_scratchpad (context);
  cudaStream_t stream = ds_access_order_get_stream (ds_kernel_context_get_order (context));
  float *tmp_dev;

  tmp_dev = DS_SCRATCHPAD_ALLOC_DEVICE (scratch, float, N_VALUES, error);
  if (tmp_dev == NULL)
    return FALSE;

  /* device → device scratch → the caller's memory, queued on the stream
   * and not waited for here. */
  return cuda_ok (cudaMemcpyAsync (tmp_dev, work->input, N_VALUES * sizeof (float),
                                   cudaMemcpyDeviceToDevice, stream),
                  "cudaMemcpyAsync (device to device)", error) &&
         cuda_ok (cudaMemcpyAsync (work->output, tmp_dev, N_VALUES * sizeof (float),
                                   cudaMemcpyDeviceToHost, stream),
                  "cudaMemcpyAsync (device to host)", error);
}

static gboolean
process (cudaStream_t   stream,
         float         *output,
         float          scale,
         GError       **error)
{
  /* A scratchpad scoped to this function, on the stream. */
  g_autoptr(DsAccessOrder) order = ds_access_order_new_stream (stream, -1);
  g_autoptr(DsScratchpad) scratch = ds_scratchpad_new (order);
  g_autoptr(DsKernelContext) context = NULL;
  float lut[16];
  const float *lut_dev;
  char *pinned;
  float *staging;
  float *gpu_buf;
  Work work;

  /* Pinned host memory for staging, and device memory. */
  pinned = DS_SCRATCHPAD_ALLOC_PINNED (scratch, char, 4096, error);
  if (pinned == NULL)
    return FALSE;
  gpu_buf = DS_SCRATCHPAD_ALLOC_DEVICE (scratch, float, N_VALUES, error);
  if (gpu_buf == NULL)
    return FALSE;

  /* Fill the staging buffer on the CPU and upload it on the stream. */
  staging = (float *) pinned;
  for (guint i = 0; i < N_VALUES; i++)
    staging[i] = scale * (float) i;
  if (!cuda_ok (cudaMemcpyAsync (gpu_buf, staging, N_VALUES * sizeof (float),
                                 cudaMemcpyHostToDevice, stream),
                "cudaMemcpyAsync (pinned to device)", error))
    return FALSE;

  /* Or let ds stage it: ds_scratchpad_to_device() copies host data into
   * fresh device scratch on the scratchpad's stream (DALI's ToGPU). */
  for (guint i = 0; i < G_N_ELEMENTS (lut); i++)
    lut[i] = (float) i;
  lut_dev = ds_scratchpad_to_device (scratch, lut, sizeof lut, 0, error);
  if (lut_dev == NULL)
    return FALSE;

  /* Use it in a kernel context: the work takes more scratch from it. */
  context = ds_kernel_context_new (order, scratch);
  work.input = gpu_buf;
  work.output = output;
  if (!ds_kernel_context_run (context, run_work, &work, error))
    return FALSE;

  g_print ("  process: %" G_GUINT64_FORMAT " B pinned in %u block(s), "
           "%" G_GUINT64_FORMAT " B device in %u block(s), returning without a sync\n",
           ds_scratchpad_get_allocated (scratch, DS_MEMORY_KIND_PINNED),
           ds_scratchpad_get_n_blocks (scratch, DS_MEMORY_KIND_PINNED),
           ds_scratchpad_get_allocated (scratch, DS_MEMORY_KIND_DEVICE),
           ds_scratchpad_get_n_blocks (scratch, DS_MEMORY_KIND_DEVICE));

  /* All memory goes back, in stream order, as scratch goes out of scope. */
  return TRUE;
}

int
main (int    argc,
      char **argv)
{
  g_autoptr(GError) error = NULL;
  cudaStream_t stream = NULL;
  cudaError_t result;
  float *outputs[3];
  int status = 0;

  result = cudaStreamCreateWithFlags (&stream, cudaStreamNonBlocking);
  if (result != cudaSuccess)
    {
      g_print ("ds-process-stream needs a CUDA device: cudaStreamCreateWithFlags: %s (%s). Skipped.\n",
               cudaGetErrorString (result), cudaGetErrorName (result));
      return EXIT_SKIP;
    }

  g_print ("Three calls of process() on one non-blocking stream:\n");
  for (guint n = 0; n < G_N_ELEMENTS (outputs); n++)
    {
      result = cudaMallocHost ((void **) &outputs[n], N_VALUES * sizeof (float));
      if (result != cudaSuccess)
        {
          g_printerr ("cudaMallocHost: %s\n", cudaGetErrorString (result));
          return 1;
        }
      if (!process (stream, outputs[n], (float) (n + 1), &error))
        {
          g_printerr ("process failed: %s\n", error->message);
          status = g_error_matches (error, DS_ERROR, DS_ERROR_NO_DEVICE) ? EXIT_SKIP : 1;
          /* Wait for what was queued before freeing the outputs. */
          cudaStreamSynchronize (stream);
          for (guint m = 0; m <= n; m++)
            cudaFreeHost (outputs[m]);
          cudaStreamDestroy (stream);
          return status;
        }
    }

  /* The only synchronisation: after it, every result must be intact even
   * though each scratchpad died while its copies were still queued. */
  result = cudaStreamSynchronize (stream);
  if (result != cudaSuccess)
    {
      g_printerr ("cudaStreamSynchronize: %s\n", cudaGetErrorString (result));
      status = 1;
    }

  for (guint n = 0; n < G_N_ELEMENTS (outputs); n++)
    {
      for (guint i = 0; i < N_VALUES && status == 0; i++)
        {
          if (outputs[n][i] != (float) (n + 1) * (float) i)
            {
              g_printerr ("call %u: value %u is %g, expected %g\n",
                          n, i, outputs[n][i], (float) (n + 1) * (float) i);
              status = 1;
            }
        }
      cudaFreeHost (outputs[n]);
    }

  cudaStreamDestroy (stream);
  g_print ("%s\n", status == 0 ? "all results intact" : "FAILED");
  return status;
}

#else /* !DS_HAVE_CUDA */

int
main (int    argc,
      char **argv)
{
  g_print ("ds-process-stream needs pinned and device memory, but this ds was "
           "built without CUDA. Skipped.\n");
  return EXIT_SKIP;
}

#endif
