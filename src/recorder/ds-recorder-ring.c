/* ds-recorder-ring.c: the recorder's bounded buffer of samples
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "ds-recorder-ring-private.h"

/* One sample as the ring keeps it: 96 bytes. */
typedef struct
{
  guint64     seq;       /* the index of the sample in it, plus 1; 0: none yet */
  gint        lock;      /* 1 while a push or a read is at it */
  guint       count;
  guint64     time;
  guint64     id;
  guint64     bytes;
  guint64     held;
  guint64     in_use;
  guint64     pending;
  guint64     peak;
  guint64     pool;
  const char *label;
  guint8      event;
  guint8      source;
  guint8      kind;
  gint16      device;
} Slot;

struct _DsRecorderRing
{
  guint64  head;         /* atomic: the next index to claim */
  guint    capacity;
  Slot    *slots;
};

DsRecorderRing *
ds_recorder_ring_new (guint capacity)
{
  DsRecorderRing *ring = g_new0 (DsRecorderRing, 1);

  ring->capacity = MAX (capacity, 1);
  ring->slots = g_new0 (Slot, ring->capacity);

  return ring;
}

void
ds_recorder_ring_free (DsRecorderRing *ring)
{
  if (ring == NULL)
    return;

  g_free (ring->slots);
  g_free (ring);
}

guint
ds_recorder_ring_capacity (DsRecorderRing *ring)
{
  return ring->capacity;
}

guint64
ds_recorder_ring_head (DsRecorderRing *ring)
{
  return __atomic_load_n (&ring->head, __ATOMIC_ACQUIRE);
}

static inline void
slot_lock (Slot *slot)
{
  gint unlocked = 0;

  while (!__atomic_compare_exchange_n (&slot->lock, &unlocked, 1, TRUE,
                                       __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
    {
      unlocked = 0;
      /* The holder copies 96 bytes: let it finish. */
      g_thread_yield ();
    }
}

static inline void
slot_unlock (Slot *slot)
{
  __atomic_store_n (&slot->lock, 0, __ATOMIC_RELEASE);
}

guint64
ds_recorder_ring_push (DsRecorderRing         *ring,
                       const DsRecorderSample *sample)
{
  guint64 index = __atomic_fetch_add (&ring->head, 1, __ATOMIC_ACQ_REL);
  Slot *slot = &ring->slots[index % ring->capacity];

  slot_lock (slot);
  /* A push a whole lap later got here first: this sample is as good as
   * overwritten already. */
  if (slot->seq <= index)
    {
      slot->time = sample->time;
      slot->id = sample->id;
      slot->count = sample->count;
      slot->bytes = sample->bytes;
      slot->held = sample->held;
      slot->in_use = sample->in_use;
      slot->pending = sample->pending;
      slot->peak = sample->peak;
      slot->pool = sample->pool;
      slot->label = sample->label;
      slot->event = (guint8) sample->event;
      slot->source = (guint8) sample->source;
      slot->kind = (guint8) sample->kind;
      slot->device = (gint16) CLAMP (sample->device, G_MININT16, G_MAXINT16);
      slot->seq = index + 1;
    }
  slot_unlock (slot);

  return index;
}

guint
ds_recorder_ring_read (DsRecorderRing     *ring,
                       guint64            *cursor,
                       guint64            *lost,
                       DsRecorderRingFunc  func,
                       gpointer            user_data)
{
  guint64 head = ds_recorder_ring_head (ring);
  guint n = 0;

  if (head - *cursor > ring->capacity)
    {
      *lost += head - ring->capacity - *cursor;
      *cursor = head - ring->capacity;
    }

  while (*cursor < head)
    {
      Slot *slot = &ring->slots[*cursor % ring->capacity];
      DsRecorderSample sample = { 0, };
      guint64 seq;

      slot_lock (slot);
      seq = slot->seq;
      if (seq == *cursor + 1)
        {
          sample.time = slot->time;
          sample.event = (DsRecorderEvent) slot->event;
          sample.source = (DsRecorderSource) slot->source;
          sample.id = slot->id;
          sample.kind = (DsMemoryKind) slot->kind;
          sample.device = slot->device;
          sample.count = slot->count;
          sample.bytes = slot->bytes;
          sample.held = slot->held;
          sample.in_use = slot->in_use;
          sample.pending = slot->pending;
          sample.peak = slot->peak;
          sample.pool = slot->pool;
          sample.label = slot->label;
        }
      slot_unlock (slot);

      if (seq <= *cursor)
        break;   /* claimed, not written yet: next time */

      (*cursor)++;
      if (seq > *cursor)
        {
          (*lost)++;   /* overwritten meanwhile */
          continue;
        }
      func (&sample, user_data);
      n++;
    }

  return n;
}
