/* ds-pinned-memory-resource.c
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "ds-pinned-memory-resource.h"
#include "ds-raw-memory-resource-private.h"
#include "ds-cuda-private.h"

/**
 * DsPinnedMemoryResource:
 *
 * The raw resource of page-locked host memory from `cudaHostAlloc (cudaHostAllocPortable)`, usable from every device. The #DsPinnedMemoryResource:device property is unused.
 *
 * Without a CUDA device, allocation fails with %DS_ERROR_NO_DEVICE (or
 * %DS_ERROR_NOT_SUPPORTED when ds was built without CUDA).
 */

/**
 * DsPinnedMemoryResource:device:
 *
 * Unused: pinned memory is portable, usable from every device.
 */
DS_DEFINE_RAW_MEMORY_RESOURCE (DsPinnedMemoryResource, ds_pinned_memory_resource,
                               DS_MEMORY_KIND_PINNED, ds_cuda_raw_alloc, ds_cuda_raw_free)

/**
 * ds_pinned_memory_resource_new:
 *
 * Creates a raw pinned memory resource. Allocates nothing.
 *
 * Returns: (transfer full): a new #DsPinnedMemoryResource
 */
DsMemoryResource *
ds_pinned_memory_resource_new (void)
{
  return g_object_new (DS_TYPE_PINNED_MEMORY_RESOURCE, NULL);
}
