/* ds-filter-kernel.cu: the filter template's kernel (your work goes here)
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "ds-filter-kernel.h"

__global__ static void
blur_rows (const uint8_t *src, int stride, uint16_t *tmp, int width, int height)
{
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;

  if (x < width && y < height)
    {
      const uint8_t *row = src + (size_t) y * stride;

      tmp[(size_t) y * width + x] = row[x > 0 ? x - 1 : 0] + 2 * row[x] + row[x < width - 1 ? x + 1 : x];
    }
}

__global__ static void
blur_columns (const uint16_t *tmp, uint8_t *dst, int stride, int width, int height)
{
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;

  if (x < width && y < height)
    {
      int up = y > 0 ? y - 1 : 0, down = y < height - 1 ? y + 1 : y;

      dst[(size_t) y * stride + x] = (tmp[(size_t) up * width + x] + 2 * tmp[(size_t) y * width + x] +
                                      tmp[(size_t) down * width + x] + 8) >> 4;
    }
}

extern "C" cudaError_t
ds_filter_blur (const uint8_t *src,
                int            src_stride,
                uint8_t       *dst,
                int            dst_stride,
                uint16_t      *tmp,
                int            width,
                int            height,
                cudaStream_t   stream)
{
  dim3 block (32, 8), grid ((width + 31) / 32, (height + 7) / 8);

  if (width <= 0 || height <= 0)
    return cudaSuccess;
  blur_rows<<<grid, block, 0, stream>>> (src, src_stride, tmp, width, height);
  blur_columns<<<grid, block, 0, stream>>> (tmp, dst, dst_stride, width, height);
  return cudaGetLastError ();
}
