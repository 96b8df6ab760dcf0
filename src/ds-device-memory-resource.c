/* ds-device-memory-resource.c
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "ds-device-memory-resource.h"
#include "ds-raw-memory-resource-private.h"
#include "ds-cuda-private.h"

/**
 * DsDeviceMemoryResource:
 *
 * The raw resource of device memory from `cudaMalloc` on one device. Not stream-ordered, and `cudaFree` waits for the whole device: use it under a [class@Ds.PoolResource].
 *
 * Without a CUDA device, allocation fails with %DS_ERROR_NO_DEVICE (or
 * %DS_ERROR_NOT_SUPPORTED when ds was built without CUDA).
 */

/**
 * DsDeviceMemoryResource:device:
 *
 * The CUDA device the memory is allocated on; -1 for the device current at each allocation.
 */
DS_DEFINE_RAW_MEMORY_RESOURCE (DsDeviceMemoryResource, ds_device_memory_resource,
                               DS_MEMORY_KIND_DEVICE, ds_cuda_raw_alloc, ds_cuda_raw_free)

/**
 * ds_device_memory_resource_new:
 * @device: a CUDA device index, or -1 for the device current at each allocation
 *
 * Creates a raw device memory resource. Allocates nothing.
 *
 * Returns: (transfer full): a new #DsDeviceMemoryResource
 */
DsMemoryResource *
ds_device_memory_resource_new (gint device)
{
  return g_object_new (DS_TYPE_DEVICE_MEMORY_RESOURCE, "device", device, NULL);
}
