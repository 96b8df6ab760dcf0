/* ds-scratchpad-upload.c: DsScratchpad, continued: host data to device scratch
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * DALI's ToGPU and ToContiguousGPU: the data is copied into pinned
 * scratch, then to device scratch with one copy on the device order's
 * stream. Built on the scratchpad's public calls only.
 */

#include "config.h"

#include "ds-scratchpad-private.h"
#include "ds-access-order-private.h"
#include "ds-error.h"
#include "ds-memory-resource-private.h"

/**
 * ds_scratchpad_to_device:
 * @self: a #DsScratchpad
 * @data: (array length=size) (element-type guint8): host data to upload
 * @size: the number of bytes
 * @alignment: a power of two, or 0 for 16
 * @error: return location for a #GError
 *
 * Puts a copy of @data into device scratch, in the device order (DALI's
 * `ToGPU`): @data is copied into pinned scratch, then to device scratch with
 * `cudaMemcpyAsync` on the device order's stream. @data may be reused as
 * soon as this returns; the device copy is ready for work queued on that
 * stream afterwards.
 *
 * Returns: (type guint64): the device address (an integer in bindings),
 *   `NULL` (0) for size 0, or `NULL` with @error set
 */
gpointer
ds_scratchpad_to_device (DsScratchpad  *self,
                         gconstpointer  data,
                         gsize          size,
                         gsize          alignment,
                         GError       **error)
{
  gconstpointer arrays[1] = { data };
  gsize sizes[1] = { size };

  g_return_val_if_fail (DS_IS_SCRATCHPAD (self), NULL);
  g_return_val_if_fail (data != NULL || size == 0, NULL);

  if (size == 0)
    return NULL;

  return ds_scratchpad_to_contiguous_device (self, 1, arrays, sizes, alignment, NULL, error);
}

/**
 * ds_scratchpad_to_contiguous_device: (skip)
 * @self: a #DsScratchpad
 * @n_arrays: the number of host arrays
 * @arrays: (array length=n_arrays): the host arrays
 * @sizes: (array length=n_arrays): their sizes in bytes
 * @alignment: the alignment of each array in the device block (a power of
 *   two, or 0 for 16)
 * @device_ptrs: (array length=n_arrays) (out caller-allocates) (optional):
 *   where to store the device address of each array
 * @error: return location for a #GError
 *
 * Packs several host arrays into one contiguous device block with a single
 * copy (DALI's `ToContiguousGPU`): each array is placed at the next
 * multiple of @alignment, the whole is staged in pinned scratch and
 * uploaded with one `cudaMemcpyAsync` on the device order's stream.
 *
 * Returns: (transfer none) (nullable): the device address of the block
 *   (that of the first array), `NULL` if all sizes are 0, or `NULL` with
 *   @error set
 */
gpointer
ds_scratchpad_to_contiguous_device (DsScratchpad        *self,
                                    guint                n_arrays,
                                    const gconstpointer *arrays,
                                    const gsize         *sizes,
                                    gsize                alignment,
                                    gpointer            *device_ptrs,
                                    GError             **error)
{
  gsize total = 0, alignment_as_passed = alignment;
  guint8 *staging, *device;
  char text[64];

  g_return_val_if_fail (DS_IS_SCRATCHPAD (self), NULL);
  g_return_val_if_fail (n_arrays == 0 || (arrays != NULL && sizes != NULL), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!ds_memory_check_size_alignment (0, &alignment, DS_SCRATCHPAD_DEFAULT_ALIGNMENT, 0, error))
    return NULL;

  for (guint i = 0; i < n_arrays; i++)
    {
      gsize start = (total + alignment - 1) & ~(alignment - 1);

      if (start < total || sizes[i] > G_MAXSIZE - start - alignment)
        {
          g_set_error (error, DS_ERROR, DS_ERROR_INVALID_ARGUMENT,
                       "The total size of the %u arrays with %s overflows at "
                       "array %u (%" G_GSIZE_FORMAT " bytes)", n_arrays,
                       ds_memory_alignment_text (text, alignment_as_passed,
                                                 DS_SCRATCHPAD_DEFAULT_ALIGNMENT),
                       i, sizes[i]);
          return NULL;
        }
      g_return_val_if_fail (arrays[i] != NULL || sizes[i] == 0, NULL);
      total = start + sizes[i];
    }

  if (total == 0)
    {
      for (guint i = 0; device_ptrs != NULL && i < n_arrays; i++)
        device_ptrs[i] = NULL;
      return NULL;
    }

  staging = ds_scratchpad_alloc (self, DS_MEMORY_KIND_PINNED, total, alignment, error);
  if (staging == NULL)
    return NULL;
  device = ds_scratchpad_alloc (self, DS_MEMORY_KIND_DEVICE, total, alignment, error);
  if (device == NULL)
    return NULL;

  total = 0;
  for (guint i = 0; i < n_arrays; i++)
    {
      gsize start = (total + alignment - 1) & ~(alignment - 1);

      if (sizes[i] > 0)
        memcpy (staging + start, arrays[i], sizes[i]);
      if (device_ptrs != NULL)
        device_ptrs[i] = sizes[i] > 0 ? device + start : NULL;
      total = start + sizes[i];
    }

  {
    const DsAccessOrder *device_order = ds_scratchpad_get_device_order (self);
    const DsAccessOrder *pinned_order = ds_scratchpad_get_dealloc_order (self, DS_MEMORY_KIND_PINNED);

    /* In host order the copy is complete when this returns. */
    if (!ds_access_order_memcpy (device_order, device, staging, total, FALSE, error))
      return NULL;

    /* The staging block goes back in the pinned deallocation order; if
     * that is not the device order, make it wait for the copy. */
    if (!ds_access_order_equal (pinned_order, device_order) &&
        !ds_access_order_wait (pinned_order, device_order, error))
      return NULL;
  }

  return device;
}
