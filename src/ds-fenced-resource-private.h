/* ds-fenced-resource-private.h: a resource that keeps stream order itself
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * DsFencedResource is the private extension point of the pools: a
 * DsMemoryResource that takes blocks back under a release batch's fence
 * (one fence per stream per release, however many blocks and kinds the
 * release holds; ds-fence-batch-private.h) and makes its upstream calls
 * in a device and driver context of its own, whichever thread calls it.
 * The release batch and the scratchpad ask for it through the type
 * system, as for any interface; neither knows which types implement it.
 */

#pragma once

#include "ds-memory-resource.h"

G_BEGIN_DECLS

typedef struct _DsFenceBatch DsFenceBatch;

/* Whether a resource's upstream calls run in a given device and context
 * whatever the calling thread has current (see get_binding). */
typedef enum
{
  DS_SCOPE_BINDING_OTHER,     /* no: the caller must enter the scope */
  DS_SCOPE_BINDING_SAME,      /* yes */
  DS_SCOPE_BINDING_NOT_YET,   /* it binds itself at its first upstream call: ask again */
} DsScopeBinding;

#define DS_TYPE_FENCED_RESOURCE (ds_fenced_resource_get_type ())

G_DECLARE_INTERFACE (DsFencedResource, ds_fenced_resource, DS, FENCED_RESOURCE, DsMemoryResource)

struct _DsFencedResourceInterface
{
  GTypeInterface g_iface;

  /* Takes a block of @size bytes aligned to @alignment for an arena, in
   * @order (NULL or a host order: usable at once), as allocate_async ()
   * does; *@handle: the resource's record of it, which gives it back
   * (give_back_block ()) without a lookup by address. */
  gpointer       (*take_block)        (DsFencedResource    *self,
                                       gsize                size,
                                       gsize                alignment,
                                       const DsAccessOrder *order,
                                       gpointer            *handle,
                                       GError             **error);

  /* Takes back [ptr, ptr + size), handed out with @size and @alignment,
   * under @batch's fence in @order's stream (a device order), or as
   * reusable at once (@order NULL). */
  void           (*deallocate_fenced) (DsFencedResource    *self,
                                       gpointer             ptr,
                                       gsize                size,
                                       gsize                alignment,
                                       const DsAccessOrder *order,
                                       DsFenceBatch        *batch);

  /* The same for the block of @handle (from take_block ()): under @batch's
   * fence in @order's stream (a device order), or as reusable at once
   * (@order NULL). */
  void           (*give_back_block)   (DsFencedResource    *self,
                                       gpointer             handle,
                                       const DsAccessOrder *order,
                                       DsFenceBatch        *batch);

  /* Whether the upstream calls run on @device (>= 0) in @context (NULL:
   * its primary context) by themselves. */
  DsScopeBinding (*get_binding)       (DsFencedResource    *self,
                                       gint                 device,
                                       gpointer             context);
};

/* @resource's fenced interface, or NULL if it has none. */
const DsFencedResourceInterface *ds_fenced_resource_peek (DsMemoryResource *resource);

/* get_binding () of @resource; DS_SCOPE_BINDING_OTHER for a resource that
 * is not fenced. */
DsScopeBinding ds_fenced_resource_get_binding (DsMemoryResource *resource,
                                               gint              device,
                                               gpointer          context);

G_END_DECLS
