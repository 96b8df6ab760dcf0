/* ds-bump.h: the allocation rule of ds's arenas
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The one place where where an allocation goes in a block is written. The
 * library's arenas use it, and so do the inline ds_scratchpad_alloc () and
 * ds_scratchpad_iface_alloc () of C callers, which is why it is installed.
 * Nothing here is API: the names start with an underscore.
 */

#pragma once

#if !defined (DS_INSIDE) && !defined (DS_COMPILATION)
# error "Only <ds.h> can be included directly."
#endif

#include <glib.h>

G_BEGIN_DECLS

#ifndef __GI_SCANNER__

/* What an alignment of 0 means, and the granule of the cursor. */
#define _DS_BUMP_MIN_ALIGNMENT ((gsize) 16)

/* [_cur, _end) of an arena's current block; {0, 0} when it has none. The
 * cursor is a multiple of 16 wherever there is room after it, so that a
 * request aligned to at most 16 starts at the cursor itself. */
typedef struct
{
  guintptr _cur;
  guintptr _end;
} _DsBumpWindow;

/* The rule: @size bytes aligned to @alignment (a power of two; 0 means
 * 16) go at the cursor, aligned up, and take @size rounded up to 16 (or
 * the rest of the block). Returns where, advancing the cursor, or NULL
 * when the request does not fit, or for a size of 0 or an alignment that
 * is not a power of two (the library then says why). */
static inline gpointer
_ds_bump (_DsBumpWindow *w,
          gsize          size,
          gsize          alignment)
{
  gsize rounded = (size + _DS_BUMP_MIN_ALIGNMENT - 1) & ~(_DS_BUMP_MIN_ALIGNMENT - 1);
  guintptr start = w->_cur, room;

  if (G_UNLIKELY ((alignment & (alignment - 1)) != 0))
    return NULL;
  if (G_UNLIKELY (alignment > _DS_BUMP_MIN_ALIGNMENT))
    {
      start = (w->_cur + alignment - 1) & ~(guintptr) (alignment - 1);
      /* Wraps only past the end of the address space. */
      if (start < w->_cur || start > w->_end)
        return NULL;
    }
  /* A size of 0 wraps to the largest value: it never fits. */
  room = w->_end - start;
  if (G_UNLIKELY (size - 1 >= room))
    return NULL;

  w->_cur = start + (rounded - 1 < room ? rounded : room);
  return (gpointer) start;
}

#endif /* __GI_SCANNER__ */

G_END_DECLS
