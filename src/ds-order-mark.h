/* ds-order-mark.h: a point in an access order, for another order to wait for
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
#include "ds-access-order.h"

G_BEGIN_DECLS

#define DS_TYPE_ORDER_MARK (ds_order_mark_get_type ())

DS_AVAILABLE_IN_0_2
GType                ds_order_mark_get_type  (void) G_GNUC_CONST;
DS_AVAILABLE_IN_0_2
DsOrderMark         *ds_order_mark_new       (const DsAccessOrder  *order,
                                              GError              **error) G_GNUC_WARN_UNUSED_RESULT;
DS_AVAILABLE_IN_0_2
DsOrderMark         *ds_order_mark_ref       (DsOrderMark          *self);
DS_AVAILABLE_IN_0_2
void                 ds_order_mark_unref     (DsOrderMark          *self);
DS_AVAILABLE_IN_0_2
const DsAccessOrder *ds_order_mark_get_order (DsOrderMark          *self);
DS_AVAILABLE_IN_0_2
gboolean             ds_order_mark_wait      (DsOrderMark          *self,
                                              const DsAccessOrder  *order,
                                              GError              **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (DsOrderMark, ds_order_mark_unref)

G_END_DECLS
