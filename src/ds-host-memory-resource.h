/* ds-host-memory-resource.h: the raw host memory resource
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined (DS_INSIDE) && !defined (DS_COMPILATION)
# error "Only <ds.h> can be included directly."
#endif

#include "ds-memory-resource.h"

G_BEGIN_DECLS

#define DS_TYPE_HOST_MEMORY_RESOURCE (ds_host_memory_resource_get_type ())

DS_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (DsHostMemoryResource, ds_host_memory_resource, DS, HOST_MEMORY_RESOURCE, GObject)

DS_AVAILABLE_IN_ALL
DsMemoryResource *ds_host_memory_resource_new (void) G_GNUC_WARN_UNUSED_RESULT;

G_END_DECLS
