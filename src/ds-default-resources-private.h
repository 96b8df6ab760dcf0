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

#include "ds-upstream-private.h"

G_BEGIN_DECLS

/* A new default resource of @kind for @device (>= 0) and the driver
 * context @context (NULL: the primary one), both ignored for host memory,
 * as get_default () creates them: a DsPoolResource over the raw resource
 * of that kind, bound to that device and context. */
DsMemoryResource *ds_default_resource_new        (DsMemoryKind   kind,
                                                  gint           device,
                                                  gpointer       context,
                                                  GError       **error);

/* The default for a scratchpad's device order, bound: of @kind for @device
 * in the driver context @context (that of the order's stream; the primary
 * one of @device and NULL mean the same), whatever the calling thread has
 * current. Remembers per thread and kind the last answer (valid until the
 * thread's next call), so a lifecycle that needs the same default again
 * takes no lock and makes no CUDA call; set_default () invalidates it.
 * *@self_scoped: the resource is one ds created, which enters its device
 * and context by itself. */
const DsUpstream *ds_default_resource_get_cached (DsMemoryKind   kind,
                                                  gint           device,
                                                  gpointer       context,
                                                  gboolean      *self_scoped,
                                                  GError       **error);

G_END_DECLS
