/* ds-pinned-memory-resource.c
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "ds-pinned-memory-resource.h"
#include "ds-cuda-private.h"

/**
 * DsPinnedMemoryResource:
 *
 * The raw resource of page-locked host memory from
 * `cudaHostAlloc (cudaHostAllocPortable)`, usable from every device.
 * `cudaFreeHost` waits for the whole device: use it under a
 * [class@Ds.PoolResource].
 *
 * Without a CUDA device, allocation fails with %DS_ERROR_NO_DEVICE (or
 * %DS_ERROR_NOT_SUPPORTED when ds was built without CUDA).
 */

struct _DsPinnedMemoryResource
{
  GObject parent_instance;
};

static void ds_pinned_memory_resource_iface_init (DsMemoryResourceInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (DsPinnedMemoryResource, ds_pinned_memory_resource, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (DS_TYPE_MEMORY_RESOURCE,
                                                      ds_pinned_memory_resource_iface_init))

static DsMemoryKind
ds_pinned_memory_resource_get_kind (DsMemoryResource *resource)
{
  return DS_MEMORY_KIND_PINNED;
}

static gpointer
ds_pinned_memory_resource_allocate (DsMemoryResource  *resource,
                                    gsize              size,
                                    gsize              alignment,
                                    GError           **error)
{
  /* Portable: the device does not matter. */
  return ds_cuda_raw_alloc (DS_MEMORY_KIND_PINNED, -1, size, alignment, error);
}

static void
ds_pinned_memory_resource_deallocate (DsMemoryResource *resource,
                                      gpointer          ptr,
                                      gsize             size,
                                      gsize             alignment)
{
  ds_cuda_raw_free (DS_MEMORY_KIND_PINNED, -1, ptr, size, alignment);
}

static void
ds_pinned_memory_resource_iface_init (DsMemoryResourceInterface *iface)
{
  iface->get_kind = ds_pinned_memory_resource_get_kind;
  iface->allocate = ds_pinned_memory_resource_allocate;
  iface->deallocate = ds_pinned_memory_resource_deallocate;
}

static void
ds_pinned_memory_resource_class_init (DsPinnedMemoryResourceClass *klass)
{
}

static void
ds_pinned_memory_resource_init (DsPinnedMemoryResource *self)
{
}

/**
 * ds_pinned_memory_resource_new:
 *
 * Creates a raw pinned memory resource.
 *
 * Returns: (transfer full): a new #DsPinnedMemoryResource
 */
DsMemoryResource *
ds_pinned_memory_resource_new (void)
{
  return g_object_new (DS_TYPE_PINNED_MEMORY_RESOURCE, NULL);
}
