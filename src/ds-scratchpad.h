/* ds-scratchpad.h: the dynamic scratchpad
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
#include "ds-access-order.h"
#include "ds-memory-kind.h"
#include "ds-memory-resource.h"
#include "ds-scratchpad-iface.h"

G_BEGIN_DECLS

/**
 * DS_SCRATCHPAD_DEFAULT_INITIAL_SIZE:
 *
 * The size of the first block a scratchpad takes for a memory kind unless
 * told otherwise: 64 KiB.
 */
#define DS_SCRATCHPAD_DEFAULT_INITIAL_SIZE ((gsize) 65536)

/**
 * DS_SCRATCHPAD_DEFAULT_MAX_BLOCK_SIZE:
 *
 * The default of [property@Ds.Scratchpad:max-block-size]: 64 MiB.
 *
 * From the default first block of 64 KiB, doubling reaches it at the 11th
 * block, when the kind holds about 128 MiB; from then on each new block
 * is one upstream call per 64 MiB handed out (well under a nanosecond per
 * KiB), and the tail abandoned at each new block is below 64 MiB. Without
 * a ceiling, a scratchpad that is never released asks for 16 GiB after
 * 8 GiB, a request that fails or takes far more than is used.
 */
#define DS_SCRATCHPAD_DEFAULT_MAX_BLOCK_SIZE ((gsize) 64 << 20)

/**
 * DS_SCRATCHPAD_DEFAULT_ALIGNMENT:
 *
 * The alignment used when an allocation asks for alignment 0.
 */
#define DS_SCRATCHPAD_DEFAULT_ALIGNMENT ((gsize) 16)

#define DS_TYPE_SCRATCHPAD (ds_scratchpad_get_type ())

DS_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (DsScratchpad, ds_scratchpad, DS, SCRATCHPAD, GObject)

DS_AVAILABLE_IN_ALL
DsScratchpad        *ds_scratchpad_new               (const DsAccessOrder  *device_order) G_GNUC_WARN_UNUSED_RESULT;
DS_AVAILABLE_IN_ALL
DsScratchpad        *ds_scratchpad_new_full          (const DsAccessOrder  *device_order,
                                                      const DsAccessOrder  *pinned_dealloc_order,
                                                      const DsAccessOrder  *managed_dealloc_order,
                                                      const gsize          *initial_sizes) G_GNUC_WARN_UNUSED_RESULT;

DS_AVAILABLE_IN_ALL
gpointer             ds_scratchpad_alloc             (DsScratchpad         *self,
                                                      DsMemoryKind          kind,
                                                      gsize                 size,
                                                      gsize                 alignment,
                                                      GError              **error);
DS_AVAILABLE_IN_ALL
gpointer             ds_scratchpad_alloc_array       (DsScratchpad         *self,
                                                      DsMemoryKind          kind,
                                                      gsize                 element_size,
                                                      gsize                 n_elements,
                                                      gsize                 alignment,
                                                      GError              **error);
DS_AVAILABLE_IN_ALL
DsBlock             *ds_scratchpad_alloc_block       (DsScratchpad         *self,
                                                      DsMemoryKind          kind,
                                                      gsize                 size,
                                                      gsize                 alignment,
                                                      GError              **error);
DS_AVAILABLE_IN_ALL
void                 ds_scratchpad_release           (DsScratchpad         *self);

DS_AVAILABLE_IN_ALL
gpointer             ds_scratchpad_to_device         (DsScratchpad         *self,
                                                      gconstpointer         data,
                                                      gsize                 size,
                                                      gsize                 alignment,
                                                      GError              **error);
DS_AVAILABLE_IN_ALL
gpointer             ds_scratchpad_to_contiguous_device (DsScratchpad      *self,
                                                      guint                 n_arrays,
                                                      const gconstpointer  *arrays,
                                                      const gsize          *sizes,
                                                      gsize                 alignment,
                                                      gpointer             *device_ptrs,
                                                      GError              **error);

DS_AVAILABLE_IN_ALL
const DsAccessOrder *ds_scratchpad_get_device_order  (DsScratchpad         *self);
DS_AVAILABLE_IN_ALL
const DsAccessOrder *ds_scratchpad_get_dealloc_order (DsScratchpad         *self,
                                                      DsMemoryKind          kind);
DS_AVAILABLE_IN_ALL
gsize                ds_scratchpad_get_initial_size  (DsScratchpad         *self,
                                                      DsMemoryKind          kind);
DS_AVAILABLE_IN_ALL
guint64              ds_scratchpad_get_max_block_size (DsScratchpad        *self);
DS_AVAILABLE_IN_ALL
void                 ds_scratchpad_set_max_block_size (DsScratchpad        *self,
                                                       guint64              max_block_size);
DS_AVAILABLE_IN_ALL
DsMemoryResource    *ds_scratchpad_get_resource      (DsScratchpad         *self,
                                                      DsMemoryKind          kind);
DS_AVAILABLE_IN_ALL
void                 ds_scratchpad_set_resource      (DsScratchpad         *self,
                                                      DsMemoryKind          kind,
                                                      DsMemoryResource     *resource);
DS_AVAILABLE_IN_ALL
gboolean             ds_scratchpad_get_keep_blocks   (DsScratchpad         *self);
DS_AVAILABLE_IN_ALL
void                 ds_scratchpad_set_keep_blocks   (DsScratchpad         *self,
                                                      gboolean              keep_blocks);
DS_AVAILABLE_IN_ALL
guint64              ds_scratchpad_get_reserved      (DsScratchpad         *self,
                                                      DsMemoryKind          kind);
DS_AVAILABLE_IN_ALL
guint64              ds_scratchpad_get_allocated     (DsScratchpad         *self,
                                                      DsMemoryKind          kind);
DS_AVAILABLE_IN_ALL
guint                ds_scratchpad_get_n_blocks      (DsScratchpad         *self,
                                                      DsMemoryKind          kind);
DS_AVAILABLE_IN_ALL
guint                ds_scratchpad_get_n_exports     (DsScratchpad         *self);

/**
 * DS_ALIGNOF:
 * @type: a type
 *
 * The alignment of @type as a #gsize, in C and in C++ (GLib's
 * `G_ALIGNOF` does not compile in C++ before GLib 2.76).
 */
#ifndef __GI_SCANNER__
/*
 * The bump, inlined into C callers. Not API: the names below start with an
 * underscore and may change with the soversion. The head of every
 * DsScratchpad instance is a _DsScratchpadHead (its layout is part of the
 * ABI, checked by the library at build time), so that an allocation that
 * fits in the current block of its kind is a few instructions in the
 * caller: no call, no lock, no type check. Anything else (a new block,
 * size 0, a bad alignment or kind, an @error already set, errors) goes to
 * the exported function. (With @error a constant NULL, its test folds
 * away; otherwise it is one load.)
 */
typedef struct
{
  guintptr _cur;
  guintptr _end;
  /* Nothing else: what the bumps took is the cursor's way through the
   * block (ds_scratchpad_get_allocated ()). Counters here cost 12-17% of
   * issue 9's reused lifecycle of small temporaries on the H200. */
} _DsScratchpadWindow;

typedef struct
{
  GObject             _parent_instance;
  _DsScratchpadWindow _windows[DS_N_MEMORY_KINDS];
} _DsScratchpadHead;

/* The window of @kind in the scratchpad at @base. Pointer arithmetic, not
 * &head->_windows[kind]: GCC takes a store to one field of an array
 * element with a variable index for a store to any field of it, and then
 * reloads the cursor from memory at every allocation of a loop. */
#define _DS_SCRATCHPAD_WINDOW(base, kind) \
  ((_DsScratchpadWindow *) (void *) ((guint8 *) (base) + \
                                     G_STRUCT_OFFSET (_DsScratchpadHead, _windows) + \
                                     ((guint) (kind) & (DS_N_MEMORY_KINDS - 1)) * \
                                     sizeof (_DsScratchpadWindow)))

/* The cursor of a window is a multiple of 16 wherever the window has
 * room (the library rounds it up after every allocation it places, and
 * at the start of every window; only a cursor capped at an end that is
 * not a multiple of 16 is not, and then nothing fits), so that an
 * allocation aligned to at most 16 starts at the cursor and the next
 * cursor is one add away: each allocation waits for the previous one's
 * cursor, and that add is all of the chain. (Headers before soversion 1
 * tested the cursor at every bump, for older bumps that left it off 16.)
 *
 * Where a request of @size aligned to @alignment goes in the window from
 * @cur to @end: TRUE with *@p and *@next (the next cursor), or FALSE for
 * the exported function (no room, or anything it must check or refuse:
 * a size of 0, a bad alignment or kind, an @error already set). */
static inline gboolean
_ds_scratchpad_window_place (guintptr       cur,
                             guintptr       end,
                             DsMemoryKind   kind,
                             gsize          size,
                             gsize          alignment,
                             GError       **error,
                             guintptr      *p,
                             guintptr      *next)
{
  /* 0 for a size of 0 or one within 15 of G_MAXSIZE: never fits below. */
  gsize rounded = (size + 15) & ~(gsize) 15;
  gboolean placeable;

  if (alignment <= DS_SCRATCHPAD_DEFAULT_ALIGNMENT)
    {
      *p = cur;
      placeable = (alignment & (alignment - 1)) == 0;
    }
  else
    {
      /* A multiple of 16 too; wraps only past the end of the address
       * space, where it comes out below the cursor. */
      *p = (cur + alignment - 1) & ~(guintptr) (alignment - 1);
      placeable = (alignment & (alignment - 1)) == 0 && *p >= cur && *p <= end;
    }
  *next = *p + rounded;

  return placeable && (guint) kind < DS_N_MEMORY_KINDS &&
         (error == NULL || *error == NULL) && rounded - 1 < end - *p;
}

/* The bump, in @head's window of @kind. The window is read once and
 * written once, at the end, on both the bump's way and the exported
 * function's (which reads it back after the call): so a caller's loop of
 * allocations keeps the cursor in a register from one allocation to the
 * next, instead of waiting for each to go through memory (a
 * store-to-load forward at every allocation: 2.2x the time of a loop of
 * Poisson(1 KiB) allocations on the H200 host). For that every request
 * takes the same way, a bad one included: a bad kind the window its value
 * masks to (unchanged: the exported function refuses the request), and a
 * @self that is not to be bumped in (NULL, or another implementation of
 * the interface) comes with a blank @head, whose windows are empty. What
 * does not fit goes to the exported function of the C calls, or of the
 * interface when @iface (a constant in each caller: the test folds
 * away). */
static inline gpointer
_ds_scratchpad_bump (gpointer       head,
                     gpointer       self,
                     gboolean       iface,
                     DsMemoryKind   kind,
                     gsize          size,
                     gsize          alignment,
                     GError       **error)
{
  _DsScratchpadWindow *w = _DS_SCRATCHPAD_WINDOW (head, kind);
  guintptr cur = w->_cur;
  guintptr p;

  if (G_UNLIKELY (!_ds_scratchpad_window_place (cur, w->_end, kind, size, alignment, error,
                                                &p, &cur)))
    {
      if (iface)
        p = (guintptr) (ds_scratchpad_iface_alloc) ((DsScratchpadIface *) self, kind, size,
                                                    alignment, error);
      else
        p = (guintptr) (ds_scratchpad_alloc) ((DsScratchpad *) self, kind, size, alignment,
                                              error);
      cur = w->_cur;
    }

  w->_cur = cur;

  return (gpointer) p;
}

/* The bump of the C calls. A NULL @self (a programmer error, refused by
 * the exported function) reads and writes back a static blank head. */
static inline gpointer
_ds_scratchpad_alloc_inline (DsScratchpad  *self,
                             DsMemoryKind   kind,
                             gsize          size,
                             gsize          alignment,
                             GError       **error)
{
  static _DsScratchpadHead blank;

  return _ds_scratchpad_bump (self != NULL ? (gpointer) self : (gpointer) &blank, self, FALSE,
                              kind, size, alignment, error);
}

static inline gpointer
_ds_scratchpad_alloc_array_inline (DsScratchpad  *self,
                                   DsMemoryKind   kind,
                                   gsize          element_size,
                                   gsize          n_elements,
                                   gsize          alignment,
                                   GError       **error)
{
  gsize size;

  if (G_LIKELY (!__builtin_mul_overflow (element_size, n_elements, &size)))
    return _ds_scratchpad_alloc_inline (self, kind, size, alignment, error);

  return (ds_scratchpad_alloc_array) (self, kind, element_size, n_elements, alignment, error);
}

/* The bump of the interface, for any implementation.
 *
 * _ds_scratchpad_iface_head (@self) is the head it bumps in: @self when
 * it is a DsScratchpad, else this thread's blank head, whose windows have
 * no room, so that every request goes to the exported function (which
 * sees @self). It is declared const, which it is while @self lives (an
 * instance's class never changes), and kept out of line so that the
 * compiler sees no load in it: a caller's loop over one instance then
 * asks once, before the loop, and the bump keeps the cursor in a register
 * as the C calls' bump does. Inlined, the class would be loaded again
 * after every store of a returned pointer (which may alias it), and the
 * cursor would go through memory at every allocation. Where the caller
 * reads @self from memory at every allocation, the call is made at every
 * allocation. The blank head is per thread: the bump writes its window
 * back unchanged, and two threads must not write one place at once.
 *
 * The class is compared with the one this translation unit saw last
 * (DsScratchpad is a final static type: one class, never freed). The
 * cache starts as its own address, which is no instance's class, so that
 * a NULL class takes the slow way without a test of its own. It is filled
 * from any thread with relaxed atomics; every thread stores the same
 * value. */
static GTypeClass *_ds_scratchpad_iface_class = (GTypeClass *) (void *) &_ds_scratchpad_iface_class;

/* The rest of _ds_scratchpad_iface_head (): a NULL @self or class, a
 * class not seen yet in this translation unit, another implementation. */
static G_GNUC_UNUSED G_GNUC_NO_INLINE gpointer
_ds_scratchpad_iface_head_slow (gconstpointer self)
{
  static __thread _DsScratchpadHead blank;
  GTypeClass *klass;

  if (self != NULL && (klass = ((const GTypeInstance *) self)->g_class) != NULL &&
      klass->g_type == ds_scratchpad_get_type ())
    {
      __atomic_store_n (&_ds_scratchpad_iface_class, klass, __ATOMIC_RELAXED);
      return (gpointer) self;
    }

  return &blank;
}

static G_GNUC_UNUSED G_GNUC_NO_INLINE G_GNUC_CONST gpointer
_ds_scratchpad_iface_head (gconstpointer self)
{
  if (G_LIKELY (self != NULL &&
                ((const GTypeInstance *) self)->g_class ==
                __atomic_load_n (&_ds_scratchpad_iface_class, __ATOMIC_RELAXED)))
    return (gpointer) self;

  return _ds_scratchpad_iface_head_slow (self);
}

/* The bump in that head; the exported function of the interface takes
 * whatever does not fit, whatever @self is. */
static inline gpointer
_ds_scratchpad_iface_alloc_inline (DsScratchpadIface  *self,
                                   DsMemoryKind        kind,
                                   gsize               size,
                                   gsize               alignment,
                                   GError            **error)
{
  return _ds_scratchpad_bump (_ds_scratchpad_iface_head (self), self, TRUE, kind, size, alignment,
                              error);
}

# define ds_scratchpad_iface_alloc(self, kind, size, alignment, error) \
  _ds_scratchpad_iface_alloc_inline ((self), (kind), (size), (alignment), (error))
# define ds_scratchpad_alloc(self, kind, size, alignment, error) \
  _ds_scratchpad_alloc_inline ((self), (kind), (size), (alignment), (error))
# define ds_scratchpad_alloc_array(self, kind, element_size, n_elements, alignment, error) \
  _ds_scratchpad_alloc_array_inline ((self), (kind), (element_size), (n_elements), \
                                     (alignment), (error))
#endif /* __GI_SCANNER__ */

#if defined (__cplusplus) && __cplusplus >= 201103L
# define DS_ALIGNOF(type) ((gsize) alignof (type))
#else
# define DS_ALIGNOF(type) ((gsize) G_ALIGNOF (type))
#endif

/**
 * DS_SCRATCHPAD_ALLOC_N:
 * @self: a #DsScratchpad
 * @kind: a #DsMemoryKind
 * @type: the element type
 * @n: the number of elements
 * @error: return location for a #GError
 *
 * Allocates room for @n elements of @type, aligned for @type, and
 * evaluates to a `type *`. `n * sizeof (type)` is checked for overflow.
 */
#define DS_SCRATCHPAD_ALLOC_N(self, kind, type, n, error) \
  ((type *) ds_scratchpad_alloc_array ((self), (kind), sizeof (type), (n), \
                                       MAX (DS_ALIGNOF (type), DS_SCRATCHPAD_DEFAULT_ALIGNMENT), \
                                       (error)))

/**
 * DS_SCRATCHPAD_ALLOC_HOST:
 * @self: a #DsScratchpad
 * @type: the element type
 * @n: the number of elements
 * @error: return location for a #GError
 *
 * [func@Ds.SCRATCHPAD_ALLOC_N] for host memory.
 */
#define DS_SCRATCHPAD_ALLOC_HOST(self, type, n, error) \
  DS_SCRATCHPAD_ALLOC_N (self, DS_MEMORY_KIND_HOST, type, n, error)

/**
 * DS_SCRATCHPAD_ALLOC_PINNED:
 * @self: a #DsScratchpad
 * @type: the element type
 * @n: the number of elements
 * @error: return location for a #GError
 *
 * [func@Ds.SCRATCHPAD_ALLOC_N] for pinned memory.
 */
#define DS_SCRATCHPAD_ALLOC_PINNED(self, type, n, error) \
  DS_SCRATCHPAD_ALLOC_N (self, DS_MEMORY_KIND_PINNED, type, n, error)

/**
 * DS_SCRATCHPAD_ALLOC_DEVICE:
 * @self: a #DsScratchpad
 * @type: the element type
 * @n: the number of elements
 * @error: return location for a #GError
 *
 * [func@Ds.SCRATCHPAD_ALLOC_N] for device memory (DALI's `AllocateGPU`).
 */
#define DS_SCRATCHPAD_ALLOC_DEVICE(self, type, n, error) \
  DS_SCRATCHPAD_ALLOC_N (self, DS_MEMORY_KIND_DEVICE, type, n, error)

/**
 * DS_SCRATCHPAD_ALLOC_MANAGED:
 * @self: a #DsScratchpad
 * @type: the element type
 * @n: the number of elements
 * @error: return location for a #GError
 *
 * [func@Ds.SCRATCHPAD_ALLOC_N] for managed memory.
 */
#define DS_SCRATCHPAD_ALLOC_MANAGED(self, type, n, error) \
  DS_SCRATCHPAD_ALLOC_N (self, DS_MEMORY_KIND_MANAGED, type, n, error)

G_END_DECLS
