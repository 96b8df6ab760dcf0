/* ds-pool-resource-private.h: what the registry and the scratchpad call
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "ds-pool-resource.h"

G_BEGIN_DECLS

/* The default resource of @kind for @device (>= 0; ignored for host), for
 * the CUDA context current on the calling thread: a DsPoolResource over the
 * raw resource of that kind. Host pools never call CUDA. For the other
 * kinds, fails with DS_ERROR_NO_DEVICE (or DS_ERROR_NOT_SUPPORTED without
 * CUDA support) when CUDA is not usable. Returns a new reference. */
DsMemoryResource *ds_pool_resource_new_default (DsMemoryKind          kind,
                                                gint                  device,
                                                GError              **error);

/* ds_memory_resource_allocate_async () without the interface dispatch and
 * the argument checks, for callers that know @self is a pool and have
 * checked @size and @alignment already (a power of two; size + alignment
 * does not overflow). @order NULL or host: host order. Size 0: NULL. */
gpointer          ds_pool_resource_alloc       (DsPoolResource       *self,
                                                gsize                 size,
                                                gsize                 alignment,
                                                const DsAccessOrder  *order,
                                                GError              **error);

/*
 * DsPoolRelease: gives many blocks back at once, with one CUDA event per
 * stream for all of them, across pools and kinds.
 *
 *   DsPoolRelease release;
 *
 *   ds_pool_release_init (&release);
 *   for each block, newest first, kinds host -> pinned -> device -> managed:
 *     if (!ds_pool_release_add (&release, resource, ptr, size, alignment,
 *                               dealloc_order))
 *       ... @resource is not a DsPoolResource: give the block back some
 *           other way (ds_memory_resource_deallocate_async ()) ...
 *   ds_pool_release_finish (&release);
 *
 * The first block given back in a given stream's order records one event
 * on that stream (or, under the "query-idle" release policy, finds the
 * stream idle and records nothing); every later block in the same stream's
 * order, for any pool, shares that event. Blocks given back in host order
 * (or with a NULL order) are reusable at once and never touch CUDA.
 *
 * The event is recorded when the first block of a stream is added, so no
 * work that uses the blocks may be queued on that stream between the first
 * add and the last one (a release does not queue work, so this holds).
 * The release itself is not thread-safe (it lives on one thread's stack);
 * the pools are.
 */
typedef struct
{
  /*< private >*/
  struct
  {
    gpointer stream;     /* StreamState *, one reference */
    guint64  seq;        /* the fence to wait for; 0: none */
  } entries[4];
  guint n_entries;
} DsPoolRelease;

void              ds_pool_release_init         (DsPoolRelease        *release);
/* Gives [ptr, ptr + size) back to @resource in @order if @resource is a
 * DsPoolResource and returns TRUE; returns FALSE, doing nothing, for any
 * other resource. @size and @alignment (0 means 16) must be the ones the
 * block was allocated with. @ptr NULL: TRUE, nothing to do. */
gboolean          ds_pool_release_add          (DsPoolRelease        *release,
                                                DsMemoryResource     *resource,
                                                gpointer              ptr,
                                                gsize                 size,
                                                gsize                 alignment,
                                                const DsAccessOrder  *order);
/* Drops what the release holds. Makes no CUDA call. */
void              ds_pool_release_finish       (DsPoolRelease        *release);

/*
 * Process-wide policies (read at every use; meant to be set once, at
 * start-up, e.g. by a benchmark comparing them). The environment variables
 * DS_POOL_RELEASE=record|query-idle|adaptive and DS_POOL_CROSS_STREAM=query|wait
 * set the initial values; the defaults are ADAPTIVE and QUERY.
 */
typedef enum
{
  /* Every release on a stream records one event (DALI's behaviour). */
  DS_POOL_RELEASE_RECORD,
  /* cudaStreamQuery () first: when the stream is idle, the blocks are
   * reusable at once and no event is recorded; otherwise record one. */
  DS_POOL_RELEASE_QUERY_IDLE,
  /* Like QUERY_IDLE while the stream is found idle; after a release that
   * found it busy, the next 7 releases on that stream record at once
   * without asking. */
  DS_POOL_RELEASE_ADAPTIVE,
} DsPoolReleasePolicy;

typedef enum
{
  /* A request in stream S takes a block released in stream T only once
   * T's event has completed (cudaEventQuery, no waiting). */
  DS_POOL_CROSS_STREAM_QUERY,
  /* A request in stream S may take a block released in stream T whose
   * event has not completed: S is made to wait for the event
   * (cudaStreamWaitEvent). Host-order requests always query. */
  DS_POOL_CROSS_STREAM_WAIT,
} DsPoolCrossStreamPolicy;

void              ds_pool_set_policies         (DsPoolReleasePolicy      release,
                                                DsPoolCrossStreamPolicy  cross_stream);
void              ds_pool_get_policies         (DsPoolReleasePolicy     *release,
                                                DsPoolCrossStreamPolicy *cross_stream);

/* The number of stream states the pools keep (one per stream that had
 * blocks released in its order and is still referenced); for tests. */
guint             ds_pool_get_n_stream_states  (void);

G_END_DECLS
