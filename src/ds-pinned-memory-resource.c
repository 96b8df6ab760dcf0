/* ds-pinned-memory-resource.c: page-locked host memory
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "ds-pinned-memory-resource.h"
#include "ds-raw-resource-private.h"

/**
 * DsPinnedMemoryResource:
 *
 * The raw resource of page-locked (pinned) host memory from
 * `cudaHostAlloc` (portable: usable from every device). Not
 * stream-ordered, and `cudaFreeHost` waits for the whole device: use it
 * under a [class@Ds.PoolResource]. It refuses, with a critical, a block it
 * did not hand out or one given back twice.
 *
 * Without a CUDA device, allocation fails with %DS_ERROR_NO_DEVICE (or
 * %DS_ERROR_NOT_SUPPORTED when ds was built without CUDA).
 */

struct _DsPinnedMemoryResource
{
  GObject       parent_instance;
  DsRawResource raw;
};

G_STATIC_ASSERT (sizeof (DsPinnedMemoryResource) == sizeof (DsRawResourceInstance));

G_DEFINE_FINAL_TYPE_WITH_CODE (DsPinnedMemoryResource, ds_pinned_memory_resource, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (DS_TYPE_MEMORY_RESOURCE,
                                                      ds_raw_resource_iface_init))

static void
ds_pinned_memory_resource_class_init (DsPinnedMemoryResourceClass *klass)
{
  ds_raw_resource_class_init (G_OBJECT_CLASS (klass), FALSE);
}

static void
ds_pinned_memory_resource_init (DsPinnedMemoryResource *self)
{
  ds_raw_resource_init (&self->raw, DS_MEMORY_KIND_PINNED, -1);
}

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
