/* ds-scratchpad-recycle.c: DsScratchpad, continued: instances recycled per
 * thread
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A new scratchpad per unit of work is mostly GObject's cost: creating an
 * instance (allocate, zero, init, freeze and thaw its notify queue) and,
 * at the last unref, finalizing and freeing it. So a scratchpad whose
 * last reference goes, with nothing attached to it, is not freed: its
 * dispose takes a reference of its own (GObject lets dispose resurrect an
 * object: g_object_unref () then just drops the caller's reference), puts
 * it back in the state ds_scratchpad_init () leaves, and keeps it in a
 * small stash of the thread; ds_scratchpad_new () and
 * ds_scratchpad_new_full () take from that stash before they create.
 *
 * Only instances nobody can tell apart from new ones are recycled:
 *  - from the last g_object_unref () (g_object_run_dispose () holds a
 *    reference of its own, so the count is above one then);
 *  - after GObject's own dispose ran (chained up before this): signal
 *    handlers, closures and weak references are gone;
 *  - with no other qdata than GObject's notify queue, which the unref
 *    that called dispose froze and thaws again: no toggle reference (a
 *    Python or JavaScript wrapper), no GWeakRef, no g_object_set_data ()
 *    of anyone, so nothing may refer to the instance any more;
 *  - with no memory kept for exports.
 * g_object_new (DS_TYPE_SCRATCHPAD, ...) always creates: bindings and
 * property lists get fresh instances. The stash holds at most
 * DS_RECYCLE_MAX instances per thread; they are finalized when the thread
 * exits (those of the main thread at process exit are not: like any
 * static, they stay reachable). DS_RECYCLE=0 in the environment turns
 * recycling off (read once, at the first dispose).
 */

#include "config.h"

#include "ds-scratchpad-private.h"

#define DS_RECYCLE_MAX 4

typedef struct
{
  DsScratchpad *items[DS_RECYCLE_MAX];
  guint         n;
} RecycleStash;

static void recycle_stash_free (gpointer data);

static GPrivate recycle_key = G_PRIVATE_INIT (recycle_stash_free);

/* The instances of an exiting thread are finalized, not stashed again:
 * each is marked first, so its dispose does not look for a stash (the
 * thread's is being destroyed). */
static void
recycle_stash_free (gpointer data)
{
  RecycleStash *stash = data;

  for (guint i = 0; i < stash->n; i++)
    {
      stash->items[i]->no_recycle = TRUE;
      g_object_unref (stash->items[i]);
    }
  g_free (stash);
}

/* GObject's notify queue's quark, or 0 (then nothing is recycled): read
 * once, with DS_RECYCLE. GObject names the queue so in every release that
 * has one; any other qdata entry, or a renamed queue, means: do not
 * recycle. */
static GQuark
notify_queue_quark (void)
{
  static gsize quark;

  if (g_once_init_enter (&quark))
    {
      const char *env = g_getenv ("DS_RECYCLE");
      GQuark q = g_quark_try_string ("GObject-notify-queue");

      /* Stored + 1, so that 0 (a quark never made, or recycling off)
       * still ends the once-init. */
      g_once_init_leave (&quark, (gsize) (env != NULL && g_str_equal (env, "0") ? 0 : q) + 1);
    }
  return (GQuark) (quark - 1);
}

DsScratchpad *
ds_scratchpad_take_recycled (void)
{
  RecycleStash *stash = g_private_get (&recycle_key);

  if (stash == NULL || stash->n == 0)
    return NULL;

  return stash->items[--stash->n];
}

typedef struct
{
  GQuark notify_queue;
  guint  n_other;
} QdataCount;

static void
count_qdata (GQuark   key,
             gpointer data,
             gpointer user_data)
{
  QdataCount *count = user_data;

  if (key != count->notify_queue)
    count->n_other++;
}

gboolean
ds_scratchpad_try_recycle (DsScratchpad *self)
{
  GObject *object = G_OBJECT (self);
  RecycleStash *stash;
  QdataCount count = { 0, 0 };

  if (self->no_recycle || g_atomic_int_get (&object->ref_count) != 1 ||
      g_atomic_int_get (&self->n_exports) != 0)
    return FALSE;
  for (guint kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
    if (self->arenas[kind].n_blocks != 0)
      return FALSE;

  count.notify_queue = notify_queue_quark ();
  if (count.notify_queue == 0)
    return FALSE;
  g_datalist_foreach (&object->qdata, count_qdata, &count);
  if (count.n_other != 0)
    return FALSE;

  stash = g_private_get (&recycle_key);
  if (stash == NULL)
    {
      stash = g_new0 (RecycleStash, 1);
      g_private_set (&recycle_key, stash);
    }
  if (stash->n == DS_RECYCLE_MAX)
    return FALSE;

  ds_scratchpad_reset (self);
  /* Resurrect: the g_object_unref () that called dispose drops the
   * caller's reference, and this one stays with the stash. */
  g_object_ref (object);
  stash->items[stash->n++] = self;
  return TRUE;
}
