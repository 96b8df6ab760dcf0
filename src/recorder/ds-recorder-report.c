/* ds-recorder-report.c: the running recorder as libds's observer
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The functions of ds-recorder-private.h, and the state of the one
 * running recorder that they read: which recorder runs, its interval,
 * the reports under way (ds_recorder_stop () waits for none). Frequent
 * events are counted per thread (admit ()); a sample kept goes into the
 * running recorder's ring (and its file) and to its watches. Starting and
 * stopping are in ds-recorder.c, which sets this state under its own
 * lock.
 */

#include "config.h"

#include "ds-recorder-state-private.h"
#include "ds-recorder-format-private.h"

/* The one running recorder and what reporters read of it. */
gint ds_recorder_watched;
DsRecorder *ds_recorder_running;
gint ds_recorder_in_flight;
gint64 ds_recorder_running_interval_ns;
__thread gboolean ds_recorder_in_watch;

/* The numbers of pools and scratchpads (ds-recorder-private.h). */
static GMutex id_lock;
static guint64 next_ids[DS_RECORDER_SOURCE_RECORDER + 1];

/* The same clock as a few ms ticks (Linux: the scheduler's), read about
 * ten times faster: enough to space samples kept an interval apart. */
static inline gint64
coarse_now_ns (void)
{
  struct timespec ts;

#ifdef CLOCK_MONOTONIC_COARSE
  clock_gettime (CLOCK_MONOTONIC_COARSE, &ts);
#else
  clock_gettime (CLOCK_MONOTONIC, &ts);
#endif
  return (gint64) ts.tv_sec * G_GINT64_CONSTANT (1000000000) + ts.tv_nsec;
}

/* A thread's count of one source's frequent events of one kind, in a
 * small table of its own: a key lives in one of PROBES slots from where
 * its hash points; a key that finds none takes the slot whose next sample
 * is due soonest, and the events counted there are dropped (a sample may
 * then stand for fewer events than there were). */
typedef struct
{
  guint64 key;
  gint64  next;     /* the clock from which the next event is kept */
  guint   count;
  guint64 bytes;
} LocalCount;

#define N_LOCAL_COUNTS 64   /* a power of two */
#define PROBES         4

static __thread LocalCount local_counts[N_LOCAL_COUNTS];

/* Counts, on the calling thread, one frequent @event of @bytes on the
 * source (@source, @id) for memory of @kind; TRUE when it is to be kept,
 * with the events and bytes it stands for in @sample's count and bytes
 * (those of the thread since the last sample it kept of the same). */
static gboolean
admit (DsRecorderSource  source,
       guint64           id,
       DsRecorderEvent   event,
       DsMemoryKind      kind,
       guint64           bytes,
       DsRecorderSample *sample)
{
  gint64 interval = __atomic_load_n (&ds_recorder_running_interval_ns, __ATOMIC_RELAXED);
  guint64 key = id ^ ((guint64) source << 62) ^ ((guint64) event << 56) ^ ((guint64) kind << 52);
  LocalCount *c;
  gint64 now;

  if (interval == 0)
    {
      sample->count = 1;
      sample->bytes = bytes;
      return TRUE;
    }

  {
    guint first = (guint) ((key * G_GUINT64_CONSTANT (0x9E3779B97F4A7C15)) >> 58);

    c = NULL;
    for (guint i = 0; i < PROBES && c == NULL; i++)
      if (local_counts[(first + i) % N_LOCAL_COUNTS].key == key)
        c = &local_counts[(first + i) % N_LOCAL_COUNTS];
    if (c == NULL)
      {
        c = &local_counts[first];
        for (guint i = 1; i < PROBES; i++)
          if (local_counts[(first + i) % N_LOCAL_COUNTS].next < c->next)
            c = &local_counts[(first + i) % N_LOCAL_COUNTS];
        c->key = key;
        c->next = 0;
        c->count = 0;
        c->bytes = 0;
      }
  }
  c->count++;
  c->bytes += bytes;
  now = coarse_now_ns ();
  if (now < c->next)
    return FALSE;

  c->next = now + interval;
  sample->count = c->count;
  sample->bytes = c->bytes;
  c->count = 0;
  c->bytes = 0;
  return TRUE;
}

static void
call_watches (DsRecorder             *self,
              const DsRecorderSample *sample)
{
  g_rw_lock_reader_lock (&self->watch_lock);
  ds_recorder_in_watch = TRUE;
  for (guint i = 0; i < self->watches->len; i++)
    {
      DsRecorderWatch *w = &g_array_index (self->watches, DsRecorderWatch, i);

      w->func (self, sample, w->user_data);
    }
  ds_recorder_in_watch = FALSE;
  g_rw_lock_reader_unlock (&self->watch_lock);
}

void
ds_recorder_record (DsRecorderSample *sample,
                    DsRecorderTo      to)
{
  DsRecorder *self;

  __atomic_add_fetch (&ds_recorder_in_flight, 1, __ATOMIC_SEQ_CST);
  self = __atomic_load_n (&ds_recorder_running, __ATOMIC_SEQ_CST);
  if (self != NULL)
    {
      sample->time = (guint64) (ds_recorder_now_ns () - self->start_ns);
      if (to & DS_RECORDER_KEEP)
        {
          ds_recorder_ring_push (self->ring, sample);
          /* With a file, at once (buffered): what the C library flushes
           * at exit is then the whole recording. */
          if (self->file != NULL)
            ds_recorder_format_write (self);
        }
      if ((to & DS_RECORDER_WATCH) && !ds_recorder_in_watch &&
          __atomic_load_n (&self->n_watches, __ATOMIC_RELAXED) != 0)
        call_watches (self, sample);
    }
  __atomic_sub_fetch (&ds_recorder_in_flight, 1, __ATOMIC_SEQ_CST);
}

/* Observing libds ------------------------------------------------------------------ */

static GQuark
id_quark (void)
{
  static GQuark quark;

  if (G_UNLIKELY (quark == 0))
    quark = g_quark_from_static_string ("ds-recorder-id");
  return quark;
}

/* The number of @object, a pool or a scratchpad, given at first sight. */
static guint64
id_of (gpointer          object,
       DsRecorderSource  source)
{
  guint64 id = GPOINTER_TO_SIZE (g_object_get_qdata (object, id_quark ()));

  if (G_LIKELY (id != 0))
    return id;

  g_mutex_lock (&id_lock);
  id = GPOINTER_TO_SIZE (g_object_get_qdata (object, id_quark ()));
  if (id == 0)
    {
      id = ++next_ids[source];
      g_object_set_qdata (object, id_quark (), GSIZE_TO_POINTER ((gsize) id));
    }
  g_mutex_unlock (&id_lock);

  return id;
}

static DsRecorderSource
source_of (DsObserverEvent event)
{
  switch (event)
    {
    case DS_OBSERVER_EVENT_FENCE_CHECK:
    case DS_OBSERVER_EVENT_FENCE_DRAIN:
      return DS_RECORDER_SOURCE_STREAM;
    case DS_OBSERVER_EVENT_BLOCK:
    case DS_OBSERVER_EVENT_RELEASE:
    case DS_OBSERVER_EVENT_EXPORT_HOLD:
    case DS_OBSERVER_EVENT_EXPORT_RETURN:
      return DS_RECORDER_SOURCE_SCRATCHPAD;
    default:
      return DS_RECORDER_SOURCE_POOL;
    }
}

/* The recorder's name of an observed event: the same value up to
 * RELEASE (the recorder's MARK and LOST come next), then the exports'. */
static DsRecorderEvent
event_of (DsObserverEvent event)
{
  switch (event)
    {
    case DS_OBSERVER_EVENT_EXPORT_HOLD:
      return DS_RECORDER_EVENT_EXPORT_HOLD;
    case DS_OBSERVER_EVENT_EXPORT_RETURN:
      return DS_RECORDER_EVENT_EXPORT_RETURN;
    default:
      return (DsRecorderEvent) event;
    }
}

/* What want () decided for the frequent event that observe () gets next
 * on the same thread. */
typedef struct
{
  gboolean pending;
  gboolean keep;
  guint    count;
  guint64  bytes;
} Admission;

static __thread Admission admission;

G_STATIC_ASSERT ((gint) DS_OBSERVER_EVENT_LOOK == (gint) DS_RECORDER_EVENT_SAMPLE);
G_STATIC_ASSERT ((gint) DS_OBSERVER_EVENT_HIT == (gint) DS_RECORDER_EVENT_HIT);
G_STATIC_ASSERT ((gint) DS_OBSERVER_EVENT_DISPOSE == (gint) DS_RECORDER_EVENT_DISPOSE);
G_STATIC_ASSERT ((gint) DS_OBSERVER_EVENT_FENCE_DRAIN == (gint) DS_RECORDER_EVENT_FENCE_DRAIN);
G_STATIC_ASSERT ((gint) DS_OBSERVER_EVENT_RELEASE == (gint) DS_RECORDER_EVENT_RELEASE);

static gboolean
recorder_want (const DsObservation *o,
               gpointer             user_data)
{
  DsRecorderSource source = source_of (o->event);
  DsRecorderSample counted = { 0, };
  guint64 id;

  switch (source)
    {
    case DS_RECORDER_SOURCE_POOL:
      id = (guint64) GPOINTER_TO_SIZE (o->object);
      break;
    case DS_RECORDER_SOURCE_STREAM:
      id = o->stream;
      break;
    default:
      /* A thread's scratchpads count together, per kind. */
      id = 0;
      break;
    }

  admission.keep = admit (source, id, event_of (o->event), o->kind, o->bytes, &counted);
  admission.count = counted.count;
  admission.bytes = counted.bytes;
  admission.pending = admission.keep ||
                      (source == DS_RECORDER_SOURCE_SCRATCHPAD &&
                       __atomic_load_n (&ds_recorder_watched, __ATOMIC_RELAXED));
  return admission.pending;
}

static void
recorder_observe (const DsObservation *o,
                  gpointer             user_data)
{
  DsRecorderSample sample = { 0, };
  gboolean keep = TRUE;

  if (admission.pending)
    {
      admission.pending = FALSE;
      keep = admission.keep;
      sample.count = admission.count;
      sample.bytes = admission.bytes;
    }
  else
    {
      sample.count = o->event == DS_OBSERVER_EVENT_LOOK ? 0 : 1;
      sample.bytes = o->bytes;
    }

  sample.event = event_of (o->event);
  sample.source = source_of (o->event);
  sample.kind = o->kind;
  sample.device = o->device;
  sample.held = o->held;
  sample.in_use = o->in_use;
  sample.pending = o->pending;
  sample.peak = o->peak;
  sample.label = o->label;

  switch (sample.source)
    {
    case DS_RECORDER_SOURCE_POOL:
      sample.id = sample.pool = id_of (o->object, DS_RECORDER_SOURCE_POOL);
      ds_recorder_record (&sample, DS_RECORDER_KEEP | DS_RECORDER_WATCH);
      break;

    case DS_RECORDER_SOURCE_STREAM:
      sample.id = o->stream;
      sample.kind = DS_MEMORY_KIND_HOST;
      ds_recorder_record (&sample, DS_RECORDER_KEEP | DS_RECORDER_WATCH);
      break;

    default:
      sample.id = id_of (o->object, DS_RECORDER_SOURCE_SCRATCHPAD);
      sample.pool = o->upstream != NULL && DS_IS_POOL_RESOURCE (o->upstream) ?
                    id_of (o->upstream, DS_RECORDER_SOURCE_POOL) : 0;
      if (keep)
        ds_recorder_record (&sample, DS_RECORDER_KEEP);
      if (__atomic_load_n (&ds_recorder_watched, __ATOMIC_RELAXED))
        {
          /* The watches see every event as it is. */
          sample.count = 1;
          sample.bytes = o->bytes;
          ds_recorder_record (&sample, DS_RECORDER_WATCH);
        }
      break;
    }
}

const DsObserver ds_recorder_observer = {
  .want = recorder_want,
  .observe = recorder_observe,
};
