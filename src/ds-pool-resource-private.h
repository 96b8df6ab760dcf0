/* ds-pool-resource-private.h: what the default registry calls
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "ds-pool-resource.h"

G_BEGIN_DECLS

/* A pool over @upstream whose upstream calls, from any thread, run on
 * @device (>= 0; ignored for host memory) and in the driver context
 * current at its first upstream allocation. */
DsMemoryResource *ds_pool_resource_new_for_device (DsMemoryResource *upstream,
                                                   gint              device);

G_END_DECLS
