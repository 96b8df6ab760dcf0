/* ds-recorder-format-private.h: how a recording is written
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A recording is CSV, one sample a line: a line naming the format and its
 * version, comment lines starting with '#', a header line, then the
 * samples, with event, source and kind by their nicks (the columns are
 * described at DsRecorder and in docs/memory-timeline.md).
 */

#pragma once

#include "ds-recorder-state-private.h"

G_BEGIN_DECLS

/* Appends the format's first lines to @out: those of a recording at
 * @interval ms, of @capacity samples, of which @overwritten earlier ones
 * were lost (if any). */
void ds_recorder_format_header (GString                *out,
                                guint                   interval,
                                guint                   capacity,
                                guint64                 overwritten);

/* Appends @s to @user_data (a GString) as one line: a
 * DsRecorderRingFunc. */
void ds_recorder_format_sample (const DsRecorderSample *s,
                                gpointer                user_data);

/* Appends what the ring of @self got since the last call to its file,
 * if it has one open, with a `lost` line for what it missed (buffered:
 * the recorder's thread flushes the file every 10 ms, the C library at
 * exit). Called by whoever keeps a sample. */
void ds_recorder_format_write  (DsRecorder             *self);

/* ds_recorder_format_write (), then the file flushed; by the recorder's
 * thread, and by the stopper once it is gone. */
void ds_recorder_format_flush  (DsRecorder             *self);

G_END_DECLS
