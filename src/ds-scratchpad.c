/* ds-scratchpad.c: the dynamic scratchpad
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The object: its type, construction, disposal, and the uploads of host
 * data to device scratch (DALI's ToGPU and ToContiguousGPU). Its settings
 * are in ds-scratchpad-settings.c, its memory (allocation, release,
 * statistics) in ds-scratchpad-alloc.c.
 */

#include "config.h"

#include "ds-scratchpad-private.h"
#include "ds-export-hold-private.h"
#include "ds-default-resources-private.h"
#include "ds-memory-resource-private.h"

/**
 * DsScratchpad:
 *
 * Short-lived scratch memory of the four [enum@Ds.MemoryKind]s, returned
 * all at once, in CUDA stream order, when the scratchpad is released or
 * finalized.
 *
 * Each kind has a monotonic arena: allocation inside the current block is
 * a pointer bump; a full block is followed by one twice as large, up to
 * [property@Ds.Scratchpad:max-block-size], taken from the kind's upstream
 * [iface@Ds.MemoryResource] (by default the process-wide pool of that kind
 * for the device of [property@Ds.Scratchpad:device-order]). Nothing is
 * allocated, and no CUDA call is made, before the first request of a kind.
 *
 * Device memory is allocated in the device order. On release, device
 * blocks go back in the device order, pinned and managed blocks in their
 * deallocation orders (the device order unless set): a stream-ordered
 * upstream reuses the memory only once the work queued before the release
 * has finished; any other gets it back once that stream has drained. So a
 * scratchpad may be dropped while kernels that use its memory are queued.
 *
 * Either make a scratchpad per unit of work (as DALI's `DynamicScratchpad`
 * on the stack), or keep one and call [method@Ds.Scratchpad.release] after
 * each unit, the faster path: no object is made. A released scratchpad
 * learns: its first block of a kind is its initial size doubled until it
 * covers what recent units took; a new one starts where the thread's last
 * one left off, for each kind it draws from a default resource.
 *
 * The settings (orders, initial sizes, resources, the growth ceiling) can
 * be set whenever the scratchpad holds no allocation: at construction, or
 * after a release (blocks kept by [property@Ds.Scratchpad:keep-blocks] go
 * back first), so one scratchpad can follow the stream of each unit of
 * work. Setting one while it holds allocations is a programmer error (a
 * critical; the value stays).
 *
 * After `g_object_run_dispose()` the memory is given back and every
 * allocation fails with %DS_ERROR_DISPOSED.
 *
 * One scratchpad is used by one thread at a time. It may be finalized on
 * any thread: it switches to the device and driver context of its device
 * order by itself. The resources and pools behind it are thread-safe.
 */

static void ds_scratchpad_iface_iface_init (DsScratchpadIfaceInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (DsScratchpad, ds_scratchpad, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (DS_TYPE_SCRATCHPAD_IFACE,
                                                      ds_scratchpad_iface_iface_init))

static void
ds_scratchpad_iface_iface_init (DsScratchpadIfaceInterface *iface)
{
  iface->alloc = ds_scratchpad_iface_alloc_impl;
}

/* Uploads (DALI's ToGPU and ToContiguousGPU) ---------------------------------------- */

/* Sets @total to the packed size of @n_arrays arrays each at @alignment
 * (checked, and 0 raised to the minimum); FALSE with @error set if the
 * alignment is bad or the size overflows. */
static gboolean
packed_size (guint         n_arrays,
             const gsize  *sizes,
             gsize        *alignment,
             gsize        *total,
             GError      **error)
{
  gsize alignment_as_passed = *alignment;
  char text[64];

  *total = 0;
  if (!ds_arena_check_request (0, alignment, error))
    return FALSE;

  for (guint i = 0; i < n_arrays; i++)
    {
      gsize start = (*total + *alignment - 1) & ~(*alignment - 1);

      if (start < *total || sizes[i] > G_MAXSIZE - start - *alignment)
        {
          g_set_error (error, DS_ERROR, DS_ERROR_INVALID_ARGUMENT,
                       "The total size of the %u arrays with %s overflows at "
                       "array %u (%" G_GSIZE_FORMAT " bytes)", n_arrays,
                       ds_memory_alignment_text (text, alignment_as_passed,
                                                 DS_ARENA_MIN_ALIGNMENT),
                       i, sizes[i]);
          return FALSE;
        }
      *total = start + sizes[i];
    }

  return TRUE;
}

/* Copies the arrays into @staging at their packed offsets and tells where
 * each lands in @device (NULL for an empty one). */
static void
pack (guint                n_arrays,
      const gconstpointer *arrays,
      const gsize         *sizes,
      gsize                alignment,
      guint8              *staging,
      guint8              *device,
      gpointer            *device_ptrs)
{
  gsize total = 0;

  for (guint i = 0; i < n_arrays; i++)
    {
      gsize start = (total + alignment - 1) & ~(alignment - 1);

      if (sizes[i] > 0)
        memcpy (staging + start, arrays[i], sizes[i]);
      if (device_ptrs != NULL)
        device_ptrs[i] = sizes[i] > 0 ? device + start : NULL;
      total = start + sizes[i];
    }
}

/**
 * ds_scratchpad_to_contiguous_device: (skip)
 * @self: a #DsScratchpad
 * @n_arrays: the number of arrays
 * @arrays: (array length=n_arrays): the host arrays
 * @sizes: (array length=n_arrays): their sizes in bytes
 * @alignment: the alignment of each array in the device memory (a power
 *   of two, or 0 for 16)
 * @device_ptrs: (out caller-allocates) (array length=n_arrays) (optional):
 *   where each array lands (`NULL` for an empty one)
 * @error: return location for a #GError
 *
 * Packs @arrays into pinned scratch, then into one device allocation with
 * a single copy queued in the device order (DALI's `ToContiguousGPU`). The
 * pinned staging memory goes back in the pinned deallocation order, which
 * is made to wait for the copy if it is not the device order.
 *
 * Returns: (transfer none) (nullable): the device memory holding every
 *   array, `NULL` if all are empty, or `NULL` with @error set
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
  const DsAccessOrder *pinned_order;
  guint8 *staging, *device = NULL;
  gboolean nested;
  gsize total;

  g_return_val_if_fail (DS_IS_SCRATCHPAD (self), NULL);
  g_return_val_if_fail (n_arrays == 0 || (arrays != NULL && sizes != NULL), NULL);
  for (guint i = 0; i < n_arrays; i++)
    g_return_val_if_fail (arrays[i] != NULL || sizes[i] == 0, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!ds_scratchpad_enter (self, &nested))
    {
      ds_scratchpad_set_busy_error (self, error);
      return NULL;
    }

  if (!packed_size (n_arrays, sizes, &alignment, &total, error))
    goto out;
  if (total == 0)
    {
      pack (n_arrays, arrays, sizes, alignment, NULL, NULL, device_ptrs);
      goto out;
    }

  staging = ds_scratchpad_alloc (self, DS_MEMORY_KIND_PINNED, total, alignment, error);
  if (staging != NULL)
    device = ds_scratchpad_alloc (self, DS_MEMORY_KIND_DEVICE, total, alignment, error);
  if (device == NULL)
    goto out;
  pack (n_arrays, arrays, sizes, alignment, staging, device, device_ptrs);

  /* In host order the copy is complete when this returns; otherwise the
   * pinned staging memory must not go back before the copy has read it. */
  pinned_order = ds_scratchpad_dealloc_order (self, DS_MEMORY_KIND_PINNED);
  if (!ds_access_order_memcpy (&self->device_order, device, staging, total, FALSE, error) ||
      (!ds_access_order_equal (pinned_order, &self->device_order) &&
       !ds_access_order_wait (pinned_order, &self->device_order, error)))
    device = NULL;

out:
  ds_scratchpad_leave (self, nested);
  return device;
}

/**
 * ds_scratchpad_to_device: (skip)
 * @self: a #DsScratchpad
 * @data: (array length=size) (element-type guint8): host data
 * @size: the number of bytes
 * @alignment: a power of two, or 0 for 16
 * @error: return location for a #GError
 *
 * Copies @data into device scratch (DALI's `ToGPU`): through pinned
 * staging, with the copy queued in the device order.
 *
 * Returns: (transfer none) (nullable): the device copy, `NULL` for size 0,
 *   or `NULL` with @error set
 */
gpointer
ds_scratchpad_to_device (DsScratchpad  *self,
                         gconstpointer  data,
                         gsize          size,
                         gsize          alignment,
                         GError       **error)
{
  g_return_val_if_fail (DS_IS_SCRATCHPAD (self), NULL);
  g_return_val_if_fail (data != NULL || size == 0, NULL);

  return ds_scratchpad_to_contiguous_device (self, 1, &data, &size, alignment, NULL, error);
}

/**
 * ds_scratchpad_to_device_block: (rename-to ds_scratchpad_to_device)
 * @self: a #DsScratchpad
 * @data: (array length=size) (element-type guint8) (nullable): host data
 *   to upload
 * @size: the number of bytes
 * @alignment: a power of two, or 0 for 16
 * @error: return location for a #GError
 *
 * [method@Ds.Scratchpad.to_device] returning a device [struct@Ds.Block];
 * in Python and JavaScript this is `sp.to_device(data, alignment)`.
 *
 * Returns: (transfer full) (nullable): a device block holding a copy of
 *   @data, `NULL` for size 0, or `NULL` with @error set
 */
DsBlock *
ds_scratchpad_to_device_block (DsScratchpad  *self,
                               const guint8  *data,
                               gsize          size,
                               gsize          alignment,
                               GError       **error)
{
  gpointer device;

  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  device = ds_scratchpad_to_device (self, data, size, alignment, error);
  if (device == NULL)
    return NULL;

  return ds_block_new (self, &self->source, device, size, DS_MEMORY_KIND_DEVICE);
}

static void
block_unref_nullable (gpointer block)
{
  if (block != NULL)
    ds_block_unref (block);
}

/**
 * ds_scratchpad_to_contiguous_device_block: (rename-to ds_scratchpad_to_contiguous_device)
 * @self: a #DsScratchpad
 * @arrays: (array length=n_arrays): the host arrays
 * @n_arrays: the number of arrays
 * @alignment: the alignment of each array in the device block (a power of
 *   two, or 0 for 16)
 * @blocks: (out) (optional) (transfer container) (element-type DsBlock):
 *   one device block per array, inside the returned one (`NULL` for an
 *   empty array); the array unrefs them when freed
 * @error: return location for a #GError
 *
 * [method@Ds.Scratchpad.to_contiguous_device] for bindings. In Python this
 * is `block, blocks = sp.to_contiguous_device(arrays, alignment)`.
 *
 * Returns: (transfer full) (nullable): the device block holding every
 *   array, `NULL` if all are empty, or `NULL` with @error set
 */
DsBlock *
ds_scratchpad_to_contiguous_device_block (DsScratchpad  *self,
                                          GBytes       **arrays,
                                          guint          n_arrays,
                                          gsize          alignment,
                                          GPtrArray    **blocks,
                                          GError       **error)
{
  g_autofree gconstpointer *data = g_new0 (gconstpointer, MAX (n_arrays, 1));
  g_autofree gsize *sizes = g_new0 (gsize, MAX (n_arrays, 1));
  g_autofree gpointer *device_ptrs = g_new0 (gpointer, MAX (n_arrays, 1));
  GError *local_error = NULL;
  guint8 *device;
  gsize total = 0;

  g_return_val_if_fail (DS_IS_SCRATCHPAD (self), NULL);
  g_return_val_if_fail (n_arrays == 0 || arrays != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (blocks != NULL)
    *blocks = NULL;
  for (guint i = 0; i < n_arrays; i++)
    {
      g_return_val_if_fail (arrays[i] != NULL, NULL);
      data[i] = g_bytes_get_data (arrays[i], &sizes[i]);
    }

  device = ds_scratchpad_to_contiguous_device (self, n_arrays, data, sizes, alignment,
                                               device_ptrs, &local_error);
  if (local_error != NULL)
    {
      g_propagate_error (error, local_error);
      return NULL;
    }

  for (guint i = 0; i < n_arrays; i++)
    if (sizes[i] > 0)
      total = MAX (total, (gsize) ((guint8 *) device_ptrs[i] - device) + sizes[i]);

  if (blocks != NULL)
    {
      *blocks = g_ptr_array_new_full (n_arrays, block_unref_nullable);
      for (guint i = 0; i < n_arrays; i++)
        g_ptr_array_add (*blocks, sizes[i] == 0 ? NULL :
                         ds_block_new (self, &self->source, device_ptrs[i], sizes[i],
                                       DS_MEMORY_KIND_DEVICE));
    }

  if (device == NULL)
    return NULL;
  return ds_block_new (self, &self->source, device, total, DS_MEMORY_KIND_DEVICE);
}

/* GObject ------------------------------------------------------------------------- */

static void
ds_scratchpad_dispose (GObject *object)
{
  DsScratchpad *self = DS_SCRATCHPAD (object);

  /* From now on every allocation is refused with DS_ERROR_DISPOSED. */
  self->disposed = TRUE;

  /* Disposed by its own resource while the scratchpad called it: the
   * arenas are in the middle of a change; finalize gives back. */
  if (G_UNLIKELY (self->in_resource))
    {
      for (guint kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
        self->windows[kind]._end = self->windows[kind]._cur;
      G_OBJECT_CLASS (ds_scratchpad_parent_class)->dispose (object);
      return;
    }

  /* While exports of its blocks are alive (g_object_run_dispose () with a
   * NumPy array around), their memory stays, with the resource it came
   * from, until they are gone: finalize () gives it back. */
  if (g_atomic_int_get (&self->source.n_exports) == 0)
    {
      if (ds_scratchpad_held_kinds (self) != 0)
        ds_scratchpad_release (self);
      ds_scratchpad_unsettle (self);
      for (guint kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
        g_clear_object (&self->resources[kind]);
    }
  else
    {
      /* Close the bump windows: not even an inline bump of an older
       * header hands out more of the memory kept for the exports. */
      for (guint kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
        self->windows[kind]._end = self->windows[kind]._cur;
    }

  G_OBJECT_CLASS (ds_scratchpad_parent_class)->dispose (object);
}

static void
ds_scratchpad_finalize (GObject *object)
{
  DsScratchpad *self = DS_SCRATCHPAD (object);

  /* Blocks kept at dispose for exports: each export held a reference, so
   * they are all gone now. */
  if (G_UNLIKELY (ds_scratchpad_held_kinds (self) != 0))
    ds_scratchpad_release (self);

  ds_export_hold_clear (&self->source);
  for (guint kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
    {
      g_clear_object (&self->resources[kind]);
      ds_arena_clear (&self->arenas[kind]);
    }

  G_OBJECT_CLASS (ds_scratchpad_parent_class)->finalize (object);
}

static void
ds_scratchpad_class_init (DsScratchpadClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = ds_scratchpad_dispose;
  object_class->finalize = ds_scratchpad_finalize;

  ds_scratchpad_install_properties (object_class);
}

static void
ds_scratchpad_init (DsScratchpad *self)
{
  for (guint kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
    ds_arena_init (&self->arenas[kind], &self->windows[kind], DS_SCRATCHPAD_DEFAULT_INITIAL_SIZE,
                   DS_SCRATCHPAD_DEFAULT_MAX_BLOCK_SIZE);
  self->source.order = &self->device_order;
}

/**
 * ds_scratchpad_new:
 * @device_order: (nullable): the order device memory is allocated and
 *   released in; `NULL` for the legacy default stream of the device that
 *   is current at the first GPU allocation
 *
 * Creates a scratchpad. Allocates nothing and makes no CUDA call.
 *
 * Returns: (transfer full): a new #DsScratchpad
 */
DsScratchpad *
ds_scratchpad_new (const DsAccessOrder *device_order)
{
  return ds_scratchpad_new_full (device_order, NULL, NULL, NULL);
}

/**
 * ds_scratchpad_new_full:
 * @device_order: (nullable): the order device memory is allocated and
 *   released in; `NULL` as in [ctor@Ds.Scratchpad.new]
 * @pinned_dealloc_order: (nullable): the order pinned memory is given back
 *   in; `NULL` for @device_order
 * @managed_dealloc_order: (nullable): the order managed memory is given
 *   back in; `NULL` for @device_order
 * @initial_sizes: (nullable) (array fixed-size=4): the first block size of
 *   each kind, indexed by [enum@Ds.MemoryKind]; 0 or `NULL` for 64 KiB
 *
 * Creates a scratchpad with every setting of DALI's `DynamicScratchpad`.
 * Equivalent to `g_object_new()` with the matching properties.
 *
 * Returns: (transfer full): a new #DsScratchpad
 */
DsScratchpad *
ds_scratchpad_new_full (const DsAccessOrder *device_order,
                        const DsAccessOrder *pinned_dealloc_order,
                        const DsAccessOrder *managed_dealloc_order,
                        const gsize         *initial_sizes)
{
  DsScratchpad *self = g_object_new (DS_TYPE_SCRATCHPAD, NULL);

  /* The fields directly: the same result as the properties, without the
   * GValue round trips on a per-unit-of-work path. */
  if (device_order != NULL)
    self->device_order = *device_order;
  if (pinned_dealloc_order != NULL)
    self->pinned_dealloc_order = *pinned_dealloc_order;
  if (managed_dealloc_order != NULL)
    self->managed_dealloc_order = *managed_dealloc_order;
  if (initial_sizes != NULL)
    for (guint kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
      ds_scratchpad_set_initial_size (self, kind, initial_sizes[kind]);

  return self;
}
