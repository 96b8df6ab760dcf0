/* ds-scratchpad-iface.c: "give me scratch memory of kind K"
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "ds-scratchpad-iface.h"

/**
 * DsScratchpadIface:
 *
 * The abstract scratchpad: something that hands out short-lived memory of
 * a [enum@Ds.MemoryKind] that stays valid until the scratchpad is released.
 *
 * It is what a piece of GPU work takes from its caller (DALI's
 * `Scratchpad`); [class@Ds.Scratchpad] is the implementation ds ships.
 */

G_DEFINE_INTERFACE (DsScratchpadIface, ds_scratchpad_iface, G_TYPE_OBJECT)

static void
ds_scratchpad_iface_default_init (DsScratchpadIfaceInterface *iface)
{
}

/**
 * ds_scratchpad_iface_alloc: (virtual alloc) (skip)
 * @self: a #DsScratchpadIface
 * @kind: the kind of memory
 * @size: the number of bytes
 * @alignment: a power of two, or 0 for 16
 * @error: return location for a #GError
 *
 * Allocates @size bytes of @kind memory aligned to @alignment. The memory
 * stays valid until the scratchpad is released or finalized.
 *
 * In C, on a [class@Ds.Scratchpad], an allocation that fits in the
 * current block of its kind is inline, as [method@Ds.Scratchpad.alloc]'s
 * is: a comparison of @self's class and a pointer bump.
 *
 * Returns: (type guint64): the memory (an integer address in bindings);
 *   `NULL` (0) without an error for size 0; `NULL` with @error set on failure
 *   (%DS_ERROR_INVALID_ARGUMENT for a bad alignment, an overflowing size or
 *   an unknown kind; %DS_ERROR_DISPOSED from a disposed #DsScratchpad)
 */
gpointer
ds_scratchpad_iface_alloc (DsScratchpadIface  *self,
                           DsMemoryKind        kind,
                           gsize               size,
                           gsize               alignment,
                           GError            **error)
{
  g_return_val_if_fail (DS_IS_SCRATCHPAD_IFACE (self), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  return DS_SCRATCHPAD_IFACE_GET_IFACE (self)->alloc (self, kind, size, alignment, error);
}
