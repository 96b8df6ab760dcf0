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
#include "ds-bump.h"

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
 * block, when the kind holds about 128 MiB; the tail abandoned at each
 * new block stays below 64 MiB. Without a ceiling, a scratchpad that is
 * never released would ask for 16 GiB after 8 GiB.
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

/**
 * DsScratchpadHead:
 * @parent_instance: the instance's #GObject
 * @host: the bump window of %DS_MEMORY_KIND_HOST memory
 * @pinned: the bump window of %DS_MEMORY_KIND_PINNED memory
 * @device: the bump window of %DS_MEMORY_KIND_DEVICE memory
 * @managed: the bump window of %DS_MEMORY_KIND_MANAGED memory
 *
 * The head of every [class@Ds.Scratchpad] instance, public as
 * `GstMiniObject` is, for speed: C callers allocate with an inline bump in
 * the window of the kind (ds_scratchpad_alloc () is a static inline
 * function unless `DS_DISABLE_INLINE_ALLOC` is defined), with no call
 * while the request fits the block. The rest of the instance is private.
 *
 * Its layout is ABI: the library checks it at build time. The windows
 * follow each other in the order of #DsMemoryKind, and are the
 * scratchpad's own, so what the inline bump takes, the library sees. Only
 * the library and the inline allocation write them; bindings allocate
 * with [method@Ds.Scratchpad.alloc] and read what a scratchpad holds with
 * [method@Ds.Scratchpad.get_allocated] and the like.
 */
typedef struct
{
  GObject      parent_instance;
  DsBumpWindow host;
  DsBumpWindow pinned;
  DsBumpWindow device;
  DsBumpWindow managed;
} DsScratchpadHead;

/**
 * DS_SCRATCHPAD_HEAD:
 * @self: a #DsScratchpad
 *
 * The [struct@Ds.ScratchpadHead] of @self, unchecked.
 */
#define DS_SCRATCHPAD_HEAD(self) ((DsScratchpadHead *) (void *) (self))

DS_AVAILABLE_IN_ALL
DsScratchpad        *ds_scratchpad_new               (const DsAccessOrder  *device_order) G_GNUC_WARN_UNUSED_RESULT;
DS_AVAILABLE_IN_ALL
DsScratchpad        *ds_scratchpad_new_full          (const DsAccessOrder  *device_order,
                                                      const DsAccessOrder  *pinned_dealloc_order,
                                                      const DsAccessOrder  *managed_dealloc_order,
                                                      const gsize          *initial_sizes) G_GNUC_WARN_UNUSED_RESULT;

DS_AVAILABLE_IN_ALL
gpointer             ds_scratchpad_alloc_array       (DsScratchpad         *self,
                                                      DsMemoryKind          kind,
                                                      gsize                 element_size,
                                                      gsize                 n_elements,
                                                      gsize                 alignment,
                                                      GError              **error);

#ifdef _DS_ALLOC_EXPORTED
DS_AVAILABLE_IN_ALL
gpointer             ds_scratchpad_alloc             (DsScratchpad         *self,
                                                      DsMemoryKind          kind,
                                                      gsize                 size,
                                                      gsize                 alignment,
                                                      GError              **error);
#else
/* C callers get ds_scratchpad_alloc () and ds_scratchpad_iface_alloc ()
 * inline, as GStreamer's headers give gst_buffer_ref (): static inline
 * functions of the same names, which bump in the scratchpad's window of
 * the kind when the request is the common case of ds-bump.h's rule
 * (_ds_bump_fits ()), and call public API for the rest, the rest of the
 * rule included (ds_scratchpad_alloc_array () of one element, the
 * interface's vfunc).
 * The library exports both names as functions too, for bindings and for
 * programs built with DS_DISABLE_INLINE_ALLOC. Names with an underscore
 * are not API and may change with the soversion. */
static inline gpointer
ds_scratchpad_alloc (DsScratchpad  *self,
                     DsMemoryKind   kind,
                     gsize          size,
                     gsize          alignment,
                     GError       **error)
{
  /* A NULL @self (refused by the exported function) reads and writes
   * back a blank head. The window is read once and written once, at the
   * end, on the slow path too (which reads it back after the call): so a
   * loop of allocations keeps the cursor in a register from one to the
   * next. */
  static DsScratchpadHead blank;
  DsScratchpadHead *head = self != NULL ? DS_SCRATCHPAD_HEAD (self) : &blank;
  DsBumpWindow *w = _DS_BUMP_WINDOW (&head->host, kind);
  guintptr next = w->cur, p;

  if (G_UNLIKELY (!((guint) kind < DS_N_MEMORY_KINDS && (error == NULL || *error == NULL) &&
                    _ds_bump_fits (next, w->end, size, alignment, &p, &next))))
    {
      p = (guintptr) ds_scratchpad_alloc_array (self, kind, size, 1, alignment, error);
      next = w->cur;
    }
  w->cur = next;

  return (gpointer) p;
}

/* The interface: the same bump when @self is a DsScratchpad (a final
 * type: its class is the one class it can have), told by comparing its
 * class with the one this translation unit met last; anything else goes
 * to the implementation's vfunc. The memo starts as its own address,
 * which is no instance's class. It is written with the same value by any
 * thread that meets a scratchpad first, and read without ordering:
 * relaxed atomics, which GLib's g_atomic_* (sequentially consistent) are
 * not.
 *
 * The call for anything else is cold, laid out apart from the caller's
 * code, so that a caller's loop keeps the class test and the bump
 * together. (The C path's call for the rest of the rule stays an ordinary
 * one: made cold too, it cost a C loop one more jump per allocation with
 * GCC 12.) */
#if defined (__GNUC__)
# define _DS_IFACE_OTHER_ATTRIBUTES G_GNUC_UNUSED __attribute__ ((cold, noinline))
#else
# define _DS_IFACE_OTHER_ATTRIBUTES G_GNUC_UNUSED G_GNUC_NO_INLINE
#endif

static gconstpointer _ds_scratchpad_class_memo G_GNUC_UNUSED = &_ds_scratchpad_class_memo;

static _DS_IFACE_OTHER_ATTRIBUTES gpointer
_ds_scratchpad_iface_alloc_other (DsScratchpadIface  *self,
                                  DsMemoryKind        kind,
                                  gsize               size,
                                  gsize               alignment,
                                  GError            **error)
{
  g_return_val_if_fail (DS_IS_SCRATCHPAD_IFACE (self), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (G_TYPE_CHECK_INSTANCE_TYPE (self, ds_scratchpad_get_type ()))
    __atomic_store_n (&_ds_scratchpad_class_memo, ((GTypeInstance *) self)->g_class,
                      __ATOMIC_RELAXED);

  return DS_SCRATCHPAD_IFACE_GET_IFACE (self)->alloc (self, kind, size, alignment, error);
}

static inline gpointer
ds_scratchpad_iface_alloc (DsScratchpadIface  *self,
                           DsMemoryKind        kind,
                           gsize               size,
                           gsize               alignment,
                           GError            **error)
{
  if (G_LIKELY (self != NULL &&
                (gconstpointer) ((GTypeInstance *) self)->g_class ==
                __atomic_load_n (&_ds_scratchpad_class_memo, __ATOMIC_RELAXED)))
    return ds_scratchpad_alloc ((DsScratchpad *) (void *) self, kind, size, alignment, error);

  return _ds_scratchpad_iface_alloc_other (self, kind, size, alignment, error);
}
#endif
DS_AVAILABLE_IN_ALL
DsBlock             *ds_scratchpad_alloc_block       (DsScratchpad         *self,
                                                      DsMemoryKind          kind,
                                                      gsize                 size,
                                                      gsize                 alignment,
                                                      GError              **error);
DS_AVAILABLE_IN_ALL
void                 ds_scratchpad_release           (DsScratchpad         *self);
DS_AVAILABLE_IN_ALL
gboolean             ds_scratchpad_try_release       (DsScratchpad         *self,
                                                      GError              **error);

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
DsBlock             *ds_scratchpad_to_device_block   (DsScratchpad         *self,
                                                      const guint8         *data,
                                                      gsize                 size,
                                                      gsize                 alignment,
                                                      GError              **error) G_GNUC_WARN_UNUSED_RESULT;
DS_AVAILABLE_IN_ALL
DsBlock             *ds_scratchpad_to_contiguous_device_block (DsScratchpad   *self,
                                                      GBytes              **arrays,
                                                      guint                 n_arrays,
                                                      gsize                 alignment,
                                                      GPtrArray           **blocks,
                                                      GError              **error) G_GNUC_WARN_UNUSED_RESULT;

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
DS_AVAILABLE_IN_ALL
guint64              ds_scratchpad_get_held_by_exports (DsScratchpad       *self,
                                                        DsMemoryKind        kind);

/**
 * DS_ALIGNOF:
 * @type: a type
 *
 * The alignment of @type as a #gsize, in C and in C++ (GLib's
 * `G_ALIGNOF` does not compile in C++ before GLib 2.76).
 */
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
  ((type *) _ds_scratchpad_alloc_n ((self), (kind), sizeof (type), (n), \
                                    MAX (DS_ALIGNOF (type), DS_SCRATCHPAD_DEFAULT_ALIGNMENT), \
                                    (error)))

#ifndef __GI_SCANNER__
/* DS_SCRATCHPAD_ALLOC_N (): ds_scratchpad_alloc () unless the count
 * overflows, which ds_scratchpad_alloc_array () refuses. Not API. */
static inline gpointer
_ds_scratchpad_alloc_n (DsScratchpad  *self,
                        DsMemoryKind   kind,
                        gsize          element_size,
                        gsize          n_elements,
                        gsize          alignment,
                        GError       **error)
{
  gsize size;

  if (G_LIKELY (!__builtin_mul_overflow (element_size, n_elements, &size)))
    return ds_scratchpad_alloc (self, kind, size, alignment, error);

  return ds_scratchpad_alloc_array (self, kind, element_size, n_elements, alignment, error);
}
#endif

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
