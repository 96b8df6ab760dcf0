/* ds-recorder.h: a timeline of what pools and scratchpads do
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined (DS_INSIDE) && !defined (DS_COMPILATION)
# error "Only <ds.h> can be included directly."
#endif

#include <glib-object.h>

#include "ds-recorder-sample.h"

G_BEGIN_DECLS

/**
 * DS_RECORDER_DEFAULT_CAPACITY:
 *
 * The default of [property@Ds.Recorder:capacity], in samples.
 */
#define DS_RECORDER_DEFAULT_CAPACITY 65536

/**
 * DS_RECORDER_DEFAULT_INTERVAL:
 *
 * The default of [property@Ds.Recorder:interval], in milliseconds.
 */
#define DS_RECORDER_DEFAULT_INTERVAL 10

#define DS_TYPE_RECORDER (ds_recorder_get_type ())

DS_AVAILABLE_IN_0_2
G_DECLARE_FINAL_TYPE (DsRecorder, ds_recorder, DS, RECORDER, GObject)

/**
 * DsRecorderWatchFunc:
 * @recorder: the recorder
 * @sample: the sample, valid for the call only
 * @user_data: the data given to [method@Ds.Recorder.add_watch]
 *
 * Called by a running recorder for each sample it stores and for each
 * scratchpad event (see [method@Ds.Recorder.add_watch]).
 */
typedef void (*DsRecorderWatchFunc) (DsRecorder             *recorder,
                                     const DsRecorderSample *sample,
                                     gpointer                user_data);

DS_AVAILABLE_IN_0_2
DsRecorder  *ds_recorder_new             (guint                capacity) G_GNUC_WARN_UNUSED_RESULT;
DS_AVAILABLE_IN_0_2
DsRecorder  *ds_recorder_new_for_file    (const char          *path,
                                          guint                capacity) G_GNUC_WARN_UNUSED_RESULT;
DS_AVAILABLE_IN_0_2
DsRecorder  *ds_recorder_dup_running     (void) G_GNUC_WARN_UNUSED_RESULT;

DS_AVAILABLE_IN_0_2
gboolean     ds_recorder_start           (DsRecorder          *self,
                                          GError             **error);
DS_AVAILABLE_IN_0_2
void         ds_recorder_stop            (DsRecorder          *self);
DS_AVAILABLE_IN_0_2
gboolean     ds_recorder_get_running     (DsRecorder          *self);

DS_AVAILABLE_IN_0_2
void         ds_recorder_mark            (DsRecorder          *self,
                                          const char          *label);
DS_AVAILABLE_IN_0_2
gboolean     ds_recorder_write           (DsRecorder          *self,
                                          const char          *path,
                                          GError             **error);

DS_AVAILABLE_IN_0_2
guint        ds_recorder_get_capacity    (DsRecorder          *self);
DS_AVAILABLE_IN_0_2
const char  *ds_recorder_get_file        (DsRecorder          *self);
DS_AVAILABLE_IN_0_2
guint        ds_recorder_get_interval    (DsRecorder          *self);
DS_AVAILABLE_IN_0_2
void         ds_recorder_set_interval    (DsRecorder          *self,
                                          guint                interval);
DS_AVAILABLE_IN_0_2
guint64      ds_recorder_get_n_samples   (DsRecorder          *self);
DS_AVAILABLE_IN_0_2
guint64      ds_recorder_get_n_lost      (DsRecorder          *self);

DS_AVAILABLE_IN_0_2
guint        ds_recorder_add_watch       (DsRecorder          *self,
                                          DsRecorderWatchFunc  func,
                                          gpointer             user_data,
                                          GDestroyNotify       notify);
DS_AVAILABLE_IN_0_2
void         ds_recorder_remove_watch    (DsRecorder          *self,
                                          guint                id);

G_END_DECLS
