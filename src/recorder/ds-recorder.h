/* ds-recorder.h: a timeline of what pools and scratchpads do
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The one header of the recorder library: pkg-config ds-recorder-1.0,
 * GI DsRecorder-1.0. Includes <ds.h>.
 */

#pragma once

#include <ds.h>

#if defined (DS_RECORDER_COMPILATION) && defined (__GNUC__)
# define _DS_RECORDER_EXTERN __attribute__((visibility ("default"))) extern
#else
# define _DS_RECORDER_EXTERN extern
#endif

/**
 * DS_RECORDER_AVAILABLE_IN_ALL:
 *
 * Marks a symbol of the recorder library that exists in every version of
 * it.
 */
#define DS_RECORDER_AVAILABLE_IN_ALL _DS_RECORDER_EXTERN

#define DS_RECORDER_INSIDE
# include "ds-recorder-sample.h"
# include "ds-recorder-enum-types.h"
#undef DS_RECORDER_INSIDE

G_BEGIN_DECLS

/**
 * DS_RECORDER_DEFAULT_CAPACITY:
 *
 * The default of [property@DsRecorder.Recorder:capacity], in samples.
 */
#define DS_RECORDER_DEFAULT_CAPACITY 65536

/**
 * DS_RECORDER_DEFAULT_INTERVAL:
 *
 * The default of [property@DsRecorder.Recorder:interval], in milliseconds.
 */
#define DS_RECORDER_DEFAULT_INTERVAL 10

#define DS_TYPE_RECORDER (ds_recorder_get_type ())

DS_RECORDER_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (DsRecorder, ds_recorder, DS, RECORDER, GObject)

/**
 * DsRecorderWatchFunc:
 * @recorder: the recorder
 * @sample: the sample, valid for the call only
 * @user_data: the data given to [method@DsRecorder.Recorder.add_watch]
 *
 * Called by a running recorder for each sample it stores and for each
 * scratchpad event (see [method@DsRecorder.Recorder.add_watch]).
 */
typedef void (*DsRecorderWatchFunc) (DsRecorder             *recorder,
                                     const DsRecorderSample *sample,
                                     gpointer                user_data);

DS_RECORDER_AVAILABLE_IN_ALL
DsRecorder  *ds_recorder_new             (guint                capacity) G_GNUC_WARN_UNUSED_RESULT;
DS_RECORDER_AVAILABLE_IN_ALL
DsRecorder  *ds_recorder_new_for_file    (const char          *path,
                                          guint                capacity) G_GNUC_WARN_UNUSED_RESULT;
DS_RECORDER_AVAILABLE_IN_ALL
DsRecorder  *ds_recorder_dup_running     (void) G_GNUC_WARN_UNUSED_RESULT;

DS_RECORDER_AVAILABLE_IN_ALL
gboolean     ds_recorder_start           (DsRecorder          *self,
                                          GError             **error);
DS_RECORDER_AVAILABLE_IN_ALL
void         ds_recorder_stop            (DsRecorder          *self);
DS_RECORDER_AVAILABLE_IN_ALL
gboolean     ds_recorder_get_running     (DsRecorder          *self);

DS_RECORDER_AVAILABLE_IN_ALL
void         ds_recorder_mark            (DsRecorder          *self,
                                          const char          *label);
DS_RECORDER_AVAILABLE_IN_ALL
gboolean     ds_recorder_write           (DsRecorder          *self,
                                          const char          *path,
                                          GError             **error);

DS_RECORDER_AVAILABLE_IN_ALL
guint        ds_recorder_get_capacity    (DsRecorder          *self);
DS_RECORDER_AVAILABLE_IN_ALL
const char  *ds_recorder_get_file        (DsRecorder          *self);
DS_RECORDER_AVAILABLE_IN_ALL
guint        ds_recorder_get_interval    (DsRecorder          *self);
DS_RECORDER_AVAILABLE_IN_ALL
void         ds_recorder_set_interval    (DsRecorder          *self,
                                          guint                interval);
DS_RECORDER_AVAILABLE_IN_ALL
guint64      ds_recorder_get_n_samples   (DsRecorder          *self);
DS_RECORDER_AVAILABLE_IN_ALL
guint64      ds_recorder_get_n_lost      (DsRecorder          *self);

DS_RECORDER_AVAILABLE_IN_ALL
guint        ds_recorder_add_watch       (DsRecorder          *self,
                                          DsRecorderWatchFunc  func,
                                          gpointer             user_data,
                                          GDestroyNotify       notify);
DS_RECORDER_AVAILABLE_IN_ALL
void         ds_recorder_remove_watch    (DsRecorder          *self,
                                          guint                id);

DS_RECORDER_AVAILABLE_IN_ALL
void         ds_recorder_start_from_environment (void);

G_END_DECLS
