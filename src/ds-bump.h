/* ds-bump.h: the allocation rule of ds's arenas
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The one place where an allocation goes in a block is written. The
 * library's arenas use it, and so do the inline ds_scratchpad_alloc () and
 * ds_scratchpad_iface_alloc () of C callers, which is why it is installed.
 * DsBumpWindow is API (its layout is ABI); the names that start with an
 * underscore are not, and may change with the soversion.
 */

#pragma once

#if !defined (DS_INSIDE) && !defined (DS_COMPILATION)
# error "Only <ds.h> can be included directly."
#endif

#include <glib.h>

G_BEGIN_DECLS

/* Whether ds_scratchpad_alloc () and ds_scratchpad_iface_alloc () are
 * declared as the exported functions (in the library, with
 * DS_DISABLE_INLINE_ALLOC, and for the GIR scanner, whose preprocessor
 * takes __GI_SCANNER__ only in a plain #ifdef) rather than inline. */
#ifdef __GI_SCANNER__
# define _DS_ALLOC_EXPORTED 1
#elif defined (DS_COMPILATION) || defined (DS_DISABLE_INLINE_ALLOC)
# define _DS_ALLOC_EXPORTED 1
#endif

/**
 * DsBumpWindow:
 * @cur: where the next allocation goes, before it is aligned
 * @end: the end of the block
 *
 * The free part, from @cur to @end, of the block that a
 * [class@Ds.Scratchpad] allocates one memory kind in; both 0 while the kind
 * holds no block. @cur is a multiple of 16 wherever there is room after
 * it, so that a request aligned to at most 16 starts at @cur itself.
 *
 * Public for the inline ds_scratchpad_alloc () of C callers, which moves
 * @cur (see [struct@Ds.ScratchpadHead]); nothing else may write it.
 */
typedef struct
{
  guintptr cur;
  guintptr end;
} DsBumpWindow;

#ifndef __GI_SCANNER__

/* What an alignment of 0 means, and the granule of the cursor. */
#define _DS_BUMP_MIN_ALIGNMENT ((gsize) 16)

/* The rule's common case: @size bytes aligned to @alignment (a power of
 * two; 0 means 16) go at the cursor, aligned up, taking @size rounded up
 * to 16, and that fits in the block whose free part is [@cur, @end). TRUE
 * with the place in *@p and the next cursor in *@next; FALSE for anything
 * else (a size of 0, an alignment that is not a power of two, no room for
 * the rounded size), which _ds_bump_place () decides. The inline
 * ds_scratchpad_alloc () takes this alone and leaves the rest to the
 * library, so that its callers' fast path is one comparison that falls
 * through: with the whole rule inline, GCC laid the fast path out over
 * two taken branches. */
static inline gboolean
_ds_bump_fits (guintptr  cur,
               guintptr  end,
               gsize     size,
               gsize     alignment,
               guintptr *p,
               guintptr *next)
{
  gsize rounded = (size + _DS_BUMP_MIN_ALIGNMENT - 1) & ~(_DS_BUMP_MIN_ALIGNMENT - 1);
  guintptr start = cur;

  if (G_UNLIKELY ((alignment & (alignment - 1)) != 0))
    return FALSE;
  if (G_UNLIKELY (alignment > _DS_BUMP_MIN_ALIGNMENT))
    {
      start = (cur + alignment - 1) & ~(guintptr) (alignment - 1);
      /* Wraps only past the end of the address space. */
      if (start < cur || start > end)
        return FALSE;
    }
  /* A size of 0, or one that wraps when rounded, makes rounded - 1 the
   * largest value, which never fits. */
  *p = start;
  *next = start + rounded;
  return rounded - 1 < end - start;
}

/* The rule: the common case above, else the size alone, unrounded, may
 * still fit, taking the rest of a block whose end is not a multiple of 16
 * (a size of 0 wraps to the largest value again, and never fits). TRUE
 * with *@p and *@next; FALSE when the request does not fit, or for a size
 * of 0 or an alignment that is not a power of two (the library then says
 * why). */
static inline gboolean
_ds_bump_place (guintptr  cur,
                guintptr  end,
                gsize     size,
                gsize     alignment,
                guintptr *p,
                guintptr *next)
{
  guintptr start = cur;

  if (G_LIKELY (_ds_bump_fits (cur, end, size, alignment, p, next)))
    return TRUE;
  if ((alignment & (alignment - 1)) != 0)
    return FALSE;
  if (alignment > _DS_BUMP_MIN_ALIGNMENT)
    {
      start = (cur + alignment - 1) & ~(guintptr) (alignment - 1);
      if (start < cur || start > end)
        return FALSE;
    }
  *p = start;
  *next = end;
  return size - 1 < end - start;
}

/* The rule applied to the window @w: the place, with the cursor moved
 * past it, or NULL. */
static inline gpointer
_ds_bump (DsBumpWindow *w,
          gsize         size,
          gsize         alignment)
{
  guintptr p, next;

  if (G_UNLIKELY (!_ds_bump_place (w->cur, w->end, size, alignment, &p, &next)))
    return NULL;

  w->cur = next;
  return (gpointer) p;
}

/* The window of @kind among the four consecutive windows from @windows,
 * kind masked so that any value picks one (a bad kind is refused by the
 * library, whose slow path it takes).
 * Pointer arithmetic, not &windows[kind]: GCC takes a store to one field
 * of an array element with a variable index for a store to any field of
 * it, and would reload the cursor from memory at every allocation of a
 * loop. */
#define _DS_BUMP_WINDOW(windows, kind) \
  ((DsBumpWindow *) (void *) ((guint8 *) (windows) + \
                              ((guint) (kind) & 3u) * sizeof (DsBumpWindow)))

#endif /* __GI_SCANNER__ */

G_END_DECLS
