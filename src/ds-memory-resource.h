/* ds-memory-resource.h: an upstream allocator of one memory kind
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
#include "ds-access-order.h"

G_BEGIN_DECLS

#define DS_TYPE_MEMORY_RESOURCE (ds_memory_resource_get_type ())

DS_AVAILABLE_IN_ALL
G_DECLARE_INTERFACE (DsMemoryResource, ds_memory_resource, DS, MEMORY_RESOURCE, GObject)

/**
 * DsMemoryResourceInterface:
 * @g_iface: the parent interface
 * @get_kind: returns the [enum@Ds.MemoryKind] of the memory handed out
 * @allocate: allocates @size bytes aligned to @alignment, usable at once by
 *   the host and by any stream
 * @deallocate: gives back a block from @allocate or @allocate_async, with
 *   the same size and alignment; it may be reused at once
 * @allocate_async: allocates memory usable in @order; `NULL` for a resource
 *   that is not stream-ordered
 * @deallocate_async: gives back a block that work queued on @order may still
 *   use; the resource must not hand it to anyone else before that work has
 *   finished. `NULL` for a resource that is not stream-ordered
 *
 * The virtual functions of [iface@Ds.MemoryResource]. `allocate_async` and
 * `deallocate_async` are both set or both `NULL`.
 */
struct _DsMemoryResourceInterface
{
  GTypeInterface g_iface;

  DsMemoryKind (*get_kind)         (DsMemoryResource    *self);
  gpointer     (*allocate)         (DsMemoryResource    *self,
                                    gsize                size,
                                    gsize                alignment,
                                    GError             **error);
  void         (*deallocate)       (DsMemoryResource    *self,
                                    gpointer             ptr,
                                    gsize                size,
                                    gsize                alignment);
  gpointer     (*allocate_async)   (DsMemoryResource    *self,
                                    gsize                size,
                                    gsize                alignment,
                                    const DsAccessOrder *order,
                                    GError             **error);
  void         (*deallocate_async) (DsMemoryResource    *self,
                                    gpointer             ptr,
                                    gsize                size,
                                    gsize                alignment,
                                    const DsAccessOrder *order);
};

DS_AVAILABLE_IN_ALL
DsMemoryKind      ds_memory_resource_get_kind           (DsMemoryResource    *self);
DS_AVAILABLE_IN_ALL
gpointer          ds_memory_resource_allocate           (DsMemoryResource    *self,
                                                         gsize                size,
                                                         gsize                alignment,
                                                         GError             **error);
DS_AVAILABLE_IN_ALL
void              ds_memory_resource_deallocate         (DsMemoryResource    *self,
                                                         gpointer             ptr,
                                                         gsize                size,
                                                         gsize                alignment);
DS_AVAILABLE_IN_ALL
gboolean          ds_memory_resource_is_stream_ordered  (DsMemoryResource    *self);
DS_AVAILABLE_IN_ALL
gpointer          ds_memory_resource_allocate_async     (DsMemoryResource    *self,
                                                         gsize                size,
                                                         gsize                alignment,
                                                         const DsAccessOrder *order,
                                                         GError             **error);
DS_AVAILABLE_IN_ALL
gboolean          ds_memory_resource_deallocate_async   (DsMemoryResource    *self,
                                                         gpointer             ptr,
                                                         gsize                size,
                                                         gsize                alignment,
                                                         const DsAccessOrder *order,
                                                         GError             **error);

DS_AVAILABLE_IN_ALL
DsMemoryResource *ds_memory_resource_get_default        (DsMemoryKind         kind,
                                                         gint                 device,
                                                         GError             **error);
DS_AVAILABLE_IN_ALL
void              ds_memory_resource_set_default        (DsMemoryKind         kind,
                                                         gint                 device,
                                                         DsMemoryResource    *resource);
DS_AVAILABLE_IN_ALL
void              ds_memory_resource_forget_context     (gpointer             context);
DS_AVAILABLE_IN_0_2
guint64           ds_memory_resource_trim_defaults      (void);

G_END_DECLS
