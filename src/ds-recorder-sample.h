/* ds-recorder-sample.h: one sample of a memory recording
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined (DS_INSIDE) && !defined (DS_COMPILATION)
# error "Only <ds.h> can be included directly."
#endif

#include <glib-object.h>

#include "ds-memory-kind.h"
#include "ds-types.h"

G_BEGIN_DECLS

/**
 * DsRecorderEvent:
 * @DS_RECORDER_EVENT_SAMPLE: a look at a pool taken by the recorder
 *   itself, every 100 ms, whether or not the pool is used
 * @DS_RECORDER_EVENT_HIT: a pool served requests from its cache
 * @DS_RECORDER_EVENT_MISS: a pool could not serve a request from its
 *   cache (it takes a block from upstream for it)
 * @DS_RECORDER_EVENT_FREE: blocks were given back to a pool, which
 *   caches them
 * @DS_RECORDER_EVENT_UPSTREAM_ALLOC: a pool took a block from its upstream
 *   resource
 * @DS_RECORDER_EVENT_UPSTREAM_FREE: a pool gave one block back to its
 *   upstream resource (one too large to cache)
 * @DS_RECORDER_EVENT_EVICT: a pool gave cached blocks back upstream to
 *   stay within twice its peak demand, or to retry a request upstream
 *   refused
 * @DS_RECORDER_EVENT_IDLE_RELEASE: a pool gave back upstream cached blocks
 *   idle for longer than its [property@Ds.PoolResource:idle-timeout]
 * @DS_RECORDER_EVENT_TRIM: a pool was trimmed
 *   ([method@Ds.PoolResource.trim] or
 *   [func@Ds.MemoryResource.trim_defaults])
 * @DS_RECORDER_EVENT_DISPOSE: a pool went away, giving back everything
 * @DS_RECORDER_EVENT_FENCE_CHECK: the releases of a stream were checked for
 *   completion (a stream or event query, or an event recorded)
 * @DS_RECORDER_EVENT_FENCE_DRAIN: a device was synchronized to settle the
 *   releases of streams nobody checked (most often streams destroyed since)
 * @DS_RECORDER_EVENT_BLOCK: a scratchpad took a new block from its upstream
 * @DS_RECORDER_EVENT_RELEASE: a scratchpad gave its blocks of one kind back
 * @DS_RECORDER_EVENT_MARK: a mark made with [method@Ds.Recorder.mark]
 * @DS_RECORDER_EVENT_LOST: samples the recorder lost: overwritten before
 *   they were written to its file (in recordings only)
 * @DS_RECORDER_EVENT_EXPORT_HOLD: a scratchpad's release
 *   ([method@Ds.Scratchpad.try_release]) kept blocks of one kind that live
 *   exports (NumPy arrays, DLPack tensors: [method@Ds.Block.export]) still
 *   use; @held is then what live exports keep of that kind
 *   ([method@Ds.Scratchpad.get_held_by_exports]).
 * @DS_RECORDER_EVENT_EXPORT_RETURN: the last export of blocks a release
 *   kept died, and they went back; @held as for
 *   %DS_RECORDER_EVENT_EXPORT_HOLD. Not reported for blocks kept before
 *   the recorder started.
 *
 * What a [struct@Ds.RecorderSample] records. The nicks (`hit`,
 * `upstream-alloc`, …) are the names used in recordings.
 */
typedef enum
{
  DS_RECORDER_EVENT_SAMPLE,
  DS_RECORDER_EVENT_HIT,
  DS_RECORDER_EVENT_MISS,
  DS_RECORDER_EVENT_FREE,
  DS_RECORDER_EVENT_UPSTREAM_ALLOC,
  DS_RECORDER_EVENT_UPSTREAM_FREE,
  DS_RECORDER_EVENT_EVICT,
  DS_RECORDER_EVENT_IDLE_RELEASE,
  DS_RECORDER_EVENT_TRIM,
  DS_RECORDER_EVENT_DISPOSE,
  DS_RECORDER_EVENT_FENCE_CHECK,
  DS_RECORDER_EVENT_FENCE_DRAIN,
  DS_RECORDER_EVENT_BLOCK,
  DS_RECORDER_EVENT_RELEASE,
  DS_RECORDER_EVENT_MARK,
  DS_RECORDER_EVENT_LOST,
  DS_RECORDER_EVENT_EXPORT_HOLD,
  DS_RECORDER_EVENT_EXPORT_RETURN,
} DsRecorderEvent;

/**
 * DsRecorderSource:
 * @DS_RECORDER_SOURCE_POOL: a [class@Ds.PoolResource]
 * @DS_RECORDER_SOURCE_SCRATCHPAD: a [class@Ds.Scratchpad]
 * @DS_RECORDER_SOURCE_STREAM: a CUDA stream that blocks were given back on
 * @DS_RECORDER_SOURCE_RECORDER: the recorder itself (marks, lost samples)
 *
 * What a [struct@Ds.RecorderSample] is about.
 */
typedef enum
{
  DS_RECORDER_SOURCE_POOL,
  DS_RECORDER_SOURCE_SCRATCHPAD,
  DS_RECORDER_SOURCE_STREAM,
  DS_RECORDER_SOURCE_RECORDER,
} DsRecorderSource;

#define DS_TYPE_RECORDER_SAMPLE (ds_recorder_sample_get_type ())

typedef struct _DsRecorderSample DsRecorderSample;

/**
 * DsRecorderSample:
 * @time: nanoseconds since the recorder started (monotonic clock)
 * @event: what happened
 * @source: what it happened to
 * @id: which one: a pool's number (from 1, in the order pools are
 *   made), a scratchpad's (from 1, in the order scratchpads are first
 *   recorded), a stream's identity (`cudaStreamGetId ()`), 0 for the
 *   recorder
 * @kind: the memory kind of the pool or of the scratchpad's blocks
 * @device: the CUDA device, or -1 (host memory, or not known yet)
 * @count: how many events of the same kind on the same source the sample
 *   stands for (frequent events are coalesced: see
 *   [property@Ds.Recorder:interval])
 * @bytes: the bytes those events moved (blocks handed out, given back,
 *   taken from or returned upstream)
 * @held: after the event: the bytes the pool holds from upstream, in use
 *   or cached; for a scratchpad, the bytes of @kind it holds
 * @in_use: after the event: the bytes the pool has handed out; for a
 *   scratchpad, the bytes of @kind its allocations took since its last
 *   release
 * @pending: the bytes given back to the pool in a stream's order that are
 *   not known to be reusable by others yet
 * @peak: the pool's peak demand (in use plus pending), which bounds what
 *   it holds to twice as much
 * @pool: for a scratchpad, the number of the pool its blocks of @kind
 *   come from (0: not a pool); for a pool, its own number
 * @label: (nullable): a mark's label; "default" for a pool that is a
 *   default resource; or `NULL`
 *
 * One sample of a memory recording ([class@Ds.Recorder]): what happened
 * and what the pool (or scratchpad) held right after. Stream samples carry
 * @device and @count only.
 */
struct _DsRecorderSample
{
  guint64           time;
  DsRecorderEvent   event;
  DsRecorderSource  source;
  guint64           id;
  DsMemoryKind      kind;
  gint              device;
  guint             count;
  guint64           bytes;
  guint64           held;
  guint64           in_use;
  guint64           pending;
  guint64           peak;
  guint64           pool;
  const char       *label;

  /*< private >*/
  guint64           _ds_reserved[4];
};

DS_AVAILABLE_IN_0_2
GType             ds_recorder_sample_get_type (void) G_GNUC_CONST;
DS_AVAILABLE_IN_0_2
DsRecorderSample *ds_recorder_sample_copy     (const DsRecorderSample *self) G_GNUC_WARN_UNUSED_RESULT;
DS_AVAILABLE_IN_0_2
void              ds_recorder_sample_free     (DsRecorderSample       *self);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (DsRecorderSample, ds_recorder_sample_free)

G_END_DECLS
