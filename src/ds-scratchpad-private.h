/* ds-scratchpad-private.h: the scratchpad's insides, for ds-scratchpad*.c,
 * and what DsBlock and DsKernelContext use
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "ds-scratchpad.h"
#include "ds-access-order-private.h"
#include "ds-arena-private.h"

G_BEGIN_DECLS

struct _DsScratchpad
{
  GObject             parent_instance;

  /* Hot: the bump windows, first, where _DsScratchpadHead (the inline
   * bump of ds-scratchpad.h) expects them. */
  _DsScratchpadWindow windows[DS_N_MEMORY_KINDS];

  DsArena             arenas[DS_N_MEMORY_KINDS];

  /* The resources blocks came from, set on first use of a kind and kept
   * across releases: a default one (borrowed: the registry keeps every
   * default alive) or the one given. */
  DsMemoryResource   *upstream[DS_N_MEMORY_KINDS];
  /* Resources given as properties (a reference each); NULL: the default. */
  DsMemoryResource   *resources[DS_N_MEMORY_KINDS];
  /* Bit per kind: the upstream enters its own device and context for
   * every CUDA call (the default pools do, and a pool bound to the device
   * order's; see note_self_scoped ()), so the scratchpad need not. */
  guint               self_scoped;
  /* Bit per kind: the upstream was found not to (no more asking). */
  guint               scope_checked;
  /* Set by the first allocation: the settings are fixed from then on. */
  gboolean            in_use;
  /* Set by dispose: every allocation is refused (DS_ERROR_DISPOSED). */
  gboolean            disposed;
  /* keep-blocks: a release keeps each kind's newest block where that is
   * safe (ds_scratchpad_release ()). */
  gboolean            keep_blocks;

  /* UNSET device_order: the legacy default stream of the current device,
   * resolved at the first allocation that needs a device. UNSET dealloc
   * orders: the device order. */
  DsAccessOrder       device_order;
  DsAccessOrder       pinned_dealloc_order;
  DsAccessOrder       managed_dealloc_order;

  guint64             generation;

  /* Exports of its blocks alive (ds_block_export ()): while any is, the
   * memory is not given back (atomic: views die on any thread). */
  gint                n_exports;
};

G_STATIC_ASSERT (G_STRUCT_OFFSET (DsScratchpad, windows) ==
                 G_STRUCT_OFFSET (_DsScratchpadHead, _windows));
G_STATIC_ASSERT (sizeof (((DsScratchpad *) 0)->windows) ==
                 sizeof (((_DsScratchpadHead *) 0)->_windows));

/* glibc's per-thread cache (tcache) takes requests of up to 1032 bytes;
 * above that every g_object_new () went to _int_malloc (1.28x a plain
 * GObject on the H200 at 1048 bytes, 1.04-1.07x at 920, the size now). */
G_STATIC_ASSERT (sizeof (DsScratchpad) <= 1032);

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


/* Counts exports of the scratchpad's blocks (DsBlock). */
static inline void
ds_scratchpad_add_exports (DsScratchpad *self,
                           gint          delta)
{
  g_atomic_int_add (&self->n_exports, delta);
}

/* Settings (ds-scratchpad-settings.c): each returns whether it changed. */
gboolean ds_scratchpad_set_order          (DsAccessOrder       *dest,
                                           const DsAccessOrder *src);
gboolean ds_scratchpad_set_initial_size   (DsScratchpad        *self,
                                           DsMemoryKind         kind,
                                           guint64              size);
gboolean ds_scratchpad_set_max_block_size_internal (DsScratchpad *self,
                                                    guint64       size);
/* The get/set_property vfuncs and the twelve properties. */
void     ds_scratchpad_install_properties (GObjectClass        *object_class);


/* Incremented by every release: memory handed out under an older
 * generation has been given back. */
guint64 ds_scratchpad_get_generation (DsScratchpad *self);

/* The order a kind's memory is used in by the scratchpad's own copies:
 * the device order for device memory; host order (NULL) otherwise. */
const DsAccessOrder *ds_scratchpad_get_work_order (DsScratchpad *self);

G_END_DECLS
