/* ds-host-wait-counter.h: the host's waits for the GPU, counted by CUPTI
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <gst/gst.h>

/* Whose a wait is. */
typedef enum
{
  DS_WAIT_DS,             /* ds: libds, libds-gst, a libgstds* plugin, a ds* element */
  DS_WAIT_GST_CUDA,       /* GStreamer's CUDA elements (libgstnvcodec, cuda* elements) */
  DS_WAIT_OTHER_ELEMENT,  /* any other GStreamer element */
  DS_WAIT_APP,            /* the program itself, outside all elements */
  DS_WAIT_UNKNOWN,        /* by stack: the stack could not be walked past the driver */
  DS_WAIT_N_OWNERS
} DsWaitOwner;

typedef enum
{
  DS_WAIT_SYNC,  /* cuStreamSynchronize, cuEventSynchronize, cuCtxSynchronize (all variants) */
  DS_WAIT_POLL,  /* cuStreamQuery, cuEventQuery (all variants) */
  DS_WAIT_N_KINDS
} DsWaitKind;

/* Counts so far. by_stack: the innermost library on the caller's stack
 * that is ds's or an element's (backtrace () and dladdr () from inside the
 * driver call). by_element: the element whose pad a buffer was pushed to
 * on the calling thread (GStreamer's tracer hooks pad-push-pre/post). */
typedef struct
{
  guint64 by_stack[DS_WAIT_N_KINDS][DS_WAIT_N_OWNERS];
  guint64 by_element[DS_WAIT_N_KINDS][DS_WAIT_N_OWNERS];
} DsHostWaits;

const char  *ds_wait_owner_name          (DsWaitOwner owner);

/* Starts counting (after gst_init ()); NULL when it counts, else why it
 * cannot (no libcupti, another CUDA tool injected, CUPTI's error). */
const char  *ds_host_wait_counter_start  (void);
void         ds_host_wait_counter_read   (DsHostWaits *waits);
/* @after minus @before, per frame over @n_frames, into @out. */
void         ds_host_waits_per_frame     (const DsHostWaits *before,
                                          const DsHostWaits *after,
                                          guint              n_frames,
                                          double             out[2][DS_WAIT_N_KINDS][DS_WAIT_N_OWNERS]);
/* The owner of @element's code by its factory's name and plugin. */
DsWaitOwner  ds_wait_owner_of_element    (GstElement *element);
/* The owner of the element whose code runs on this thread (by_element). */
DsWaitOwner  ds_host_wait_counter_scope  (void);
