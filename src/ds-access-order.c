/* ds-access-order.c: where work runs: the host or a CUDA stream, and waits
 * between orders
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "ds-access-order-private.h"
#include "ds-error.h"

/**
 * DsAccessOrder:
 *
 * The order in which a piece of memory is used: *host order* (the calling
 * thread, synchronously) or a CUDA stream on a device.
 *
 * Scratchpads allocate device memory in their device order and give memory
 * back in each kind's deallocation order, so that nothing is reused while
 * work queued before the release may still touch it.
 *
 * Host-order operations never call into CUDA, so a process without a GPU
 * can use host orders freely.
 *
 * The structure can live on the stack: initialize it with
 * [func@Ds.AccessOrder.init_host] or [func@Ds.AccessOrder.init_stream].
 * Its fields are private. A zero-filled `DsAccessOrder` is the *unset*
 * order, which is neither host nor device.
 */

G_DEFINE_BOXED_TYPE (DsAccessOrder, ds_access_order,
                     ds_access_order_copy, ds_access_order_free)

/**
 * ds_access_order_init_host: (skip)
 * @self: (out caller-allocates): the order to fill
 *
 * Fills @self with host order.
 */
void
ds_access_order_init_host (DsAccessOrder *self)
{
  g_return_if_fail (self != NULL);

  memset (self, 0, sizeof *self);
  self->type = DS_ACCESS_ORDER_TYPE_HOST;
  self->device = -1;
}

/**
 * ds_access_order_init_stream: (skip)
 * @self: (out caller-allocates): the order to fill
 * @stream: (nullable): a `cudaStream_t`; `NULL` is the legacy default stream
 * @device: the device of @stream, or -1 for the stream's own device (the
 *   current device for the default stream)
 *
 * Fills @self with the order of @stream on @device.
 *
 * Where a CUDA device is usable, the device, the stream's identity and its
 * driver context are looked up now, so the order stays valid on any thread
 * (a #DsScratchpad finalized on another thread switches to that device and
 * context). Without a device, @self is still filled; using it for device
 * work then fails with %DS_ERROR_NO_DEVICE.
 */
void
ds_access_order_init_stream (DsAccessOrder *self,
                             gpointer       stream,
                             gint           device)
{
  g_return_if_fail (self != NULL);
  g_return_if_fail (device >= -1);

  memset (self, 0, sizeof *self);
  self->type = DS_ACCESS_ORDER_TYPE_DEVICE;
  self->stream = stream;
  self->device = device;

  (void) ds_cuda_stream_describe (stream, device, &self->device, &self->context,
                                  &self->stream_id);
}

/**
 * ds_access_order_new_host:
 *
 * Creates a host order.
 *
 * Returns: (transfer full): a new #DsAccessOrder
 */
DsAccessOrder *
ds_access_order_new_host (void)
{
  DsAccessOrder *self = g_new (DsAccessOrder, 1);

  ds_access_order_init_host (self);
  return self;
}

/**
 * ds_access_order_new_stream: (skip)
 * @stream: (nullable): a `cudaStream_t`; `NULL` is the legacy default stream
 * @device: the device of @stream, or -1 for the stream's own device
 *
 * Creates the order of @stream on @device. See
 * [func@Ds.AccessOrder.init_stream]; bindings use
 * [ctor@Ds.AccessOrder.new_for_handle].
 *
 * Returns: (transfer full): a new #DsAccessOrder
 */
DsAccessOrder *
ds_access_order_new_stream (gpointer stream,
                            gint     device)
{
  DsAccessOrder *self;

  g_return_val_if_fail (device >= -1, NULL);

  self = g_new (DsAccessOrder, 1);
  ds_access_order_init_stream (self, stream, device);
  return self;
}

/**
 * ds_access_order_new_for_handle:
 * @stream_handle: a `cudaStream_t` as an integer (0 is the legacy default
 *   stream), e.g. from `GstCuda.CudaStream.get_handle()` or CuPy
 * @device: the device of the stream, or -1 for the stream's own device
 *
 * Creates the order of a stream given as an integer, which is how bindings
 * pass stream handles.
 *
 * The handle must be that of a live stream, or 0 (the legacy default
 * stream), 1 (`cudaStreamLegacy`) or 2 (`cudaStreamPerThread`), as in
 * every CUDA binding (PyTorch's `torch.cuda.ExternalStream`, CuPy's
 * `ExternalStream`): a stream handle is a pointer that the CUDA driver
 * dereferences, and nothing can tell a pointer to a stream from any other
 * value. Where the binding has a typed stream object
 * (`GstCuda.CudaStream`, the stream of libds-gst, an object with
 * `__cuda_stream__`), pass that instead.
 *
 * Where a CUDA driver is present, the driver is asked for the stream's
 * identity (one call, which the order needs anyway): a handle it refuses
 * is refused here with a critical and `NULL`. Without a driver the handle
 * is kept as given, and device work in the order fails with
 * %DS_ERROR_NO_DEVICE.
 *
 * Returns: (transfer full) (nullable): a new #DsAccessOrder, or `NULL`
 *   for a handle the CUDA driver refuses
 */
DsAccessOrder *
ds_access_order_new_for_handle (guint64 stream_handle,
                                gint    device)
{
  DsAccessOrder *self;

  g_return_val_if_fail (device >= -1, NULL);

  self = g_new0 (DsAccessOrder, 1);
  self->type = DS_ACCESS_ORDER_TYPE_DEVICE;
  self->stream = (gpointer) (guintptr) stream_handle;
  self->device = device;
  if (!ds_cuda_stream_describe (self->stream, device, &self->device, &self->context,
                                &self->stream_id))
    {
      g_critical ("ds_access_order_new_for_handle: 0x%" G_GINT64_MODIFIER "x is not the "
                  "handle of a live CUDA stream: the CUDA driver refuses it", stream_handle);
      g_free (self);
      return NULL;
    }

  return self;
}

/**
 * ds_access_order_copy:
 * @self: a #DsAccessOrder
 *
 * Copies @self.
 *
 * Returns: (transfer full): a copy of @self
 */
DsAccessOrder *
ds_access_order_copy (const DsAccessOrder *self)
{
  g_return_val_if_fail (self != NULL, NULL);

  return g_memdup2 (self, sizeof *self);
}

/**
 * ds_access_order_free: (skip)
 * @self: (transfer full) (nullable): a #DsAccessOrder
 *
 * Frees an order made by one of the `new` functions or
 * [method@Ds.AccessOrder.copy].
 */
void
ds_access_order_free (DsAccessOrder *self)
{
  g_free (self);
}

/**
 * ds_access_order_is_host:
 * @self: a #DsAccessOrder
 *
 * Whether @self is host order.
 *
 * Returns: whether @self is host order
 */
gboolean
ds_access_order_is_host (const DsAccessOrder *self)
{
  g_return_val_if_fail (self != NULL, FALSE);

  return self->type == DS_ACCESS_ORDER_TYPE_HOST;
}

/**
 * ds_access_order_is_device:
 * @self: a #DsAccessOrder
 *
 * Whether @self is the order of a CUDA stream.
 *
 * Returns: whether @self is the order of a CUDA stream
 */
gboolean
ds_access_order_is_device (const DsAccessOrder *self)
{
  g_return_val_if_fail (self != NULL, FALSE);

  return self->type == DS_ACCESS_ORDER_TYPE_DEVICE;
}

/**
 * ds_access_order_get_stream: (skip)
 * @self: a #DsAccessOrder
 *
 * The `cudaStream_t` of a device order; `NULL` for the legacy default
 * stream and for host order.
 *
 * Returns: (nullable): the `cudaStream_t` of a device order; `NULL` for the
 *   legacy default stream and for host order
 */
gpointer
ds_access_order_get_stream (const DsAccessOrder *self)
{
  g_return_val_if_fail (self != NULL, NULL);

  return self->stream;
}

/**
 * ds_access_order_get_stream_handle:
 * @self: a #DsAccessOrder
 *
 * The stream as an integer, for bindings.
 *
 * Returns: the `cudaStream_t` of a device order as an integer; 0 for the
 *   legacy default stream and for host order
 */
guint64
ds_access_order_get_stream_handle (const DsAccessOrder *self)
{
  g_return_val_if_fail (self != NULL, 0);

  return (guint64) (guintptr) self->stream;
}

/**
 * ds_access_order_get_device:
 * @self: a #DsAccessOrder
 *
 * The device of a device order, or -1 for host order (and for a device
 * order whose device could not be found because there is no CUDA device).
 *
 * Returns: the device of a device order, or -1 for host order (and for a
 *   device order whose device could not be found because there is no CUDA
 *   device)
 */
gint
ds_access_order_get_device (const DsAccessOrder *self)
{
  g_return_val_if_fail (self != NULL, -1);

  return self->device;
}

/**
 * ds_access_order_equal:
 * @a: a #DsAccessOrder
 * @b: a #DsAccessOrder
 *
 * Whether two orders are the same: both host order, or the same stream on
 * the same device. Two streams that had the same handle at different times
 * (one destroyed, the other created later) are not equal.
 *
 * Returns: `TRUE` if @a and @b are the same order
 */
gboolean
ds_access_order_equal (const DsAccessOrder *a,
                       const DsAccessOrder *b)
{
  g_return_val_if_fail (a != NULL, FALSE);
  g_return_val_if_fail (b != NULL, FALSE);

  if (a->type != b->type)
    return FALSE;
  if (a->type != DS_ACCESS_ORDER_TYPE_DEVICE)
    return TRUE;

  return a->stream == b->stream &&
         a->device == b->device &&
         (a->stream_id == 0 || b->stream_id == 0 || a->stream_id == b->stream_id);
}

/**
 * ds_access_order_synchronize:
 * @self: a #DsAccessOrder
 * @error: return location for a #GError
 *
 * Blocks until all work queued on the stream of a device order has
 * finished. Does nothing for host order, without calling CUDA.
 *
 * Returns: `TRUE` on success
 */
gboolean
ds_access_order_synchronize (const DsAccessOrder  *self,
                             GError              **error)
{
  g_return_val_if_fail (self != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (self->type != DS_ACCESS_ORDER_TYPE_DEVICE)
    return TRUE;

  {
    DsCudaScope scope;
    gboolean ok;

    if (!ds_access_order_enter (self, &scope, error))
      return FALSE;
    ok = ds_cuda_stream_synchronize (self->stream, error);
    ds_cuda_scope_leave (&scope);
    return ok;
  }
}

/**
 * ds_access_order_wait:
 * @self: the order that waits
 * @other: the order whose work must come first
 * @error: return location for a #GError
 *
 * Makes work submitted to @self after this call start only once the work
 * submitted to @other before it has finished.
 *
 * - @other is host order, or equal to @self: nothing to do.
 * - Both are device orders: an event is recorded on @other's stream and
 *   @self's stream waits for it (`cudaStreamWaitEvent`); the host does not
 *   block. Each call switches to the device (and driver context) of the
 *   stream it works on, so the default stream of a device that is not
 *   current is handled correctly, and the caller's device is put back.
 * - @self is host order: blocks until @other's stream has drained.
 *
 * Host-order operations never call into CUDA.
 *
 * Returns: `TRUE` on success, `FALSE` with @error set otherwise
 */
gboolean
ds_access_order_wait (const DsAccessOrder  *self,
                      const DsAccessOrder  *other,
                      GError              **error)
{
  g_return_val_if_fail (self != NULL, FALSE);
  g_return_val_if_fail (other != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (other->type != DS_ACCESS_ORDER_TYPE_DEVICE)
    return TRUE;
  if (self->type == DS_ACCESS_ORDER_TYPE_UNSET)
    {
      g_set_error_literal (error, DS_ERROR, DS_ERROR_INVALID_ARGUMENT,
                           "Cannot wait in an unset access order");
      return FALSE;
    }
  if (ds_access_order_equal (self, other))
    return TRUE;
  if (self->type == DS_ACCESS_ORDER_TYPE_HOST)
    return ds_access_order_synchronize (other, error);

  {
    DsCudaScope scope;
    gpointer event = NULL;
    gboolean ok;

    if (!ds_access_order_enter (other, &scope, error))
      return FALSE;
    ok = (event = ds_cuda_event_new (error)) != NULL &&
         ds_cuda_event_record (event, other->stream, error);
    ds_cuda_scope_leave (&scope);

    if (ok && ds_access_order_enter (self, &scope, error))
      {
        ok = ds_cuda_stream_wait_event (self->stream, event, error);
        ds_cuda_scope_leave (&scope);
      }
    else
      {
        ok = FALSE;
      }

    /* The event is destroyed in the context it was made in; a stream that
     * waits for it still waits. */
    if (event != NULL && ds_access_order_enter (other, &scope, NULL))
      {
        ds_cuda_event_free (event);
        ds_cuda_scope_leave (&scope);
      }

    return ok;
  }
}

gboolean
ds_access_order_enter (const DsAccessOrder  *self,
                       DsCudaScope          *scope,
                       GError              **error)
{
  if (self->type != DS_ACCESS_ORDER_TYPE_DEVICE)
    {
      memset (scope, 0, sizeof *scope);
      return TRUE;
    }

  return ds_cuda_scope_enter (scope, self->device, self->context, error);
}

/* Copies @size bytes from @src to @dst in @self, or fills them with @value
 * when @src is NULL. Host order: on the legacy default stream, waited for. */
static gboolean
transfer (const DsAccessOrder  *self,
          gpointer              dst,
          gconstpointer         src,
          guint8                value,
          gsize                 size,
          gboolean              wait,
          GError              **error)
{
  gboolean device = self->type == DS_ACCESS_ORDER_TYPE_DEVICE;
  gpointer stream = device ? self->stream : NULL;
  DsCudaScope scope;
  gboolean ok;

  if (!ds_access_order_enter (self, &scope, error))
    return FALSE;
  if (src != NULL)
    ok = ds_cuda_memcpy (dst, src, size, stream, wait || !device, error);
  else
    ok = ds_cuda_memset (dst, value, size, stream, wait || !device, error);
  ds_cuda_scope_leave (&scope);

  return ok;
}

gboolean
ds_access_order_memcpy (const DsAccessOrder  *self,
                        gpointer              dst,
                        gconstpointer         src,
                        gsize                 size,
                        gboolean              wait,
                        GError              **error)
{
  return transfer (self, dst, src, 0, size, wait, error);
}

gboolean
ds_access_order_memset (const DsAccessOrder  *self,
                        gpointer              dst,
                        guint8                value,
                        gsize                 size,
                        gboolean              wait,
                        GError              **error)
{
  return transfer (self, dst, NULL, value, size, wait, error);
}
