/* ds-gst-scratch-meta.h: scratch memory that lives as long as a buffer
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined (DS_GST_INSIDE) && !defined (DS_GST_COMPILATION)
# error "Only <ds-gst.h> can be included directly."
#endif

#include <ds.h>
#include <gst/gst.h>

#include "ds-gst-version-macros.h"

G_BEGIN_DECLS

typedef struct _DsGstScratchMeta DsGstScratchMeta;

/**
 * DsGstScratchMeta:
 * @meta: the parent #GstMeta
 * @scratchpad: the scratchpad; the meta holds one reference on it
 * @tag: what the producer calls the region it publishes, or 0
 * @kind: the memory kind of @data
 * @data: (nullable): a region of @scratchpad that the producer publishes
 *   for downstream (e.g. per-frame results in device memory that later GPU
 *   work reads), or `NULL`
 * @size: the size of @data in bytes, 0 when @data is `NULL`
 *
 * Ties a [class@Ds.Scratchpad] to one #GstBuffer: the scratchpad lives as
 * long as the buffer, and its memory goes back — in stream order, on
 * whichever thread that happens — when the buffer is freed or returns to
 * its #GstBufferPool. It is for scratch that must outlive the element's
 * own `transform`, because downstream work still reads it; scratch that
 * only the element's own work uses is cheaper on one scratchpad per
 * element released after each buffer (`ds_gst_stream_new_scratchpad ()`,
 * with GStreamer's CUDA library).
 *
 * The producer publishes a region with
 * [func@DsGst.buffer_add_scratch_meta_full] after queuing the work that
 * writes it; the meta then records where that work stands in the
 * producer's order (the scratchpad's device order). A consumer on another
 * stream, or in another CUDA context, must
 *
 * 1. wait for the write: [method@DsGst.ScratchMeta.wait] with its own order
 *    before it queues its reads (the host order blocks until the data is
 *    there);
 * 2. register as a reader: [method@DsGst.ScratchMeta.add_reader] with its
 *    order after it queued its reads. When the buffer goes, the producer's
 *    order waits for every reader before the scratch is given back, so
 *    the memory is not handed to anyone else while a reader's work may
 *    still use it. Without this, the next buffer's producer can get the
 *    same block and overwrite it before the read runs.
 *
 * A consumer on the producer's own order needs neither: stream order
 * keeps its reads between the write and the release.
 *
 * Lifetime rules:
 *
 * - The meta is not `GST_META_FLAG_POOLED`: a buffer pool removes and
 *   frees it when the buffer is released to the pool, so the scratchpad
 *   is given back exactly then (a qdata or weak reference on a pooled
 *   buffer would only go when the pool dies).
 * - Copies (`gst_buffer_copy()`, `gst_buffer_make_writable()`, deep
 *   copies; every `GST_META_TRANSFORM_IS_COPY` transform) get their own
 *   meta on the same scratch, its write and its readers: the memory goes
 *   back when the last buffer that carries it goes, after the readers
 *   registered on any of them.
 * - Every other transform (scaling, conversion, …) drops it: the API is
 *   tagged `GST_META_TAG_MEMORY_STR`, so `GstBaseTransform`'s default
 *   `transform_meta` does not carry it over to an output buffer made from
 *   new memory, and the transform function refuses anything but a copy.
 * - A buffer may carry several of these metas (one per producer or per
 *   @tag); [func@DsGst.buffer_get_scratch_meta] finds one by tag.
 */
struct _DsGstScratchMeta
{
  GstMeta       meta;

  DsScratchpad *scratchpad;
  GQuark        tag;
  DsMemoryKind  kind;
  gpointer      data;
  gsize         size;

  /*< private >*/
  gpointer      _ds_gst_share;
};

/**
 * DS_GST_SCRATCH_META_API_TYPE:
 *
 * The #GType of the [struct@DsGst.ScratchMeta] API.
 */
#define DS_GST_SCRATCH_META_API_TYPE (ds_gst_scratch_meta_api_get_type ())

/**
 * DS_GST_SCRATCH_META_INFO:
 *
 * The #GstMetaInfo of [struct@DsGst.ScratchMeta].
 */
#define DS_GST_SCRATCH_META_INFO (ds_gst_scratch_meta_get_info ())

DS_GST_AVAILABLE_IN_ALL
GType                ds_gst_scratch_meta_api_get_type    (void);
DS_GST_AVAILABLE_IN_ALL
const GstMetaInfo   *ds_gst_scratch_meta_get_info        (void);

DS_GST_AVAILABLE_IN_ALL
DsGstScratchMeta    *ds_gst_buffer_add_scratch_meta      (GstBuffer            *buffer,
                                                          DsScratchpad         *scratchpad);
DS_GST_AVAILABLE_IN_ALL
DsGstScratchMeta    *ds_gst_buffer_add_scratch_meta_full (GstBuffer            *buffer,
                                                          DsScratchpad         *scratchpad,
                                                          GQuark                tag,
                                                          DsMemoryKind          kind,
                                                          gpointer              data,
                                                          gsize                 size,
                                                          GError              **error);
DS_GST_AVAILABLE_IN_ALL
DsGstScratchMeta    *ds_gst_buffer_get_scratch_meta      (GstBuffer            *buffer,
                                                          GQuark                tag);

DS_GST_AVAILABLE_IN_ALL
const DsAccessOrder *ds_gst_scratch_meta_get_order       (DsGstScratchMeta     *self);
DS_GST_AVAILABLE_IN_ALL
gboolean             ds_gst_scratch_meta_wait            (DsGstScratchMeta     *self,
                                                          const DsAccessOrder  *order,
                                                          GError              **error);
DS_GST_AVAILABLE_IN_ALL
gboolean             ds_gst_scratch_meta_add_reader      (DsGstScratchMeta     *self,
                                                          const DsAccessOrder  *order,
                                                          GError              **error);

G_END_DECLS
