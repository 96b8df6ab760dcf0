/* ds-pool-eviction-private.h: choosing what a pool gives back upstream
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A pool gives cached blocks back upstream to stay within its memory
 * bound, at a trim, at an idle release and when it goes (ds-pool-resource.c).
 * A DsPoolEviction says what may go and collects it from each shard under
 * the shard's lock: the largest classes first, the oldest blocks of each
 * first, the ready ones before the fenced ones, in passes of growing
 * reach (DsPoolEvictMode) until enough bytes are taken. The pool then
 * waits for the fences of what it took and gives it back.
 */

#pragma once

#include "ds-pool-shard-private.h"

G_BEGIN_DECLS

typedef enum
{
  DS_POOL_EVICT_READY,      /* only blocks known to be reusable */
  DS_POOL_EVICT_POLL,       /* also blocks whose fence has completed by now */
  DS_POOL_EVICT_STALE,      /* also blocks whose fence has no event: the caller
                             * waits for their devices (their streams may be
                             * gone, so only a device-wide wait can tell) */
  DS_POOL_EVICT_ALL,        /* everything; the caller waits for the fences */
} DsPoolEvictMode;

/* A block taken out to be given back upstream, under its fence. */
typedef struct
{
  DsPoolBlock   *block;
  DsStreamState *ss;
  guint64        seq;
} DsPoolVictim;

typedef struct
{
  guint64          need;       /* bytes wanted */
  guint64          taken;      /* bytes taken so far */
  DsPoolEvictMode  mode;       /* the pass under way */
  guint            max_stamp;  /* only blocks cached in this epoch or before */
  DsFenceCounters *counters;   /* the CUDA calls its polls make */
  GArray          *victims;    /* of DsPoolVictim */
} DsPoolEviction;

/* Takes what @eviction's pass allows of @shard out of it, into
 * @eviction, until it has what it needs. Called with the lock held. */
void ds_pool_eviction_collect (DsPoolEviction *eviction,
                               DsPoolShard    *shard);

G_END_DECLS
