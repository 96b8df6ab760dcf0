/* ds-access-order.h: host order or a CUDA stream on a device
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined (DS_INSIDE) && !defined (DS_COMPILATION)
# error "Only <ds.h> can be included directly."
#endif

#include <glib-object.h>

#include "ds-types.h"

G_BEGIN_DECLS

#define DS_TYPE_ACCESS_ORDER (ds_access_order_get_type ())

/* Opaque to bindings, which make orders with the constructors. */
#ifndef __GI_SCANNER__
struct _DsAccessOrder
{
  /*< private >*/
  guint32  type;
  gint32   device;
  gpointer stream;
  guint64  stream_id;
  gpointer context;
  gpointer _ds_reserved[4];
};
#endif

DS_AVAILABLE_IN_ALL
GType          ds_access_order_get_type          (void) G_GNUC_CONST;

DS_AVAILABLE_IN_ALL
DsAccessOrder *ds_access_order_new_host          (void) G_GNUC_WARN_UNUSED_RESULT;
DS_AVAILABLE_IN_ALL
DsAccessOrder *ds_access_order_new_stream        (gpointer             stream,
                                                  gint                 device) G_GNUC_WARN_UNUSED_RESULT;
DS_AVAILABLE_IN_ALL
DsAccessOrder *ds_access_order_new_for_handle    (guint64              stream_handle,
                                                  gint                 device) G_GNUC_WARN_UNUSED_RESULT;
DS_AVAILABLE_IN_ALL
DsAccessOrder *ds_access_order_copy              (const DsAccessOrder *self) G_GNUC_WARN_UNUSED_RESULT;
DS_AVAILABLE_IN_ALL
void           ds_access_order_free              (DsAccessOrder       *self);

DS_AVAILABLE_IN_ALL
void           ds_access_order_init_host         (DsAccessOrder       *self);
DS_AVAILABLE_IN_ALL
void           ds_access_order_init_stream       (DsAccessOrder       *self,
                                                  gpointer             stream,
                                                  gint                 device);

DS_AVAILABLE_IN_ALL
gboolean       ds_access_order_is_host           (const DsAccessOrder *self);
DS_AVAILABLE_IN_ALL
gboolean       ds_access_order_is_device         (const DsAccessOrder *self);
DS_AVAILABLE_IN_ALL
gpointer       ds_access_order_get_stream        (const DsAccessOrder *self);
DS_AVAILABLE_IN_ALL
guint64        ds_access_order_get_stream_handle (const DsAccessOrder *self);
DS_AVAILABLE_IN_ALL
gint           ds_access_order_get_device        (const DsAccessOrder *self);
DS_AVAILABLE_IN_ALL
gboolean       ds_access_order_equal             (const DsAccessOrder *a,
                                                  const DsAccessOrder *b);
DS_AVAILABLE_IN_ALL
gboolean       ds_access_order_wait              (const DsAccessOrder *self,
                                                  const DsAccessOrder *other,
                                                  GError             **error);
DS_AVAILABLE_IN_ALL
gboolean       ds_access_order_synchronize       (const DsAccessOrder *self,
                                                  GError             **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (DsAccessOrder, ds_access_order_free)

G_END_DECLS
