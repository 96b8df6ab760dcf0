/* ds-upstream-private.h: a resource bound for taking and giving back blocks
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A DsUpstream is what an arena draws its blocks from: a DsMemoryResource
 * whose virtual functions were checked once, when it was bound, so that a
 * resource without allocate or deallocate (a script's subclass, say) is
 * refused with an error there instead of crashing at the first block, and
 * whose fenced deallocation (DsFencedResource: the pools) was looked up
 * at the same time. Blocks are taken with ds_upstream_take () and given
 * back through a release batch (ds_fence_batch_give_back ()): a fenced
 * resource's with the record it handed out with each, so that neither way
 * looks a block up by its address.
 */

#pragma once

#include "ds-fenced-resource-private.h"

G_BEGIN_DECLS

typedef struct
{
  DsMemoryResource                *resource;   /* borrowed; NULL: unbound */
  const DsMemoryResourceInterface *iface;      /* allocate and deallocate set */
  const DsFencedResourceInterface *fenced;     /* NULL: not a fenced resource */
} DsUpstream;

/* Binds @self to @resource: FALSE with DS_ERROR_INVALID_ARGUMENT if
 * @resource lacks allocate or deallocate, or has one of allocate_async
 * and deallocate_async without the other (@self is then unbound). */
gboolean ds_upstream_bind (DsUpstream        *self,
                           DsMemoryResource  *resource,
                           GError           **error);

/* A block of @size bytes aligned to @alignment (both checked already): in
 * @order for a stream-ordered resource and a device order, else usable at
 * once. *@handle: a fenced resource's record of it, to give it back with
 * (ds_fence_batch_give_back ()); NULL for any other resource. */
static inline gpointer
ds_upstream_take (const DsUpstream     *self,
                  gsize                 size,
                  gsize                 alignment,
                  const DsAccessOrder  *order,
                  gpointer             *handle,
                  GError              **error)
{
  if (G_LIKELY (self->fenced != NULL))
    return self->fenced->take_block ((DsFencedResource *) self->resource, size, alignment,
                                     order, handle, error);

  *handle = NULL;
  if (order != NULL && self->iface->allocate_async != NULL)
    return self->iface->allocate_async (self->resource, size, alignment, order, error);

  return self->iface->allocate (self->resource, size, alignment, error);
}

G_END_DECLS
