/* ds-recorder-private.h: how pools, fences and scratchpads report to the
 * running recorder
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * At most one DsRecorder runs at a time. While none does, a report costs
 * its caller one load of ds_recorder_on and a branch (DS_RECORDING ()):
 * the sample is not even made. While one runs, the caller fills a
 * DsRecorderSample and gives it to ds_recorder_record (). Frequent events
 * (a pool's cache hits and frees, scratchpads' blocks and releases, a
 * stream's checks) are first counted by the calling thread, per source and
 * event (ds_recorder_admit ()), and kept at most once per interval, the
 * sample standing for all the events counted since: threads that share a
 * pool share no counter. Rare events (upstream calls, evictions, idle
 * releases, trims) are always kept. Watches see every sample kept, and
 * every scratchpad event.
 *
 * The recorder knows samples only: not pools, scratchpads or streams.
 * Pools register a probe (ds_recorder_add_probe ()), which the running
 * recorder calls every 100 ms on a thread of its own for a look at the
 * pool whether it is used or not.
 */

#pragma once

#include "ds-recorder.h"

G_BEGIN_DECLS

/* Set while a recorder runs (atomic). */
extern gint ds_recorder_on;
/* Set while the running recorder has watches (atomic). */
extern gint ds_recorder_watched;

#define DS_RECORDING() G_UNLIKELY (__atomic_load_n (&ds_recorder_on, __ATOMIC_RELAXED))

/* For the functions that make a report: out of line and laid out apart
 * from the code they are called from, which stays as compact as it was
 * without reports. */
#if defined (__GNUC__)
# define DS_RECORDER_COLD __attribute__ ((cold, noinline))
#else
# define DS_RECORDER_COLD
#endif
#define DS_RECORDER_WATCHED() (__atomic_load_n (&ds_recorder_watched, __ATOMIC_RELAXED) != 0)

/* Counts, on the calling thread, one frequent @event of @bytes on the
 * source (@source, @id) for memory of @kind; TRUE when it is to be kept,
 * with the events and bytes it stands for in @sample's count and bytes
 * (those of the thread since the last sample it kept of the same). */
gboolean ds_recorder_admit         (DsRecorderSource    source,
                                    guint64             id,
                                    DsRecorderEvent     event,
                                    DsMemoryKind        kind,
                                    guint64             bytes,
                                    DsRecorderSample   *sample);

/* What ds_recorder_record () does with a sample. */
typedef enum
{
  DS_RECORDER_KEEP  = 1 << 0,   /* into the recording */
  DS_RECORDER_WATCH = 1 << 1,   /* to the watches */
} DsRecorderTo;

/* Gives @sample to the running recorder, if any: stamps its time, keeps
 * it and shows it to the watches, as @to says. @sample's label must be
 * an interned string or NULL. Callers may hold their own locks: the
 * recorder takes none that they take (watches must not call into ds). */
void     ds_recorder_record        (DsRecorderSample   *sample,
                                    DsRecorderTo        to);

/* A new number for a pool or a scratchpad, from 1. */
guint64  ds_recorder_next_id       (DsRecorderSource    source);

/* A new number for @object (ds_recorder_next_id ()), kept on it so that
 * those who hold it (a scratchpad its upstream) can name it in their
 * samples without knowing what it is. */
guint64  ds_recorder_tag           (GObject            *object,
                                    DsRecorderSource    source);

/* The number ds_recorder_tag () gave @object, or 0 (NULL, or untagged). */
guint64  ds_recorder_id_of         (gpointer            object);

/* Calls @probe (@owner) every 100 ms while a recorder runs, on the
 * recorder's thread, until ds_recorder_remove_probe (@owner), which
 * returns once no call is under way. */
typedef void (*DsRecorderProbe) (gpointer owner);

void     ds_recorder_add_probe     (gpointer            owner,
                                    DsRecorderProbe     probe);
void     ds_recorder_remove_probe  (gpointer            owner);

/* Starts the recorder that DS_RECORD asks for, once per process (later
 * calls do nothing). */
void     ds_recorder_start_from_environment (void);

G_END_DECLS
