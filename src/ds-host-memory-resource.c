/* ds-host-memory-resource.c: pageable host memory
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "ds-host-memory-resource.h"
#include "ds-raw-resource-private.h"

/**
 * DsHostMemoryResource:
 *
 * The raw resource of pageable host memory: aligned `malloc`
 * (`posix_memalign`) for blocks under 128 KiB; larger blocks get pages of
 * their own (`mmap`), which go back to the system when the block is given
 * back, so that what a pool gives back (at an idle release, a trim, to
 * keep to its memory bound) leaves the process instead of staying with
 * `malloc`. It never calls CUDA. It refuses, with a critical, a block it
 * did not hand out or one given back twice.
 */

struct _DsHostMemoryResource
{
  GObject       parent_instance;
  DsRawResource raw;
};

G_STATIC_ASSERT (sizeof (DsHostMemoryResource) == sizeof (DsRawResourceInstance));

G_DEFINE_FINAL_TYPE_WITH_CODE (DsHostMemoryResource, ds_host_memory_resource, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (DS_TYPE_MEMORY_RESOURCE,
                                                      ds_raw_resource_iface_init))

static void
ds_host_memory_resource_class_init (DsHostMemoryResourceClass *klass)
{
  ds_raw_resource_class_init (G_OBJECT_CLASS (klass), FALSE);
}

static void
ds_host_memory_resource_init (DsHostMemoryResource *self)
{
  ds_raw_resource_init (&self->raw, DS_MEMORY_KIND_HOST, -1);
}

/**
 * ds_host_memory_resource_new:
 *
 * Creates a raw host memory resource.
 *
 * Returns: (transfer full): a new #DsHostMemoryResource
 */
DsMemoryResource *
ds_host_memory_resource_new (void)
{
  return g_object_new (DS_TYPE_HOST_MEMORY_RESOURCE, NULL);
}
