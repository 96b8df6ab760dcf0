/* ds-recorder-report.c: what pools, fences and scratchpads tell the
 * running recorder
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The functions of ds-recorder-private.h, and the state of the one
 * running recorder that they read: which recorder runs, its interval,
 * the reports under way (ds_recorder_stop () waits for none). Frequent
 * events are counted per thread (ds_recorder_admit ()); a sample kept
 * goes into the running recorder's ring and to its watches. The probes
 * that pools register are called from here too. Starting and stopping
 * are in ds-recorder.c, which sets this state under its own lock.
 */

#include "config.h"

#include "ds-recorder-private.h"
#include "ds-recorder-state-private.h"

typedef struct
{
  gpointer        owner;
  DsRecorderProbe probe;
} Probe;

/* The one running recorder and what reporters read of it. */
gint ds_recorder_on;
gint ds_recorder_watched;
DsRecorder *ds_recorder_running;
gint ds_recorder_in_flight;
gint64 ds_recorder_running_interval_ns;
__thread gboolean ds_recorder_in_watch;

static guint64 next_ids[DS_RECORDER_SOURCE_RECORDER + 1];

static GMutex probe_lock;
static GArray *probes;                 /* of Probe, under probe_lock */

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

gboolean
ds_recorder_admit (DsRecorderSource  source,
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
        ds_recorder_ring_push (self->ring, sample);
      if ((to & DS_RECORDER_WATCH) && !ds_recorder_in_watch &&
          __atomic_load_n (&self->n_watches, __ATOMIC_RELAXED) != 0)
        call_watches (self, sample);
    }
  __atomic_sub_fetch (&ds_recorder_in_flight, 1, __ATOMIC_SEQ_CST);
}

guint64
ds_recorder_next_id (DsRecorderSource source)
{
  return __atomic_add_fetch (&next_ids[source], 1, __ATOMIC_RELAXED);
}

static GQuark
id_quark (void)
{
  static GQuark quark;

  if (G_UNLIKELY (quark == 0))
    quark = g_quark_from_static_string ("ds-recorder-id");
  return quark;
}

guint64
ds_recorder_tag (GObject          *object,
                 DsRecorderSource  source)
{
  guint64 id = ds_recorder_next_id (source);

  g_object_set_qdata (object, id_quark (), GSIZE_TO_POINTER ((gsize) id));
  return id;
}

guint64
ds_recorder_id_of (gpointer object)
{
  if (object == NULL)
    return 0;
  return GPOINTER_TO_SIZE (g_object_get_qdata (object, id_quark ()));
}

void
ds_recorder_add_probe (gpointer        owner,
                       DsRecorderProbe probe)
{
  Probe p = { owner, probe };

  g_mutex_lock (&probe_lock);
  if (probes == NULL)
    probes = g_array_new (FALSE, FALSE, sizeof (Probe));
  g_array_append_val (probes, p);
  g_mutex_unlock (&probe_lock);
}

void
ds_recorder_remove_probe (gpointer owner)
{
  g_mutex_lock (&probe_lock);
  for (guint i = 0; probes != NULL && i < probes->len; i++)
    if (g_array_index (probes, Probe, i).owner == owner)
      {
        g_array_remove_index_fast (probes, i);
        break;
      }
  g_mutex_unlock (&probe_lock);
}

void
ds_recorder_run_probes (void)
{
  g_mutex_lock (&probe_lock);
  for (guint i = 0; probes != NULL && i < probes->len; i++)
    {
      Probe *p = &g_array_index (probes, Probe, i);

      p->probe (p->owner);
    }
  g_mutex_unlock (&probe_lock);
}
