/* ds-fence-batch-private.h: giving a release's blocks back under shared fences
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A scratchpad's release gives every block of every kind back through one
 * DsFenceBatch, on the stack: init, give each block back, finish. For each
 * block the batch takes the way its upstream wants: a fenced resource (a
 * pool) takes it under the batch's fence of the order's stream, numbered
 * once per stream (ds-fence-private.h); a stream-ordered resource gets
 * deallocate_async (); any other gets deallocate () once the order's
 * stream has drained, which the batch waits for once per stream. So a
 * release costs at most one fence per stream, and nothing above the batch
 * knows what pools are.
 */

#pragma once

#include "ds-fence-private.h"
#include "ds-upstream-private.h"

G_BEGIN_DECLS

struct _DsFenceBatch
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
  /* The first block that could not be given back safely, and how many. */
  GError        *error;
  guint          n_held_back;
};

static inline void
ds_fence_batch_init (DsFenceBatch *batch)
{
  batch->n_fences = 0;
  batch->n_drained = 0;
  batch->error = NULL;
  batch->n_held_back = 0;
}

/* The fence of this batch in @order's stream (a device order): numbered
 * (ds_stream_state_record (), which checks the stream when that is due)
 * the first time the batch is asked for it, shared afterwards. *@stream
 * is lent by the batch until ds_fence_batch_finish (). */
guint64  ds_fence_batch_get_fence (DsFenceBatch        *batch,
                                   const DsAccessOrder *order,
                                   DsFenceCounters     *counters,
                                   DsStreamState      **stream);

void     ds_fence_batch_give_back_unfenced (DsFenceBatch        *batch,
                                            const DsUpstream    *upstream,
                                            gpointer             ptr,
                                            gsize                size,
                                            gsize                alignment,
                                            const DsAccessOrder *order);

/* Gives [ptr, ptr + size), taken from @upstream with @size and
 * @alignment, back in @order (NULL: host order). A fenced resource (a
 * pool) takes it under the batch's fence in a device order's stream, by
 * @handle if ds_upstream_take () gave one (else by address); another in
 * its own way. A block that cannot be given back safely (its stream could not be
 * drained) is held back, never reused early: ds_fence_batch_take_error ()
 * then says why. */
static inline void
ds_fence_batch_give_back (DsFenceBatch        *batch,
                          const DsUpstream    *upstream,
                          gpointer             ptr,
                          gsize                size,
                          gsize                alignment,
                          gpointer             handle,
                          const DsAccessOrder *order)
{
  if (order != NULL && order->type != DS_ACCESS_ORDER_TYPE_DEVICE)
    order = NULL;

  if (G_LIKELY (handle != NULL))
    upstream->fenced->give_back_block ((DsFencedResource *) upstream->resource, handle, order,
                                       batch);
  else if (upstream->fenced != NULL)
    upstream->fenced->deallocate_fenced ((DsFencedResource *) upstream->resource, ptr, size,
                                         alignment, order, batch);
  else
    ds_fence_batch_give_back_unfenced (batch, upstream, ptr, size, alignment, order);
}

guint    ds_fence_batch_take_error_slow (DsFenceBatch  *batch,
                                         GError       **error);
void     ds_fence_batch_finish_slow     (DsFenceBatch  *batch);

/* The number of blocks held back since the last call, and the first
 * reason in @error (if any were). Inline, as the next one: a release
 * with nothing held back and no fence (host memory) calls nothing. */
static inline guint
ds_fence_batch_take_error (DsFenceBatch  *batch,
                           GError       **error)
{
  if (G_LIKELY (batch->n_held_back == 0 && batch->error == NULL))
    return 0;
  return ds_fence_batch_take_error_slow (batch, error);
}

/* Drops what the batch holds. Makes no CUDA call. */
static inline void
ds_fence_batch_finish (DsFenceBatch *batch)
{
  if (batch->n_fences != 0 || batch->error != NULL)
    ds_fence_batch_finish_slow (batch);
  batch->n_drained = 0;
  batch->n_held_back = 0;
}

G_END_DECLS
