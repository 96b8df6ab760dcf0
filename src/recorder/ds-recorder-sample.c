/* ds-recorder-sample.c: one sample of a memory recording
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "ds-recorder.h"

G_DEFINE_BOXED_TYPE (DsRecorderSample, ds_recorder_sample,
                     ds_recorder_sample_copy, ds_recorder_sample_free)

/**
 * ds_recorder_sample_copy:
 * @self: a #DsRecorderSample
 *
 * Copies @self (its label is an interned string, shared).
 *
 * Returns: (transfer full): a copy of @self
 */
DsRecorderSample *
ds_recorder_sample_copy (const DsRecorderSample *self)
{
  g_return_val_if_fail (self != NULL, NULL);

  return g_memdup2 (self, sizeof *self);
}

/**
 * ds_recorder_sample_free: (skip)
 * @self: (transfer full) (nullable): a #DsRecorderSample
 *
 * Frees a copy made by [method@DsRecorder.RecorderSample.copy].
 */
void
ds_recorder_sample_free (DsRecorderSample *self)
{
  g_free (self);
}
