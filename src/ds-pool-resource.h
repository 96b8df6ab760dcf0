/* ds-pool-resource.h: a stream-aware caching pool over any resource
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

#define DS_TYPE_POOL_RESOURCE (ds_pool_resource_get_type ())

DS_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (DsPoolResource, ds_pool_resource, DS, POOL_RESOURCE, GObject)

DS_AVAILABLE_IN_ALL
DsMemoryResource *ds_pool_resource_new          (DsMemoryResource *upstream) G_GNUC_WARN_UNUSED_RESULT;
DS_AVAILABLE_IN_ALL
DsMemoryResource *ds_pool_resource_get_upstream (DsPoolResource   *self);
DS_AVAILABLE_IN_ALL
guint64           ds_pool_resource_trim         (DsPoolResource   *self);

G_END_DECLS
