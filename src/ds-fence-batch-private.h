/* ds-fence-batch-private.h: giving a release's blocks back under shared fences
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * How it works: a scratchpad's release gives every block of every kind
 * back through one DsFenceBatch. For each block the batch picks the way
 * its resource wants: a resource that takes blocks under a fence (pools
 * register themselves) gets the batch's fence of the order's stream, asked
 * for once per stream (ds-fence-private.h); a stream-ordered resource gets
 * deallocate_async (); any other gets deallocate () once the order's
 * stream has drained, which the batch waits for once per stream. So the
 * arena and the scratchpad give blocks back without knowing what pools
 * are, and a release costs at most one fence per stream.
 */

#pragma once

#include "ds-fence-private.h"

G_BEGIN_DECLS

/*
 * DsFenceBatch: the blocks of one release (of one scratchpad, say), given
 * back to their resources under at most one fence per stream. On the
 * stack: init, deallocate each block, finish.
 */
typedef struct
{
  /*< private >*/
  struct
  {
    DsStreamState *stream;   /* lent (ds_stream_state_borrow ()) */
    DsStreamLoan   loan;
    guint64        seq;
  } fences[4];
  guint          n_fences;
  /* Streams already drained for resources that are not stream-ordered. */
  DsAccessOrder  drained[2];
  guint          n_drained;
} DsFenceBatch;

void           ds_fence_batch_init          (DsFenceBatch        *batch);
/* The fence of this batch in @order's stream (a device order): numbered
 * (ds_stream_state_record (), which checks the stream when that is due)
 * the first time the batch is asked for it, shared afterwards. *@stream
 * is borrowed from the batch. */
guint64        ds_fence_batch_get_fence     (DsFenceBatch        *batch,
                                             const DsAccessOrder *order,
                                             DsFenceCounters     *counters,
                                             DsStreamState      **stream);
/* Gives [ptr, ptr + size) back to @resource in @order (NULL: host order):
 * through the resource's fenced deallocation when it has one (pools: the
 * batch's fence); else deallocate_async () for a stream-ordered resource
 * and a device order; else deallocate (), once @order's stream has
 * drained (one wait per stream per batch). FALSE with @error set when the
 * block could not be given back safely: it is then leaked, never reused
 * early. */
gboolean       ds_fence_batch_deallocate    (DsFenceBatch        *batch,
                                             DsMemoryResource    *resource,
                                             gpointer             ptr,
                                             gsize                size,
                                             gsize                alignment,
                                             const DsAccessOrder *order,
                                             GError             **error);
/* Drops what the batch holds. Makes no CUDA call. */
void           ds_fence_batch_finish        (DsFenceBatch        *batch);

/* A resource type that takes blocks back under a batch's fence: its
 * function is called by ds_fence_batch_deallocate () instead of the
 * interface. Registered once, from the type's class_init. */
typedef void (*DsFencedDeallocateFunc) (DsMemoryResource    *resource,
                                        gpointer             ptr,
                                        gsize                size,
                                        gsize                alignment,
                                        const DsAccessOrder *order,
                                        DsFenceBatch        *batch);

void           ds_fence_register_resource_type (GType                  type,
                                                DsFencedDeallocateFunc func);

/* The function registered for @resource's type, or NULL: for callers that
 * give many blocks back to the same resource and look it up once. */
DsFencedDeallocateFunc ds_fence_lookup_fenced_func (DsMemoryResource *resource);

G_END_DECLS
