/* ds-gst-scratch-meta.c: a buffer's scratch memory, kept until the buffer
 * and its readers are done
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The metas of a buffer and of its copies share one Share: the scratchpad,
 * the producer's order and the mark of its write, and the marks of the
 * readers. The last meta to go makes every order the scratchpad gives
 * memory back in wait for the readers, then drops the scratchpad.
 */

#include "config.h"

#include "ds-gst-scratch-meta.h"
#include "ds-gst-debug-private.h"

/* The memory kinds, checked without reaching into ds's private headers. */
#define KIND_IS_VALID(kind) ((guint) (kind) < DS_N_MEMORY_KINDS)

typedef struct
{
  gatomicrefcount  ref_count;
  DsScratchpad    *scratchpad;
  DsAccessOrder    order;     /* the producer's: the scratchpad's device order */
  DsOrderMark     *written;   /* NULL: nothing written in a device order */
  GMutex           lock;
  GPtrArray       *readers;   /* DsOrderMark, one per order; under lock */
} Share;

static Share *
share_new (DsScratchpad *scratchpad)
{
  Share *share = g_new0 (Share, 1);

  g_atomic_ref_count_init (&share->ref_count);
  share->scratchpad = g_object_ref (scratchpad);
  share->order = *ds_scratchpad_get_device_order (scratchpad);
  g_mutex_init (&share->lock);
  return share;
}

static Share *
share_ref (Share *share)
{
  g_atomic_ref_count_inc (&share->ref_count);
  return share;
}

/* Makes @order wait for every reader, or, where that fails, the host. */
static void
wait_for_readers (Share               *share,
                  const DsAccessOrder *order)
{
  for (guint i = 0; i < share->readers->len; i++)
    {
      DsOrderMark *reader = share->readers->pdata[i];
      g_autoptr(GError) error = NULL;
      g_autoptr(DsAccessOrder) host = NULL;

      if (ds_order_mark_wait (reader, order, &error))
        continue;
      GST_WARNING ("scratchpad %p: its release cannot wait for a reader in stream order "
                   "(%s); the host waits", share->scratchpad, error->message);
      g_clear_error (&error);
      host = ds_access_order_new_host ();
      if (!ds_order_mark_wait (reader, host, &error))
        g_warning ("Scratchpad %p is given back while a reader may still use it: %s",
                   share->scratchpad, error->message);
    }
}

static void
share_unref (Share *share)
{
  const DsAccessOrder *waited[DS_N_MEMORY_KINDS] = { NULL, };
  guint n_waited = 0;

  if (!g_atomic_ref_count_dec (&share->ref_count))
    return;

  /* Each order the scratchpad gives memory back in (one, unless pinned or
   * managed memory has an order of its own) waits for the readers. */
  for (DsMemoryKind kind = DS_MEMORY_KIND_PINNED;
       share->readers != NULL && kind < DS_N_MEMORY_KINDS; kind++)
    {
      const DsAccessOrder *order = ds_scratchpad_get_dealloc_order (share->scratchpad, kind);
      gboolean seen = FALSE;

      if (ds_scratchpad_get_n_blocks (share->scratchpad, kind) == 0 ||
          (!ds_access_order_is_device (order) && !ds_access_order_is_host (order)))
        continue;
      for (guint i = 0; i < n_waited && !seen; i++)
        seen = ds_access_order_equal (waited[i], order);
      if (seen)
        continue;
      waited[n_waited++] = order;
      wait_for_readers (share, order);
    }

  g_clear_object (&share->scratchpad);
  g_clear_pointer (&share->written, ds_order_mark_unref);
  g_clear_pointer (&share->readers, g_ptr_array_unref);
  g_mutex_clear (&share->lock);
  g_free (share);
}

/**
 * ds_gst_scratch_meta_api_get_type:
 *
 * The API type of [struct@DsGst.ScratchMeta], registered with the tag
 * `GST_META_TAG_MEMORY_STR`.
 *
 * Returns: the API #GType
 */
GType
ds_gst_scratch_meta_api_get_type (void)
{
  static gsize type_id;

  if (g_once_init_enter (&type_id))
    {
      /* "memory": the scratch belongs with the buffer's memory. GStreamer
       * leaves such a meta out of copies that take part of the buffer, no
       * memory or merged memory, and GstBaseTransform's default
       * transform_meta does not put it on an output buffer. */
      static const gchar *tags[] = { GST_META_TAG_MEMORY_STR, NULL };
      GType type = gst_meta_api_type_register ("DsGstScratchMetaAPI", tags);

      ds_gst_debug_init ();
      g_once_init_leave (&type_id, type);
    }

  return (GType) type_id;
}

static gboolean
scratch_meta_init (GstMeta   *meta,
                   gpointer   params,
                   GstBuffer *buffer)
{
  DsGstScratchMeta *self = (DsGstScratchMeta *) meta;

  self->scratchpad = NULL;
  self->tag = 0;
  self->kind = DS_MEMORY_KIND_HOST;
  self->data = NULL;
  self->size = 0;
  self->_ds_gst_share = NULL;

  return TRUE;
}

static void
scratch_meta_free (GstMeta   *meta,
                   GstBuffer *buffer)
{
  DsGstScratchMeta *self = (DsGstScratchMeta *) meta;

  /* The last meta of the scratch gives every block back in its stream
   * order, after the readers; ds switches to the scratchpad's device and
   * CUDA context itself, whatever thread frees the buffer. */
  g_clear_pointer (&self->_ds_gst_share, share_unref);
  self->scratchpad = NULL;
  self->data = NULL;
  self->size = 0;
}

static DsGstScratchMeta *
add_meta (GstBuffer    *buffer,
          Share        *share,
          GQuark        tag,
          DsMemoryKind  kind,
          gpointer      data,
          gsize         size)
{
  DsGstScratchMeta *self;

  self = (DsGstScratchMeta *) gst_buffer_add_meta (buffer, DS_GST_SCRATCH_META_INFO, NULL);
  if (self == NULL)
    {
      share_unref (share);
      return NULL;
    }

  self->_ds_gst_share = share;
  self->scratchpad = share->scratchpad;
  self->tag = tag;
  self->kind = kind;
  self->data = data;
  self->size = size;

  return self;
}

static gboolean
scratch_meta_transform (GstBuffer *dest,
                        GstMeta   *meta,
                        GstBuffer *buffer,
                        GQuark     type,
                        gpointer   data)
{
  DsGstScratchMeta *self = (DsGstScratchMeta *) meta;

  /* A copy shares the scratch (one more reference); anything else
   * (scaling, conversion) makes new data the scratch does not belong to. */
  if (!GST_META_TRANSFORM_IS_COPY (type))
    return FALSE;

  return add_meta (dest, share_ref (self->_ds_gst_share), self->tag, self->kind,
                   self->data, self->size) != NULL;
}

/**
 * ds_gst_scratch_meta_get_info:
 *
 * The registered #GstMetaInfo of [struct@DsGst.ScratchMeta].
 *
 * Returns: (transfer none): the #GstMetaInfo
 */
const GstMetaInfo *
ds_gst_scratch_meta_get_info (void)
{
  static const GstMetaInfo *info;

  if (g_once_init_enter ((GstMetaInfo **) &info))
    {
      const GstMetaInfo *registered =
        gst_meta_register (DS_GST_SCRATCH_META_API_TYPE, "DsGstScratchMeta",
                           sizeof (DsGstScratchMeta),
                           scratch_meta_init, scratch_meta_free,
                           scratch_meta_transform);

      g_once_init_leave ((GstMetaInfo **) &info, (GstMetaInfo *) registered);
    }

  return info;
}

/**
 * ds_gst_buffer_add_scratch_meta:
 * @buffer: a writable #GstBuffer
 * @scratchpad: the scratchpad to tie to @buffer
 *
 * Ties @scratchpad to @buffer: the meta takes a reference on it, and drops
 * it when @buffer is freed or goes back to its pool, so that the memory is
 * given back in stream order then (and not before). The caller usually
 * drops its own reference right after this call. To publish a region for
 * downstream, use [func@DsGst.buffer_add_scratch_meta_full].
 *
 * Returns: (transfer none): the new meta
 */
DsGstScratchMeta *
ds_gst_buffer_add_scratch_meta (GstBuffer    *buffer,
                                DsScratchpad *scratchpad)
{
  g_return_val_if_fail (GST_IS_BUFFER (buffer), NULL);
  g_return_val_if_fail (gst_buffer_is_writable (buffer), NULL);
  g_return_val_if_fail (DS_IS_SCRATCHPAD (scratchpad), NULL);

  return add_meta (buffer, share_new (scratchpad), 0, DS_MEMORY_KIND_HOST, NULL, 0);
}

/**
 * ds_gst_buffer_add_scratch_meta_full:
 * @buffer: a writable #GstBuffer
 * @scratchpad: the scratchpad to tie to @buffer
 * @tag: a name for the published region (e.g.
 *   `g_quark_from_static_string ("my-element-histogram")`), or 0
 * @kind: the memory kind of @data
 * @data: (nullable): a region of @scratchpad to publish, or `NULL`
 * @size: the size of @data in bytes; 0 when @data is `NULL`
 * @error: return location for a #GError
 *
 * Like [func@DsGst.buffer_add_scratch_meta], and also publishes one region
 * of the scratchpad (for example per-frame results in device memory) so
 * that a downstream element can find it with
 * [func@DsGst.buffer_get_scratch_meta].
 *
 * Call it after queuing the work that writes @data: for GPU memory written
 * in the scratchpad's device order, the meta marks that order here
 * ([struct@Ds.OrderMark]), and a consumer waits for exactly that work with
 * [method@DsGst.ScratchMeta.wait]. Host memory is taken as written.
 *
 * Returns: (transfer none) (nullable): the new meta, or `NULL` with @error
 *   set when the order cannot be marked (a CUDA error)
 */
DsGstScratchMeta *
ds_gst_buffer_add_scratch_meta_full (GstBuffer     *buffer,
                                     DsScratchpad  *scratchpad,
                                     GQuark         tag,
                                     DsMemoryKind   kind,
                                     gpointer       data,
                                     gsize          size,
                                     GError       **error)
{
  Share *share;

  g_return_val_if_fail (GST_IS_BUFFER (buffer), NULL);
  g_return_val_if_fail (gst_buffer_is_writable (buffer), NULL);
  g_return_val_if_fail (DS_IS_SCRATCHPAD (scratchpad), NULL);
  g_return_val_if_fail (KIND_IS_VALID (kind), NULL);
  g_return_val_if_fail ((data == NULL) == (size == 0), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  share = share_new (scratchpad);
  if (data != NULL && kind != DS_MEMORY_KIND_HOST && ds_access_order_is_device (&share->order))
    {
      share->written = ds_order_mark_new (&share->order, error);
      if (share->written == NULL)
        {
          share_unref (share);
          return NULL;
        }
    }

  return add_meta (buffer, share, tag, kind, data, size);
}

/**
 * ds_gst_buffer_get_scratch_meta:
 * @buffer: a #GstBuffer
 * @tag: the tag to look for, or 0 for the first scratch meta of any tag
 *
 * Finds a [struct@DsGst.ScratchMeta] on @buffer.
 *
 * Returns: (transfer none) (nullable): the first scratch meta on @buffer
 *   whose tag is @tag (any, for 0), or `NULL`
 */
DsGstScratchMeta *
ds_gst_buffer_get_scratch_meta (GstBuffer *buffer,
                                GQuark     tag)
{
  gpointer state = NULL;
  GstMeta *meta;

  g_return_val_if_fail (GST_IS_BUFFER (buffer), NULL);

  while ((meta = gst_buffer_iterate_meta_filtered (buffer, &state,
                                                   DS_GST_SCRATCH_META_API_TYPE)) != NULL)
    {
      DsGstScratchMeta *self = (DsGstScratchMeta *) meta;

      if (tag == 0 || self->tag == tag)
        return self;
    }

  return NULL;
}

/**
 * ds_gst_scratch_meta_get_order:
 * @self: a #DsGstScratchMeta
 *
 * The producer's order: the device order of the scratchpad when the meta
 * was added. A consumer that runs in this order needs no wait and no
 * reader registration.
 *
 * Returns: (transfer none) (nullable): the producer's order, or `NULL`
 *   when the scratchpad had none yet (it held no GPU memory)
 */
const DsAccessOrder *
ds_gst_scratch_meta_get_order (DsGstScratchMeta *self)
{
  Share *share;

  g_return_val_if_fail (self != NULL && self->_ds_gst_share != NULL, NULL);

  share = self->_ds_gst_share;
  if (!ds_access_order_is_device (&share->order) && !ds_access_order_is_host (&share->order))
    return NULL;
  return &share->order;
}

/**
 * ds_gst_scratch_meta_wait:
 * @self: a #DsGstScratchMeta
 * @order: the consumer's order
 * @error: return location for a #GError
 *
 * Makes work submitted to @order after this call start only once the
 * producer's work that wrote the published region has finished (and not
 * the producer's later work). For host order, blocks until then. Nothing
 * to wait for when nothing was published, when the region is host
 * memory, or when @order is the producer's.
 *
 * Returns: `TRUE` on success, `FALSE` with @error set
 */
gboolean
ds_gst_scratch_meta_wait (DsGstScratchMeta     *self,
                          const DsAccessOrder  *order,
                          GError              **error)
{
  Share *share;

  g_return_val_if_fail (self != NULL && self->_ds_gst_share != NULL, FALSE);
  g_return_val_if_fail (order != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  share = self->_ds_gst_share;
  if (share->written == NULL)
    return TRUE;
  return ds_order_mark_wait (share->written, order, error);
}

/**
 * ds_gst_scratch_meta_add_reader:
 * @self: a #DsGstScratchMeta
 * @order: the consumer's order
 * @error: return location for a #GError
 *
 * Registers @order as a reader of the scratch: when the last buffer that
 * carries it goes, the orders the scratchpad gives memory back in wait
 * for the work submitted to @order before this call, so no one else gets
 * the memory while that work may still read it. Call it after queuing the
 * reads, on any buffer that carries the meta (copies share the readers).
 * Registering the same order again covers the work queued since.
 *
 * Host order needs no registration (the reads are done when they return),
 * nor does the producer's order.
 *
 * Returns: `TRUE` on success, `FALSE` with @error set (a CUDA error)
 */
gboolean
ds_gst_scratch_meta_add_reader (DsGstScratchMeta     *self,
                                const DsAccessOrder  *order,
                                GError              **error)
{
  Share *share;
  DsOrderMark *mark;
  gboolean replaced = FALSE;

  g_return_val_if_fail (self != NULL && self->_ds_gst_share != NULL, FALSE);
  g_return_val_if_fail (order != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  share = self->_ds_gst_share;
  if (ds_access_order_is_host (order) || ds_access_order_equal (order, &share->order))
    return TRUE;

  mark = ds_order_mark_new (order, error);
  if (mark == NULL)
    return FALSE;

  g_mutex_lock (&share->lock);
  if (share->readers == NULL)
    share->readers = g_ptr_array_new_with_free_func ((GDestroyNotify) ds_order_mark_unref);
  for (guint i = 0; i < share->readers->len && !replaced; i++)
    if (ds_access_order_equal (ds_order_mark_get_order (share->readers->pdata[i]), order))
      {
        /* The newer mark covers what the older one did. */
        ds_order_mark_unref (share->readers->pdata[i]);
        share->readers->pdata[i] = mark;
        replaced = TRUE;
      }
  if (!replaced)
    g_ptr_array_add (share->readers, mark);
  g_mutex_unlock (&share->lock);

  return TRUE;
}
