/* ds-host-memory-resource.c
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <errno.h>
#include <stdlib.h>

#include "ds-host-memory-resource.h"
#include "ds-error.h"

/**
 * DsHostMemoryResource:
 *
 * The raw resource of pageable host memory: aligned `malloc`
 * (`posix_memalign`). It never calls CUDA.
 */

struct _DsHostMemoryResource
{
  GObject parent_instance;
};

static void ds_host_memory_resource_iface_init (DsMemoryResourceInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (DsHostMemoryResource, ds_host_memory_resource, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (DS_TYPE_MEMORY_RESOURCE,
                                                      ds_host_memory_resource_iface_init))

static DsMemoryKind
ds_host_memory_resource_get_kind (DsMemoryResource *resource)
{
  return DS_MEMORY_KIND_HOST;
}

static gpointer
ds_host_memory_resource_allocate (DsMemoryResource  *resource,
                                  gsize              size,
                                  gsize              alignment,
                                  GError           **error)
{
  void *ptr = NULL;
  int result;

  result = posix_memalign (&ptr, MAX (alignment, sizeof (void *)), size);
  if (result != 0)
    {
      g_set_error (error, DS_ERROR,
                   result == ENOMEM ? DS_ERROR_OUT_OF_MEMORY : DS_ERROR_INVALID_ARGUMENT,
                   "Could not allocate %" G_GSIZE_FORMAT " bytes of host memory "
                   "aligned to %" G_GSIZE_FORMAT ": %s",
                   size, alignment, g_strerror (result));
      return NULL;
    }

  return ptr;
}

static void
ds_host_memory_resource_deallocate (DsMemoryResource *resource,
                                    gpointer          ptr,
                                    gsize             size,
                                    gsize             alignment)
{
  free (ptr);
}

static void
ds_host_memory_resource_iface_init (DsMemoryResourceInterface *iface)
{
  iface->get_kind = ds_host_memory_resource_get_kind;
  iface->allocate = ds_host_memory_resource_allocate;
  iface->deallocate = ds_host_memory_resource_deallocate;
}

static void
ds_host_memory_resource_class_init (DsHostMemoryResourceClass *klass)
{
}

static void
ds_host_memory_resource_init (DsHostMemoryResource *self)
{
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
