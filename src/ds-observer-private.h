/* ds-observer-private.h: how pools, fences and scratchpads tell the
 * observer
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A place that tells writes `if (DS_OBSERVING ()) tell_something (...)`:
 * one load and a branch that is not taken while no observer is installed
 * (ds-observer.h). The function it calls is cold and out of line, so the
 * code around the branch stays as compact as it was without it; it fills
 * a DsObservation and hands it to ds_observer_tell ().
 */

#pragma once

#include "ds-observer.h"

G_BEGIN_DECLS

/* Set while an observer is installed. */
extern gint ds_observing;

#define DS_OBSERVING() G_UNLIKELY (g_atomic_int_get (&ds_observing))

/* For the functions that tell: out of line and laid out apart from the
 * code they are called from. */
#if defined (__GNUC__)
# define DS_OBSERVER_COLD __attribute__ ((cold, noinline))
#else
# define DS_OBSERVER_COLD
#endif

/* Fills the figures of @observation (held, in_use, pending, peak,
 * upstream, label) from its object. */
typedef void (*DsObservationFill) (DsObservation *observation);

/* Gives @observation to the installed observer, if any. A @frequent event
 * goes to its want () first; @fill (may be NULL) runs only for an event
 * it observes. */
void ds_observer_tell                   (DsObservation     *observation,
                                         gboolean           frequent,
                                         DsObservationFill  fill);

/* A pool alive, for ds_observer_look_at_pools (): @look (@pool) tells a
 * DS_OBSERVER_EVENT_LOOK. ds_observer_forget_pool () returns once no look
 * at @pool is under way. */
void ds_observer_add_pool               (gpointer           pool,
                                         void             (*look) (gpointer pool));
void ds_observer_forget_pool            (gpointer           pool);

/* Loads the recorder that DS_RECORD asks for, once per process (later
 * calls do nothing); see ds-observer.h. */
void ds_observer_start_from_environment (void);

G_END_DECLS
