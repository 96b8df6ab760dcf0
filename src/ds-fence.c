/* ds-fence.c: the fences of a stream
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The fence model is described in ds-fence-private.h. Here: the ring of
 * recorded fences of each stream state and their events (kept and
 * recorded again once complete), waits on them, and the release policy
 * that decides at each release whether the stream is checked at all. The
 * registry of stream states is ds-stream-state.c's.
 */

#include "config.h"

#include "ds-fence-private.h"
#include "ds-clock-private.h"
#include "ds-error.h"
#include "ds-observer-private.h"

/* A stream's fences are checked for completion (to reuse their events)
 * once this many are outstanding. */
#define RECYCLE_FENCES_AT 4
/* While others want a stream's blocks, every CHECK_EVERY-th release on it
 * is checked: a block that keeps going to the host (pinned staging) costs
 * an eighth of a query, and a stream whose blocks only it takes costs
 * none. */
#define CHECK_EVERY       8

typedef struct
{
  gpointer event;        /* cudaEvent_t */
  guint64  seq;
} Fence;

/* CHECK_EVERY; tests set 1 (every release checked, wanted or not). */
static guint check_every = CHECK_EVERY;

void
ds_fence_set_check_every_for_testing (guint releases)
{
  g_atomic_int_set (&check_every, releases != 0 ? releases : CHECK_EVERY);
}

static inline Fence *
fence_at (DsStreamState *ss,
          guint          i)
{
  return &((Fence *) ss->fences)[(ss->fence_head + i) % ss->fence_cap];
}

/* Tells the observer of a check (frequent) or a drain of @ss. */
static DS_OBSERVER_COLD void
observe_stream_slow (DsStreamState   *ss,
                     DsObserverEvent  event)
{
  DsObservation o = { 0, };

  o.event = event;
  o.stream = ss->stream_id;
  o.device = ss->device;
  ds_observer_tell (&o, event == DS_OBSERVER_EVENT_FENCE_CHECK, NULL);
}

static inline void
observe_stream (DsStreamState   *ss,
                DsObserverEvent  event)
{
  if (DS_OBSERVING ())
    observe_stream_slow (ss, event);
}

/* Fences ---------------------------------------------------------------------- */

static void
stream_state_warn (DsStreamState *ss,
                   GError        *error)
{
  if (error == NULL)
    return;
  if (!ds_cuda_is_unloading () && !ss->warned)
    {
      ss->warned = TRUE;
      g_warning ("%s; blocks released on this stream are held back", error->message);
    }
  g_error_free (error);
}

static void
spare_push (DsStreamState *ss,
            gpointer       event)
{
  if (ss->n_spares == ss->spare_cap)
    {
      ss->spare_cap = MAX (4, ss->spare_cap * 2);
      ss->spares = g_renew (gpointer, ss->spares, ss->spare_cap);
    }
  ss->spares[ss->n_spares++] = event;
}

static void
fence_push (DsStreamState *ss,
            gpointer       event,
            guint64        seq)
{
  if (ss->n_fences == ss->fence_cap)
    {
      guint cap = MAX (8, ss->fence_cap * 2);
      Fence *fences = g_new (Fence, cap);
      guint i;

      for (i = 0; i < ss->n_fences; i++)
        fences[i] = *fence_at (ss, i);
      g_free (ss->fences);
      ss->fences = fences;
      ss->fence_cap = cap;
      ss->fence_head = 0;
    }

  fence_at (ss, ss->n_fences)->event = event;
  fence_at (ss, ss->n_fences)->seq = seq;
  ss->n_fences++;
}

void
ds_stream_state_clear_fences (DsStreamState *self,
                              gboolean       wait)
{
  DsCudaScope scope;

  if (self->n_fences == 0 && self->n_spares == 0)
    return;

  /* Events are destroyed in their context; destroying one that has not
   * completed is allowed. If the context is gone, so are its events. */
  if (ds_cuda_scope_enter (&scope, self->device, self->context, NULL))
    {
      for (guint i = 0; i < self->n_fences; i++)
        {
          if (wait)
            (void) ds_cuda_event_synchronize (fence_at (self, i)->event, NULL);
          ds_cuda_event_free (fence_at (self, i)->event);
        }
      for (guint i = 0; i < self->n_spares; i++)
        ds_cuda_event_free (self->spares[i]);
      ds_cuda_scope_leave (&scope);
    }
  self->n_fences = 0;
  self->n_spares = 0;
}

static inline void
mark_completed (DsStreamState *ss,
                guint64        seq)
{
  ds_atomic_raise (&ss->completed, seq);
}

/* Marks the @n oldest fences completed and keeps their events. */
static void
fences_retire_locked (DsStreamState *ss,
                      guint          n)
{
  guint64 last = 0;

  while (n-- > 0)
    {
      Fence *f = fence_at (ss, 0);

      last = f->seq;
      spare_push (ss, f->event);
      ss->fence_head = (ss->fence_head + 1) % ss->fence_cap;
      ss->n_fences--;
    }

  mark_completed (ss, last);
}

/* Checks the outstanding fences without waiting, newest first: when the
 * newest has completed, so have all the others (one stream). */
static void
poll_locked (DsStreamState   *ss,
             guint64          wanted,
             DsFenceCounters *counters)
{
  GError *error = NULL;
  DsCudaStatus status;

  if (ss->n_fences == 0)
    return;

  status = ds_cuda_event_query (fence_at (ss, ss->n_fences - 1)->event, &error);
  counters->event_queries++;
  if (status == DS_CUDA_DONE)
    {
      fences_retire_locked (ss, ss->n_fences);
      return;
    }
  if (status == DS_CUDA_FAILED)
    {
      stream_state_warn (ss, error);
      return;
    }

  /* The newest is still running; older ones may be done. */
  while (ss->n_fences > 1 && fence_at (ss, 0)->seq <= wanted)
    {
      status = ds_cuda_event_query (fence_at (ss, 0)->event, &error);
      counters->event_queries++;
      if (status != DS_CUDA_DONE)
        {
          stream_state_warn (ss, error);
          break;
        }
      fences_retire_locked (ss, 1);
    }
}

/* Whether a recorded event covers @seq. Called with the lock held. */
static inline gboolean
has_fence_locked (DsStreamState *ss,
                  guint64        seq)
{
  return ss->n_fences > 0 && fence_at (ss, ss->n_fences - 1)->seq >= seq;
}

gboolean
ds_stream_state_poll (DsStreamState   *self,
                      guint64          seq,
                      DsFenceCounters *counters)
{
  gboolean done;

  if (ds_stream_state_known_complete (self, seq))
    return TRUE;
  if (seq == DS_FENCE_LOST)
    return FALSE;

  g_mutex_lock (&self->lock);
  if (seq > self->completed)
    {
      if (has_fence_locked (self, seq))
        {
          DsCudaScope scope;

          /* Events are queried in the context they belong to. */
          if (ds_cuda_scope_enter (&scope, self->device, self->context, NULL))
            {
              poll_locked (self, seq, counters);
              ds_cuda_scope_leave (&scope);
            }
          observe_stream (self, DS_OBSERVER_EVENT_FENCE_CHECK);
        }
    }
  done = seq <= self->completed;
  g_mutex_unlock (&self->lock);

  return done;
}

/* The index of the oldest outstanding fence at or after @seq, which covers
 * it. Called with the lock held, has_fence_locked (). */
static guint
covering_fence_locked (DsStreamState *ss,
                       guint64        seq)
{
  guint i;

  for (i = 0; i < ss->n_fences - 1 && fence_at (ss, i)->seq < seq; i++)
    ;

  return i;
}

/* For a fence without an event: the stream may be gone, so its handle
 * cannot be used; synchronizing its device covers it (and every other
 * release of the stream so far). Called with the lock held. */
static gboolean
drain_device_locked (DsStreamState   *ss,
                     DsFenceCounters *counters)
{
  guint64 released = __atomic_load_n (&ss->released, __ATOMIC_ACQUIRE);
  GError *error = NULL;
  DsCudaScope scope;
  gboolean ok;

  counters->event_waits++;
  observe_stream (ss, DS_OBSERVER_EVENT_FENCE_DRAIN);
  if (!ds_cuda_scope_enter (&scope, ss->device, ss->context, &error))
    {
      stream_state_warn (ss, error);
      return FALSE;
    }
  ok = ds_cuda_device_synchronize (&error);
  ds_cuda_scope_leave (&scope);
  if (!ok)
    {
      stream_state_warn (ss, error);
      return FALSE;
    }

  while (ss->n_fences > 0)
    fences_retire_locked (ss, ss->n_fences);
  mark_completed (ss, released);
  return TRUE;
}

void
ds_stream_state_drain (DsStreamState   **states,
                       guint             n,
                       DsFenceCounters  *counters)
{
  guint64 *released = g_new (guint64, n);
  gboolean *done = g_new0 (gboolean, n);

  /* Only the releases made before the wait begins are covered by it. */
  for (guint i = 0; i < n; i++)
    released[i] = __atomic_load_n (&states[i]->released, __ATOMIC_ACQUIRE);

  for (guint i = 0; i < n; i++)
    {
      DsStreamState *leader = states[i];
      GError *error = NULL;
      DsCudaScope scope;
      gboolean ok;

      if (done[i] || ds_stream_state_known_complete (leader, released[i]))
        continue;

      counters->event_waits++;
      observe_stream (leader, DS_OBSERVER_EVENT_FENCE_DRAIN);
      ok = ds_cuda_scope_enter (&scope, leader->device, leader->context, &error);
      if (ok)
        {
          ok = ds_cuda_device_synchronize (&error);
          ds_cuda_scope_leave (&scope);
        }
      if (!ok)
        {
          g_mutex_lock (&leader->lock);
          stream_state_warn (leader, error);
          g_mutex_unlock (&leader->lock);
        }

      /* One wait covers every stream of the device (and context). */
      for (guint j = i; j < n; j++)
        {
          DsStreamState *ss = states[j];
          guint k = 0;

          if (done[j] || ss->device != leader->device || ss->context != leader->context)
            continue;
          done[j] = TRUE;
          if (!ok)
            continue;

          g_mutex_lock (&ss->lock);
          while (k < ss->n_fences && fence_at (ss, k)->seq <= released[j])
            k++;
          fences_retire_locked (ss, k);
          mark_completed (ss, released[j]);
          g_mutex_unlock (&ss->lock);
        }
    }

  g_free (done);
  g_free (released);
}

/* Blocks on @event, in the context of @ss. */
static gboolean
event_synchronize (DsStreamState  *ss,
                   gpointer        event,
                   GError        **error)
{
  DsCudaScope scope;
  gboolean ok;

  if (!ds_cuda_scope_enter (&scope, ss->device, ss->context, error))
    return FALSE;
  ok = ds_cuda_event_synchronize (event, error);
  ds_cuda_scope_leave (&scope);

  return ok;
}

gboolean
ds_stream_state_wait (DsStreamState   *self,
                      guint64          seq,
                      DsFenceCounters *counters)
{
  gboolean done;

  if (ds_stream_state_known_complete (self, seq))
    return TRUE;
  if (seq == DS_FENCE_LOST)
    return FALSE;

  g_mutex_lock (&self->lock);
  while (seq > self->completed)
    {
      GError *error = NULL;
      guint i;

      if (!has_fence_locked (self, seq))
        {
          drain_device_locked (self, counters);
          break;
        }

      i = covering_fence_locked (self, seq);
      counters->event_waits++;
      if (!event_synchronize (self, fence_at (self, i)->event, &error))
        {
          stream_state_warn (self, error);
          break;
        }
      fences_retire_locked (self, i + 1);
    }
  done = seq <= self->completed;
  g_mutex_unlock (&self->lock);

  return done;
}

gboolean
ds_stream_state_make_wait (DsStreamState       *self,
                           guint64              seq,
                           const DsAccessOrder *order,
                           DsFenceCounters     *counters)
{
  gboolean ok;

  if (ds_stream_state_known_complete (self, seq))
    return TRUE;
  if (seq == DS_FENCE_LOST)
    return FALSE;

  g_mutex_lock (&self->lock);
  if (seq > self->completed && has_fence_locked (self, seq))
    {
      GError *error = NULL;
      DsCudaScope scope;

      /* The waiting stream's context: the event may be of another. */
      counters->stream_waits++;
      ok = ds_access_order_enter (order, &scope, &error);
      if (ok)
        {
          ok = ds_cuda_stream_wait_event (order->stream,
                                          fence_at (self, covering_fence_locked (self, seq))->event,
                                          &error);
          ds_cuda_scope_leave (&scope);
        }
      stream_state_warn (self, error);
    }
  else
    {
      if (seq > self->completed)
        drain_device_locked (self, counters);
      ok = seq <= self->completed;
    }
  g_mutex_unlock (&self->lock);

  return ok;
}

/* An event to record on @ss: a spare one, one of a completed fence, or a
 * new one (created in the current context, which is the stream's). */
static gpointer
take_event_locked (DsStreamState   *ss,
                   DsFenceCounters *counters)
{
  GError *error = NULL;
  gpointer event;

  if (ss->n_spares == 0 && ss->n_fences >= RECYCLE_FENCES_AT)
    poll_locked (ss, fence_at (ss, ss->n_fences - 1)->seq, counters);
  if (ss->n_spares > 0)
    return ss->spares[--ss->n_spares];

  counters->events_created++;
  event = ds_cuda_event_new (&error);
  stream_state_warn (ss, error);

  return event;
}

/* Called by the stream's releases when a check is due (every 8th one
 * while the demand holds), so the clock is read only then. A request that
 * sets demand_seen just after it was read here (the demand being held
 * still) can be missed once: the demand may fade, and its next request
 * from elsewhere sets it again. */
gboolean
ds_stream_state_demanded (DsStreamState *self)
{
  gint64 now;

  if (G_LIKELY (!g_atomic_int_get (&self->demand)))
    return FALSE;

  now = ds_clock_now ();
  if (g_atomic_int_get (&self->demand_seen))
    {
      g_atomic_int_set (&self->demand_seen, FALSE);
      __atomic_store_n (&self->demand_seen_at, now, __ATOMIC_RELAXED);
      return TRUE;
    }
  if (now - __atomic_load_n (&self->demand_seen_at, __ATOMIC_RELAXED) < DS_FENCE_DEMAND_HOLD_US)
    return TRUE;

  g_atomic_int_set (&self->demand, FALSE);
  g_debug ("Stream %p (id %" G_GUINT64_FORMAT "): no request from elsewhere has wanted its "
           "blocks for %" G_GINT64_FORMAT " ms; its releases are no longer checked",
           self->stream, self->stream_id,
           (now - __atomic_load_n (&self->demand_seen_at, __ATOMIC_RELAXED)) / G_TIME_SPAN_MILLISECOND);
  return FALSE;
}

/* Whether the stream is checked at the release @seq: the first release
 * of a stream (a stream made for one unit of work and destroyed after it
 * then leaves fenced blocks, which others can reuse once its work is
 * done), and every CHECK_EVERY-th one while others want its blocks (or,
 * @forced, for a pool that must know them complete). ss->checked is read
 * without the lock: a stale value only moves a check by one release. */
static gboolean
wants_check (DsStreamState *ss,
             guint64        seq,
             gboolean       forced)
{
  guint every = (guint) g_atomic_int_get (&check_every);

  if (seq == 1)
    return TRUE;
  if (seq - __atomic_load_n (&ss->checked, __ATOMIC_RELAXED) < every)
    return FALSE;

  return forced || every != CHECK_EVERY || ds_stream_state_demanded (ss);
}

/* What a query of @ss's stream at the release @seq answered: TRUE when
 * it was idle (every release so far has completed, marked so). */
static gboolean
note_query (DsStreamState   *ss,
            guint64          seq,
            DsCudaStatus     status,
            DsFenceCounters *counters)
{
  counters->event_queries++;
  if (status != DS_CUDA_DONE)
    return FALSE;

  __atomic_store_n (&ss->checked, seq, __ATOMIC_RELAXED);
  mark_completed (ss, seq);
  return TRUE;
}

/* Checks @order's stream at the release @seq: idle, every release so far
 * has completed; busy, an event is recorded for them. FALSE if neither
 * worked (the caller then waits for the stream). Called in the stream's
 * scope. */
static gboolean
check_stream (DsStreamState   *ss,
              guint64          seq,
              gboolean         query,
              gpointer         stream,
              DsFenceCounters *counters)
{
  GError *error = NULL;
  gpointer event;
  gboolean recorded = FALSE;

  if (query && note_query (ss, seq, ds_cuda_stream_query (stream, NULL), counters))
    return TRUE;

  g_mutex_lock (&ss->lock);
  event = take_event_locked (ss, counters);
  if (event != NULL && ds_cuda_event_record (event, stream, &error))
    {
      /* It covers every release numbered so far, on any thread. */
      guint64 covered = __atomic_load_n (&ss->released, __ATOMIC_ACQUIRE);

      counters->events_recorded++;
      fence_push (ss, event, covered);
      __atomic_store_n (&ss->fenced, covered, __ATOMIC_RELEASE);
      __atomic_store_n (&ss->checked, covered, __ATOMIC_RELAXED);
      recorded = TRUE;
    }
  else if (event != NULL)
    {
      stream_state_warn (ss, error);
      spare_push (ss, event);
    }
  g_mutex_unlock (&ss->lock);

  return recorded;
}

/* Checks the release @seq now (in a process with a device): a query of
 * its stream, else an event; the seq, or DS_FENCE_LOST. */
static guint64
check_now (DsStreamState       *self,
           guint64              seq,
           const DsAccessOrder *order,
           DsFenceCounters     *counters)
{
  DsCudaScope scope;
  gboolean query = TRUE;

  observe_stream (self, DS_OBSERVER_EVENT_FENCE_CHECK);

  /* An explicit stream is asked without entering its scope: an idle one
   * (the steady state) costs the query alone, not a context check too.
   * A busy one enters, for its event; a failed query is asked again
   * there. */
  {
    DsCudaStatus status = ds_cuda_stream_query_contextless (order->stream);

    if (status != DS_CUDA_FAILED)
      {
        if (note_query (self, seq, status, counters))
          return seq;
        query = FALSE;
      }
  }

  if (!ds_access_order_enter (order, &scope, NULL))
    {
      g_warning ("Cannot enter the device of a stream that blocks were "
                 "released on; they are held back");
      return DS_FENCE_LOST;
    }

  if (!check_stream (self, seq, query, order->stream, counters))
    {
      /* Last resort: wait for the stream here. */
      counters->event_waits++;
      if (ds_cuda_stream_synchronize (order->stream, NULL))
        mark_completed (self, seq);
      else
        seq = DS_FENCE_LOST;
    }

  ds_cuda_scope_leave (&scope);
  return seq;
}

/* Checks the release @seq now if it is due (see wants_check ()). */
static guint64
check_if_due (DsStreamState       *self,
              guint64              seq,
              const DsAccessOrder *order,
              gboolean             forced,
              DsFenceCounters     *counters)
{
  /* Without a device nothing can have been queued. */
  if (G_UNLIKELY (!ds_cuda_ensure_available (NULL)))
    {
      mark_completed (self, seq);
      return seq;
    }

  if (!wants_check (self, seq, forced))
    return seq;
  return check_now (self, seq, order, counters);
}

guint64
ds_stream_state_record (DsStreamState       *self,
                        const DsAccessOrder *order,
                        DsFenceCounters     *counters)
{
  guint64 seq = __atomic_add_fetch (&self->released, 1, __ATOMIC_ACQ_REL);

  return check_if_due (self, seq, order, FALSE, counters);
}

guint64
ds_stream_state_check (DsStreamState       *self,
                       guint64              seq,
                       const DsAccessOrder *order,
                       DsFenceCounters     *counters)
{
  if (seq == DS_FENCE_LOST || ds_stream_state_known_complete (self, seq) ||
      ds_stream_state_is_fenced (self, seq))
    return seq;

  return check_if_due (self, seq, order, TRUE, counters);
}

guint64
ds_stream_state_check_now (DsStreamState       *self,
                           guint64              seq,
                           const DsAccessOrder *order,
                           DsFenceCounters     *counters)
{
  if (seq == DS_FENCE_LOST || ds_stream_state_known_complete (self, seq) ||
      ds_stream_state_is_fenced (self, seq))
    return seq;
  if (G_UNLIKELY (!ds_cuda_ensure_available (NULL)))
    {
      mark_completed (self, seq);
      return seq;
    }

  return check_now (self, seq, order, counters);
}
