/* ds-fence-batch.c: giving a release's blocks back under shared fences
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "ds-fence-batch-private.h"

guint64
ds_fence_batch_get_fence (DsFenceBatch         *batch,
                          const DsAccessOrder  *order,
                          DsFenceCounters      *counters,
                          DsStreamState       **stream)
{
  guint last = G_N_ELEMENTS (batch->fences) - 1;
  DsStreamLoan loan;
  DsStreamState *ss;
  guint64 seq;

  for (guint i = 0; i < batch->n_fences; i++)
    if (ds_stream_state_matches (batch->fences[i].stream, order))
      {
        *stream = batch->fences[i].stream;
        return batch->fences[i].seq;
      }

  /* The first block of this stream in this batch: one fence. */
  ss = ds_stream_state_borrow (order, &loan);
  seq = ds_stream_state_record (ss, order, counters);

  if (batch->n_fences <= last)
    last = batch->n_fences++;
  else
    /* Full: the last entry makes room (its blocks hold their own
     * references); that stream, if it comes back, gets a new fence. */
    ds_stream_state_end_loan (batch->fences[last].stream, &batch->fences[last].loan);
  batch->fences[last].stream = ss;
  batch->fences[last].loan = loan;
  batch->fences[last].seq = seq;

  *stream = ss;
  return seq;
}

/* Whether @order's stream was drained in this batch already. */
static gboolean
drained (DsFenceBatch        *batch,
         const DsAccessOrder *order)
{
  for (guint i = 0; i < batch->n_drained; i++)
    if (ds_access_order_equal (&batch->drained[i], order))
      return TRUE;

  return FALSE;
}

/* A block for a resource that is not fenced (see ds_fence_batch_give_back ()). */
void
ds_fence_batch_give_back_unfenced (DsFenceBatch        *batch,
                                   const DsUpstream    *upstream,
                                   gpointer             ptr,
                                   gsize                size,
                                   gsize                alignment,
                                   const DsAccessOrder *order)
{
  GError *error = NULL;

  if (order == NULL || (upstream->iface->deallocate_async == NULL && drained (batch, order)))
    {
      upstream->iface->deallocate (upstream->resource, ptr, size, alignment);
      return;
    }

  /* Stream-ordered, or the first block of this stream: the resource's
   * own way in an order (which drains the stream for one that is not
   * stream-ordered). */
  if (ds_memory_resource_deallocate_async (upstream->resource, ptr, size, alignment, order,
                                           &error))
    {
      if (upstream->iface->deallocate_async == NULL &&
          batch->n_drained < G_N_ELEMENTS (batch->drained))
        batch->drained[batch->n_drained++] = *order;
      return;
    }

  batch->n_held_back++;
  if (batch->error == NULL)
    batch->error = error;
  else
    g_error_free (error);
}

guint
ds_fence_batch_take_error_slow (DsFenceBatch  *batch,
                                GError       **error)
{
  guint n = batch->n_held_back;

  if (batch->error != NULL)
    g_propagate_error (error, batch->error);
  batch->error = NULL;
  batch->n_held_back = 0;

  return n;
}

void
ds_fence_batch_finish_slow (DsFenceBatch *batch)
{
  for (guint i = 0; i < batch->n_fences; i++)
    ds_stream_state_end_loan (batch->fences[i].stream, &batch->fences[i].loan);
  batch->n_fences = 0;
  batch->n_drained = 0;
  if (G_UNLIKELY (batch->error != NULL))
    {
      g_error_free (batch->error);
      batch->error = NULL;
    }
  batch->n_held_back = 0;
}
