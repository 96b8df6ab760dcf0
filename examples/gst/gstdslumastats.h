/* gstdslumastats.h: per-frame luma statistics on the GPU, with ds scratch
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <gst/base/gstbasetransform.h>

G_BEGIN_DECLS

/**
 * GstDsScratchMode:
 * @GST_DS_SCRATCH_MODE_DS_REUSE: one ds scratchpad per stream, made at
 *   start, `ds_scratchpad_release()` after each buffer (the fast path)
 * @GST_DS_SCRATCH_MODE_DS_NEW: a new ds scratchpad per buffer, dropped at
 *   the end of the buffer's transform
 * @GST_DS_SCRATCH_MODE_DS_META: a new ds scratchpad per buffer, tied to the
 *   outgoing buffer with a DsGstScratchMeta that publishes the frame's
 *   results in device memory for downstream; given back when the buffer is
 *   freed or returns to its pool
 * @GST_DS_SCRATCH_MODE_CUDA_MALLOC: `cudaMallocHost`/`cudaMalloc` per
 *   buffer, freed after the buffer's work has finished (a baseline)
 * @GST_DS_SCRATCH_MODE_PREALLOCATED: buffers allocated once per caps and
 *   kept (what GStreamer elements do today; a baseline)
 *
 * Where dslumastats takes the scratch memory of each buffer from.
 */
typedef enum
{
  GST_DS_SCRATCH_MODE_DS_REUSE,
  GST_DS_SCRATCH_MODE_DS_NEW,
  GST_DS_SCRATCH_MODE_DS_META,
  GST_DS_SCRATCH_MODE_CUDA_MALLOC,
  GST_DS_SCRATCH_MODE_PREALLOCATED,
} GstDsScratchMode;

/**
 * GstDsLumaStatistics:
 * @GST_DS_LUMA_STATISTICS_MEAN: "mean" (double) and "sum" (guint64)
 * @GST_DS_LUMA_STATISTICS_MIN_MAX: "min" and "max" (guint)
 * @GST_DS_LUMA_STATISTICS_HISTOGRAM: "histogram" (256 guint, a #GstValueArray)
 *
 * Which statistics the element messages carry.
 */
typedef enum
{
  GST_DS_LUMA_STATISTICS_MEAN = 1 << 0,
  GST_DS_LUMA_STATISTICS_MIN_MAX = 1 << 1,
  GST_DS_LUMA_STATISTICS_HISTOGRAM = 1 << 2,
} GstDsLumaStatistics;

#define GST_TYPE_DS_SCRATCH_MODE (gst_ds_scratch_mode_get_type ())
GType gst_ds_scratch_mode_get_type (void);

#define GST_TYPE_DS_LUMA_STATISTICS (gst_ds_luma_statistics_get_type ())
GType gst_ds_luma_statistics_get_type (void);

#define GST_TYPE_DS_LUMA_STATS (gst_ds_luma_stats_get_type ())
G_DECLARE_FINAL_TYPE (GstDsLumaStats, gst_ds_luma_stats, GST, DS_LUMA_STATS, GstBaseTransform)

/* The tag of the DsGstScratchMeta that scratch-mode=ds-meta puts on each
 * buffer: its data is a DsLumaResult (ds-luma-stats.h) in device memory. */
#define GST_DS_LUMA_STATS_META_TAG "ds-luma-stats"

GST_ELEMENT_REGISTER_DECLARE (dslumastats);

G_END_DECLS
