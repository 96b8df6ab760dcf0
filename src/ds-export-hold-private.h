/* ds-export-hold-private.h: blocks a release keeps for live exports
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * An export ([method@Ds.Block.export]: a NumPy array, a DLPack capsule)
 * joins the hold of its scratchpad's current generation, made at the
 * first export. A release that meets live exports
 * ([method@Ds.Scratchpad.try_release]) takes that hold along: the
 * upstream blocks that hold an exported range move into it (with a
 * reference on their resource and the order they go back in), the rest
 * goes back at once, and the hold gives its blocks back, in that order,
 * when its last export dies, on whichever thread that is. One lock for
 * every hold: exports are made and dropped per view, not per allocation.
 */

#pragma once

#include "ds-arena-private.h"
#include "ds-block-private.h"

G_BEGIN_DECLS

/* An export's place in its hold (inside the export). */
typedef struct _DsExportLink DsExportLink;
struct _DsExportLink
{
  DsExportLink *prev;
  DsExportLink *next;
  DsExportHold *hold;
  guintptr      start;
  guintptr      end;
};

/* Joins @link, an export of [@ptr, @ptr + @size) made in @generation, to
 * @source's current hold. FALSE if @source was released since (or is
 * being released): the memory is not the block's any more. */
gboolean      ds_export_hold_join    (DsBlockSource       *source,
                                      DsExportLink        *link,
                                      guint64              generation,
                                      gpointer             ptr,
                                      gsize                size);
/* Joins @link to the hold of @of, a live export of the same memory, even
 * past a release: @of keeps that memory. */
void          ds_export_hold_join_export (DsBlockSource      *source,
                                          DsExportLink       *link,
                                          const DsExportLink *of);
/* The export of @link died; the last one of a released hold gives its
 * blocks back. */
void          ds_export_hold_leave   (DsBlockSource       *source,
                                      DsExportLink        *link);

/* For a release of @source (in its thread): the current hold, if an
 * export of it is alive (a reference for the caller), else NULL; either
 * way no export joins until ds_export_hold_reopen (). */
DsExportHold *ds_export_hold_detach  (DsBlockSource       *source);
void          ds_export_hold_reopen  (DsBlockSource       *source);

/* Moves @arena's blocks that hold a live export of @hold into @hold, to
 * go back to @arena's upstream in @order (NULL: host order; entering
 * @scope's device and context first if it is not NULL). @record_id: the
 * scratchpad's number while a recorder runs, else 0; the hold then
 * reports what it keeps and gives back (EXPORT_HOLD, EXPORT_RETURN). */
void          ds_export_hold_take    (DsExportHold        *hold,
                                      DsBlockSource       *source,
                                      DsMemoryKind         kind,
                                      DsArena             *arena,
                                      const DsAccessOrder *order,
                                      const DsAccessOrder *scope,
                                      guint64              record_id);
/* The bytes of @kind that releases left with live exports of @source. */
guint64       ds_export_hold_get_held (DsBlockSource      *source,
                                       DsMemoryKind        kind);

/* Drops the caller's reference (from ds_export_hold_detach ()). */
void          ds_export_hold_unref   (DsExportHold        *hold,
                                      DsBlockSource       *source);

/* At the end of @source (no export left): frees its current hold. */
void          ds_export_hold_clear   (DsBlockSource       *source);

G_END_DECLS
