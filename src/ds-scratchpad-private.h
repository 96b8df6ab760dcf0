/* ds-scratchpad-private.h: the scratchpad's insides, for its two files
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "ds-scratchpad.h"
#include "ds-access-order-private.h"
#include "ds-arena-private.h"
#include "ds-block-private.h"

G_BEGIN_DECLS

struct _DsScratchpad
{
  GObject             parent_instance;

  /* The arenas' bump windows, right after the GObject: C callers bump in
   * them inline (ds-scratchpad.h; their layout, and the rule that a
   * cursor with room after it is a multiple of 16, are ABI). */
  DsArenaWindow       windows[DS_N_MEMORY_KINDS];

  DsArena             arenas[DS_N_MEMORY_KINDS];

  /* Resources given as properties (a reference each); NULL: the default. */
  DsMemoryResource   *resources[DS_N_MEMORY_KINDS];
  /* Bit per kind: its upstream enters its own device and context for
   * every CUDA call (the default pools do, and a pool bound to the device
   * order's), so the scratchpad need not. */
  guint               self_scoped;
  /* Bit per kind: whether the upstream does is known (no more asking). */
  guint               scope_checked;
  /* Set by the first allocation: settings wait for the next release. */
  gboolean            in_use;
  /* Set by dispose: every allocation is refused (DS_ERROR_DISPOSED). */
  gboolean            disposed;
  gboolean            keep_blocks;

  /* UNSET device_order: the legacy default stream of the current device,
   * resolved at the first allocation that needs a device. UNSET dealloc
   * orders: the device order. */
  DsAccessOrder       device_order;
  DsAccessOrder       pinned_dealloc_order;
  DsAccessOrder       managed_dealloc_order;

  /* What its blocks read (generation, exports, their order). */
  DsBlockSource       source;

  /* The thread inside the scratchpad's slow path, release or binding
   * entry points (see ds_scratchpad_enter ()), or NULL (atomic). */
  gpointer            user;
  /* Set while that thread is in a resource's code (taking a block, giving
   * blocks back): the resource re-entering the scratchpad is refused
   * (DS_ERROR_BUSY), and disposing it waits for finalize. */
  gboolean            in_resource;

};

/* The layout the inline bumps of C callers rely on (ds-scratchpad.h). */
G_STATIC_ASSERT (G_STRUCT_OFFSET (DsScratchpad, windows) == sizeof (GObject));
G_STATIC_ASSERT (sizeof (DsArenaWindow) == 2 * sizeof (guintptr));

/* The order @kind memory goes back in (NULL for host memory). */
static inline const DsAccessOrder *
ds_scratchpad_dealloc_order (DsScratchpad *self,
                             DsMemoryKind  kind)
{
  switch (kind)
    {
    case DS_MEMORY_KIND_PINNED:
      if (self->pinned_dealloc_order.type != DS_ACCESS_ORDER_TYPE_UNSET)
        return &self->pinned_dealloc_order;
      return &self->device_order;
    case DS_MEMORY_KIND_MANAGED:
      if (self->managed_dealloc_order.type != DS_ACCESS_ORDER_TYPE_UNSET)
        return &self->managed_dealloc_order;
      return &self->device_order;
    case DS_MEMORY_KIND_DEVICE:
      return &self->device_order;
    case DS_MEMORY_KIND_HOST:
    default:
      return NULL;
    }
}

/* A bit per kind that holds blocks (spelt out: GCC keeps the loop). */
static inline guint
ds_scratchpad_held_kinds (const DsScratchpad *self)
{
  G_STATIC_ASSERT (DS_N_MEMORY_KINDS == 4);

  return (guint) (self->arenas[0].n_blocks != 0) |
         (guint) (self->arenas[1].n_blocks != 0) << 1 |
         (guint) (self->arenas[2].n_blocks != 0) << 2 |
         (guint) (self->arenas[3].n_blocks != 0) << 3;
}

/* One scratchpad is used by one thread at a time. Every entry point but
 * the bump (which cannot afford it, and whose races ThreadSanitizer finds
 * in C) marks it in use by the calling thread for its duration: FALSE if
 * another thread is inside, which is a programmer's error in C but easily
 * made from Python, whose threads run while a call is in C. *@nested: the
 * calling thread was inside already (ds_scratchpad_leave () then leaves
 * it so). */
/* A byte per thread whose address stands for the thread. */
extern __thread gchar ds_scratchpad_thread_token;

static inline gboolean
ds_scratchpad_enter (DsScratchpad *self,
                     gboolean     *nested)
{
  gpointer token = &ds_scratchpad_thread_token;
  gpointer user = NULL;

  *nested = FALSE;
  if (G_LIKELY (__atomic_compare_exchange_n (&self->user, &user, token, FALSE,
                                             __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)))
    return TRUE;

  *nested = user == token;
  return *nested && !self->in_resource;
}

static inline void
ds_scratchpad_leave (DsScratchpad *self,
                     gboolean      nested)
{
  if (!nested)
    __atomic_store_n (&self->user, NULL, __ATOMIC_RELEASE);
}

/* DS_ERROR_BUSY for a request of @self that another thread is inside, or
 * that its own resource made while the scratchpad called it. */
void     ds_scratchpad_set_busy_error     (DsScratchpad       *self,
                                           GError            **error);

/* Settings (ds-scratchpad-settings.c) -------------------------------------------- */

void     ds_scratchpad_install_properties (GObjectClass       *object_class);
/* Sets the first block size of @kind (0: the default); whether that
 * changed it. */
gboolean ds_scratchpad_set_initial_size   (DsScratchpad       *self,
                                           DsMemoryKind        kind,
                                           guint64             size);

/* Memory (ds-scratchpad-alloc.c) ------------------------------------------------- */

/* Before a setting changes (no allocation is alive): gives back the
 * blocks kept for the next unit and forgets what each kind was bound to. */
void     ds_scratchpad_unsettle           (DsScratchpad       *self);

/* The interface's alloc. */
gpointer ds_scratchpad_iface_alloc_impl   (DsScratchpadIface  *iface,
                                           DsMemoryKind        kind,
                                           gsize               size,
                                           gsize               alignment,
                                           GError            **error);

G_END_DECLS
