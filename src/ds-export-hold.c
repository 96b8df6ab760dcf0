/* ds-export-hold.c: blocks a release keeps for live exports
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>

#include "ds-export-hold-private.h"
#include "ds-access-order-private.h"
#include "ds-memory-kind.h"
#include "ds-observer-private.h"

typedef struct
{
  DsUpstream     upstream;     /* a reference on its resource */
  DsAccessOrder  order;        /* what the blocks go back in */
  DsAccessOrder  scope;        /* entered first if not UNSET */
  DsArenaBlock  *blocks;       /* oldest first */
  guint          n_blocks;
  guint64        bytes;
} HeldKind;

struct _DsExportHold
{
  DsBlockSource *source;
  /* The scratchpad, if an observer saw the release keep blocks (else
   * NULL); alive while the hold has blocks: every live export holds a
   * reference on it. */
  gpointer       observed;
  /* Under hold_lock: the source's (while current) or a release's
   * reference, and one per live export. */
  guint          refs;
  DsExportLink  *exports;
  guint          n_exports;
  HeldKind       kinds[DS_N_MEMORY_KINDS];
};

/* Every hold's exports, the sources' holds and held bytes. */
static GMutex hold_lock;

gboolean
ds_export_hold_join (DsBlockSource *source,
                     DsExportLink  *link,
                     guint64        generation,
                     gpointer       ptr,
                     gsize          size)
{
  DsExportHold *hold;

  g_mutex_lock (&hold_lock);
  if (source->releasing || generation != source->generation)
    {
      g_mutex_unlock (&hold_lock);
      return FALSE;
    }
  hold = source->hold;
  if (hold == NULL)
    {
      hold = g_new0 (DsExportHold, 1);
      hold->source = source;
      hold->refs = 1;
      source->hold = hold;
    }
  link->hold = hold;
  link->start = (guintptr) ptr;
  link->end = (guintptr) ptr + size;
  link->prev = NULL;
  link->next = hold->exports;
  if (hold->exports != NULL)
    hold->exports->prev = link;
  hold->exports = link;
  hold->n_exports++;
  hold->refs++;
  g_atomic_int_inc (&source->n_exports);
  g_mutex_unlock (&hold_lock);
  return TRUE;
}

void
ds_export_hold_join_export (DsBlockSource      *source,
                            DsExportLink       *link,
                            const DsExportLink *of)
{
  DsExportHold *hold;

  g_mutex_lock (&hold_lock);
  hold = of->hold;
  link->hold = hold;
  link->start = of->start;
  link->end = of->end;
  link->prev = NULL;
  link->next = hold->exports;
  if (hold->exports != NULL)
    hold->exports->prev = link;
  hold->exports = link;
  hold->n_exports++;
  hold->refs++;
  if (hold == source->hold)
    g_atomic_int_inc (&source->n_exports);
  g_mutex_unlock (&hold_lock);
}

/* Tells the observer that @bytes of @kind went into @hold (EXPORT_HOLD)
 * or back from it (EXPORT_RETURN), @held_after being what live exports
 * of the scratchpad keep of @kind after that: frequent, as the
 * scratchpad's own events. */
static DS_OBSERVER_COLD void
observe_hold (const DsExportHold *hold,
              DsObserverEvent     event,
              DsMemoryKind        kind,
              guint64             bytes,
              guint64             held_after)
{
  const HeldKind *held = &hold->kinds[kind];
  const DsAccessOrder *order = held->scope.type != DS_ACCESS_ORDER_TYPE_UNSET ?
                               &held->scope : &held->order;
  DsObservation o = { 0, };

  o.event = event;
  o.object = hold->observed;
  o.kind = kind;
  o.device = kind != DS_MEMORY_KIND_HOST && ds_access_order_is_device (order) ?
             order->device : -1;
  o.bytes = bytes;
  o.held = held_after;
  o.upstream = held->upstream.resource;
  ds_observer_tell (&o, TRUE, NULL);
}

/* Gives @hold's blocks back (its last export is gone) and frees it. */
static void
give_back (DsExportHold *hold)
{
  for (guint kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
    {
      HeldKind *held = &hold->kinds[kind];
      gboolean scoped = held->scope.type != DS_ACCESS_ORDER_TYPE_UNSET;
      gboolean in_scope = FALSE;
      GError *error = NULL;
      DsFenceBatch batch;
      DsCudaScope scope;
      guint64 held_after;

      if (held->n_blocks == 0)
        continue;
      if (scoped)
        in_scope = ds_access_order_enter (&held->scope, &scope, &error);
      if (scoped && !in_scope)
        {
          g_warning ("%u %s block(s) that exports kept are held back rather than given "
                     "back while work may still use them: %s", held->n_blocks,
                     ds_memory_kind_get_nick (kind), error->message);
          g_clear_error (&error);
        }
      else
        {
          ds_fence_batch_init (&batch);
          for (guint i = held->n_blocks; i-- > 0;)
            ds_fence_batch_give_back (&batch, &held->upstream, held->blocks[i].ptr,
                                      held->blocks[i].size, DS_ARENA_BLOCK_ALIGNMENT,
                                      held->blocks[i].handle,
                                      held->order.type == DS_ACCESS_ORDER_TYPE_UNSET ?
                                      NULL : &held->order);
          if (ds_fence_batch_take_error (&batch, &error) != 0)
            {
              g_warning ("%s memory that exports kept could not be given back in order "
                         "and is held back rather than reused early: %s",
                         ds_memory_kind_get_nick (kind), error->message);
              g_clear_error (&error);
            }
          ds_fence_batch_finish (&batch);
          if (in_scope)
            ds_cuda_scope_leave (&scope);
        }

      g_mutex_lock (&hold_lock);
      hold->source->held[kind] -= held->bytes;
      held_after = hold->source->held[kind];
      g_mutex_unlock (&hold_lock);
      if (DS_OBSERVING () && hold->observed != NULL)
        observe_hold (hold, DS_OBSERVER_EVENT_EXPORT_RETURN, kind, held->bytes, held_after);
      g_object_unref (held->upstream.resource);
      g_free (held->blocks);
    }
  g_free (hold);
}

void
ds_export_hold_leave (DsBlockSource *source,
                      DsExportLink  *link)
{
  DsExportHold *hold = link->hold;
  gboolean last;

  g_mutex_lock (&hold_lock);
  if (link->prev != NULL)
    link->prev->next = link->next;
  else
    hold->exports = link->next;
  if (link->next != NULL)
    link->next->prev = link->prev;
  hold->n_exports--;
  if (hold == source->hold)
    g_atomic_int_add (&source->n_exports, -1);
  last = --hold->refs == 0;
  g_mutex_unlock (&hold_lock);

  if (last)
    give_back (hold);
}

DsExportHold *
ds_export_hold_detach (DsBlockSource *source)
{
  DsExportHold *hold;

  g_mutex_lock (&hold_lock);
  source->releasing = TRUE;
  hold = source->hold;
  if (hold != NULL && hold->n_exports != 0)
    {
      /* The source's reference becomes the caller's. */
      source->hold = NULL;
      g_atomic_int_set (&source->n_exports, 0);
    }
  else
    hold = NULL;
  g_mutex_unlock (&hold_lock);
  return hold;
}

void
ds_export_hold_reopen (DsBlockSource *source)
{
  g_mutex_lock (&hold_lock);
  source->releasing = FALSE;
  g_mutex_unlock (&hold_lock);
}

/* Whether a live export of @hold lies in @block. */
static gboolean
covers (const DsExportHold *hold,
        const DsArenaBlock *block)
{
  guintptr start = (guintptr) block->ptr, end = start + block->size;

  for (const DsExportLink *link = hold->exports; link != NULL; link = link->next)
    if (link->start < end && link->end > start)
      return TRUE;
  return FALSE;
}

void
ds_export_hold_take (DsExportHold        *hold,
                     DsBlockSource       *source,
                     DsMemoryKind         kind,
                     DsArena             *arena,
                     const DsAccessOrder *order,
                     const DsAccessOrder *scope,
                     gpointer             observed)
{
  HeldKind *held = &hold->kinds[kind];
  guint64 bytes = 0, held_after;

  g_mutex_lock (&hold_lock);
  for (guint i = arena->n_blocks; i-- > 0;)
    {
      DsArenaBlock block;

      if (!covers (hold, &arena->blocks[i]))
        continue;
      block = ds_arena_take_out (arena, i);
      held->blocks = g_renew (DsArenaBlock, held->blocks, held->n_blocks + 1);
      /* Oldest first, as the arena had them. */
      memmove (held->blocks + 1, held->blocks, held->n_blocks * sizeof *held->blocks);
      held->blocks[0] = block;
      held->n_blocks++;
      bytes += block.size;
    }
  source->held[kind] += bytes;
  held_after = source->held[kind];
  g_mutex_unlock (&hold_lock);

  if (bytes == 0)
    return;
  held->bytes = bytes;
  held->upstream = arena->upstream;
  g_object_ref (held->upstream.resource);
  if (order != NULL)
    held->order = *order;
  if (scope != NULL)
    held->scope = *scope;
  if (observed != NULL)
    {
      hold->observed = observed;
      observe_hold (hold, DS_OBSERVER_EVENT_EXPORT_HOLD, kind, bytes, held_after);
    }
}

void
ds_export_hold_unref (DsExportHold  *hold,
                      DsBlockSource *source)
{
  gboolean last;

  g_mutex_lock (&hold_lock);
  last = --hold->refs == 0;
  g_mutex_unlock (&hold_lock);

  if (last)
    give_back (hold);
}

/* The bytes of @kind that releases left with live exports of @source. */
guint64
ds_export_hold_get_held (DsBlockSource *source,
                         DsMemoryKind   kind)
{
  guint64 bytes;

  g_mutex_lock (&hold_lock);
  bytes = source->held[kind];
  g_mutex_unlock (&hold_lock);
  return bytes;
}

void
ds_export_hold_clear (DsBlockSource *source)
{
  DsExportHold *hold;

  /* Cleared as its owner goes, when no export can start any more: most
   * owners never had one, and need no lock to see it. */
  if (g_atomic_pointer_get (&source->hold) == NULL)
    return;

  g_mutex_lock (&hold_lock);
  hold = source->hold;
  source->hold = NULL;
  g_mutex_unlock (&hold_lock);
  if (hold != NULL)
    ds_export_hold_unref (hold, source);
}
