/* ds-soak-kernels.h: the soak's fill and check kernels, callable from C
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DS_SOAK_MAX_REGIONS 16

#ifdef __CUDACC__
# define DS_SOAK_HOST_DEVICE __host__ __device__
#else
# define DS_SOAK_HOST_DEVICE
#endif

/* A range of device-accessible memory and the tag of its pattern: byte i
 * holds ds_soak_pattern_byte (tag, i). */
typedef struct
{
  unsigned char      *ptr;
  unsigned long long  size;
  unsigned int        tag;
} DsSoakRegion;

typedef struct
{
  DsSoakRegion r[DS_SOAK_MAX_REGIONS];
  unsigned int n;
} DsSoakRegions;

static inline DS_SOAK_HOST_DEVICE unsigned char
ds_soak_pattern_byte (unsigned int       tag,
                      unsigned long long i)
{
  return (unsigned char) (tag * 2654435761u + (unsigned int) i * 131u + (unsigned int) (i >> 8) * 7u);
}

/* Queues on @stream a kernel that writes the pattern into every region. */
cudaError_t ds_soak_fill  (const DsSoakRegions *regions,
                           cudaStream_t         stream);
/* Queues on @stream a kernel that checks every region and adds the number
 * of bytes that differ to *@mismatches (device-accessible memory). */
cudaError_t ds_soak_check (const DsSoakRegions *regions,
                           unsigned int        *mismatches,
                           cudaStream_t         stream);

#ifdef __cplusplus
}
#endif
