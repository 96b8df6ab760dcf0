/* ds-block.c: one scratch allocation, as bindings see it
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "ds-block.h"
#include "ds-access-order-private.h"
#include "ds-error.h"
#include "ds-block-private.h"
#include "ds-export-hold-private.h"

/**
 * DsBlock:
 *
 * One scratch allocation as bindings see it: its address as an integer,
 * its size and kind, and copy-in/copy-out.
 *
 * A block keeps its [class@Ds.Scratchpad] alive. It is valid until that
 * scratchpad is released: afterwards [method@Ds.Block.is_valid] returns
 * `FALSE`, reading, writing and exporting fail with
 * %DS_ERROR_INVALID_ARGUMENT and [method@Ds.Block.get_address] returns 0
 * rather than hand out memory that was given back.
 *
 * Code outside ds that uses the memory directly (a NumPy array, a DLPack
 * capsule, a CUDA array interface consumer) holds an *export* made with
 * [method@Ds.Block.export]: while one exists, the scratchpad is not
 * released (see [method@Ds.Scratchpad.get_n_exports]).
 *
 * Reads and writes of device memory, and of pinned and managed memory that
 * GPU work may still use, happen in the scratchpad's device order and wait
 * for it, so they see the results of the work queued before them.
 */

struct _DsBlock
{
  gatomicrefcount  ref_count;
  DsScratchpad    *scratchpad;
  DsBlockSource   *source;      /* the scratchpad's */
  gpointer         ptr;
  gsize            size;
  DsMemoryKind     kind;
  guint64          generation;
  gboolean         export;      /* counted in the scratchpad's exports */
  DsExportLink     link;        /* an export's place in its hold */
};

DsBlock *
ds_block_new (DsScratchpad  *scratchpad,
              DsBlockSource *source,
              gpointer       ptr,
              gsize          size,
              DsMemoryKind   kind)
{
  DsBlock *block = g_new0 (DsBlock, 1);

  g_atomic_ref_count_init (&block->ref_count);
  block->scratchpad = g_object_ref (scratchpad);
  block->source = source;
  block->ptr = ptr;
  block->size = size;
  block->kind = kind;
  block->generation = source->generation;

  return block;
}

G_DEFINE_BOXED_TYPE (DsBlock, ds_block, ds_block_ref, ds_block_unref)

/**
 * ds_block_ref: (skip)
 * @self: a #DsBlock
 *
 * Takes a reference on @self.
 *
 * Returns: (transfer full): @self, with one more reference
 */
DsBlock *
ds_block_ref (DsBlock *self)
{
  g_return_val_if_fail (self != NULL, NULL);

  g_atomic_ref_count_inc (&self->ref_count);
  return self;
}

/**
 * ds_block_unref: (skip)
 * @self: (transfer full): a #DsBlock
 *
 * Drops a reference; the last one drops the block's reference on its
 * scratchpad.
 */
void
ds_block_unref (DsBlock *self)
{
  g_return_if_fail (self != NULL);

  if (g_atomic_ref_count_dec (&self->ref_count))
    {
      /* The last export of memory a release left gives it back. */
      if (self->export)
        ds_export_hold_leave (self->source, &self->link);
      g_object_unref (self->scratchpad);
      g_free (self);
    }
}

/**
 * ds_block_get_address:
 * @self: a #DsBlock
 *
 * The address of the memory as an integer (device addresses included), for
 * APIs such as CuPy's `UnownedMemory` or `__cuda_array_interface__`; 0 once
 * the scratchpad was released, as that memory is no longer the block's.
 *
 * Returns: the address of the memory as an integer, or 0 when @self is no
 *   longer valid
 */
guint64
ds_block_get_address (DsBlock *self)
{
  g_return_val_if_fail (self != NULL, 0);

  return (guint64) (guintptr) ds_block_get_pointer (self);
}

/**
 * ds_block_get_pointer: (skip)
 * @self: a #DsBlock
 *
 * The memory as a pointer, for C callers; `NULL` once the scratchpad was
 * released (an export keeps its memory while it lives: see
 * [method@Ds.Block.is_valid]).
 *
 * Returns: (transfer none) (nullable): the memory, or `NULL` when @self is
 *   no longer valid
 */
gpointer
ds_block_get_pointer (DsBlock *self)
{
  g_return_val_if_fail (self != NULL, NULL);

  if (G_UNLIKELY (!ds_block_is_valid (self)))
    return NULL;
  return self->ptr;
}

/**
 * ds_block_get_size:
 * @self: a #DsBlock
 *
 * The size in bytes.
 *
 * Returns: the size in bytes
 */
gsize
ds_block_get_size (DsBlock *self)
{
  g_return_val_if_fail (self != NULL, 0);

  return self->size;
}

/**
 * ds_block_get_kind:
 * @self: a #DsBlock
 *
 * The kind of memory.
 *
 * Returns: the kind of memory
 */
DsMemoryKind
ds_block_get_kind (DsBlock *self)
{
  g_return_val_if_fail (self != NULL, DS_MEMORY_KIND_HOST);

  return self->kind;
}

/**
 * ds_block_get_scratchpad:
 * @self: a #DsBlock
 *
 * The scratchpad the memory came from.
 *
 * Returns: (transfer none): the scratchpad the memory came from
 */
DsScratchpad *
ds_block_get_scratchpad (DsBlock *self)
{
  g_return_val_if_fail (self != NULL, NULL);

  return self->scratchpad;
}

/**
 * ds_block_get_generation:
 * @self: a #DsBlock
 *
 * The number of times the scratchpad had been released when the block was
 * allocated.
 *
 * Returns: the number of times the scratchpad had been released when the
 *   block was allocated
 */
guint64
ds_block_get_generation (DsBlock *self)
{
  g_return_val_if_fail (self != NULL, 0);

  return self->generation;
}

/**
 * ds_block_is_valid:
 * @self: a #DsBlock
 *
 * `TRUE` until the scratchpad is released. An export
 * ([method@Ds.Block.export]) keeps its memory past a release, so it stays
 * valid while it lives.
 *
 * Returns: `TRUE` until the scratchpad is released (for an export: always)
 */
gboolean
ds_block_is_valid (DsBlock *self)
{
  g_return_val_if_fail (self != NULL, FALSE);

  return self->export || self->generation == self->source->generation;
}

static gboolean
check_range (DsBlock  *self,
             gsize     offset,
             gsize     length,
             GError  **error)
{
  if (!ds_block_is_valid (self))
    {
      g_set_error_literal (error, DS_ERROR, DS_ERROR_INVALID_ARGUMENT,
                           "The block's scratchpad was released; its memory is gone");
      return FALSE;
    }
  if (offset > self->size || length > self->size - offset)
    {
      g_set_error (error, DS_ERROR, DS_ERROR_INVALID_ARGUMENT,
                   "Range %" G_GSIZE_FORMAT "+%" G_GSIZE_FORMAT " is outside the "
                   "block of %" G_GSIZE_FORMAT " bytes", offset, length, self->size);
      return FALSE;
    }

  return TRUE;
}

/* Host-visible kinds that GPU work may use: let the device order drain
 * before the CPU touches them. */
static gboolean
sync_for_host_access (DsBlock  *self,
                      GError  **error)
{
  if (self->kind == DS_MEMORY_KIND_HOST)
    return TRUE;

  return ds_access_order_synchronize (self->source->order, error);
}

/* Copies to or from device memory in the scratchpad's device order, and
 * waits for the copy. */
static gboolean
device_copy (DsBlock        *self,
             gpointer        dst,
             gconstpointer   src,
             gsize           length,
             GError        **error)
{
  return ds_access_order_memcpy (self->source->order,
                               dst, src, length, TRUE, error);
}

/**
 * ds_block_read:
 * @self: a #DsBlock
 * @offset: where to start, in bytes
 * @length: how many bytes
 * @error: return location for a #GError
 *
 * Copies bytes out of the block, after the work queued in the scratchpad's
 * device order (for device, pinned and managed memory).
 *
 * Returns: (transfer full): the bytes, or `NULL` with @error set
 */
GBytes *
ds_block_read (DsBlock  *self,
               gsize     offset,
               gsize     length,
               GError  **error)
{
  guint8 *data;

  g_return_val_if_fail (self != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!check_range (self, offset, length, error))
    return NULL;
  if (length == 0)
    return g_bytes_new (NULL, 0);

  data = g_malloc (MAX (length, 1));

  if (self->kind == DS_MEMORY_KIND_DEVICE)
    {
      if (!device_copy (self, data, (guint8 *) self->ptr + offset, length, error))
        {
          g_free (data);
          return NULL;
        }
    }
  else
    {
      if (!sync_for_host_access (self, error))
        {
          g_free (data);
          return NULL;
        }
      memcpy (data, (guint8 *) self->ptr + offset, length);
    }

  return g_bytes_new_take (data, length);
}

/**
 * ds_block_write:
 * @self: a #DsBlock
 * @offset: where to start, in bytes
 * @data: the bytes to copy in
 * @error: return location for a #GError
 *
 * Copies @data into the block at @offset, after the work queued in the
 * scratchpad's device order (for device, pinned and managed memory), and
 * returns once the copy is done.
 *
 * Returns: `TRUE` on success
 */
gboolean
ds_block_write (DsBlock  *self,
                gsize     offset,
                GBytes   *data,
                GError  **error)
{
  gconstpointer src;
  gsize length;

  g_return_val_if_fail (self != NULL, FALSE);
  g_return_val_if_fail (data != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  src = g_bytes_get_data (data, &length);
  return ds_block_write_data (self, offset, src, length, error);
}

/**
 * ds_block_write_data:
 * @self: a #DsBlock
 * @offset: where to start, in bytes
 * @data: (array length=length) (element-type guint8) (nullable): the bytes
 *   to copy in
 * @length: the number of bytes
 * @error: return location for a #GError
 *
 * [method@Ds.Block.write] from an array: in Python any bytes-like object
 * (`bytes`, `bytearray`, `memoryview`, a NumPy array), in JavaScript a
 * `Uint8Array`, with no #GBytes in between.
 *
 * Returns: `TRUE` on success
 */
gboolean
ds_block_write_data (DsBlock       *self,
                     gsize          offset,
                     const guint8  *data,
                     gsize          length,
                     GError       **error)
{
  gconstpointer src = data;

  g_return_val_if_fail (self != NULL, FALSE);
  g_return_val_if_fail (data != NULL || length == 0, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (!check_range (self, offset, length, error))
    return FALSE;
  if (length == 0)
    return TRUE;

  if (self->kind == DS_MEMORY_KIND_DEVICE)
    return device_copy (self, (guint8 *) self->ptr + offset, src, length, error);

  if (!sync_for_host_access (self, error))
    return FALSE;
  memcpy ((guint8 *) self->ptr + offset, src, length);
  return TRUE;
}

/**
 * ds_block_fill:
 * @self: a #DsBlock
 * @value: the byte to fill with
 * @error: return location for a #GError
 *
 * Sets every byte of the block to @value: for device memory with
 * `cudaMemsetAsync` in the scratchpad's device order (no wait), for the
 * other kinds on the CPU after that order has drained.
 *
 * Returns: `TRUE` on success
 */
gboolean
ds_block_fill (DsBlock  *self,
               guint8    value,
               GError  **error)
{
  g_return_val_if_fail (self != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (!check_range (self, 0, self->size, error))
    return FALSE;
  if (self->size == 0)
    return TRUE;

  if (self->kind == DS_MEMORY_KIND_DEVICE)
    {
      return ds_access_order_memset (self->source->order,
                                   self->ptr, value, self->size, FALSE, error);
    }

  if (!sync_for_host_access (self, error))
    return FALSE;
  memset (self->ptr, value, self->size);
  return TRUE;
}

/* --- Exports ------------------------------------------------------------ */

/**
 * ds_block_export: (skip)
 * @self: a #DsBlock
 * @error: return location for a #GError
 *
 * Makes an *export* of @self: a new block for the same memory, for code
 * outside ds that uses the memory directly rather than through
 * [method@Ds.Block.read] and [method@Ds.Block.write] — a NumPy array or
 * `memoryview`, a DLPack capsule, a consumer of `__cuda_array_interface__`.
 * The Python override of `Ds.Block` makes one for each such view, and
 * drops it when the view is gone.
 *
 While an export exists, its memory is not given back:
 * [method@Ds.Scratchpad.try_release] gives everything else back and keeps
 * the upstream blocks holding exported memory until their last export is
 * gone, then gives them back in the order they would have gone back in
 * ([method@Ds.Scratchpad.get_held_by_exports] counts them);
 * [method@Ds.Scratchpad.release] refuses with a critical. The export
 * holds a reference on the scratchpad, so that finalization cannot give
 * the memory back either. So no view ever points at memory that was given
 * back.
 *
 * Returns: (transfer full): the export, or `NULL` with @error set
 *   (%DS_ERROR_INVALID_ARGUMENT when @self is no longer valid)
 */
DsBlock *
ds_block_export (DsBlock  *self,
                 GError  **error)
{
  DsBlock *export;

  g_return_val_if_fail (self != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  /* A live export keeps its memory past a release: exporting it again
   * joins the same hold. */
  if (self->export)
    {
      export = ds_block_new (self->scratchpad, self->source, self->ptr, self->size, self->kind);
      export->generation = self->generation;
      ds_export_hold_join_export (self->source, &export->link, &self->link);
      export->export = TRUE;
      return export;
    }
  if (!check_range (self, 0, self->size, error))
    return NULL;

  export = ds_block_new (self->scratchpad, self->source, self->ptr, self->size, self->kind);
  export->generation = self->generation;
  /* Refused if a release (on another thread) got there first. */
  if (!ds_export_hold_join (self->source, &export->link, self->generation, self->ptr,
                            self->size))
    {
      ds_block_unref (export);
      g_set_error_literal (error, DS_ERROR, DS_ERROR_INVALID_ARGUMENT,
                           "The block's scratchpad was released; its memory is gone");
      return NULL;
    }
  export->export = TRUE;

  return export;
}

/**
 * ds_block_is_export: (skip)
 * @self: a #DsBlock
 *
 * Whether @self was made by [method@Ds.Block.export].
 *
 * Returns: whether @self is an export
 */
gboolean
ds_block_is_export (DsBlock *self)
{
  g_return_val_if_fail (self != NULL, FALSE);

  return self->export;
}
