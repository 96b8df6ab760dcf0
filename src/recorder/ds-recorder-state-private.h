/* ds-recorder-state-private.h: the recorder's insides, for its files
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The DsRecorder instance and the one running recorder, which
 * ds-recorder.c (the object and its API) starts and stops,
 * ds-recorder-report.c (the observer) reads and ds-recorder-format.c
 * (the file) writes out; and the clock its samples are stamped with.
 */

#pragma once

#include <stdio.h>
#include <time.h>

#include "ds-recorder-private.h"
#include "ds-recorder-ring-private.h"

G_BEGIN_DECLS

typedef struct
{
  guint               id;
  DsRecorderWatchFunc func;
  gpointer            user_data;
  GDestroyNotify      notify;
} DsRecorderWatch;

struct _DsRecorder
{
  GObject          parent_instance;

  guint            capacity;
  char            *file;
  guint            interval;      /* ms, atomic */

  DsRecorderRing  *ring;
  gint64           start_ns;      /* the monotonic clock when it started */
  gboolean         running;       /* under state_lock (ds-recorder.c) */

  /* The recorder's thread: looks at the pools, flushes the file. */
  GThread         *thread;
  GMutex           lock;
  GCond            cond;
  gboolean         stopping;      /* under lock */
  GMutex           out_lock;
  FILE            *out;           /* under out_lock */
  guint64          out_cursor;    /* under out_lock */
  guint64          n_lost;        /* atomic */

  GRWLock          watch_lock;
  GArray          *watches;       /* of DsRecorderWatch, under watch_lock */
  guint            next_watch_id;
  gint             n_watches;     /* atomic */
};

/* Set while the running recorder has watches (atomic). */
extern gint ds_recorder_watched;
/* The running recorder (atomic; it holds a reference), set and cleared
 * by ds-recorder.c under its state lock, read by reporters. */
extern DsRecorder *ds_recorder_running;
/* Reports under way (atomic): reporters enter, read the running
 * recorder, leave; ds_recorder_stop () waits for none. */
extern gint ds_recorder_in_flight;
/* The running recorder's interval, in ns (atomic). */
extern gint64 ds_recorder_running_interval_ns;
/* Set while this thread calls watches, to refuse what would deadlock. */
extern __thread gboolean ds_recorder_in_watch;

/* Tells reporters whether the running recorder, if it is @self, has
 * watches (ds-recorder.c, under its state lock). */
void ds_recorder_update_watched (DsRecorder *self);

/* The monotonic clock, in ns: samples' times are counted from start_ns. */
static inline gint64
ds_recorder_now_ns (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (gint64) ts.tv_sec * G_GINT64_CONSTANT (1000000000) + ts.tv_nsec;
}

G_END_DECLS
