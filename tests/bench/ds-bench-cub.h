/* ds-bench-cub.h: CUB's caching device allocator, for the C benchmarks
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Whether the benchmarks were built with CUB (C++ and the CUDA toolkit's
 * CCCL headers found). */
int   ds_bench_cub_available (void);

/* A cub::CachingDeviceAllocator with power-of-two bins from 256 B to 1 GiB
 * and no limit on what it caches (its best case for hit rates). */
void *ds_bench_cub_new       (void);
void  ds_bench_cub_free      (void *cub);
/* 0 on success, else the cudaError_t. */
int   ds_bench_cub_alloc     (void *cub, void **ptr, size_t size, void *stream);
int   ds_bench_cub_dealloc   (void *cub, void *ptr);

#ifdef __cplusplus
}
#endif
