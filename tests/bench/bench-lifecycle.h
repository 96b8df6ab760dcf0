/* bench-lifecycle.h: what bench-lifecycle.c and its baselines share
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "ds-bench.h"
#include "ds-bench-cub.h"
#include "ds-bench-dali.h"

G_BEGIN_DECLS

typedef DsBenchTemp Temp;

#define N_PLANS 256
typedef struct
{
  guint n[3];               /* host, pinned, device */
  gsize sizes[3][100];
} Plan;

typedef struct
{
  cudaStream_t      stream;
  gint              device;
  DsAccessOrder     order;      /* made once, for the cases that reuse it */
  DsScratchpad     *reused;
  DsScratchpad     *kept;       /* reused, with keep-blocks */
  DsScratchpad     *kept_all;   /* keep-blocks, pinned given back in host
                                 * order: keeps all three small kinds */
  DsScratchpad     *own;        /* reused, over pools of its own (ds-gst's
                                 * set-up) for the GPU kinds */
  DsMemoryResource *own_pools[DS_N_MEMORY_KINDS];
  guint8           *floor_blocks[3];  /* the small temporaries' bump floor */
  DsMemoryResource *pools[DS_N_MEMORY_KINDS];
  void             *cub;
  const DsBenchDali *dali;     /* NULL without DALI (ds-bench-dali.h) */
  Plan             *plans;
  guint             next_plan;
  const Temp       *temps;
  guint             n_temps;
  gsize             device_size;  /* device-only / pinned-only size */
  gpointer          buffer;       /* for the memset floor */
} Ctx;

/* The kinds of the many small temporaries, in a plan's order. */
static const DsMemoryKind small_kinds[3] = {
  DS_MEMORY_KIND_HOST, DS_MEMORY_KIND_PINNED, DS_MEMORY_KIND_DEVICE,
};

/* The baselines (bench-lifecycle-baselines.c): DsBenchFunc bodies on a Ctx. */
void temps_pool       (gpointer data, guint n);
void temps_async      (gpointer data, guint n);
void temps_cub        (gpointer data, guint n);
void temps_raw        (gpointer data, guint n);
void dev_pool         (gpointer data, guint n);
void dev_async        (gpointer data, guint n);
void dev_cub          (gpointer data, guint n);
void dev_malloc       (gpointer data, guint n);
void dev_memset_only  (gpointer data, guint n);
void pinned_raw       (gpointer data, guint n);
void small_pool       (gpointer data, guint n);
void small_async      (gpointer data, guint n);
void small_cub        (gpointer data, guint n);
void small_raw        (gpointer data, guint n);

G_END_DECLS
