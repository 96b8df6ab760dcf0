/* ds-luma-stats.h: the CUDA kernels of dslumastats, callable from C
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Compiled ahead of time by nvcc (ds-luma-stats.cu). Plain C types only,
 * so that nvcc needs neither GLib nor GStreamer.
 */

#pragma once

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DS_LUMA_BINS 256

/* What a frame's statistics come to; copied back to the host as a whole. */
typedef struct
{
  uint32_t histogram[DS_LUMA_BINS];
  uint32_t min;
  uint32_t max;
  uint64_t sum;
} DsLumaResult;

/* One per thread block of the first pass: its part of min, max and sum. */
typedef struct
{
  uint32_t min;
  uint32_t max;
  uint64_t sum;
} DsLumaPartial;

/* The number of DsLumaPartial entries the kernels need for a plane of
 * @height rows (one thread block per row, at most 1024). */
int         ds_luma_stats_n_partials (int height);

/* Queues on @stream the statistics of the 8-bit plane at @plane (device
 * memory, @stride bytes from one row to the next): zeroes @result, one
 * pass that writes @partials (ds_luma_stats_n_partials (height) entries,
 * device memory) and adds to @result's histogram, one pass that reduces
 * @partials into @result's min, max and sum. Returns the launch status. */
cudaError_t ds_luma_stats_launch     (const uint8_t *plane,
                                      int            width,
                                      int            height,
                                      int            stride,
                                      DsLumaPartial *partials,
                                      DsLumaResult  *result,
                                      cudaStream_t   stream);

#ifdef __cplusplus
}
#endif
