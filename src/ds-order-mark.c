/* ds-order-mark.c: a point in an access order that another order can wait for
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "ds-order-mark.h"
#include "ds-access-order-private.h"
#include "ds-error.h"

/**
 * DsOrderMark:
 *
 * A point in an [struct@Ds.AccessOrder]: the work submitted to the order
 * up to the moment the mark was made, and nothing submitted later.
 * Another order waits for that work with [method@Ds.OrderMark.wait],
 * which [method@Ds.AccessOrder.wait] cannot do once more work follows on
 * the marked order.
 *
 * For a device order the mark is a CUDA event recorded on the order's
 * stream, in its device and driver context; it may be waited for and
 * dropped on any thread, and stays valid after the stream is destroyed.
 * A mark of host order is complete when it is made and costs no CUDA call.
 */

struct _DsOrderMark
{
  gatomicrefcount ref_count;
  DsAccessOrder   order;
  gpointer        event;     /* NULL for host order */
};

G_DEFINE_BOXED_TYPE (DsOrderMark, ds_order_mark, ds_order_mark_ref, ds_order_mark_unref)

/**
 * ds_order_mark_new:
 * @order: the order to mark
 * @error: return location for a #GError
 *
 * Marks the work submitted to @order so far.
 *
 * Returns: (transfer full) (nullable): a new #DsOrderMark, or `NULL` with
 *   @error set: %DS_ERROR_INVALID_ARGUMENT for an unset order (a
 *   scratchpad's device order before it was resolved), a CUDA error when
 *   the event cannot be recorded
 */
DsOrderMark *
ds_order_mark_new (const DsAccessOrder  *order,
                   GError              **error)
{
  DsOrderMark *self;

  g_return_val_if_fail (order != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (order->type == DS_ACCESS_ORDER_TYPE_UNSET)
    {
      g_set_error_literal (error, DS_ERROR, DS_ERROR_INVALID_ARGUMENT,
                           "Cannot mark an unset access order");
      return NULL;
    }

  self = g_new0 (DsOrderMark, 1);
  g_atomic_ref_count_init (&self->ref_count);
  self->order = *order;

  if (order->type == DS_ACCESS_ORDER_TYPE_DEVICE)
    {
      DsCudaScope scope;
      gboolean ok;

      if (!ds_access_order_enter (order, &scope, error))
        {
          g_free (self);
          return NULL;
        }
      ok = (self->event = ds_cuda_event_new (error)) != NULL &&
           ds_cuda_event_record (self->event, order->stream, error);
      if (!ok && self->event != NULL)
        ds_cuda_event_free (self->event);
      ds_cuda_scope_leave (&scope);

      if (!ok)
        {
          g_free (self);
          return NULL;
        }
    }

  return self;
}

/**
 * ds_order_mark_ref: (skip)
 * @self: a #DsOrderMark
 *
 * Takes a reference on @self.
 *
 * Returns: (transfer full): @self, with one more reference
 */
DsOrderMark *
ds_order_mark_ref (DsOrderMark *self)
{
  g_return_val_if_fail (self != NULL, NULL);

  g_atomic_ref_count_inc (&self->ref_count);
  return self;
}

/**
 * ds_order_mark_unref: (skip)
 * @self: (transfer full): a #DsOrderMark
 *
 * Drops a reference; the last one destroys the event in the context it
 * was made in, on whatever thread. Orders that wait for it still wait.
 */
void
ds_order_mark_unref (DsOrderMark *self)
{
  DsCudaScope scope;

  g_return_if_fail (self != NULL);

  if (!g_atomic_ref_count_dec (&self->ref_count))
    return;

  if (self->event != NULL && ds_access_order_enter (&self->order, &scope, NULL))
    {
      ds_cuda_event_free (self->event);
      ds_cuda_scope_leave (&scope);
    }
  g_free (self);
}

/**
 * ds_order_mark_get_order:
 * @self: a #DsOrderMark
 *
 * The order @self marks.
 *
 * Returns: (transfer none): the marked order
 */
const DsAccessOrder *
ds_order_mark_get_order (DsOrderMark *self)
{
  g_return_val_if_fail (self != NULL, NULL);

  return &self->order;
}

/**
 * ds_order_mark_wait:
 * @self: a #DsOrderMark
 * @order: the order that waits
 * @error: return location for a #GError
 *
 * Makes work submitted to @order after this call start only once the work
 * that @self marks has finished; work submitted to the marked order after
 * the mark is not waited for.
 *
 * - @self marks host order, or @order equals the marked order: nothing to
 *   do.
 * - @order is a device order: its stream waits for the event
 *   (`cudaStreamWaitEvent`); the host does not block.
 * - @order is host order: blocks until the marked work has finished.
 *
 * Returns: `TRUE` on success, `FALSE` with @error set otherwise
 *   (%DS_ERROR_INVALID_ARGUMENT for an unset @order)
 */
gboolean
ds_order_mark_wait (DsOrderMark          *self,
                    const DsAccessOrder  *order,
                    GError              **error)
{
  DsCudaScope scope;
  gboolean ok;

  g_return_val_if_fail (self != NULL, FALSE);
  g_return_val_if_fail (order != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (order->type == DS_ACCESS_ORDER_TYPE_UNSET)
    {
      g_set_error_literal (error, DS_ERROR, DS_ERROR_INVALID_ARGUMENT,
                           "Cannot wait in an unset access order");
      return FALSE;
    }
  if (self->event == NULL || ds_access_order_equal (order, &self->order))
    return TRUE;

  if (order->type == DS_ACCESS_ORDER_TYPE_HOST)
    {
      if (!ds_access_order_enter (&self->order, &scope, error))
        return FALSE;
      ok = ds_cuda_event_synchronize (self->event, error);
    }
  else
    {
      if (!ds_access_order_enter (order, &scope, error))
        return FALSE;
      ok = ds_cuda_stream_wait_event (order->stream, self->event, error);
    }
  ds_cuda_scope_leave (&scope);

  return ok;
}
