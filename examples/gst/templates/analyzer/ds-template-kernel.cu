/* ds-template-kernel.cu: the template element's kernel (your work goes here)
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "ds-template-kernel.h"

__global__ static void
sum_rows (const uint8_t *plane, int width, int height, int stride, unsigned long long *sum)
{
  unsigned long long s = 0;

  for (int y = blockIdx.x; y < height; y += gridDim.x)
    for (int x = threadIdx.x; x < width; x += blockDim.x)
      s += plane[(size_t) y * stride + x];
  for (int offset = 16; offset > 0; offset /= 2)
    s += __shfl_down_sync (0xffffffffu, s, offset);
  if (threadIdx.x % 32 == 0)
    atomicAdd (sum, s);
}

extern "C" cudaError_t
ds_template_sum (const uint8_t      *plane,
                 int                 width,
                 int                 height,
                 int                 stride,
                 unsigned long long *sum,
                 cudaStream_t        stream)
{
  cudaError_t status = cudaMemsetAsync (sum, 0, sizeof *sum, stream);

  if (status != cudaSuccess)
    return status;
  sum_rows<<<height < 1024 ? (height > 0 ? height : 1) : 1024, 256, 0, stream>>> (plane, width, height,
                                                                                 stride, sum);
  return cudaGetLastError ();
}
