/* ds-fenced-resource.c: a resource that keeps stream order itself
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "ds-fenced-resource-private.h"

G_DEFINE_INTERFACE (DsFencedResource, ds_fenced_resource, DS_TYPE_MEMORY_RESOURCE)

static void
ds_fenced_resource_default_init (DsFencedResourceInterface *iface)
{
}

const DsFencedResourceInterface *
ds_fenced_resource_peek (DsMemoryResource *resource)
{
  return g_type_interface_peek (G_TYPE_INSTANCE_GET_CLASS (resource, G_TYPE_OBJECT, GTypeClass),
                                DS_TYPE_FENCED_RESOURCE);
}

DsScopeBinding
ds_fenced_resource_get_binding (DsMemoryResource *resource,
                                gint              device,
                                gpointer          context)
{
  const DsFencedResourceInterface *iface = ds_fenced_resource_peek (resource);

  if (iface == NULL || iface->get_binding == NULL || device < 0)
    return DS_SCOPE_BINDING_OTHER;

  return iface->get_binding ((DsFencedResource *) resource, device, context);
}
