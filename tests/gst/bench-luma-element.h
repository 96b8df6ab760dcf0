/* bench-luma-element.h: dslumastats's work with a choice of where its
 * scratch comes from, for bench-gst-scratch
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <gst/base/gstbasetransform.h>

G_BEGIN_DECLS

/**
 * GstDsBenchScratchMode:
 * @GST_DS_BENCH_SCRATCH_MODE_DS_REUSE: one ds scratchpad per stream, made at
 *   start, `ds_scratchpad_release()` after each buffer (dslumastats's way)
 * @GST_DS_BENCH_SCRATCH_MODE_DS_NEW: a new ds scratchpad per buffer, dropped
 *   at the end of the buffer's transform
 * @GST_DS_BENCH_SCRATCH_MODE_DS_META: a new ds scratchpad per buffer, tied
 *   to the outgoing buffer with a DsGstScratchMeta that publishes the
 *   frame's results in device memory for downstream; given back when the
 *   buffer is freed or returns to its pool
 * @GST_DS_BENCH_SCRATCH_MODE_CUDA_MALLOC: `cudaMallocHost`/`cudaMalloc` per
 *   buffer, freed after the buffer's work has finished (a baseline)
 * @GST_DS_BENCH_SCRATCH_MODE_PREALLOCATED: buffers allocated once per caps
 *   and kept (what GStreamer elements do today; a baseline)
 *
 * Where dsbenchluma takes the scratch memory of each buffer from.
 */
typedef enum
{
  GST_DS_BENCH_SCRATCH_MODE_DS_REUSE,
  GST_DS_BENCH_SCRATCH_MODE_DS_NEW,
  GST_DS_BENCH_SCRATCH_MODE_DS_META,
  GST_DS_BENCH_SCRATCH_MODE_CUDA_MALLOC,
  GST_DS_BENCH_SCRATCH_MODE_PREALLOCATED,
} GstDsBenchScratchMode;

#define GST_TYPE_DS_BENCH_SCRATCH_MODE (gst_ds_bench_scratch_mode_get_type ())
GType gst_ds_bench_scratch_mode_get_type (void);

#define GST_TYPE_DS_BENCH_LUMA (gst_ds_bench_luma_get_type ())
G_DECLARE_FINAL_TYPE (GstDsBenchLuma, gst_ds_bench_luma, GST, DS_BENCH_LUMA, GstBaseTransform)

/* The tag of the DsGstScratchMeta of scratch-mode ds-meta: its data is a
 * DsLumaResult in device memory. */
#define GST_DS_BENCH_LUMA_META_TAG "ds-bench-luma"

/* Registers "dsbenchluma" for this process (no plugin). */
gboolean gst_ds_bench_luma_register (void);

G_END_DECLS
