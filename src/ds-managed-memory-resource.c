/* ds-managed-memory-resource.c
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "ds-managed-memory-resource.h"
#include "ds-raw-memory-resource-private.h"
#include "ds-cuda-private.h"

/**
 * DsManagedMemoryResource:
 *
 * The raw resource of unified memory from `cudaMallocManaged (cudaMemAttachGlobal)`, attached to one device. Not stream-ordered: use it under a [class@Ds.PoolResource].
 *
 * Without a CUDA device, allocation fails with %DS_ERROR_NO_DEVICE (or
 * %DS_ERROR_NOT_SUPPORTED when ds was built without CUDA).
 */

/**
 * DsManagedMemoryResource:device:
 *
 * The CUDA device the memory is attached to; -1 for the device current at each allocation.
 */
DS_DEFINE_RAW_MEMORY_RESOURCE (DsManagedMemoryResource, ds_managed_memory_resource,
                               DS_MEMORY_KIND_MANAGED, ds_cuda_raw_alloc, ds_cuda_raw_free)

/**
 * ds_managed_memory_resource_new:
 * @device: a CUDA device index, or -1 for the device current at each allocation
 *
 * Creates a raw managed memory resource. Allocates nothing.
 *
 * Returns: (transfer full): a new #DsManagedMemoryResource
 */
DsMemoryResource *
ds_managed_memory_resource_new (gint device)
{
  return g_object_new (DS_TYPE_MANAGED_MEMORY_RESOURCE, "device", device, NULL);
}
