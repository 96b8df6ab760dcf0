/* ds-block-private.h: what a block reads of the scratchpad it came from
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A DsBlock holds a reference on its scratchpad and reads, through a
 * DsBlockSource that the scratchpad keeps, whether its memory is still
 * the scratchpad's (the release count it was made in) and which order
 * its copies run in; its exports are counted there, and the scratchpad
 * does not give memory back while any is alive. The block calls no
 * function of the scratchpad's.
 */

#pragma once

#include "ds-block.h"

G_BEGIN_DECLS

typedef struct _DsExportHold DsExportHold;

typedef struct
{
  guint64              generation;  /* bumped by every release */
  /* Exports alive of the current generation (atomic: they die on any
   * thread). */
  gint                 n_exports;
  const DsAccessOrder *order;       /* copies, fills and waits run in it */
  /* The exports of the current generation (ds-export-hold-private.h),
   * made at the first; NULL during a release. */
  DsExportHold        *hold;
  gboolean             releasing;
  /* Bytes of each kind that releases left with live exports (atomic). */
  guint64              held[DS_N_MEMORY_KINDS];
} DsBlockSource;

/* A block of @size bytes of @kind memory at @ptr, handed out by
 * @scratchpad (a reference is taken) in the current generation of
 * @source. */
DsBlock *ds_block_new (DsScratchpad  *scratchpad,
                       DsBlockSource *source,
                       gpointer       ptr,
                       gsize          size,
                       DsMemoryKind   kind);

G_END_DECLS
