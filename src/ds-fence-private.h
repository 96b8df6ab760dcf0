/* ds-fence-private.h: stream identities and fences
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * How it works (the fence model everything above rests on):
 *  1. Each CUDA stream is known by its identity, a DsStreamState shared by
 *     every pool: cudaStreamGetId () tells streams apart even when a
 *     destroyed stream's handle is reused.
 *  2. A block given back in a stream's order may still be used by work
 *     queued on that stream. It is tagged with a fence (stream, seq): seq
 *     counts the releases on that stream. Giving back costs no CUDA call.
 *  3. The same stream may take the block again at once: stream order keeps
 *     the new work behind the old. No event, no query, ever.
 *  4. Anyone else (another stream, the host) takes it only once the fence
 *     is known complete: all seqs <= DsStreamState.completed are. A stream
 *     is checked (one cuStreamQuery; an event only if it is busy, which
 *     fences the releases so far) at a release, where it is known to be
 *     alive, and only while others want its blocks (the stream's demand:
 *     set by a request that wanted one of them, faded by the stream's own
 *     checks 100 ms after the last such request): then every 8th
 *     release, so a block that keeps going to the host (pinned staging)
 *     costs an eighth of a check, and a stream whose blocks only it
 *     takes costs none, whatever other streams do. The first release of
 *     each stream is checked as well.
 *  5. A release batch (ds-fence-batch-private.h) gives every block of one
 *     scratchpad release back under one fence per stream, however many
 *     kinds and blocks it holds.
 *  6. Events outlive streams, so the fences of a destroyed stream complete
 *     when its work does; a fence never checked is resolved, where someone
 *     must block for it, by synchronizing the stream's device, which also
 *     covers a stream destroyed since: a pool's idle release does so for
 *     the blocks such fences left idle past its timeout, once per device
 *     for all of them (ds_stream_state_drain ()). A fence whose event
 *     could not be recorded never completes (DS_FENCE_LOST): its blocks
 *     are held back for good rather than reused while work may still use
 *     them.
 */

#pragma once

#include "ds-stream-state-private.h"

G_BEGIN_DECLS

/* The seq of a release whose event could not be recorded: it never
 * completes. */
#define DS_FENCE_LOST G_MAXUINT64

/* The CUDA calls made for fences, counted into a pool's statistics. */
typedef struct
{
  guint64 events_recorded;
  guint64 events_created;
  guint64 event_queries;
  guint64 stream_waits;
  guint64 event_waits;
} DsFenceCounters;


/* Whether the fence @seq of @self is known complete; makes no CUDA call. */
static inline gboolean
ds_stream_state_known_complete (DsStreamState *self,
                                guint64        seq)
{
  return seq <= __atomic_load_n (&self->completed, __ATOMIC_ACQUIRE);
}

/* Whether the fence @seq has an event to wait for or query (it may have
 * completed too); makes no CUDA call. */
static inline gboolean
ds_stream_state_is_fenced (DsStreamState *self,
                           guint64        seq)
{
  return seq <= __atomic_load_n (&self->fenced, __ATOMIC_ACQUIRE);
}

/* Marks the end, in @order's stream (that of @self), of the work that may
 * use blocks given back now: returns the seq of this release, their
 * fence, or DS_FENCE_LOST. Checks the stream (a query; an event if it is
 * busy) at its first release and, while the stream's blocks are in demand
 * (ds_stream_state_demanded ()), at every 8th. */
guint64        ds_stream_state_record       (DsStreamState       *self,
                                             const DsAccessOrder *order,
                                             DsFenceCounters     *counters);
/* Checks the stream for a release already numbered (@seq), if a check is
 * due, demand or not: for a pool that must give idle blocks
 * back upstream and has to know them complete first. */
guint64        ds_stream_state_check        (DsStreamState       *self,
                                             guint64              seq,
                                             const DsAccessOrder *order,
                                             DsFenceCounters     *counters);
/* Checks the stream for a release already numbered (@seq) now, due or
 * not, unless it is known complete or has an event: for a block large
 * enough to be worth the query at once. */
guint64        ds_stream_state_check_now    (DsStreamState       *self,
                                             guint64              seq,
                                             const DsAccessOrder *order,
                                             DsFenceCounters     *counters);
/* Whether the fence @seq has completed; checks without waiting (an event
 * query). A fence without an event cannot be checked here. */
gboolean       ds_stream_state_poll         (DsStreamState       *self,
                                             guint64              seq,
                                             DsFenceCounters     *counters);
/* Blocks until the fence @seq has completed (its event, or else the
 * stream's whole device). FALSE if it never will. */
gboolean       ds_stream_state_wait         (DsStreamState       *self,
                                             guint64              seq,
                                             DsFenceCounters     *counters);
/* For releases nobody checked, on streams that may be gone (their handles
 * cannot be used): synchronizes each device (and context) of @states
 * once, and marks every release made on them before that complete. A
 * device that fails to synchronize leaves its states as they were. */
void           ds_stream_state_drain        (DsStreamState      **states,
                                             guint                n,
                                             DsFenceCounters     *counters);
/* Makes @order's stream wait for the fence @seq, without blocking the
 * host where the fence has an event (else as ds_stream_state_wait ()).
 * FALSE if it cannot. */
gboolean       ds_stream_state_make_wait    (DsStreamState       *self,
                                             guint64              seq,
                                             const DsAccessOrder *order,
                                             DsFenceCounters     *counters);

/* Destroys the events of @self's fences (after waiting for them, with
 * @wait), in its context; its fences are gone afterwards. Called with the
 * lock held, or when nobody else can use @self. */
void           ds_stream_state_clear_fences (DsStreamState       *self,
                                             gboolean             wait);


/* For tests: checks every @releases-th release of each stream, whether
 * or not others want its blocks (0: the default, every 8th while they
 * do). */
void           ds_fence_set_check_every_for_testing (guint releases);

G_END_DECLS
