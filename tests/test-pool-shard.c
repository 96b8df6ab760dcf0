/* test-pool-shard.c: a pool shard's bins, their ready and fenced lists
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The shard on its own, with stream states made here (no CUDA: their
 * completion is set by hand), so that what a request takes, what it moves
 * and what it leaves is checked block by block. The pools built on it are
 * in test-pool-resource*.c.
 */

#include "config.h"

#include "ds-clock-private.h"
#include "ds-pool-eviction-private.h"

#define CLASS_BYTES 4096

typedef struct
{
  DsPoolShard   *shard;
  DsPoolBin     *bin;
  guint          ac, cls;
  DsStreamState  ss[2];        /* streams A and B */
  DsAccessOrder  order[2];
  DsPoolBlock   *blocks[8];
  guint          n_blocks;
} Fixture;

static void
fixture_set_up (Fixture       *f,
                gconstpointer  user_data)
{
  gsize class_bytes = 0;

  f->shard = ds_pool_shard_new ();
  f->ac = ds_pool_align_class (256);
  f->cls = ds_pool_size_class (CLASS_BYTES, &class_bytes);
  g_assert_cmpuint (class_bytes, ==, CLASS_BYTES);
  f->bin = ds_pool_shard_bin (f->shard, f->ac, f->cls);

  for (guint i = 0; i < 2; i++)
    {
      /* Made up, not described (no CUDA call reaches a driver with
       * them): two streams told apart by their ids. */
      f->order[i].type = DS_ACCESS_ORDER_TYPE_DEVICE;
      f->order[i].stream = GSIZE_TO_POINTER (0x1000 + 0x100 * i);
      f->order[i].device = 0;
      f->order[i].stream_id = 0x51 + i;
      /* Never freed: the shard's references come and go around it. */
      f->ss[i].ref_count = 1000;
      f->ss[i].stream_id = f->order[i].stream_id;
      f->ss[i].stream = f->order[i].stream;
      g_mutex_init (&f->ss[i].lock);
    }
  g_assert_true (ds_stream_state_matches (&f->ss[0], &f->order[0]));
  g_assert_false (ds_stream_state_matches (&f->ss[0], &f->order[1]));
}

static void
fixture_tear_down (Fixture       *f,
                   gconstpointer  user_data)
{
  /* The blocks still cached hold their fences' references, which the
   * pool's registry drops when it frees them. */
  for (DsPoolBlock *b = f->bin->fenced_head; b != NULL; b = b->next)
    ds_stream_state_unref (b->ss);
  for (DsPoolBlock *b = f->bin->head; b != NULL; b = b->next)
    if (b->ss != NULL)
      ds_stream_state_unref (b->ss);
  ds_pool_shard_free (f->shard);
  for (guint i = 0; i < f->n_blocks; i++)
    g_aligned_free (f->blocks[i]);
  for (guint i = 0; i < 2; i++)
    {
      g_assert_cmpint (f->ss[i].ref_count, ==, 1000);
      g_mutex_clear (&f->ss[i].lock);
    }
}

/* Gives a new block back to the shard: ready (@ss NULL) or under the
 * fence (@ss, @seq). */
static DsPoolBlock *
put (Fixture       *f,
     DsStreamState *ss,
     guint64        seq)
{
  DsPoolBlock *b = g_aligned_alloc0 (1, sizeof (DsPoolBlock), G_ALIGNOF (DsPoolBlock));

  g_assert_cmpuint (f->n_blocks, <, G_N_ELEMENTS (f->blocks));
  f->blocks[f->n_blocks++] = b;
  b->ptr = b;
  b->up_size = CLASS_BYTES;
  b->ac = f->ac;
  b->cls = f->cls;
  ds_pool_shard_put_locked (f->shard, b, ss, seq, 0, 0);

  return b;
}

/* Gives @b back again (as the pool does with a block it took back). */
static void
put_again (Fixture       *f,
           DsPoolBlock   *b,
           DsStreamState *ss,
           guint64        seq)
{
  ds_pool_shard_put_locked (f->shard, b, ss, seq, 0, 0);
}

/* A request of the fixture's class in @order (NULL: host order). */
static const DsPoolRequest *
request_of (Fixture             *f,
            const DsAccessOrder *order)
{
  static DsPoolRequest request;

  request.ac = f->ac;
  request.cls = f->cls;
  request.order = order;
  return &request;
}

/* Collects what an eviction in @mode takes of the shard into @victims;
 * the bytes taken. */
static guint64
evict (Fixture         *f,
       DsPoolEvictMode  mode,
       DsFenceCounters *counters,
       GArray          *victims)
{
  DsPoolEviction e = { G_MAXUINT64, 0, mode, G_MAXUINT, counters, victims };

  ds_pool_eviction_collect (&e, f->shard);
  return e.taken;
}

/* The streams whose demand a request noted (ds_stream_state_note_demand ()). */
#define A (1u << 0)
#define B (1u << 1)

/* What a request in @order (NULL: host order) takes; drops the stream
 * reference it comes with. *@demand: the streams (A, B) it noted demand
 * for, their demand cleared first. */
static DsPoolBlock *
take (Fixture             *f,
      const DsAccessOrder *order,
      guint               *demand)
{
  DsStreamState *ss = NULL;
  DsPoolBlock *b;

  for (guint i = 0; i < 2; i++)
    f->ss[i].demand = f->ss[i].demand_seen = FALSE;

  b = ds_pool_shard_take_locked (f->shard, request_of (f, order), &ss);
  if (b == NULL)
    g_assert_null (ss);
  else
    g_assert_null (b->ss);
  if (ss != NULL)
    ds_stream_state_unref (ss);

  *demand = 0;
  for (guint i = 0; i < 2; i++)
    {
      /* Both set, or neither. */
      g_assert_cmpint (f->ss[i].demand, ==, f->ss[i].demand_seen);
      if (f->ss[i].demand)
        *demand |= 1u << i;
    }

  return b;
}

static void
test_ready_newest_first (Fixture       *f,
                         gconstpointer  user_data)
{
  DsPoolBlock *r1, *r2, *p;
  guint demand;

  g_test_summary ("A host-order request takes the newest ready block, never one "
                  "given back under a fence not known complete, and asks "
                  "nobody to check streams while ready blocks last");

  r1 = put (f, NULL, 0);
  p = put (f, &f->ss[0], 1);
  r2 = put (f, NULL, 0);
  g_assert_cmpuint (ds_pool_shard_peek_n_cached (f->shard), ==, 3);

  g_assert_true (take (f, NULL, &demand) == r2);
  g_assert_cmphex (demand, ==, 0);
  g_assert_true (take (f, NULL, &demand) == r1);
  g_assert_cmphex (demand, ==, 0);

  /* Only the pending block is left: nothing to take, and its stream is
   * told that a request wanted its blocks (only that one). */
  g_assert_null (take (f, NULL, &demand));
  g_assert_cmphex (demand, ==, A);
  g_assert_true (p->fenced);
  g_assert_true (f->bin->fenced_head == p);
  g_assert_cmpuint (ds_pool_shard_peek_n_cached (f->shard), ==, 1);
}

static void
test_moves_completed (Fixture       *f,
                      gconstpointer  user_data)
{
  DsPoolBlock *p1, *p2, *p3, *p4;
  guint demand;

  g_test_summary ("Once a stream is known complete up to a release, the first "
                  "request that finds no ready block moves every block given "
                  "back up to it to the ready list, newest first, and takes "
                  "the newest; the later ones take them without looking at "
                  "the blocks still pending");

  p1 = put (f, &f->ss[0], 1);
  p2 = put (f, &f->ss[0], 2);
  p3 = put (f, &f->ss[0], 3);
  p4 = put (f, &f->ss[0], 4);
  f->ss[0].completed = 3;

  g_assert_true (take (f, NULL, &demand) == p3);
  g_assert_cmphex (demand, ==, A);
  /* Moved: p2 then p1, in the ready list; p4 stays fenced. */
  g_assert_true (f->bin->head == p2 && f->bin->tail == p1);
  g_assert_false (p2->fenced);
  g_assert_true (f->bin->fenced_head == p4 && f->bin->fenced_tail == p4);

  g_assert_true (take (f, NULL, &demand) == p2);
  g_assert_cmphex (demand, ==, A);
  g_assert_true (take (f, NULL, &demand) == p1);
  g_assert_null (take (f, NULL, &demand));
  g_assert_cmphex (demand, ==, A);

  /* p4 completes: taken, and the lists are empty. */
  f->ss[0].completed = 4;
  g_assert_true (take (f, NULL, &demand) == p4);
  g_assert_null (f->bin->head);
  g_assert_null (f->bin->fenced_head);
  g_assert_null (f->bin->fenced_tail);
  g_assert_cmpuint (ds_pool_shard_peek_n_cached (f->shard), ==, 0);
  g_assert_cmpuint (f->shard->bytes_cached, ==, 0);
}

static void
test_own_stream (Fixture       *f,
                 gconstpointer  user_data)
{
  DsPoolBlock *a1, *a2, *b1, *r;
  guint demand;

  g_test_summary ("A request in a stream's order takes the newest block its "
                  "stream gave back at once, pending or not, without asking "
                  "for checks; another stream's pending blocks it leaves, "
                  "noting the demand for that stream's blocks alone");

  a1 = put (f, &f->ss[0], 1);
  b1 = put (f, &f->ss[1], 1);
  a2 = put (f, &f->ss[0], 2);

  g_assert_true (take (f, &f->order[0], &demand) == a2);
  g_assert_cmphex (demand, ==, 0);
  /* The newest fenced block is B's: with no ready one, A's is found
   * behind it. */
  g_assert_true (take (f, &f->order[0], &demand) == a1);
  g_assert_cmphex (demand, ==, 0);
  /* Only B's is left, pending: A cannot have it. */
  g_assert_null (take (f, &f->order[0], &demand));
  g_assert_cmphex (demand, ==, B);
  g_assert_true (take (f, &f->order[1], &demand) == b1);
  g_assert_cmphex (demand, ==, 0);

  /* A ready block goes to any stream; one of B's that completed, moved
   * to the ready list, goes to A as a block of another stream. */
  r = put (f, NULL, 0);
  g_assert_true (take (f, &f->order[0], &demand) == r);
  g_assert_cmphex (demand, ==, 0);
  put_again (f, b1, &f->ss[1], 2);
  f->ss[1].completed = 2;
  g_assert_true (take (f, &f->order[0], &demand) == b1);
  g_assert_cmphex (demand, ==, B);
}

static void
test_lost_and_take_any (Fixture       *f,
                        gconstpointer  user_data)
{
  DsPoolBlock *lost, *p, *r;
  DsStreamState *ss = NULL;
  guint64 seq = 0;
  guint demand;

  g_test_summary ("A block whose fence was lost is never taken; a caller "
                  "that will wait takes a ready block first, then the "
                  "oldest pending one, and no eviction takes it");

  lost = put (f, &f->ss[0], DS_FENCE_LOST);
  p = put (f, &f->ss[1], 1);
  r = put (f, NULL, 0);

  g_assert_true (ds_pool_shard_take_any_locked (f->shard, request_of (f, NULL), &ss, &seq) == r);
  g_assert_null (ss);
  g_assert_true (ds_pool_shard_take_any_locked (f->shard, request_of (f, NULL), &ss, &seq) == p);
  g_assert_true (ss == &f->ss[1]);
  g_assert_cmpuint (seq, ==, 1);
  ds_stream_state_unref (ss);
  ss = NULL;
  g_assert_null (ds_pool_shard_take_any_locked (f->shard, request_of (f, NULL), &ss, &seq));
  g_assert_null (take (f, NULL, &demand));
  g_assert_null (take (f, &f->order[1], &demand));
  g_assert_true (f->bin->fenced_head == lost);

  /* Held back for good: not even an eviction of everything takes it. */
  {
    g_autoptr(GArray) victims = g_array_new (FALSE, FALSE, sizeof (DsPoolVictim));
    DsFenceCounters counters = { 0, };

    g_assert_cmpuint (evict (f, DS_POOL_EVICT_ALL, &counters, victims), ==, 0);
    g_assert_cmpuint (victims->len, ==, 0);
    g_assert_true (f->bin->fenced_head == lost);
  }
}

static void
test_evict (Fixture       *f,
            gconstpointer  user_data)
{
  g_autoptr(GArray) victims = g_array_new (FALSE, FALSE, sizeof (DsPoolVictim));
  DsFenceCounters counters = { 0, };
  DsPoolBlock *r1, *done, *pending, *r2;

  g_test_summary ("Eviction of what is ready takes the ready blocks, oldest "
                  "first, and the fenced ones known complete, and leaves the "
                  "pending ones");

  r1 = put (f, NULL, 0);
  done = put (f, &f->ss[0], 1);
  pending = put (f, &f->ss[0], 2);
  r2 = put (f, NULL, 0);
  f->ss[0].completed = 1;

  g_assert_cmpuint (evict (f, DS_POOL_EVICT_READY, &counters, victims), ==,
                    3 * CLASS_BYTES);
  g_assert_cmpuint (victims->len, ==, 3);
  g_assert_true (g_array_index (victims, DsPoolVictim, 0).block == r1);
  g_assert_true (g_array_index (victims, DsPoolVictim, 1).block == r2);
  g_assert_true (g_array_index (victims, DsPoolVictim, 2).block == done);
  ds_stream_state_unref (g_array_index (victims, DsPoolVictim, 2).ss);
  g_assert_true (f->bin->fenced_head == pending && f->bin->fenced_tail == pending);
  g_assert_null (f->bin->head);
  g_assert_cmpuint (ds_pool_shard_peek_n_cached (f->shard), ==, 1);
  g_assert_cmpuint (f->shard->bytes_cached, ==, CLASS_BYTES);
}

static gint64 fake_now;

static gint64
fake_clock (void)
{
  return fake_now;
}

static void
test_demand_fades (Fixture       *f,
                   gconstpointer  user_data)
{
  g_test_summary ("A stream's demand holds while requests from elsewhere keep "
                  "showing it, fades DS_FENCE_DEMAND_HOLD_US after the last "
                  "one (looked at by its due checks), and starts again at "
                  "the next; another stream's demand is its own");

  ds_clock_set_for_testing (fake_clock);
  fake_now = 1000000;

  g_assert_false (ds_stream_state_demanded (&f->ss[0]));
  ds_stream_state_note_demand (&f->ss[0]);
  g_assert_true (f->ss[0].demand && f->ss[0].demand_seen);
  g_assert_false (f->ss[1].demand || f->ss[1].demand_seen);

  /* A check sees it, and starts the hold from now. */
  g_assert_true (ds_stream_state_demanded (&f->ss[0]));
  g_assert_false (f->ss[0].demand_seen);
  g_assert_false (ds_stream_state_demanded (&f->ss[1]));

  /* Shown again within the hold: it holds, from the later sign. */
  fake_now += DS_FENCE_DEMAND_HOLD_US - 1;
  g_assert_true (ds_stream_state_demanded (&f->ss[0]));
  ds_stream_state_note_demand (&f->ss[0]);
  fake_now += DS_FENCE_DEMAND_HOLD_US / 2;
  g_assert_true (ds_stream_state_demanded (&f->ss[0]));
  fake_now += DS_FENCE_DEMAND_HOLD_US - 1;
  g_assert_true (ds_stream_state_demanded (&f->ss[0]));

  /* Nobody shows it for the whole hold: it fades. */
  fake_now += 1;
  g_assert_false (ds_stream_state_demanded (&f->ss[0]));
  g_assert_false (f->ss[0].demand);
  g_assert_false (ds_stream_state_demanded (&f->ss[0]));

  /* The next request from elsewhere starts it again at once. */
  ds_stream_state_note_demand (&f->ss[0]);
  g_assert_true (ds_stream_state_demanded (&f->ss[0]));
  g_assert_false (ds_stream_state_demanded (&f->ss[1]));

  ds_clock_set_for_testing (NULL);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);

#define ADD(path, func) \
  g_test_add ("/Ds/PoolShard/" path, Fixture, NULL, fixture_set_up, func, fixture_tear_down)
  ADD ("ready-newest-first", test_ready_newest_first);
  ADD ("moves-completed", test_moves_completed);
  ADD ("own-stream", test_own_stream);
  ADD ("lost-and-take-any", test_lost_and_take_any);
  ADD ("evict", test_evict);
  ADD ("demand-fades", test_demand_fades);
#undef ADD

  return g_test_run ();
}
