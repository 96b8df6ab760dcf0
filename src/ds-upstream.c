/* ds-upstream.c: a resource bound for taking and giving back blocks
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>

#include "ds-upstream-private.h"
#include "ds-error.h"

gboolean
ds_upstream_bind (DsUpstream        *self,
                  DsMemoryResource  *resource,
                  GError           **error)
{
  const DsMemoryResourceInterface *iface = DS_MEMORY_RESOURCE_GET_IFACE (resource);
  const char *missing = NULL;

  if (iface->allocate == NULL)
    missing = "allocate";
  else if (iface->deallocate == NULL)
    missing = "deallocate";
  else if ((iface->allocate_async == NULL) != (iface->deallocate_async == NULL))
    missing = iface->allocate_async == NULL ? "allocate_async (it has deallocate_async)"
                                            : "deallocate_async (it has allocate_async)";
  if (missing != NULL)
    {
      memset (self, 0, sizeof *self);
      g_set_error (error, DS_ERROR, DS_ERROR_INVALID_ARGUMENT,
                   "%s %p implements DsMemoryResource without %s",
                   G_OBJECT_TYPE_NAME (resource), (void *) resource, missing);
      return FALSE;
    }

  self->resource = resource;
  self->iface = iface;
  self->fenced = ds_fenced_resource_peek (resource);
  return TRUE;
}
