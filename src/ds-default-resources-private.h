/* ds-default-resources-private.h: the default resource of each kind
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * ds_memory_resource_get_default () and _set_default () (declared in
 * ds-memory-resource.h) live in ds-default-resources.c, above the pools
 * they create; this is what the scratchpad and the tests use besides.
 */

#pragma once

#include "ds-memory-resource.h"

G_BEGIN_DECLS

/* A new default resource of @kind for @device (>= 0; ignored for host),
 * as get_default () creates them: a DsPoolResource over the raw resource
 * of that kind, bound to @device and to the driver context current now. */
DsMemoryResource *ds_default_resource_new        (DsMemoryKind   kind,
                                                  gint           device,
                                                  GError       **error);

/* ds_memory_resource_get_default () for a scratchpad's hot path: called
 * with the device and driver context of the scratchpad's device order,
 * and remembers per thread and kind the last answer for (@device,
 * @context), so a lifecycle that needs the same default again takes no
 * lock and makes no CUDA call. set_default () invalidates it. */
DsMemoryResource *ds_default_resource_get_cached (DsMemoryKind   kind,
                                                  gint           device,
                                                  gpointer       context,
                                                  GError       **error);

G_END_DECLS
