/* ds-recorder.c: a timeline of what pools and scratchpads do
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * How it works: a running recorder is libds's observer
 * (ds-recorder-private.h, ds-recorder-report.c); the samples go into a
 * ring (ds-recorder-ring-private.h) and, with a file, on into the file as
 * they are kept, in the format of ds-recorder-format.c. A running
 * recorder has one thread of its own that looks at every pool every
 * 100 ms (ds_observer_look_at_pools ()) and flushes the file every 10 ms.
 * Stopping removes the observer (which waits for the observations under
 * way) and waits for the marks under way, so a recorder and its watches
 * are never used after ds_recorder_stop () returns.
 */

#include "config.h"

#include <errno.h>
#include <stdio.h>

#include <glib/gstdio.h>

#include "ds-recorder-state-private.h"
#include "ds-recorder-format-private.h"

/* How often the recorder's thread looks at every pool, and how often it
 * flushes the file (and writes what the ring got that nobody wrote yet). */
#define PROBE_US (100 * G_TIME_SPAN_MILLISECOND)
#define WRITE_US (10 * G_TIME_SPAN_MILLISECOND)

enum
{
  PROP_0,
  PROP_CAPACITY,
  PROP_FILE,
  PROP_INTERVAL,
  PROP_RUNNING,
  PROP_N_SAMPLES,
  PROP_N_LOST,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

G_DEFINE_FINAL_TYPE (DsRecorder, ds_recorder, G_TYPE_OBJECT)

/* Held to change which recorder runs (ds-recorder-state-private.h) and a
 * recorder's ring. */
static GMutex state_lock;

/* The recorder's thread ----------------------------------------------------------- */

static gpointer
recorder_thread (gpointer data)
{
  DsRecorder *self = data;
  gint64 period = self->file != NULL ? WRITE_US : PROBE_US;
  gint64 next_probe = g_get_monotonic_time () + PROBE_US;

  g_mutex_lock (&self->lock);
  while (!self->stopping)
    {
      gint64 end = MIN (g_get_monotonic_time () + period, next_probe);

      while (!self->stopping && g_cond_wait_until (&self->cond, &self->lock, end))
        ;
      if (self->stopping)
        break;
      g_mutex_unlock (&self->lock);
      if (g_get_monotonic_time () >= next_probe)
        {
          ds_observer_look_at_pools ();
          next_probe += PROBE_US;
        }
      ds_recorder_format_flush (self);
      g_mutex_lock (&self->lock);
    }
  g_mutex_unlock (&self->lock);

  return NULL;
}

/* GObject ------------------------------------------------------------------------- */

static void
ds_recorder_dispose (GObject *object)
{
  DsRecorder *self = DS_RECORDER (object);
  GArray *watches;

  /* Running, it holds a reference of its own: not here. */
  g_rw_lock_writer_lock (&self->watch_lock);
  watches = g_steal_pointer (&self->watches);
  self->watches = g_array_new (FALSE, FALSE, sizeof (DsRecorderWatch));
  __atomic_store_n (&self->n_watches, 0, __ATOMIC_RELAXED);
  g_rw_lock_writer_unlock (&self->watch_lock);

  for (guint i = 0; i < watches->len; i++)
    {
      DsRecorderWatch *w = &g_array_index (watches, DsRecorderWatch, i);

      if (w->notify != NULL)
        w->notify (w->user_data);
    }
  g_array_free (watches, TRUE);

  G_OBJECT_CLASS (ds_recorder_parent_class)->dispose (object);
}

static void
ds_recorder_finalize (GObject *object)
{
  DsRecorder *self = DS_RECORDER (object);

  ds_recorder_ring_free (self->ring);
  g_array_free (self->watches, TRUE);
  g_rw_lock_clear (&self->watch_lock);
  g_mutex_clear (&self->lock);
  g_mutex_clear (&self->out_lock);
  g_cond_clear (&self->cond);
  g_free (self->file);

  G_OBJECT_CLASS (ds_recorder_parent_class)->finalize (object);
}

static void
ds_recorder_constructed (GObject *object)
{
  DsRecorder *self = DS_RECORDER (object);

  G_OBJECT_CLASS (ds_recorder_parent_class)->constructed (object);

  self->ring = ds_recorder_ring_new (self->capacity);
}

static void
ds_recorder_get_property (GObject    *object,
                          guint       prop_id,
                          GValue     *value,
                          GParamSpec *pspec)
{
  DsRecorder *self = DS_RECORDER (object);

  switch (prop_id)
    {
    case PROP_CAPACITY:
      g_value_set_uint (value, ds_recorder_get_capacity (self));
      break;

    case PROP_FILE:
      g_value_set_string (value, ds_recorder_get_file (self));
      break;

    case PROP_INTERVAL:
      g_value_set_uint (value, ds_recorder_get_interval (self));
      break;

    case PROP_RUNNING:
      g_value_set_boolean (value, ds_recorder_get_running (self));
      break;

    case PROP_N_SAMPLES:
      g_value_set_uint64 (value, ds_recorder_get_n_samples (self));
      break;

    case PROP_N_LOST:
      g_value_set_uint64 (value, ds_recorder_get_n_lost (self));
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
ds_recorder_set_property (GObject      *object,
                          guint         prop_id,
                          const GValue *value,
                          GParamSpec   *pspec)
{
  DsRecorder *self = DS_RECORDER (object);

  switch (prop_id)
    {
    case PROP_CAPACITY:
      self->capacity = g_value_get_uint (value);
      break;

    case PROP_FILE:
      self->file = g_value_dup_string (value);
      break;

    case PROP_INTERVAL:
      ds_recorder_set_interval (self, g_value_get_uint (value));
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
ds_recorder_class_init (DsRecorderClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->constructed = ds_recorder_constructed;
  object_class->dispose = ds_recorder_dispose;
  object_class->finalize = ds_recorder_finalize;
  object_class->get_property = ds_recorder_get_property;
  object_class->set_property = ds_recorder_set_property;

  /**
   * DsRecorder:capacity:
   *
   * How many samples the recorder keeps: the newest ones. Its memory is
   * made once, at construction, and stays as it is however long it runs.
   */
  properties[PROP_CAPACITY] =
    g_param_spec_uint ("capacity", NULL, NULL,
                       1, G_MAXUINT, DS_RECORDER_DEFAULT_CAPACITY,
                       G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);

  /**
   * DsRecorder:file:
   *
   * Where a running recorder writes its samples as they come (every
   * 10 ms, and the rest when it stops), or `NULL`. With a file, a
   * recording of any length is kept whole while the recorder's memory
   * stays bounded; samples that arrive faster than that are counted as
   * lost (a `lost` line says how many) rather than kept.
   */
  properties[PROP_FILE] =
    g_param_spec_string ("file", NULL, NULL,
                         NULL,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);

  /**
   * DsRecorder:interval:
   *
   * The shortest time, in milliseconds, between two samples kept for the
   * frequent events of one source on one thread: a pool's cache hits and
   * frees, a stream's checks, the thread's scratchpad blocks and releases
   * (of all its scratchpads, per kind). The events in between are counted
   * in the next sample kept (its count and bytes). Upstream calls,
   * evictions, idle releases, trims and marks are always kept. 0 keeps
   * every event.
   */
  properties[PROP_INTERVAL] =
    g_param_spec_uint ("interval", NULL, NULL,
                       0, G_MAXUINT, DS_RECORDER_DEFAULT_INTERVAL,
                       G_PARAM_READWRITE | G_PARAM_CONSTRUCT |
                       G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  /**
   * DsRecorder:running:
   *
   * Whether the recorder is recording.
   */
  properties[PROP_RUNNING] =
    g_param_spec_boolean ("running", NULL, NULL,
                          FALSE,
                          G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  /**
   * DsRecorder:n-samples:
   *
   * The samples kept since the recorder last started (not notified).
   */
  properties[PROP_N_SAMPLES] =
    g_param_spec_uint64 ("n-samples", NULL, NULL,
                         0, G_MAXUINT64, 0,
                         G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

  /**
   * DsRecorder:n-lost:
   *
   * The samples lost since the recorder last started: with a
   * [property@DsRecorder.Recorder:file], those overwritten before they were
   * written; without, those overwritten by newer ones (not notified).
   */
  properties[PROP_N_LOST] =
    g_param_spec_uint64 ("n-lost", NULL, NULL,
                         0, G_MAXUINT64, 0,
                         G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
ds_recorder_init (DsRecorder *self)
{
  self->capacity = DS_RECORDER_DEFAULT_CAPACITY;
  self->interval = DS_RECORDER_DEFAULT_INTERVAL;
  self->watches = g_array_new (FALSE, FALSE, sizeof (DsRecorderWatch));
  self->next_watch_id = 1;
  g_rw_lock_init (&self->watch_lock);
  g_mutex_init (&self->lock);
  g_mutex_init (&self->out_lock);
  g_cond_init (&self->cond);
}

/* API ----------------------------------------------------------------------------- */

/**
 * DsRecorder:
 *
 * Records what pools and scratchpads do, over time: a memory timeline.
 *
 * While a recorder runs, every [class@Ds.PoolResource] reports its cache
 * hits and misses, the blocks given back to it, what it takes from and
 * gives back to its upstream resource, its evictions, idle releases and
 * trims; every [class@Ds.Scratchpad] reports the blocks it takes and
 * gives back; and the checks of streams that blocks were given back on
 * are counted. Each report is a [struct@DsRecorder.RecorderSample]: the time, the
 * pool (or scratchpad), its kind and device, and what it holds, has in
 * use, has pending and its peak, right after. The recorder also looks at
 * every pool every 100 ms, so that a pool nobody uses still shows. The
 * newest [property@DsRecorder.Recorder:capacity] samples are kept in a ring, in
 * memory that does not grow; [method@DsRecorder.Recorder.write] writes them out,
 * and a recorder with a [property@DsRecorder.Recorder:file] writes them there as
 * it goes.
 *
 * A running recorder is libds's one observer (`ds-observer.h`); while
 * none runs, libds's cost is one predictable branch per event. One
 * recorder runs at a time, for the whole process; it is thread-safe.
 *
 * Programs that cannot be changed are recorded by setting the environment
 * variable `DS_RECORD` to a file name: libds then loads this library and
 * starts a recorder with that file when the first pool is made (see
 * [func@DsRecorder.Recorder.start_from_environment]), which runs until the
 * process exits, its file complete.
 *
 * The format (CSV, one sample a line) is described in the docs' memory
 * timeline page: a line `# ds memory recording, format 1`, comment lines
 * starting with `#`, a header line, then the columns `time` (seconds
 * since the recorder started), `event`, `source`, `id`, `kind`, `device`,
 * `count`, `bytes`, `held`, `in_use`, `pending`, `peak`, `pool` and
 * `label`, named and meant as the fields of [struct@DsRecorder.RecorderSample]
 * (event, source and kind by their nicks).
 */

/**
 * ds_recorder_new:
 * @capacity: how many samples to keep (0: [const@DsRecorder.RECORDER_DEFAULT_CAPACITY])
 *
 * Creates a recorder that keeps its newest @capacity samples in memory.
 *
 * Returns: (transfer full): a new #DsRecorder
 */
DsRecorder *
ds_recorder_new (guint capacity)
{
  return g_object_new (DS_TYPE_RECORDER,
                       "capacity", capacity != 0 ? capacity : DS_RECORDER_DEFAULT_CAPACITY,
                       NULL);
}

/**
 * ds_recorder_new_for_file:
 * @path: (type filename): the file to write the samples to
 * @capacity: how many samples to keep in memory until they are written
 *   (0: [const@DsRecorder.RECORDER_DEFAULT_CAPACITY])
 *
 * Creates a recorder that writes every sample to @path while it runs
 * (see [property@DsRecorder.Recorder:file]).
 *
 * Returns: (transfer full): a new #DsRecorder
 */
DsRecorder *
ds_recorder_new_for_file (const char *path,
                          guint       capacity)
{
  g_return_val_if_fail (path != NULL, NULL);

  return g_object_new (DS_TYPE_RECORDER,
                       "file", path,
                       "capacity", capacity != 0 ? capacity : DS_RECORDER_DEFAULT_CAPACITY,
                       NULL);
}

/**
 * ds_recorder_dup_running:
 *
 * The recorder that is running, if any: one started with
 * [method@DsRecorder.Recorder.start], or the one `DS_RECORD` asks for (which
 * this starts if it has not started yet).
 *
 * Returns: (transfer full) (nullable): the running recorder, or `NULL`
 */
DsRecorder *
ds_recorder_dup_running (void)
{
  DsRecorder *self;

  ds_recorder_start_from_environment ();

  g_mutex_lock (&state_lock);
  self = ds_recorder_running != NULL ? g_object_ref (ds_recorder_running) : NULL;
  g_mutex_unlock (&state_lock);

  return self;
}

/**
 * ds_recorder_start:
 * @self: a #DsRecorder
 * @error: return location for a #GError
 *
 * Starts a new recording: forgets the samples of the last one and makes
 * @self the process's running recorder, until [method@DsRecorder.Recorder.stop].
 * With a [property@DsRecorder.Recorder:file], opens it (replacing what it held)
 * and writes the format's header.
 *
 * Returns: `TRUE`; `FALSE` with @error set if another recorder is running
 *   (%DS_ERROR_BUSY; @self running already is no error) or the file
 *   cannot be opened (a #GFileError)
 */
gboolean
ds_recorder_start (DsRecorder  *self,
                   GError     **error)
{
  FILE *out = NULL;

  g_return_val_if_fail (DS_IS_RECORDER (self), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  g_mutex_lock (&state_lock);
  if (ds_recorder_running == self)
    {
      g_mutex_unlock (&state_lock);
      return TRUE;
    }
  if (ds_recorder_running != NULL)
    {
      g_set_error (error, DS_ERROR, DS_ERROR_BUSY,
                   "Another recorder is running (one recorder runs at a time%s)",
                   ds_recorder_running->file != NULL ? ", and DS_RECORD may have started it" : "");
      g_mutex_unlock (&state_lock);
      return FALSE;
    }
  if (!ds_observer_install (&ds_recorder_observer, NULL))
    {
      g_set_error (error, DS_ERROR, DS_ERROR_BUSY,
                   "Another observer of ds is installed (one at a time)");
      g_mutex_unlock (&state_lock);
      return FALSE;
    }

  if (self->file != NULL)
    {
      g_autoptr(GString) header = g_string_new (NULL);

      out = g_fopen (self->file, "w");
      if (out == NULL)
        {
          int saved = errno;

          g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (saved),
                       "Cannot open the recording %s: %s", self->file, g_strerror (saved));
          ds_observer_remove (&ds_recorder_observer);
          g_mutex_unlock (&state_lock);
          return FALSE;
        }
      ds_recorder_format_header (header, ds_recorder_get_interval (self), self->capacity, 0);
      fwrite (header->str, 1, header->len, out);
      fflush (out);
    }

  ds_recorder_ring_free (self->ring);
  self->ring = ds_recorder_ring_new (self->capacity);
  self->out = out;
  self->out_cursor = 0;
  self->n_lost = 0;
  self->stopping = FALSE;
  self->start_ns = ds_recorder_now_ns ();
  self->running = TRUE;

  __atomic_store_n (&ds_recorder_running_interval_ns,
                    (gint64) ds_recorder_get_interval (self) * G_GINT64_CONSTANT (1000000),
                    __ATOMIC_RELAXED);
  __atomic_store_n (&ds_recorder_running, g_object_ref (self), __ATOMIC_SEQ_CST);
  __atomic_store_n (&ds_recorder_watched, __atomic_load_n (&self->n_watches, __ATOMIC_RELAXED) != 0,
                    __ATOMIC_RELAXED);
  self->thread = g_thread_new ("ds-recorder", recorder_thread, self);
  g_mutex_unlock (&state_lock);

  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_RUNNING]);
  return TRUE;
}

/**
 * ds_recorder_stop:
 * @self: a #DsRecorder
 *
 * Stops recording, once every pool was looked at a last time. Returns
 * once no observation is under way any more, with the rest of the samples in
 * the [property@DsRecorder.Recorder:file], which it closes; the samples stay in
 * memory for [method@DsRecorder.Recorder.write]. Does nothing if @self is not
 * running. Must not be called from a watch.
 */
void
ds_recorder_stop (DsRecorder *self)
{
  g_return_if_fail (DS_IS_RECORDER (self));
  g_return_if_fail (!ds_recorder_in_watch);

  g_mutex_lock (&state_lock);
  if (ds_recorder_running != self)
    {
      g_mutex_unlock (&state_lock);
      return;
    }

  g_mutex_lock (&self->lock);
  self->stopping = TRUE;
  g_cond_signal (&self->cond);
  g_mutex_unlock (&self->lock);
  g_thread_join (g_steal_pointer (&self->thread));

  /* The end of the recording: where every pool stands. Then no
   * observation is under way once the observer is gone. */
  ds_observer_look_at_pools ();
  ds_observer_remove (&ds_recorder_observer);

  __atomic_store_n (&ds_recorder_watched, 0, __ATOMIC_RELAXED);
  __atomic_store_n (&ds_recorder_running, NULL, __ATOMIC_SEQ_CST);
  while (__atomic_load_n (&ds_recorder_in_flight, __ATOMIC_SEQ_CST) != 0)
    g_thread_yield ();

  ds_recorder_format_flush (self);
  g_mutex_lock (&self->out_lock);
  if (self->out != NULL)
    {
      fclose (self->out);
      self->out = NULL;
    }
  g_mutex_unlock (&self->out_lock);
  self->running = FALSE;
  g_mutex_unlock (&state_lock);

  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_RUNNING]);
  /* The running recorder's own reference. */
  g_object_unref (self);
}

/**
 * ds_recorder_get_running:
 * @self: a #DsRecorder
 *
 * The value of [property@DsRecorder.Recorder:running].
 *
 * Returns: whether @self is recording
 */
gboolean
ds_recorder_get_running (DsRecorder *self)
{
  gboolean running;

  g_return_val_if_fail (DS_IS_RECORDER (self), FALSE);

  g_mutex_lock (&state_lock);
  running = self->running;
  g_mutex_unlock (&state_lock);

  return running;
}

/**
 * ds_recorder_mark:
 * @self: a #DsRecorder
 * @label: what the mark says (for example "paused")
 *
 * Records a mark at this moment with @label, so that the timeline shows
 * what the program was doing (a pipeline paused, a phase of work began).
 * Does nothing unless @self is running.
 */
void
ds_recorder_mark (DsRecorder *self,
                  const char *label)
{
  DsRecorderSample sample = { 0, };

  g_return_if_fail (DS_IS_RECORDER (self));
  g_return_if_fail (label != NULL);

  if (__atomic_load_n (&ds_recorder_running, __ATOMIC_RELAXED) != self)
    return;

  sample.event = DS_RECORDER_EVENT_MARK;
  sample.source = DS_RECORDER_SOURCE_RECORDER;
  sample.device = -1;
  sample.count = 1;
  sample.label = g_intern_string (label);
  ds_recorder_record (&sample, DS_RECORDER_KEEP | DS_RECORDER_WATCH);
}

/**
 * ds_recorder_write:
 * @self: a #DsRecorder
 * @path: (type filename): the file to write
 * @error: return location for a #GError
 *
 * Writes the samples @self holds (the newest
 * [property@DsRecorder.Recorder:capacity] of its last recording, oldest first) to
 * @path, replacing it, in the format described at [class@DsRecorder.Recorder].
 * Works while @self runs too.
 *
 * Returns: `TRUE`, or `FALSE` with @error set (a #GFileError)
 */
gboolean
ds_recorder_write (DsRecorder  *self,
                   const char  *path,
                   GError     **error)
{
  g_autoptr(GString) samples = g_string_new (NULL);
  g_autoptr(GString) out = g_string_new (NULL);
  guint64 cursor = 0, lost = 0;

  g_return_val_if_fail (DS_IS_RECORDER (self), FALSE);
  g_return_val_if_fail (path != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  /* The ring is replaced by a start. */
  g_mutex_lock (&state_lock);
  ds_recorder_ring_read (self->ring, &cursor, &lost, ds_recorder_format_sample, samples);
  g_mutex_unlock (&state_lock);
  ds_recorder_format_header (out, ds_recorder_get_interval (self), self->capacity, lost);
  g_string_append_len (out, samples->str, (gssize) samples->len);

  return g_file_set_contents (path, out->str, (gssize) out->len, error);
}

/**
 * ds_recorder_get_capacity:
 * @self: a #DsRecorder
 *
 * The value of [property@DsRecorder.Recorder:capacity].
 *
 * Returns: how many samples @self keeps
 */
guint
ds_recorder_get_capacity (DsRecorder *self)
{
  g_return_val_if_fail (DS_IS_RECORDER (self), 0);

  return self->capacity;
}

/**
 * ds_recorder_get_file:
 * @self: a #DsRecorder
 *
 * The value of [property@DsRecorder.Recorder:file].
 *
 * Returns: (nullable) (type filename): the file @self writes to, or `NULL`
 */
const char *
ds_recorder_get_file (DsRecorder *self)
{
  g_return_val_if_fail (DS_IS_RECORDER (self), NULL);

  return self->file;
}

/**
 * ds_recorder_get_interval:
 * @self: a #DsRecorder
 *
 * The value of [property@DsRecorder.Recorder:interval].
 *
 * Returns: the interval, in milliseconds
 */
guint
ds_recorder_get_interval (DsRecorder *self)
{
  g_return_val_if_fail (DS_IS_RECORDER (self), 0);

  return __atomic_load_n (&self->interval, __ATOMIC_RELAXED);
}

/**
 * ds_recorder_set_interval:
 * @self: a #DsRecorder
 * @interval: the shortest time between two samples of a source's frequent
 *   events, in milliseconds; 0 keeps every event
 *
 * Sets [property@DsRecorder.Recorder:interval]; a running recorder uses the new
 * value at once.
 */
void
ds_recorder_set_interval (DsRecorder *self,
                          guint       interval)
{
  g_return_if_fail (DS_IS_RECORDER (self));

  if (__atomic_exchange_n (&self->interval, interval, __ATOMIC_RELAXED) == interval)
    return;

  g_mutex_lock (&state_lock);
  if (ds_recorder_running == self)
    __atomic_store_n (&ds_recorder_running_interval_ns,
                      (gint64) interval * G_GINT64_CONSTANT (1000000), __ATOMIC_RELAXED);
  g_mutex_unlock (&state_lock);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_INTERVAL]);
}

/**
 * ds_recorder_get_n_samples:
 * @self: a #DsRecorder
 *
 * The value of [property@DsRecorder.Recorder:n-samples].
 *
 * Returns: the samples kept since @self last started
 */
guint64
ds_recorder_get_n_samples (DsRecorder *self)
{
  guint64 n;

  g_return_val_if_fail (DS_IS_RECORDER (self), 0);

  g_mutex_lock (&state_lock);
  n = ds_recorder_ring_head (self->ring);
  g_mutex_unlock (&state_lock);

  return n;
}

/**
 * ds_recorder_get_n_lost:
 * @self: a #DsRecorder
 *
 * The value of [property@DsRecorder.Recorder:n-lost].
 *
 * Returns: the samples lost since @self last started
 */
guint64
ds_recorder_get_n_lost (DsRecorder *self)
{
  guint64 head;

  g_return_val_if_fail (DS_IS_RECORDER (self), 0);

  if (self->file != NULL)
    return __atomic_load_n (&self->n_lost, __ATOMIC_RELAXED);

  g_mutex_lock (&state_lock);
  head = ds_recorder_ring_head (self->ring);
  g_mutex_unlock (&state_lock);
  return head > self->capacity ? head - self->capacity : 0;
}

/* Tells reporters whether the running recorder, if it is @self, has
 * watches. */
void
ds_recorder_update_watched (DsRecorder *self)
{
  g_mutex_lock (&state_lock);
  if (ds_recorder_running == self)
    __atomic_store_n (&ds_recorder_watched, __atomic_load_n (&self->n_watches, __ATOMIC_RELAXED) != 0,
                      __ATOMIC_RELAXED);
  g_mutex_unlock (&state_lock);
}

/* DS_RECORD ----------------------------------------------------------------------- */

/**
 * ds_recorder_start_from_environment:
 *
 * Starts a recorder that writes to the file named by the environment
 * variable `DS_RECORD`, if it is set, and keeps it running for the life
 * of the process; does nothing at later calls, or when `DS_RECORD` is not
 * set. libds calls it when it makes its first pool with `DS_RECORD` set
 * (loading this library if the program does not link it), so a program
 * that knows nothing of the recorder is recorded. Its samples go to the
 * file as they are kept; the C library flushes what is left of it when
 * the process exits.
 */
void
ds_recorder_start_from_environment (void)
{
  static gsize once;

  if (g_once_init_enter (&once))
    {
      const char *path = g_getenv ("DS_RECORD");

      if (path != NULL && *path != '\0')
        {
          DsRecorder *recorder = ds_recorder_new_for_file (path, 0);
          g_autoptr(GError) error = NULL;

          /* Its reference is the running recorder's from here on. */
          if (!ds_recorder_start (recorder, &error))
            g_warning ("DS_RECORD=%s: not recording: %s", path, error->message);
          g_object_unref (recorder);
        }
      g_once_init_leave (&once, 1);
    }
}
