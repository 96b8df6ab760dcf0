/* ds-access-order-private.h
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "ds-access-order.h"
#include "ds-cuda-private.h"

G_BEGIN_DECLS

typedef enum
{
  DS_ACCESS_ORDER_TYPE_UNSET = 0,
  DS_ACCESS_ORDER_TYPE_HOST = 1,
  DS_ACCESS_ORDER_TYPE_DEVICE = 2,
} DsAccessOrderType;

/* The driver context the order's stream belongs to, or NULL for "the
 * primary context of its device". */
static inline gpointer
ds_access_order_get_context (const DsAccessOrder *self)
{
  return self->context;
}

/* cudaStreamGetId () of the stream: unlike the handle, it is never reused
 * by a later stream. 0 when unknown. */
static inline guint64
ds_access_order_get_stream_id (const DsAccessOrder *self)
{
  return self->stream_id;
}

/* Enters the scope of @self's device and driver context (does nothing,
 * and calls no CUDA, for host order). */
gboolean ds_access_order_enter        (const DsAccessOrder *self,
                                       DsCudaScope         *scope,
                                       GError             **error);

/* Copies @size bytes in @self: on a device order's stream, in its device
 * and context (with @wait, complete on return); in host order, a
 * synchronous copy. Any direction (unified addressing). */
gboolean ds_access_order_memcpy       (const DsAccessOrder *self,
                                       gpointer             dst,
                                       gconstpointer        src,
                                       gsize                size,
                                       gboolean             wait,
                                       GError             **error);

/* Fills @size bytes of GPU-accessible memory with @value in @self, as
 * ds_access_order_memcpy (). */
gboolean ds_access_order_memset       (const DsAccessOrder *self,
                                       gpointer             dst,
                                       guint8               value,
                                       gsize                size,
                                       gboolean             wait,
                                       GError             **error);

G_END_DECLS
