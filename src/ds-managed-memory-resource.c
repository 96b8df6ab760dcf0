/* ds-managed-memory-resource.c: unified memory
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "ds-managed-memory-resource.h"
#include "ds-raw-resource-private.h"

/**
 * DsManagedMemoryResource:
 *
 * The raw resource of unified memory from
 * `cudaMallocManaged (cudaMemAttachGlobal)`, attached to one device. Not
 * stream-ordered: use it under a [class@Ds.PoolResource]. It refuses, with
 * a critical, a block it did not hand out or one given back twice.
 *
 * Without a CUDA device, allocation fails with %DS_ERROR_NO_DEVICE (or
 * %DS_ERROR_NOT_SUPPORTED when ds was built without CUDA).
 */

/**
 * DsManagedMemoryResource:device:
 *
 * The CUDA device the memory is attached to; -1 for the device current
 * at each allocation.
 */

struct _DsManagedMemoryResource
{
  GObject       parent_instance;
  DsRawResource raw;
};

G_STATIC_ASSERT (sizeof (DsManagedMemoryResource) == sizeof (DsRawResourceInstance));

G_DEFINE_FINAL_TYPE_WITH_CODE (DsManagedMemoryResource, ds_managed_memory_resource, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (DS_TYPE_MEMORY_RESOURCE,
                                                      ds_raw_resource_iface_init))

static void
ds_managed_memory_resource_class_init (DsManagedMemoryResourceClass *klass)
{
  ds_raw_resource_class_init (G_OBJECT_CLASS (klass), TRUE);
}

static void
ds_managed_memory_resource_init (DsManagedMemoryResource *self)
{
  ds_raw_resource_init (&self->raw, DS_MEMORY_KIND_MANAGED, -1);
}

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
