/* ds-bench-cub.cpp: CUB's caching device allocator, for the C benchmarks
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * cub::CachingDeviceAllocator is host code: it builds with a plain C++
 * compiler against the toolkit's CCCL headers and links cudart.
 */

#include <cstddef>

#include <cub/util_allocator.cuh>

#include "ds-bench-cub.h"

extern "C" int
ds_bench_cub_available (void)
{
  return 1;
}

extern "C" void *
ds_bench_cub_new (void)
{
  /* bin_growth 2, min_bin 2^8, max_bin 2^30, unlimited cache. */
  return new cub::CachingDeviceAllocator (2, 8, 30, cub::CachingDeviceAllocator::INVALID_SIZE, true);
}

extern "C" void
ds_bench_cub_free (void *cub)
{
  auto *allocator = static_cast<cub::CachingDeviceAllocator *> (cub);

  allocator->FreeAllCached ();
  delete allocator;
}

extern "C" int
ds_bench_cub_alloc (void *cub, void **ptr, size_t size, void *stream)
{
  auto *allocator = static_cast<cub::CachingDeviceAllocator *> (cub);

  return (int) allocator->DeviceAllocate (ptr, size, static_cast<cudaStream_t> (stream));
}

extern "C" int
ds_bench_cub_dealloc (void *cub, void *ptr)
{
  auto *allocator = static_cast<cub::CachingDeviceAllocator *> (cub);

  return (int) allocator->DeviceFree (ptr);
}
