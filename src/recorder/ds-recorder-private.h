/* ds-recorder-private.h: how the recorder observes libds
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A running recorder is libds's observer (ds-observer.h). It turns each
 * observation into a DsRecorderSample. Frequent events (a pool's cache
 * hits and frees, scratchpads' blocks and releases, a stream's checks)
 * are first counted by the calling thread, per source and event, in the
 * observer's want (), and kept at most once per interval, the sample
 * standing for all the events counted since: threads that share a pool
 * share no counter, and libds reads no figures for the events dropped.
 * Rare events (misses, upstream calls, evictions, idle releases, trims)
 * are always kept. Watches see every sample kept, and every scratchpad
 * event. Pools are numbered from 1 in the order the recorder first sees
 * them (a look at every pool when it starts, in the order they were
 * made), scratchpads in the order they are first observed.
 */

#pragma once

#include "ds-recorder.h"

G_BEGIN_DECLS

/* The observer that a running recorder installs (ds-recorder-report.c). */
extern const DsObserver ds_recorder_observer;

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

G_END_DECLS
