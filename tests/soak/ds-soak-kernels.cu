/* ds-soak-kernels.cu: the soak's fill and check kernels
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * One launch covers every region of a lifecycle: blockIdx.y picks the
 * region, the x blocks stride over it.
 */

#include "ds-soak-kernels.h"

#define THREADS 256
#define BLOCKS_X 16

__global__ void
ds_soak_fill_kernel (DsSoakRegions regions)
{
  const DsSoakRegion r = regions.r[blockIdx.y];
  unsigned long long i;

  for (i = (unsigned long long) blockIdx.x * blockDim.x + threadIdx.x; i < r.size;
       i += (unsigned long long) gridDim.x * blockDim.x)
    r.ptr[i] = ds_soak_pattern_byte (r.tag, i);
}

__global__ void
ds_soak_check_kernel (DsSoakRegions  regions,
                      unsigned int  *mismatches)
{
  const DsSoakRegion r = regions.r[blockIdx.y];
  unsigned long long i;
  unsigned int bad = 0;

  for (i = (unsigned long long) blockIdx.x * blockDim.x + threadIdx.x; i < r.size;
       i += (unsigned long long) gridDim.x * blockDim.x)
    bad += r.ptr[i] != ds_soak_pattern_byte (r.tag, i);
  if (bad != 0)
    atomicAdd (mismatches, bad);
}

extern "C" cudaError_t
ds_soak_fill (const DsSoakRegions *regions,
              cudaStream_t         stream)
{
  if (regions->n == 0)
    return cudaSuccess;
  ds_soak_fill_kernel<<<dim3 (BLOCKS_X, regions->n), THREADS, 0, stream>>> (*regions);
  return cudaGetLastError ();
}

extern "C" cudaError_t
ds_soak_check (const DsSoakRegions *regions,
               unsigned int        *mismatches,
               cudaStream_t         stream)
{
  if (regions->n == 0)
    return cudaSuccess;
  ds_soak_check_kernel<<<dim3 (BLOCKS_X, regions->n), THREADS, 0, stream>>> (*regions, mismatches);
  return cudaGetLastError ();
}
