/* ds-scratchpad-cursor.c: a scratchpad's bump window lent to a C loop
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "ds-scratchpad-cursor.h"
#include "ds-scratchpad-private.h"
#include "ds-memory-resource-private.h"

/* While a kind is lent, its window in the scratchpad is closed (end at
 * the cursor of the time it was lent: nothing fits, so every allocation
 * of the kind reaches alloc_slow (), which refuses it) and its bit is set
 * in self->cursors. The window's counters stay what they were when it
 * was lent; the cursor carries them on and brings them back. */

static void
lend (DsScratchpad       *self,
      DsScratchpadCursor *cursor)
{
  _DsScratchpadWindow *w = &self->windows[cursor->_kind];

  cursor->_cur = w->_cur;
  cursor->_end = w->_end;
  cursor->_allocated = w->_allocated;
  cursor->_n_allocations = w->_n_allocations;
  w->_end = w->_cur;
  self->cursors |= 1u << cursor->_kind;
}

static void
take_back (DsScratchpad             *self,
           const DsScratchpadCursor *cursor)
{
  _DsScratchpadWindow *w = &self->windows[cursor->_kind];

  w->_cur = cursor->_cur;
  w->_end = cursor->_end;
  w->_allocated = cursor->_allocated;
  w->_n_allocations = cursor->_n_allocations;
  self->cursors &= ~(1u << cursor->_kind);
}

/* Whether @cursor is the one @self lent its kind to (as far as can be
 * told: a copy of it cannot be told from it); a critical if not. */
static gboolean
check_lent (const DsScratchpadCursor *cursor,
            const char               *func)
{
  DsScratchpad *self = cursor->_scratchpad;

  if (G_UNLIKELY (self == NULL))
    {
      g_critical ("%s: the cursor has ended (or was never begun)", func);
      return FALSE;
    }
  if (G_UNLIKELY (!DS_IS_SCRATCHPAD (self) || !DS_MEMORY_KIND_IS_VALID (cursor->_kind) ||
                  !(self->cursors & (1u << cursor->_kind))))
    {
      g_critical ("%s: scratchpad %p has no cursor open on its %s memory: this is "
                  "a copy of a cursor that has ended", func, (void *) self,
                  DS_MEMORY_KIND_IS_VALID (cursor->_kind) ?
                  ds_memory_kind_get_nick (cursor->_kind) : "(invalid)");
      return FALSE;
    }

  return TRUE;
}

/**
 * ds_scratchpad_begin_cursor: (skip)
 * @self: a #DsScratchpad
 * @kind: the kind of memory
 *
 * Lends @kind's bump window of @self to a cursor (see #DsScratchpadCursor)
 * until ds_scratchpad_end_cursor(). Takes a reference to @self. Makes no
 * allocation and no CUDA call.
 *
 * A kind has one cursor at a time: asking for a second one is refused
 * with a critical, as is an invalid @kind. The cursor returned then has
 * ended already: every allocation from it is refused with a critical.
 *
 * Returns: the cursor, to keep in a local variable
 */
DsScratchpadCursor
ds_scratchpad_begin_cursor (DsScratchpad *self,
                            DsMemoryKind  kind)
{
  DsScratchpadCursor cursor = { 1, 0, 0, 0, 0, NULL };

  g_return_val_if_fail (DS_IS_SCRATCHPAD (self), cursor);
  g_return_val_if_fail (DS_MEMORY_KIND_IS_VALID (kind), cursor);

  cursor._kind = (guint32) kind;
  if (G_UNLIKELY (self->cursors & (1u << kind)))
    {
      g_critical ("ds_scratchpad_begin_cursor: the %s memory of scratchpad %p is "
                  "lent to a cursor already; end that one first",
                  ds_memory_kind_get_nick (kind), (void *) self);
      return cursor;
    }

  cursor._scratchpad = g_object_ref (self);
  lend (self, &cursor);

  return cursor;
}

/**
 * ds_scratchpad_cursor_refill: (skip)
 * @cursor: the cursor, by value
 * @size: the number of bytes
 * @alignment: a power of two, or 0 for 16
 * @ptr: (out): return location for the memory
 * @error: return location for a #GError
 *
 * The out-of-line part of ds_scratchpad_cursor_alloc(), which calls it
 * for every request that does not fit in the cursor's block: gives the
 * window back, allocates with `ds_scratchpad_alloc()` (a new block,
 * or the errors) and lends it again. Not to be called directly.
 *
 * Returns: the cursor, to store where it was
 */
DsScratchpadCursor
ds_scratchpad_cursor_refill (DsScratchpadCursor   cursor,
                             gsize                size,
                             gsize                alignment,
                             gpointer            *ptr,
                             GError             **error)
{
  DsScratchpad *self = cursor._scratchpad;

  g_return_val_if_fail (ptr != NULL, cursor);

  *ptr = NULL;
  if (!check_lent (&cursor, "ds_scratchpad_cursor_alloc"))
    return cursor;

  take_back (self, &cursor);
  *ptr = (ds_scratchpad_alloc) (self, (DsMemoryKind) cursor._kind, size, alignment, error);
  lend (self, &cursor);

  return cursor;
}

/**
 * ds_scratchpad_cursor_finish: (skip)
 * @cursor: the cursor, by value
 *
 * The out-of-line part of ds_scratchpad_end_cursor(): gives the window
 * back and drops the cursor's reference. Not to be called directly (it
 * cannot mark the caller's cursor ended).
 */
void
ds_scratchpad_cursor_finish (DsScratchpadCursor cursor)
{
  DsScratchpad *self = cursor._scratchpad;

  if (!check_lent (&cursor, "ds_scratchpad_end_cursor"))
    return;

  take_back (self, &cursor);
  g_object_unref (self);
}
