/* gstdslumastats.h: per-frame luma statistics on the GPU, with ds scratch
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <gst/base/gstbasetransform.h>

G_BEGIN_DECLS

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

#define GST_TYPE_DS_LUMA_STATISTICS (gst_ds_luma_statistics_get_type ())
GType gst_ds_luma_statistics_get_type (void);

#define GST_TYPE_DS_LUMA_STATS (gst_ds_luma_stats_get_type ())
G_DECLARE_FINAL_TYPE (GstDsLumaStats, gst_ds_luma_stats, GST, DS_LUMA_STATS, GstBaseTransform)

GST_ELEMENT_REGISTER_DECLARE (dslumastats);

G_END_DECLS
