/* ds-pool-registry.c: the blocks a pool holds, and who has them
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "ds-pool-registry-private.h"

#define MIN_CAPACITY 64

typedef DsPoolRegistryTable Table;

DsPoolRegistry *
ds_pool_registry_new (void)
{
  DsPoolRegistry *self = g_aligned_alloc0 (1, sizeof (DsPoolRegistry), 64);

  g_mutex_init (&self->lock);
  self->records = g_ptr_array_new ();
  return self;
}

void
ds_pool_registry_free (DsPoolRegistry *self)
{
  Table *t = self->table;

  for (guint i = 0; i < self->records->len; i++)
    {
      DsPoolBlock *b = g_ptr_array_index (self->records, i);

      if (b->ss != NULL)
        ds_stream_state_unref (b->ss);
      g_aligned_free (b);
    }
  g_ptr_array_free (self->records, TRUE);

  while (t != NULL)
    {
      Table *older = t->retired;

      g_free (t);
      t = older;
    }
  g_mutex_clear (&self->lock);
  g_aligned_free (self);
}

/* Changes: under the lock, between begin_change () and end_change (). */

/* The sequence number goes odd before any store of the change becomes
 * visible: every store to a table slot during a change is an atomic store
 * of GLib's (sequentially consistent, so at least a release store ordered
 * after this one), and a lookup reads slots with GLib's atomic loads,
 * so one that reads a changed slot also sees the odd number when it looks
 * again (no fence: ThreadSanitizer does not support them). */
static inline void
begin_change (DsPoolRegistry *self)
{
  g_atomic_int_set (&self->seq, self->seq + 1);
}

static inline void
end_change (DsPoolRegistry *self)
{
  g_atomic_int_set (&self->seq, self->seq + 1);
}

static void
insert_slot (Table       *t,
             DsPoolBlock *b)
{
  guint i;

  for (i = ds_pool_registry_slot (t, b->ptr); t->slots[i] != NULL; i = (i + 1) & t->mask)
    ;
  g_atomic_pointer_set (&t->slots[i], b);
}

/* Keeps the table at most half full: a new one, twice as large, when it
 * would be fuller. The old one stays for lookups that are still in it. */
static void
reserve_locked (DsPoolRegistry *self)
{
  Table *old = self->table, *t;
  guint capacity;

  if (old != NULL && (self->n + 1) * 2 <= old->mask + 1)
    return;

  capacity = old != NULL ? (old->mask + 1) * 2 : MIN_CAPACITY;
  t = g_malloc0 (sizeof (Table) + capacity * sizeof (DsPoolBlock *));
  t->mask = capacity - 1;
  t->shift = 64 - (guint) g_bit_storage (t->mask);
  t->retired = old;
  for (guint k = 0; old != NULL && k <= old->mask; k++)
    if (old->slots[k] != NULL)
      insert_slot (t, old->slots[k]);
  g_atomic_pointer_set (&self->table, t);
}

/* The slot of @ptr in the current table, or -1. Under the lock. */
static gint64
find_locked (DsPoolRegistry *self,
             gconstpointer   ptr)
{
  Table *t = self->table;

  if (t == NULL)
    return -1;

  for (guint i = ds_pool_registry_slot (t, ptr);; i = (i + 1) & t->mask)
    {
      DsPoolBlock *b = t->slots[i];

      if (b == NULL)
        return -1;
      if (b->ptr == ptr)
        return i;
    }
}

DsPoolBlock *
ds_pool_registry_add (DsPoolRegistry      *self,
                      gpointer             ptr,
                      const DsPoolRequest *request)
{
  DsPoolBlock *b;
  gint64 old;

  g_mutex_lock (&self->lock);

  b = self->free_records;
  if (b != NULL)
    {
      self->free_records = b->next_free;
    }
  else
    {
      b = g_aligned_alloc0 (1, sizeof (DsPoolBlock), G_ALIGNOF (DsPoolBlock));
      g_ptr_array_add (self->records, b);
    }

  b->prev = b->next = NULL;
  b->ss = NULL;
  b->pending = 0;
  b->up_size = request->up_size;
  b->up_align = request->up_align;
  b->ac = request->ac;
  b->cls = request->cls;
  /* A lookup still looking at this record under its old address sees
   * either that address or this one, and the state tells them apart. */
  g_atomic_pointer_set (&b->ptr, ptr);
  g_atomic_pointer_set (&b->size, request->size);
  g_atomic_pointer_set (&b->alignment, request->alignment);
  __atomic_store_n (&b->state, (b->state | DS_POOL_BLOCK_OUT) + 2, __ATOMIC_RELEASE);
  g_atomic_int_set (&b->home, request->home);

  begin_change (self);
  old = find_locked (self, ptr);
  if (G_UNLIKELY (old >= 0))
    {
      DsPoolBlock *stale = self->table->slots[old];

      /* The upstream handed out a block the pool still holds: the
       * upstream is broken; the new record wins. */
      g_critical ("%p came from upstream while the pool still holds it: the "
                  "upstream resource handed it out twice", ptr);
      g_atomic_pointer_set (&self->table->slots[old], b);
      __atomic_store_n (&stale->state, ((stale->state >> 1) + 1) << 1, __ATOMIC_RELEASE);
    }
  else
    {
      reserve_locked (self);
      insert_slot (self->table, b);
      self->n++;
    }
  end_change (self);

  g_mutex_unlock (&self->lock);

  return b;
}

void
ds_pool_registry_remove (DsPoolRegistry *self,
                         DsPoolBlock    *b)
{
  gint64 found;

  g_mutex_lock (&self->lock);
  begin_change (self);

  found = find_locked (self, b->ptr);
  if (found >= 0 && self->table->slots[found] == b)
    {
      Table *t = self->table;
      guint i = (guint) found, j = i;

      /* Backward-shift deletion: pull later entries of the probe run into
       * the hole unless their home lies cyclically in (i, j]. */
      for (;;)
        {
          guint k;

          j = (j + 1) & t->mask;
          if (t->slots[j] == NULL)
            break;
          k = ds_pool_registry_slot (t, t->slots[j]->ptr);
          if (i <= j ? (i < k && k <= j) : (i < k || k <= j))
            continue;
          g_atomic_pointer_set (&t->slots[i], t->slots[j]);
          i = j;
        }
      g_atomic_pointer_set (&t->slots[i], NULL);
      self->n--;
    }

  /* A new count, so that a claim that read the old state fails. */
  __atomic_store_n (&b->state, ((b->state >> 1) + 1) << 1, __ATOMIC_RELEASE);
  end_change (self);

  b->next_free = self->free_records;
  self->free_records = b;
  g_mutex_unlock (&self->lock);
}

void
ds_pool_block_refuse_twice (gpointer owner,
                            gpointer ptr,
                            gsize    size,
                            gsize    alignment)
{
  g_critical ("%s %p: refusing to take back %p (size %" G_GSIZE_FORMAT ", alignment %"
              G_GSIZE_FORMAT "): it was given back already (freed twice)",
              G_OBJECT_TYPE_NAME (owner), owner, ptr, size, alignment);
}

DsPoolBlock *
ds_pool_registry_find (DsPoolRegistry *self,
                       gpointer        owner,
                       gpointer        ptr,
                       gsize           size,
                       gsize           alignment,
                       guint64        *state)
{
  DsPoolBlock *b;
  gsize out_size = 0, out_align = 0;

  for (guint tries = 1;
       !ds_pool_registry_try_lookup (self, ptr, &b, state, &out_size, &out_align);
       tries++)
    if (tries % 64 == 0)
      g_thread_yield ();

  if (b == NULL)
    g_critical ("%s %p: refusing to take back %p (size %" G_GSIZE_FORMAT ", alignment %"
                G_GSIZE_FORMAT "): it did not hand it out",
                G_OBJECT_TYPE_NAME (owner), owner, ptr, size, alignment);
  else if ((*state & DS_POOL_BLOCK_OUT) == 0)
    g_critical ("%s %p: refusing to take back %p (size %" G_GSIZE_FORMAT ", alignment %"
                G_GSIZE_FORMAT "): it was given back already (freed twice); it was "
                "last handed out with size %" G_GSIZE_FORMAT ", alignment %" G_GSIZE_FORMAT,
                G_OBJECT_TYPE_NAME (owner), owner, ptr, size, alignment, out_size, out_align);
  else if (size != out_size || alignment != out_align)
    g_critical ("%s %p: refusing to take back %p with size %" G_GSIZE_FORMAT ", alignment %"
                G_GSIZE_FORMAT ": it was handed out with size %" G_GSIZE_FORMAT
                ", alignment %" G_GSIZE_FORMAT,
                G_OBJECT_TYPE_NAME (owner), owner, ptr, size, alignment, out_size, out_align);
  else
    return b;   /* the fast path met a change */

  return NULL;
}

guint64
ds_pool_registry_count (DsPoolRegistry *self)
{
  guint64 n;

  g_mutex_lock (&self->lock);
  n = self->n;
  g_mutex_unlock (&self->lock);

  return n;
}
