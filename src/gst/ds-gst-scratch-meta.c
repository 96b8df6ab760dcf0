/* ds-gst-scratch-meta.c
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "ds-gst-scratch-meta.h"
#include "ds-gst-debug-private.h"

/* The memory kinds, checked without reaching into ds's private headers. */
#define KIND_IS_VALID(kind) ((guint) (kind) < DS_N_MEMORY_KINDS)

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

  return TRUE;
}

static void
scratch_meta_free (GstMeta   *meta,
                   GstBuffer *buffer)
{
  DsGstScratchMeta *self = (DsGstScratchMeta *) meta;

  /* The last reference gives every block back in its stream order; ds
   * switches to the scratchpad's device and CUDA context itself, whatever
   * thread frees the buffer. */
  g_clear_object (&self->scratchpad);
  self->data = NULL;
  self->size = 0;
}

static DsGstScratchMeta *
add_meta (GstBuffer    *buffer,
          DsScratchpad *scratchpad,
          GQuark        tag,
          DsMemoryKind  kind,
          gpointer      data,
          gsize         size)
{
  DsGstScratchMeta *self;

  self = (DsGstScratchMeta *) gst_buffer_add_meta (buffer, DS_GST_SCRATCH_META_INFO, NULL);
  if (self == NULL)
    return NULL;

  self->scratchpad = g_object_ref (scratchpad);
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

  /* A copy shares the scratchpad (one more reference); anything else
   * (scaling, conversion) makes new data the scratch does not belong to. */
  if (!GST_META_TRANSFORM_IS_COPY (type))
    return FALSE;

  return add_meta (dest, self->scratchpad, self->tag, self->kind,
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
 * drops its own reference right after this call.
 *
 * Returns: (transfer none): the new meta
 */
DsGstScratchMeta *
ds_gst_buffer_add_scratch_meta (GstBuffer    *buffer,
                                DsScratchpad *scratchpad)
{
  return ds_gst_buffer_add_scratch_meta_full (buffer, scratchpad, 0,
                                              DS_MEMORY_KIND_HOST, NULL, 0);
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
 *
 * Like [func@DsGst.buffer_add_scratch_meta], and also publishes one region
 * of the scratchpad (for example per-frame results in device memory) so
 * that a downstream element can find it with
 * [func@DsGst.buffer_get_scratch_meta] and read it in stream order after
 * the work that wrote it.
 *
 * Returns: (transfer none): the new meta
 */
DsGstScratchMeta *
ds_gst_buffer_add_scratch_meta_full (GstBuffer    *buffer,
                                     DsScratchpad *scratchpad,
                                     GQuark        tag,
                                     DsMemoryKind  kind,
                                     gpointer      data,
                                     gsize         size)
{
  g_return_val_if_fail (GST_IS_BUFFER (buffer), NULL);
  g_return_val_if_fail (gst_buffer_is_writable (buffer), NULL);
  g_return_val_if_fail (DS_IS_SCRATCHPAD (scratchpad), NULL);
  g_return_val_if_fail (KIND_IS_VALID (kind), NULL);
  g_return_val_if_fail ((data == NULL) == (size == 0), NULL);

  return add_meta (buffer, scratchpad, tag, kind, data, size);
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
