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
#include "ds-pool-stats.h"

G_BEGIN_DECLS

/**
 * DS_POOL_RESOURCE_DEFAULT_MAX_CACHED_SIZE:
 *
 * The default of [property@Ds.PoolResource:max-cached-size]: 4 GiB.
 */
#define DS_POOL_RESOURCE_DEFAULT_MAX_CACHED_SIZE (G_GUINT64_CONSTANT (1) << 32)

/**
 * DS_POOL_RESOURCE_DEFAULT_RELEASE_THRESHOLD:
 *
 * The default of [property@Ds.PoolResource:release-threshold]: 32 MiB.
 */
#define DS_POOL_RESOURCE_DEFAULT_RELEASE_THRESHOLD (G_GUINT64_CONSTANT (32) << 20)

/**
 * DS_POOL_RESOURCE_DEFAULT_IDLE_TIMEOUT:
 *
 * The default of [property@Ds.PoolResource:idle-timeout]: 5000 ms.
 */
#define DS_POOL_RESOURCE_DEFAULT_IDLE_TIMEOUT 5000

#define DS_TYPE_POOL_RESOURCE (ds_pool_resource_get_type ())

DS_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (DsPoolResource, ds_pool_resource, DS, POOL_RESOURCE, GObject)

DS_AVAILABLE_IN_ALL
DsMemoryResource *ds_pool_resource_new                 (DsMemoryResource  *upstream) G_GNUC_WARN_UNUSED_RESULT;

DS_AVAILABLE_IN_ALL
DsMemoryResource *ds_pool_resource_get_upstream        (DsPoolResource    *self);
DS_AVAILABLE_IN_ALL
guint64           ds_pool_resource_get_max_cached_size (DsPoolResource    *self);
DS_AVAILABLE_IN_ALL
void              ds_pool_resource_set_max_cached_size (DsPoolResource    *self,
                                                        guint64            max_cached_size);

DS_AVAILABLE_IN_ALL
guint64           ds_pool_resource_get_release_threshold (DsPoolResource  *self);
DS_AVAILABLE_IN_ALL
void              ds_pool_resource_set_release_threshold (DsPoolResource  *self,
                                                          guint64          release_threshold);
DS_AVAILABLE_IN_ALL
guint             ds_pool_resource_get_idle_timeout    (DsPoolResource    *self);
DS_AVAILABLE_IN_ALL
void              ds_pool_resource_set_idle_timeout    (DsPoolResource    *self,
                                                        guint              idle_timeout);

DS_AVAILABLE_IN_ALL
void              ds_pool_resource_get_stats           (DsPoolResource    *self,
                                                        DsPoolStats       *stats);
DS_AVAILABLE_IN_ALL
guint64           ds_pool_resource_trim                (DsPoolResource    *self);

G_END_DECLS
