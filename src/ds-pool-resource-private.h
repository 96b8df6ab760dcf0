/* ds-pool-resource-private.h: what the default registry calls
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "ds-pool-resource.h"

G_BEGIN_DECLS

/* A pool over @upstream whose upstream calls, from any thread, run on
 * @device (>= 0) in the driver context @context (NULL: the device's
 * primary context); both are ignored for host memory. */
DsMemoryResource *ds_pool_resource_new_for_device (DsMemoryResource *upstream,
                                                   gint              device,
                                                   gpointer          context);

G_END_DECLS
