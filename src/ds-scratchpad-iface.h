/* ds-scratchpad-iface.h: "give me scratch memory of kind K"
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined (DS_INSIDE) && !defined (DS_COMPILATION)
# error "Only <ds.h> can be included directly."
#endif

#include <glib-object.h>

#include "ds-types.h"
#include "ds-memory-kind.h"

G_BEGIN_DECLS

#define DS_TYPE_SCRATCHPAD_IFACE (ds_scratchpad_iface_get_type ())

DS_AVAILABLE_IN_ALL
G_DECLARE_INTERFACE (DsScratchpadIface, ds_scratchpad_iface, DS, SCRATCHPAD_IFACE, GObject)

/**
 * DsScratchpadIfaceInterface:
 * @g_iface: the parent interface
 * @alloc: returns @size bytes of @kind memory aligned to @alignment, valid
 *   until the scratchpad is released; `NULL` with no error for size 0
 *
 * The virtual functions of [iface@Ds.ScratchpadIface].
 */
struct _DsScratchpadIfaceInterface
{
  GTypeInterface g_iface;

  gpointer (*alloc) (DsScratchpadIface  *self,
                     DsMemoryKind        kind,
                     gsize               size,
                     gsize               alignment,
                     GError            **error);
};

/* Inline for C callers where <ds.h> declares DsScratchpad: see
 * ds-scratchpad.h. */
DS_AVAILABLE_IN_ALL
gpointer ds_scratchpad_iface_alloc (DsScratchpadIface  *self,
                                    DsMemoryKind        kind,
                                    gsize               size,
                                    gsize               alignment,
                                    GError            **error);

G_END_DECLS
