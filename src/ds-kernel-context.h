/* ds-kernel-context.h: the order a piece of GPU work runs in, plus scratch
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

#define DS_TYPE_KERNEL_CONTEXT (ds_kernel_context_get_type ())

/**
 * DsKernelFunc:
 * @context: the context the work runs in; its scratchpad is set
 * @user_data: the data given to [method@Ds.KernelContext.run]
 * @error: return location for a #GError
 *
 * A piece of work run by [method@Ds.KernelContext.run].
 *
 * Returns: `TRUE` on success, `FALSE` with @error set on failure
 */
typedef gboolean (*DsKernelFunc) (DsKernelContext  *context,
                                  gpointer          user_data,
                                  GError          **error);

DS_AVAILABLE_IN_ALL
GType                ds_kernel_context_get_type       (void) G_GNUC_CONST;
DS_AVAILABLE_IN_ALL
DsKernelContext     *ds_kernel_context_new            (const DsAccessOrder *order,
                                                       DsScratchpad        *scratchpad) G_GNUC_WARN_UNUSED_RESULT;
DS_AVAILABLE_IN_ALL
DsKernelContext     *ds_kernel_context_ref            (DsKernelContext     *self);
DS_AVAILABLE_IN_ALL
void                 ds_kernel_context_unref          (DsKernelContext     *self);
DS_AVAILABLE_IN_ALL
const DsAccessOrder *ds_kernel_context_get_order      (DsKernelContext     *self);
DS_AVAILABLE_IN_ALL
DsScratchpad        *ds_kernel_context_get_scratchpad (DsKernelContext     *self);
DS_AVAILABLE_IN_ALL
void                 ds_kernel_context_set_scratchpad (DsKernelContext     *self,
                                                       DsScratchpad        *scratchpad);
DS_AVAILABLE_IN_ALL
gboolean             ds_kernel_context_run            (DsKernelContext     *self,
                                                       DsKernelFunc         func,
                                                       gpointer             user_data,
                                                       GError             **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (DsKernelContext, ds_kernel_context_unref)

G_END_DECLS
