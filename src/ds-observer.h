/* ds-observer.h: a hook for whoever watches what pools, fences and
 * scratchpads do
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * One observer at a time, for the whole process, is told of what ds's
 * pools, streams and scratchpads do: a pool's cache hits and misses, the
 * blocks given back to it, its upstream calls, evictions, idle releases,
 * trims and disposal; a stream's release checks and drains; a
 * scratchpad's new blocks and releases. While none is installed, each
 * place that could tell costs its caller one load and one predictable
 * branch, and nothing else is computed. The recorder (ds-recorder-1.0:
 * DsRecorder, the dsmemory GStreamer tracer, DS_RECORD) is such an
 * observer; this header is the whole of what libds knows of it.
 *
 * The hook is for C: it is not introspected. Its functions are called on
 * the thread of the event, sometimes while ds holds locks of its own
 * (a pool's or a stream's): they must be quick, must not block on other
 * threads that may call into ds, and must not call into ds themselves.
 *
 * DS_RECORD: when the environment variable DS_RECORD is set (to a file
 * name) and no observer is installed, libds loads the recorder library
 * (libds-recorder-1.0) when the first pool is made and calls its
 * ds_recorder_start_from_environment (), which installs its recorder. A
 * program that does not know about ds's recorder is recorded so; libds
 * itself starts no thread and registers nothing at exit.
 */

#pragma once

#if !defined (DS_INSIDE) && !defined (DS_COMPILATION)
# error "Only <ds.h> can be included directly."
#endif

#include <glib-object.h>

#include "ds-memory-kind.h"
#include "ds-types.h"
#include "ds-version-macros.h"

G_BEGIN_DECLS

/*
 * DsObserverEvent: what an observation is about.
 *
 *   DS_OBSERVER_EVENT_LOOK           a look at a pool that the observer
 *                                    asked for (ds_observer_look_at_pools ())
 *   DS_OBSERVER_EVENT_HIT            a pool served a request from its cache   (frequent)
 *   DS_OBSERVER_EVENT_MISS           a pool took a block upstream for a request
 *   DS_OBSERVER_EVENT_FREE           a block was given back to a pool         (frequent)
 *   DS_OBSERVER_EVENT_UPSTREAM_ALLOC a pool took a block from its upstream
 *   DS_OBSERVER_EVENT_UPSTREAM_FREE  a pool gave a block (too large to cache) back upstream
 *   DS_OBSERVER_EVENT_EVICT          a pool gave cached blocks back to stay within
 *                                    twice its peak demand, or to retry upstream
 *   DS_OBSERVER_EVENT_IDLE_RELEASE   a pool gave back blocks idle for its idle-timeout
 *   DS_OBSERVER_EVENT_TRIM           a pool was trimmed
 *   DS_OBSERVER_EVENT_DISPOSE        a pool went away, giving back everything
 *   DS_OBSERVER_EVENT_FENCE_CHECK    a stream's releases were checked          (frequent)
 *   DS_OBSERVER_EVENT_FENCE_DRAIN    a device was synchronized to settle the releases
 *                                    of streams nobody checked
 *   DS_OBSERVER_EVENT_BLOCK          a scratchpad took a new block             (frequent)
 *   DS_OBSERVER_EVENT_RELEASE        a scratchpad gave its blocks of one kind back (frequent)
 *   DS_OBSERVER_EVENT_EXPORT_HOLD    a scratchpad's release kept blocks of one kind that
 *                                    live exports (ds_block_export ()) use  (frequent)
 *   DS_OBSERVER_EVENT_EXPORT_RETURN  the last export of blocks a release kept died, and
 *                                    they went back (frequent; told only if the
 *                                    EXPORT_HOLD was)
 */
typedef enum
{
  DS_OBSERVER_EVENT_LOOK,
  DS_OBSERVER_EVENT_HIT,
  DS_OBSERVER_EVENT_MISS,
  DS_OBSERVER_EVENT_FREE,
  DS_OBSERVER_EVENT_UPSTREAM_ALLOC,
  DS_OBSERVER_EVENT_UPSTREAM_FREE,
  DS_OBSERVER_EVENT_EVICT,
  DS_OBSERVER_EVENT_IDLE_RELEASE,
  DS_OBSERVER_EVENT_TRIM,
  DS_OBSERVER_EVENT_DISPOSE,
  DS_OBSERVER_EVENT_FENCE_CHECK,
  DS_OBSERVER_EVENT_FENCE_DRAIN,
  DS_OBSERVER_EVENT_BLOCK,
  DS_OBSERVER_EVENT_RELEASE,
  DS_OBSERVER_EVENT_EXPORT_HOLD,
  DS_OBSERVER_EVENT_EXPORT_RETURN,
} DsObserverEvent;

/*
 * DsObservation: one event, as the observer's functions see it (valid for
 * the call only).
 *
 *   event     what happened
 *   object    the DsPoolResource (pool events) or DsScratchpad (BLOCK,
 *             RELEASE, EXPORT_HOLD, EXPORT_RETURN) it happened to; NULL
 *             for a stream's events
 *   stream    fence events: the stream's identity (cudaStreamGetId ())
 *   kind      the memory kind of the pool, or of the scratchpad's blocks
 *   device    the CUDA device, or -1 (host memory, or not bound yet)
 *   bytes     what the event moved: the block handed out, given back,
 *             taken or returned upstream; for a scratchpad, the block
 *             taken, the bytes of @kind given back, or kept for exports
 *             and given back when they died
 * and, for observe () (want () must not rely on them: they may not be
 * read yet):
 *   held      after the event: the bytes the pool holds from upstream; for
 *             a scratchpad, the bytes of @kind it holds; for EXPORT_HOLD
 *             and EXPORT_RETURN, what live exports keep of @kind
 *   in_use    the bytes the pool has handed out; for a scratchpad, what
 *             its allocations of @kind took since its last release
 *   pending   the bytes given back to the pool in a stream's order that
 *             it does not know to be reusable by others yet
 *   peak      the pool's peak demand (in use plus pending)
 *   upstream  for a scratchpad, the resource its blocks of @kind come from
 *   label     a pool's label: "default" for a default pool, or NULL
 *
 * A pool's figures are read each on its own without a lock: a sequence of
 * observations is a picture over time, not a consistent snapshot.
 */
typedef struct _DsObservation DsObservation;

struct _DsObservation
{
  DsObserverEvent   event;
  DsMemoryKind      kind;
  gint              device;
  gpointer          object;
  guint64           stream;
  guint64           bytes;
  guint64           held;
  guint64           in_use;
  guint64           pending;
  guint64           peak;
  gpointer          upstream;
  const char       *label;
};

/*
 * DsObserver: the observer's functions.
 *
 *   want     (may be NULL) asked first for each frequent event (see
 *            DsObserverEvent), before ds reads the figures: FALSE drops
 *            the event. An observer that keeps one sample of many (a
 *            recorder) counts here, so that the events it drops cost it
 *            no more than the count. Without it every event is observed.
 *   observe  the event, figures included; for a frequent event, called at
 *            once after want () returned TRUE, on the same thread
 *
 * Both get the user_data given to ds_observer_install ().
 */
typedef struct _DsObserver DsObserver;

struct _DsObserver
{
  gboolean (*want)    (const DsObservation *observation,
                       gpointer             user_data);
  void     (*observe) (const DsObservation *observation,
                       gpointer             user_data);

  /*< private >*/
  gpointer _ds_reserved[4];
};

/* Installs @observer (which must stay valid until it is removed) with
 * @user_data for the whole process. FALSE if another observer is
 * installed. */
DS_AVAILABLE_IN_0_2
gboolean ds_observer_install       (const DsObserver *observer,
                                    gpointer          user_data);

/* Removes @observer, installed with ds_observer_install (). Once this
 * returns, none of its functions runs or will be called again. Must not
 * be called from them. */
DS_AVAILABLE_IN_0_2
void     ds_observer_remove        (const DsObserver *observer);

/* Calls the installed observer's observe () with a DS_OBSERVER_EVENT_LOOK
 * for every pool alive, on the calling thread, oldest pool first (so that
 * a pool nobody uses shows too). Pools do not go away during the call. */
DS_AVAILABLE_IN_0_2
void     ds_observer_look_at_pools (void);

G_END_DECLS
