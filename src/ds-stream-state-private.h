/* ds-stream-state-private.h: one CUDA stream as every pool knows it
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A DsStreamState is a stream's identity (cudaStreamGetId (): a destroyed
 * stream whose handle is reused is never confused with the new one),
 * shared by every pool through a registry (ds-stream-state.c), and the
 * state of its fences: the releases numbered on it, those known complete,
 * the events recorded for them (ds-fence.c, ds-fence-private.h), and
 * whether others want its blocks (its demand).
 */

#pragma once

#include "ds-access-order-private.h"

G_BEGIN_DECLS

typedef struct _DsStreamState DsStreamState;

/* One stream identity, shared by every pool; refcounted. */
struct _DsStreamState
{
  gint      ref_count;     /* atomic */

  /* Identity, immutable. */
  guint64   stream_id;     /* cudaStreamGetId (); 0 for the legacy stream */
  gpointer  stream;
  gint      device;
  gpointer  context;

  guint64   released;      /* the last release seq handed out (atomic) */
  guint64   completed;     /* every seq <= this has completed (atomic) */
  guint64   fenced;        /* every seq <= this has an event (atomic) */

  /* Requests from elsewhere (another stream, the host) want this
   * stream's blocks: its releases are checked. Set by them
   * (ds_stream_state_note_demand ()), faded by the checks once none has
   * been seen for DS_FENCE_DEMAND_HOLD_US (ds_stream_state_demanded ()).
   * Atomics; demand_seen_at is written by the checks only. */
  gint      demand;
  gint      demand_seen;
  gint64    demand_seen_at;

  /* ds-fence.c only. */
  GMutex    lock;
  guint64   checked;       /* the seq of the last check (under lock) */
  gpointer  fences;        /* events recorded, oldest first, by seq */
  guint     fence_head;
  guint     n_fences;
  guint     fence_cap;
  gpointer *spares;        /* events ready to be recorded again */
  guint     n_spares;
  guint     spare_cap;
  gboolean  warned;
};

/* A stream state lent by the calling thread's cache of them instead of
 * a reference of its own: two atomic operations fewer per release.
 * slot < 0: the borrower holds a reference. */
typedef struct
{
  gpointer tls;
  gint     slot;
} DsStreamLoan;

/* The stream state of @order's stream (a device order), lent by this
 * thread's cache when it is there (or put there), else with a reference
 * of the caller's: either way it stays alive until
 * ds_stream_state_end_loan (@loan), which this thread must call; the
 * cache does not drop a state while it is lent. */
DsStreamState *ds_stream_state_borrow       (const DsAccessOrder *order,
                                             DsStreamLoan        *loan);
void           ds_stream_state_end_loan     (DsStreamState       *self,
                                             DsStreamLoan        *loan);
DsStreamState *ds_stream_state_ref          (DsStreamState       *self);
void           ds_stream_state_unref        (DsStreamState       *self);

/* Whether @order is the stream of @self. */
static inline gboolean
ds_stream_state_matches (const DsStreamState *self,
                         const DsAccessOrder *order)
{
  guint64 id = ds_access_order_get_stream_id (order);

  if (id != 0 || self->stream_id != 0)
    return id == self->stream_id;

  /* The legacy default stream (or no CUDA to ask for an identity): the
   * handle, the device and the context together. */
  return self->stream == order->stream &&
         self->device == order->device &&
         self->context == ds_access_order_get_context (order);
}

/* How long a stream's demand outlives the last request that showed it
 * (microseconds of the fence clock). */
#define DS_FENCE_DEMAND_HOLD_US (100 * G_TIME_SPAN_MILLISECOND)

/* A request (host order, or another stream's) wanted a block given back
 * under @self's fence: it took one once the stream was checked, or found
 * one still pending. Writes only on a change, so that a thread that keeps
 * wanting them shares the cache line read-only. */
static inline void
ds_stream_state_note_demand (DsStreamState *self)
{
  if (!g_atomic_int_get (&self->demand_seen))
    g_atomic_int_set (&self->demand_seen, TRUE);
  if (!g_atomic_int_get (&self->demand))
    g_atomic_int_set (&self->demand, TRUE);
}

/* Whether @self's demand holds, for a check that is due: it fades once
 * no request has shown it for DS_FENCE_DEMAND_HOLD_US (looked at by the
 * checks only, so that a stream nobody wants makes no clock call). */
gboolean       ds_stream_state_demanded     (DsStreamState       *self);

/* For a driver context about to be destroyed: synchronizes it (all work
 * queued in it finishes), destroys the events of its streams' fences,
 * marks every release on them complete, and drops them from the registry,
 * so that nothing ds keeps refers to the context afterwards. */
void           ds_stream_state_forget_context (gpointer           context);

/* The number of stream states alive (one per stream that had blocks given
 * back in its order and not reused yet); drops those nobody uses. */
guint          ds_stream_state_count        (void);

G_END_DECLS
