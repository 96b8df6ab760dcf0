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
#include "ds-bump.h"

G_BEGIN_DECLS

#define DS_TYPE_SCRATCHPAD_IFACE (ds_scratchpad_iface_get_type ())

DS_AVAILABLE_IN_ALL
G_DECLARE_INTERFACE (DsScratchpadIface, ds_scratchpad_iface, DS, SCRATCHPAD_IFACE, GObject)

/**
 * DsScratchpadIfaceInterface:
 * @g_iface: the parent interface
 * @alloc: returns @size bytes of @kind memory aligned to @alignment, valid
 *   until the scratchpad is released; `NULL` with no error for size 0
 * @get_bump_windows: optional: an implementation whose memory of each kind
 *   comes from a current block that it bumps in by ds's rule may return
 *   its %DS_N_MEMORY_KINDS bump windows, so that C callers allocate inside
 *   them inline ([class@Ds.Scratchpad] does); `NULL` (the function or its
 *   result) sends every allocation to @alloc
 *
 * The virtual functions of [iface@Ds.ScratchpadIface].
 */
struct _DsScratchpadIfaceInterface
{
  GTypeInterface g_iface;

  gpointer (*alloc)            (DsScratchpadIface  *self,
                                DsMemoryKind        kind,
                                gsize               size,
                                gsize               alignment,
                                GError            **error);
#ifndef __GI_SCANNER__
  gpointer (*get_bump_windows) (DsScratchpadIface  *self);
#endif
};

DS_AVAILABLE_IN_0_2
gpointer ds_scratchpad_iface_alloc_slow        (DsScratchpadIface  *self,
                                                DsMemoryKind        kind,
                                                gsize               size,
                                                gsize               alignment,
                                                GError            **error);
DS_AVAILABLE_IN_0_2
gpointer ds_scratchpad_iface_get_bump_windows  (DsScratchpadIface  *self) G_GNUC_CONST;

#ifdef _DS_ALLOC_EXPORTED
DS_AVAILABLE_IN_ALL
gpointer ds_scratchpad_iface_alloc             (DsScratchpadIface  *self,
                                                DsMemoryKind        kind,
                                                gsize               size,
                                                gsize               alignment,
                                                GError            **error);
#else
/* Inline for C callers, as ds_scratchpad_alloc () (ds-scratchpad.h): the
 * bump in the windows the implementation publishes, asked for once per
 * loop (the function is const), else its alloc. */
static inline gpointer
ds_scratchpad_iface_alloc (DsScratchpadIface  *self,
                           DsMemoryKind        kind,
                           gsize               size,
                           gsize               alignment,
                           GError            **error)
{
  /* As ds_scratchpad_alloc () does it: the window read once and written
   * once. Windows with no room are never written: a bump in them fails,
   * and the slow path leaves their cursor as it was. */
  _DsBumpWindow *w = _DS_BUMP_WINDOW (ds_scratchpad_iface_get_bump_windows (self), kind);
  guintptr next = w->_cur, p;

  if (G_UNLIKELY (!((guint) kind < DS_N_MEMORY_KINDS && (error == NULL || *error == NULL) &&
                    _ds_bump_place (next, w->_end, size, alignment, &p, &next))))
    {
      p = (guintptr) ds_scratchpad_iface_alloc_slow (self, kind, size, alignment, error);
      next = w->_cur;
    }
  w->_cur = next;

  return (gpointer) p;
}
#endif

G_END_DECLS
