/* ds-access-order-private.h
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "ds-access-order.h"

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

G_END_DECLS
