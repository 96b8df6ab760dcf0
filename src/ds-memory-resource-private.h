/* ds-memory-resource-private.h
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "ds-memory-resource.h"

G_BEGIN_DECLS

/* Checks an alignment that a caller passed (0 means @default_alignment)
 * and a size: the alignment must be a power of two and size + alignment
 * must not overflow. Sets DS_ERROR_INVALID_ARGUMENT otherwise. */
gboolean ds_memory_check_size_alignment (gsize    size,
                                         gsize   *alignment,
                                         gsize    default_alignment,
                                         GError **error);

/* Resolves device -1 to the current device and checks the range. Never
 * calls CUDA for the host kind (returns 0 there). */
gboolean ds_memory_resolve_device       (DsMemoryKind kind,
                                         gint        *device,
                                         GError     **error);

/* ds_memory_resource_get_default () for a scratchpad's hot path: called
 * with the device and driver context of the scratchpad's device order
 * current, and remembers per thread and kind the last answer for
 * (@device, @context), so a lifecycle that needs the same default again
 * takes no lock and makes no CUDA call. set_default () invalidates it. */
DsMemoryResource *ds_memory_resource_get_default_cached (DsMemoryKind kind,
                                                         gint         device,
                                                         gpointer     context,
                                                         GError     **error);

static inline const char *
ds_memory_kind_get_nick (DsMemoryKind kind)
{
  static const char * const nicks[] = { "host", "pinned", "device", "managed" };

  return DS_MEMORY_KIND_IS_VALID (kind) ? nicks[kind] : "invalid";
}

G_END_DECLS
