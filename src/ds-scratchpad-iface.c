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

/* The vtable of the class this thread asked about last: a loop of
 * allocations from one scratchpad looks its interface up once, as a
 * C++ caller's virtual call would. A class lives as long as any of its
 * instances, and the caller holds one. The class starts as one no instance has (not NULL: an instance
 * that is not one has no class). */
typedef struct
{
  gconstpointer                     klass;
  const DsScratchpadIfaceInterface *iface;
} VtableMemo;

static __thread VtableMemo vtable_memo = {
  (gconstpointer) 1, NULL
};

/* @self's interface, or NULL (with a critical) if it has none. */
static inline const DsScratchpadIfaceInterface *
look_up (DsScratchpadIface *self)
{
  if (G_LIKELY (self != NULL && ((GTypeInstance *) self)->g_class == vtable_memo.klass))
    return vtable_memo.iface;

  g_return_val_if_fail (DS_IS_SCRATCHPAD_IFACE (self), NULL);

  vtable_memo.iface = DS_SCRATCHPAD_IFACE_GET_IFACE (self);
  vtable_memo.klass = ((GTypeInstance *) self)->g_class;
  return vtable_memo.iface;
}

/* Windows with no room: every allocation in them goes to alloc. Never
 * written (a bump that does not fit writes nothing). */
static _DsBumpWindow no_windows[DS_N_MEMORY_KINDS];

/**
 * ds_scratchpad_iface_get_bump_windows: (skip)
 * @self: (nullable): a #DsScratchpadIface
 *
 * The bump windows @self publishes (see
 * [struct@Ds.ScratchpadIfaceInterface]), or windows with no room: what
 * the inline ds_scratchpad_iface_alloc() of C callers bumps in. The same
 * while @self lives.
 *
 * Returns: (transfer none): the windows, one per [enum@Ds.MemoryKind]
 */
gpointer
ds_scratchpad_iface_get_bump_windows (DsScratchpadIface *self)
{
  const DsScratchpadIfaceInterface *iface;
  gpointer windows;

  if (self == NULL || (iface = look_up (self)) == NULL || iface->get_bump_windows == NULL ||
      (windows = iface->get_bump_windows (self)) == NULL)
    return no_windows;

  return windows;
}

/**
 * ds_scratchpad_iface_alloc_slow: (skip)
 * @self: a #DsScratchpadIface
 * @kind: the kind of memory
 * @size: the number of bytes
 * @alignment: a power of two, or 0 for 16
 * @error: return location for a #GError
 *
 * [method@Ds.ScratchpadIface.alloc] through the implementation's alloc:
 * what the inline ds_scratchpad_iface_alloc() of C callers calls for
 * anything that does not fit its bump windows.
 *
 * Returns: the memory, as [method@Ds.ScratchpadIface.alloc]
 */
gpointer
ds_scratchpad_iface_alloc_slow (DsScratchpadIface  *self,
                                DsMemoryKind        kind,
                                gsize               size,
                                gsize               alignment,
                                GError            **error)
{
  const DsScratchpadIfaceInterface *iface = look_up (self);

  if (iface == NULL)
    return NULL;
  g_return_val_if_fail (iface->alloc != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  return iface->alloc (self, kind, size, alignment, error);
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
 * In C this is inline where it can be: an allocation that fits in the
 * current block of an implementation that publishes its bump windows
 * ([class@Ds.Scratchpad] does) costs a few instructions. In a loop, keep
 * @self in a local variable, so that the windows are asked for once.
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
  return ds_scratchpad_iface_alloc_slow (self, kind, size, alignment, error);
}
