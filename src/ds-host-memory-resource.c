/* ds-host-memory-resource.c
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <errno.h>
#include <stdlib.h>

#include "ds-host-memory-resource.h"
#include "ds-raw-memory-resource-private.h"
#include "ds-error.h"

/**
 * DsHostMemoryResource:
 *
 * The raw resource of pageable host memory: aligned `malloc`
 * (`posix_memalign`). It never calls CUDA. The #DsHostMemoryResource:device
 * property is unused.
 */

static gpointer
host_alloc (DsMemoryKind   kind,
            gint           device,
            gsize          size,
            gsize          alignment,
            GError       **error)
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
host_free (DsMemoryKind kind,
           gint         device,
           gpointer     ptr,
           gsize        size,
           gsize        alignment)
{
  free (ptr);
}

/**
 * DsHostMemoryResource:device:
 *
 * Unused: host memory belongs to no device.
 */
DS_DEFINE_RAW_MEMORY_RESOURCE (DsHostMemoryResource, ds_host_memory_resource,
                               DS_MEMORY_KIND_HOST, host_alloc, host_free)

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
