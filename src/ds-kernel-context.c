/* ds-kernel-context.c: the order a piece of work runs in, and its scratchpad
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "ds-kernel-context.h"
#include "ds-block.h"
#include "ds-scratchpad.h"

/**
 * DsKernelContext:
 *
 * What a piece of GPU work needs from its caller: the order (stream) it
 * runs in and, optionally, a scratchpad to take temporary memory from
 * (DALI's `KernelContext`).
 *
 * [method@Ds.KernelContext.run] calls a function with the context; when the
 * context has no scratchpad, it makes one on the context's order for the
 * duration of the call and releases it afterwards, in stream order (DALI's
 * `KernelManager::Run`).
 */

struct _DsKernelContext
{
  gatomicrefcount  ref_count;
  DsAccessOrder    order;
  DsScratchpad    *scratchpad;
};

G_DEFINE_BOXED_TYPE (DsKernelContext, ds_kernel_context,
                     ds_kernel_context_ref, ds_kernel_context_unref)

/**
 * ds_kernel_context_new:
 * @order: (nullable): the order the work runs in; `NULL` for the legacy
 *   default stream of the current device
 * @scratchpad: (nullable): the scratchpad the work takes memory from
 *
 * Creates a kernel context.
 *
 * Returns: (transfer full): a new #DsKernelContext
 */
DsKernelContext *
ds_kernel_context_new (const DsAccessOrder *order,
                       DsScratchpad        *scratchpad)
{
  DsKernelContext *self;

  g_return_val_if_fail (scratchpad == NULL || DS_IS_SCRATCHPAD (scratchpad), NULL);

  self = g_new0 (DsKernelContext, 1);
  g_atomic_ref_count_init (&self->ref_count);
  if (order != NULL)
    self->order = *order;
  else
    ds_access_order_init_stream (&self->order, NULL, -1);
  if (scratchpad != NULL)
    self->scratchpad = g_object_ref (scratchpad);

  return self;
}

/**
 * ds_kernel_context_ref: (skip)
 * @self: a #DsKernelContext
 *
 * Takes a reference on @self.
 *
 * Returns: (transfer full): @self, with one more reference
 */
DsKernelContext *
ds_kernel_context_ref (DsKernelContext *self)
{
  g_return_val_if_fail (self != NULL, NULL);

  g_atomic_ref_count_inc (&self->ref_count);
  return self;
}

/**
 * ds_kernel_context_unref: (skip)
 * @self: (transfer full): a #DsKernelContext
 *
 * Drops a reference.
 */
void
ds_kernel_context_unref (DsKernelContext *self)
{
  g_return_if_fail (self != NULL);

  if (g_atomic_ref_count_dec (&self->ref_count))
    {
      g_clear_object (&self->scratchpad);
      g_free (self);
    }
}

/**
 * ds_kernel_context_get_order:
 * @self: a #DsKernelContext
 *
 * The order the work runs in.
 *
 * Returns: (transfer none): the order the work runs in
 */
const DsAccessOrder *
ds_kernel_context_get_order (DsKernelContext *self)
{
  g_return_val_if_fail (self != NULL, NULL);

  return &self->order;
}

/**
 * ds_kernel_context_get_scratchpad:
 * @self: a #DsKernelContext
 *
 * The scratchpad, if any.
 *
 * Returns: (transfer none) (nullable): the scratchpad, if any
 */
DsScratchpad *
ds_kernel_context_get_scratchpad (DsKernelContext *self)
{
  g_return_val_if_fail (self != NULL, NULL);

  return self->scratchpad;
}

/**
 * ds_kernel_context_set_scratchpad:
 * @self: a #DsKernelContext
 * @scratchpad: (nullable): the scratchpad the work takes memory from
 *
 * Sets or clears the scratchpad.
 */
void
ds_kernel_context_set_scratchpad (DsKernelContext *self,
                                  DsScratchpad    *scratchpad)
{
  g_return_if_fail (self != NULL);
  g_return_if_fail (scratchpad == NULL || DS_IS_SCRATCHPAD (scratchpad));

  g_set_object (&self->scratchpad, scratchpad);
}

/**
 * ds_kernel_context_run:
 * @self: a #DsKernelContext
 * @func: (scope call) (closure user_data): the work
 * @user_data: data for @func
 * @error: return location for a #GError
 *
 * Calls @func with @self. If @self has no scratchpad, a new one on @self's
 * order is set for the call and released and dropped afterwards
 * ([method@Ds.Scratchpad.try_release]), so everything @func took from it
 * goes back in stream order as soon as @func returns, even if a binding
 * still holds the scratchpad; the blocks that views of its memory still use
 * (NumPy arrays, DLPack tensors: [method@Ds.Block.export]) go back, in the
 * same order, when the last view of each is gone. @self has no scratchpad
 * again afterwards. A scratchpad that @self already had is used as it is
 * and not released.
 *
 * Returns: what @func returned; `FALSE` with @error set on failure, or
 *   with %DS_ERROR_BUSY if @func left the scratchpad in use by another
 *   thread (its memory then goes back when that thread is done with it
 *   and the last reference is dropped)
 */
gboolean
ds_kernel_context_run (DsKernelContext  *self,
                       DsKernelFunc      func,
                       gpointer          user_data,
                       GError          **error)
{
  DsScratchpad *scratchpad;
  GError *release_error = NULL;
  gboolean ok;

  g_return_val_if_fail (self != NULL, FALSE);
  g_return_val_if_fail (func != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (self->scratchpad != NULL)
    return func (self, user_data, error);

  /* One reference for the context, one for this call: @func may replace
   * or clear the context's scratchpad. */
  scratchpad = ds_scratchpad_new (&self->order);
  self->scratchpad = g_object_ref (scratchpad);
  ok = func (self, user_data, error);
  if (self->scratchpad == scratchpad)
    g_clear_object (&self->scratchpad);
  /* Bindings: a JavaScript wrapper of the scratchpad lives until the next
   * garbage collection, so dropping our references would not give the
   * memory back. Release it now; blocks that views still use (see
   * ds_block_export ()) follow the views, as at the end of a unit of work
   * of the scratchpad's own. */
  if (!ds_scratchpad_try_release (scratchpad, ok ? error : &release_error))
    ok = FALSE;
  g_clear_error (&release_error);
  g_object_unref (scratchpad);

  return ok;
}
