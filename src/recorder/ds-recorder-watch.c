/* ds-recorder-watch.c: DsRecorder, continued: its watches
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A watch is a function called for every sample the running recorder
 * keeps and every scratchpad event (ds-recorder-report.c calls them);
 * adding or removing one tells the reporters whether any is left.
 */

#include "config.h"

#include "ds-recorder-state-private.h"

/**
 * ds_recorder_add_watch:
 * @self: a #DsRecorder
 * @func: (scope notified) (closure user_data): the function to call
 * @user_data: data for @func
 * @notify: (nullable) (destroy user_data): frees @user_data once @func is
 *   removed
 *
 * Calls @func, while @self runs, for every sample @self keeps and for
 * every scratchpad event (a block taken, blocks given back), including
 * those that the [property@DsRecorder.Recorder:interval] leaves out of the
 * recording. It is called at once, on the thread of the event, possibly
 * while ds holds locks of its own: it must be quick, and must not call
 * into ds (no allocation from a scratchpad or pool, no recorder call).
 * A GStreamer tracer, for example, uses it to find which element took
 * the memory.
 *
 * Returns: the watch's id, for [method@DsRecorder.Recorder.remove_watch]
 */
guint
ds_recorder_add_watch (DsRecorder          *self,
                       DsRecorderWatchFunc  func,
                       gpointer             user_data,
                       GDestroyNotify       notify)
{
  DsRecorderWatch w = { 0, func, user_data, notify };

  g_return_val_if_fail (DS_IS_RECORDER (self), 0);
  g_return_val_if_fail (func != NULL, 0);
  g_return_val_if_fail (!ds_recorder_in_watch, 0);

  g_rw_lock_writer_lock (&self->watch_lock);
  w.id = self->next_watch_id++;
  g_array_append_val (self->watches, w);
  __atomic_store_n (&self->n_watches, (gint) self->watches->len, __ATOMIC_RELAXED);
  g_rw_lock_writer_unlock (&self->watch_lock);
  ds_recorder_update_watched (self);

  return w.id;
}

/**
 * ds_recorder_remove_watch:
 * @self: a #DsRecorder
 * @id: a watch's id, from [method@DsRecorder.Recorder.add_watch]
 *
 * Removes a watch. Once this returns, its function is not running and
 * will not be called again (its data is freed then). Must not be called
 * from a watch.
 */
void
ds_recorder_remove_watch (DsRecorder *self,
                          guint       id)
{
  DsRecorderWatch removed = { 0, };

  g_return_if_fail (DS_IS_RECORDER (self));
  g_return_if_fail (!ds_recorder_in_watch);

  g_rw_lock_writer_lock (&self->watch_lock);
  for (guint i = 0; i < self->watches->len; i++)
    if (g_array_index (self->watches, DsRecorderWatch, i).id == id)
      {
        removed = g_array_index (self->watches, DsRecorderWatch, i);
        g_array_remove_index (self->watches, i);
        break;
      }
  __atomic_store_n (&self->n_watches, (gint) self->watches->len, __ATOMIC_RELAXED);
  g_rw_lock_writer_unlock (&self->watch_lock);
  ds_recorder_update_watched (self);

  if (removed.id == 0)
    g_critical ("ds_recorder_remove_watch: no watch %u", id);
  else if (removed.notify != NULL)
    removed.notify (removed.user_data);
}
