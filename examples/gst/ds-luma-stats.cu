/* ds-luma-stats.cu: luma histogram, min, max and sum of an 8-bit plane
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Compiled ahead of time by nvcc with explicit -gencode flags (see
 * meson.build): GStreamer 1.22's NVRTC path names a GPU architecture that
 * CUDA 13's NVRTC rejects, and libnvrtc is too large to carry.
 */

#include "ds-luma-stats.h"

#define THREADS 256
#define MAX_BLOCKS 1024

__device__ static inline uint64_t
warp_sum (uint64_t v)
{
  for (int offset = 16; offset > 0; offset /= 2)
    v += __shfl_down_sync (0xffffffffu, v, offset);
  return v;
}

__device__ static inline uint32_t
warp_min (uint32_t v)
{
  for (int offset = 16; offset > 0; offset /= 2)
    v = min (v, __shfl_down_sync (0xffffffffu, v, offset));
  return v;
}

__device__ static inline uint32_t
warp_max (uint32_t v)
{
  for (int offset = 16; offset > 0; offset /= 2)
    v = max (v, __shfl_down_sync (0xffffffffu, v, offset));
  return v;
}

/* Reduces one value per thread of a THREADS-thread block; the result is
 * valid in thread 0. */
__device__ static void
block_reduce (uint32_t *mn, uint32_t *mx, uint64_t *sum)
{
  __shared__ uint32_t s_min[THREADS / 32];
  __shared__ uint32_t s_max[THREADS / 32];
  __shared__ uint64_t s_sum[THREADS / 32];
  int lane = threadIdx.x % 32, warp = threadIdx.x / 32;

  *mn = warp_min (*mn);
  *mx = warp_max (*mx);
  *sum = warp_sum (*sum);
  if (lane == 0)
    {
      s_min[warp] = *mn;
      s_max[warp] = *mx;
      s_sum[warp] = *sum;
    }
  __syncthreads ();
  if (warp == 0)
    {
      *mn = lane < THREADS / 32 ? s_min[lane] : 0xffffffffu;
      *mx = lane < THREADS / 32 ? s_max[lane] : 0u;
      *sum = lane < THREADS / 32 ? s_sum[lane] : 0u;
      *mn = warp_min (*mn);
      *mx = warp_max (*mx);
      *sum = warp_sum (*sum);
    }
}

/* Pass 1: block b takes rows b, b + gridDim.x, ...; a shared histogram per
 * block, added to the global one at the end; min/max/sum per block into
 * partials[b]. */
__global__ static void
luma_partials (const uint8_t *plane, int width, int height, int stride,
               DsLumaPartial *partials, DsLumaResult *result)
{
  __shared__ uint32_t s_hist[DS_LUMA_BINS];
  uint32_t mn = 0xffffffffu, mx = 0;
  uint64_t sum = 0;

  for (int i = threadIdx.x; i < DS_LUMA_BINS; i += blockDim.x)
    s_hist[i] = 0;
  __syncthreads ();

  for (int y = blockIdx.x; y < height; y += gridDim.x)
    {
      const uint8_t *row = plane + (size_t) y * stride;

      for (int x = threadIdx.x; x < width; x += blockDim.x)
        {
          uint32_t v = row[x];

          atomicAdd (&s_hist[v], 1u);
          mn = min (mn, v);
          mx = max (mx, v);
          sum += v;
        }
    }
  __syncthreads ();

  for (int i = threadIdx.x; i < DS_LUMA_BINS; i += blockDim.x)
    if (s_hist[i] != 0)
      atomicAdd (&result->histogram[i], s_hist[i]);

  block_reduce (&mn, &mx, &sum);
  if (threadIdx.x == 0)
    {
      partials[blockIdx.x].min = mn;
      partials[blockIdx.x].max = mx;
      partials[blockIdx.x].sum = sum;
    }
}

/* Pass 2: one block folds the partials into the result. */
__global__ static void
luma_reduce (const DsLumaPartial *partials, int n, DsLumaResult *result)
{
  uint32_t mn = 0xffffffffu, mx = 0;
  uint64_t sum = 0;

  for (int i = threadIdx.x; i < n; i += blockDim.x)
    {
      mn = min (mn, partials[i].min);
      mx = max (mx, partials[i].max);
      sum += partials[i].sum;
    }
  block_reduce (&mn, &mx, &sum);
  if (threadIdx.x == 0)
    {
      result->min = mn;
      result->max = mx;
      result->sum = sum;
    }
}

extern "C" int
ds_luma_stats_n_partials (int height)
{
  return height < 1 ? 1 : height < MAX_BLOCKS ? height : MAX_BLOCKS;
}

extern "C" cudaError_t
ds_luma_stats_launch (const uint8_t *plane,
                      int            width,
                      int            height,
                      int            stride,
                      DsLumaPartial *partials,
                      DsLumaResult  *result,
                      cudaStream_t   stream)
{
  int blocks = ds_luma_stats_n_partials (height);
  cudaError_t status;

  status = cudaMemsetAsync (result, 0, sizeof (DsLumaResult), stream);
  if (status != cudaSuccess)
    return status;

  luma_partials<<<blocks, THREADS, 0, stream>>> (plane, width, height, stride,
                                                  partials, result);
  status = cudaGetLastError ();
  if (status != cudaSuccess)
    return status;

  luma_reduce<<<1, THREADS, 0, stream>>> (partials, blocks, result);
  return cudaGetLastError ();
}
