/* ds-scratchpad-cursor.h: a scratchpad's bump window lent to a C loop
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
#include "ds-scratchpad.h"

G_BEGIN_DECLS

/* C only: nothing here is for bindings, so the GIR leaves all of it out. */
#ifndef __GI_SCANNER__

/**
 * DsScratchpadCursor:
 *
 * One memory kind's bump window of a [class@Ds.Scratchpad], lent to a
 * C loop that allocates many temporaries of that kind. A C-only fast
 * path: bindings use [method@Ds.Scratchpad.alloc_block].
 *
 * `ds_scratchpad_alloc()` bumps a cursor that lives in the scratchpad:
 * the compiler cannot keep it in a register across the out-of-line call
 * that takes a new block, so every allocation of a loop waits for the
 * store of the one before. A cursor is a local variable of the caller,
 * copied in and out of the scratchpad by value, so the compiler keeps it
 * in registers: an allocation that fits is a few instructions with no
 * memory access at all.
 *
 * |[<!-- language="C" -->
 * DsScratchpadCursor host = ds_scratchpad_begin_cursor (sp, DS_MEMORY_KIND_HOST);
 *
 * for (guint i = 0; i < n; i++)
 *   {
 *     items[i] = ds_scratchpad_cursor_alloc (&host, sizes[i], 0, &error);
 *     if (items[i] == NULL && error != NULL)
 *       break;
 *   }
 * ds_scratchpad_end_cursor (&host);
 * ]|
 *
 * Between ds_scratchpad_begin_cursor() and ds_scratchpad_end_cursor() the
 * cursor holds a reference to the scratchpad and the kind belongs to it:
 * `ds_scratchpad_alloc()` of that kind and [method@Ds.Scratchpad.release]
 * are refused with a critical (other kinds are unaffected), and the
 * scratchpad's counters ([method@Ds.Scratchpad.get_allocated] and the
 * others) leave out what the cursor handed out in its current block until
 * it ends. After ds_scratchpad_end_cursor() every allocation from the
 * cursor is refused with a critical. Allocations are the same as those of
 * `ds_scratchpad_alloc()`: the same alignment, errors and lifetime.
 *
 * The fields are private. Copying a cursor and using both copies is a
 * programmer error that nothing detects; pass a `DsScratchpadCursor *`.
 */
typedef struct
{
  /*< private >*/
  guintptr      _cur;
  guintptr      _end;
  guint64       _allocated;
  guint32       _n_allocations;
  guint32       _kind;
  DsScratchpad *_scratchpad;   /* a reference; NULL once ended */
} DsScratchpadCursor;

DS_AVAILABLE_IN_ALL
DsScratchpadCursor   ds_scratchpad_begin_cursor     (DsScratchpad        *self,
                                                     DsMemoryKind         kind);
DS_AVAILABLE_IN_ALL
DsScratchpadCursor   ds_scratchpad_cursor_refill    (DsScratchpadCursor   cursor,
                                                     gsize                size,
                                                     gsize                alignment,
                                                     gpointer            *ptr,
                                                     GError             **error);
DS_AVAILABLE_IN_ALL
void                 ds_scratchpad_cursor_finish    (DsScratchpadCursor   cursor);

/**
 * ds_scratchpad_cursor_alloc: (skip)
 * @cursor: a cursor from ds_scratchpad_begin_cursor()
 * @size: the number of bytes
 * @alignment: a power of two, or 0 for 16
 * @error: return location for a #GError
 *
 * Allocates @size bytes of the cursor's kind aligned to @alignment, as
 * `ds_scratchpad_alloc()` does: the same results and errors. A request
 * that fits in the current block touches nothing but @cursor; anything
 * else (a new block, size 0, a bad alignment, an @error already set, a
 * cursor that has ended) goes to ds_scratchpad_cursor_refill().
 *
 * Returns: (transfer none) (nullable): the memory, as
 *   `ds_scratchpad_alloc()`
 */
static inline gpointer
ds_scratchpad_cursor_alloc (DsScratchpadCursor  *cursor,
                            gsize                size,
                            gsize                alignment,
                            GError             **error)
{
  gsize a = alignment != 0 ? alignment : DS_SCRATCHPAD_DEFAULT_ALIGNMENT;
  guintptr cur = cursor->_cur;
  guintptr p = (cur + a - 1) & ~(guintptr) (a - 1);
  gpointer ptr;

  if (G_LIKELY (size != 0 && (a & (a - 1)) == 0 && (error == NULL || *error == NULL) &&
                p >= cur && p <= cursor->_end && size <= cursor->_end - p))
    {
      cursor->_cur = p + size;
      cursor->_allocated += size;
      cursor->_n_allocations++;
      return (gpointer) p;
    }

  /* By value both ways: the caller's cursor never has its address taken,
   * so that it can live in registers. */
  *cursor = ds_scratchpad_cursor_refill (*cursor, size, alignment, &ptr, error);
  return ptr;
}

/**
 * ds_scratchpad_end_cursor: (skip)
 * @cursor: a cursor from ds_scratchpad_begin_cursor()
 *
 * Gives the kind back to the scratchpad, with what the cursor handed out
 * (it stays valid until the scratchpad is released, as every allocation),
 * and drops the cursor's reference. @cursor is left ended: allocations
 * from it are refused, and ending it again does nothing.
 */
static inline void
ds_scratchpad_end_cursor (DsScratchpadCursor *cursor)
{
  DsScratchpadCursor ended = { 1, 0, 0, 0, 0, NULL };

  if (cursor->_scratchpad != NULL)
    ds_scratchpad_cursor_finish (*cursor);
  ended._kind = cursor->_kind;
  *cursor = ended;
}
#endif /* __GI_SCANNER__ */

G_END_DECLS
