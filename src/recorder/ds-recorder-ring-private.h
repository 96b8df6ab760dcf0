/* ds-recorder-ring-private.h: the recorder's bounded buffer of samples
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A ring of a fixed number of slots that any thread pushes samples into
 * and one reader at a time reads in order. A push claims the next index
 * (one atomic add on the ring's head) and fills the slot it falls on
 * (index modulo the capacity) under that slot's lock, so pushes from many
 * threads only meet on the head, and a slot is never read half written.
 * The newest samples overwrite the oldest: memory stays as it was made,
 * however long the recording; a reader that falls behind by more than the
 * capacity is told how many it lost.
 */

#pragma once

#include "ds-recorder.h"

G_BEGIN_DECLS

typedef struct _DsRecorderRing DsRecorderRing;

/* Called by ds_recorder_ring_read () for each sample, in order. */
typedef void (*DsRecorderRingFunc) (const DsRecorderSample *sample,
                                    gpointer                user_data);

/* A ring of @capacity (at least 1) samples. */
DsRecorderRing *ds_recorder_ring_new      (guint                   capacity);
void            ds_recorder_ring_free     (DsRecorderRing         *ring);

guint           ds_recorder_ring_capacity (DsRecorderRing         *ring);

/* Stores a copy of @sample (its label must be an interned string or
 * NULL); returns its index. Thread-safe; no allocation. */
guint64         ds_recorder_ring_push     (DsRecorderRing         *ring,
                                           const DsRecorderSample *sample);

/* The number of samples pushed so far (the index of the next one). */
guint64         ds_recorder_ring_head     (DsRecorderRing         *ring);

/* Calls @func for the samples from index *@cursor on, in order, and
 * advances *@cursor past them. It stops at a sample still being written
 * (a push that claimed its index and has not filled it yet), to be read
 * at the next call. Samples overwritten before they were read are skipped
 * and added to *@lost. Returns the number of samples read. One reader at
 * a time per cursor; pushes may go on meanwhile. */
guint           ds_recorder_ring_read     (DsRecorderRing         *ring,
                                           guint64                *cursor,
                                           guint64                *lost,
                                           DsRecorderRingFunc      func,
                                           gpointer                user_data);

G_END_DECLS
