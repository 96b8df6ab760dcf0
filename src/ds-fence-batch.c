/* ds-fence-batch.c: giving a release's blocks back under shared fences
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "ds-fence-batch-private.h"

#define MAX_FENCED_TYPES 4

static struct
{
  GType                  type;
  DsFencedDeallocateFunc func;
} fenced_types[MAX_FENCED_TYPES];
static guint n_fenced_types;   /* atomic */

void
ds_fence_register_resource_type (GType                  type,
                                 DsFencedDeallocateFunc func)
{
  static GMutex lock;
  guint n;

  g_mutex_lock (&lock);
  n = g_atomic_int_get (&n_fenced_types);
  g_return_if_fail (n < MAX_FENCED_TYPES);
  fenced_types[n].type = type;
  fenced_types[n].func = func;
  g_atomic_int_set (&n_fenced_types, n + 1);
  g_mutex_unlock (&lock);
}

DsFencedDeallocateFunc
ds_fence_lookup_fenced_func (DsMemoryResource *resource)
{
  GType type = G_TYPE_FROM_INSTANCE (resource);
  guint n = g_atomic_int_get (&n_fenced_types);

  for (guint i = 0; i < n; i++)
    if (fenced_types[i].type == type)
      return fenced_types[i].func;

  return NULL;
}

void
ds_fence_batch_init (DsFenceBatch *batch)
{
  batch->n_fences = 0;
  batch->n_drained = 0;
}

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

/* Whether @order's stream has been drained already in this batch, and if
 * not, drains it. */
static gboolean
batch_drain (DsFenceBatch         *batch,
             const DsAccessOrder  *order,
             GError              **error)
{
  for (guint i = 0; i < batch->n_drained; i++)
    if (ds_access_order_equal (&batch->drained[i], order))
      return TRUE;

  if (!ds_access_order_synchronize (order, error))
    return FALSE;

  if (batch->n_drained < G_N_ELEMENTS (batch->drained))
    batch->drained[batch->n_drained++] = *order;

  return TRUE;
}

gboolean
ds_fence_batch_deallocate (DsFenceBatch         *batch,
                           DsMemoryResource     *resource,
                           gpointer              ptr,
                           gsize                 size,
                           gsize                 alignment,
                           const DsAccessOrder  *order,
                           GError              **error)
{
  DsMemoryResourceInterface *iface;
  DsFencedDeallocateFunc fenced;
  gboolean device_order = order != NULL && order->type == DS_ACCESS_ORDER_TYPE_DEVICE;

  if (ptr == NULL)
    return TRUE;

  fenced = ds_fence_lookup_fenced_func (resource);
  if (fenced != NULL)
    {
      fenced (resource, ptr, size, alignment, device_order ? order : NULL, batch);
      return TRUE;
    }

  iface = DS_MEMORY_RESOURCE_GET_IFACE (resource);
  if (device_order && iface->deallocate_async != NULL)
    {
      iface->deallocate_async (resource, ptr, size, alignment, order);
      return TRUE;
    }

  /* Not stream-ordered (or host order): the block goes back at once, so a
   * device order must have drained first. */
  if (device_order && !batch_drain (batch, order, error))
    return FALSE;

  iface->deallocate (resource, ptr, size, alignment);
  return TRUE;
}

void
ds_fence_batch_finish (DsFenceBatch *batch)
{
  for (guint i = 0; i < batch->n_fences; i++)
    ds_stream_state_end_loan (batch->fences[i].stream, &batch->fences[i].loan);
  batch->n_fences = 0;
  batch->n_drained = 0;
}
