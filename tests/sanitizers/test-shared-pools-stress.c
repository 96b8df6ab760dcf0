/* test-shared-pools-stress.c: host scratchpads and pools shared by threads
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The program ThreadSanitizer runs (suite tsan; also an ordinary test in
 * suite ds). Producer threads make host scratchpads on two shared pools
 * (the process's default host pool and one DsPoolResource over a recording
 * upstream), allocate from them and from the pools directly, fill what
 * they get with a pattern and hand the lot to consumer threads, which
 * check the patterns, release some scratchpads and finalize all of them,
 * and give the pool blocks back: every scratchpad is finalized, and every
 * pool block freed, on a thread other than the one that made it.
 *
 * The hand-over is a GMutex, a GCond and a GQueue, so that under TSan
 * (tests/sanitizers/ds-tsan-glib.h) the only synchronisation between
 * producer and consumer is one TSan sees: a missing lock inside ds shows
 * up as a data race, not hidden behind an uninstrumented GAsyncQueue.
 *
 * DS_STRESS_ITERATIONS scales the work (default 1000 per producer).
 */

#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "ds-test-fixtures.h"

#define N_PRODUCERS 6
#define N_CONSUMERS 2
#define N_CHUNKS    6

typedef struct
{
  DsScratchpad     *sp;          /* or NULL: a pool block */
  DsMemoryResource *pool;
  guint8           *ptr[N_CHUNKS];
  gsize             size[N_CHUNKS];
  gsize             alignment[N_CHUNKS];
  guint             n;
  guint8            pattern;
} Parcel;

typedef struct
{
  GMutex            lock;
  GCond             cond;
  GQueue            parcels;
  guint             producers_left;
  DsMemoryResource *shared_pool;
  DsMemoryResource *default_pool;
  DsAccessOrder    *host;
  guint             iterations;
  gint              n_checked;    /* atomic */
  gint              n_finalized;  /* atomic */
  gint              n_scratchpads; /* atomic */
} Shared;

typedef struct
{
  Shared *shared;
  guint   index;
} Worker;

static void
count_finalized (gpointer  data,
                 GObject  *where_the_object_was)
{
  g_atomic_int_inc ((gint *) data);
}

static void
fill (Parcel *p,
      guint   i)
{
  memset (p->ptr[i], p->pattern + i, p->size[i]);
}

static void
check (const Parcel *p)
{
  guint i;

  for (i = 0; i < p->n; i++)
    {
      gsize j;

      g_assert_nonnull (p->ptr[i]);
      g_assert_cmpuint ((guintptr) p->ptr[i] % p->alignment[i], ==, 0);
      for (j = 0; j < p->size[i]; j += 97)
        g_assert_cmpuint (p->ptr[i][j], ==, (guint8) (p->pattern + i));
      g_assert_cmpuint (p->ptr[i][p->size[i] - 1], ==, (guint8) (p->pattern + i));
    }
}

static void
hand_over (Shared *s,
           Parcel *p)
{
  g_mutex_lock (&s->lock);
  g_queue_push_tail (&s->parcels, p);
  g_cond_signal (&s->cond);
  g_mutex_unlock (&s->lock);
}

static Parcel *
make_scratch_parcel (Shared *s,
                     GRand  *rand,
                     guint8  pattern)
{
  Parcel *p = g_new0 (Parcel, 1);
  gboolean on_default = g_rand_boolean (rand);
  guint i, rounds = g_rand_int_range (rand, 1, 3);

  p->pattern = pattern;
  /* No host-resource: the default host pool, shared by every thread. */
  if (on_default)
    p->sp = g_object_new (DS_TYPE_SCRATCHPAD, "device-order", s->host,
                          "initial-size-host", (guint64) 4096, NULL);
  else
    p->sp = g_object_new (DS_TYPE_SCRATCHPAD, "device-order", s->host,
                          "host-resource", s->shared_pool,
                          "initial-size-host", (guint64) 4096, NULL);

  /* A few lifecycles on this thread first, then the live set travels. */
  for (i = 0; i < rounds; i++)
    {
      p->n = g_rand_int_range (rand, 1, N_CHUNKS + 1);
      for (guint k = 0; k < p->n; k++)
        {
          g_autoptr(GError) error = NULL;

          p->size[k] = g_rand_int_range (rand, 1, 20000);
          p->alignment[k] = (gsize) 1 << g_rand_int_range (rand, 0, 10);
          p->ptr[k] = ds_scratchpad_alloc (p->sp, DS_MEMORY_KIND_HOST, p->size[k],
                                           p->alignment[k], &error);
          g_assert_no_error (error);
          fill (p, k);
        }
      check (p);
      if (i + 1 < rounds)
        ds_scratchpad_release (p->sp);
    }
  return p;
}

static Parcel *
make_pool_parcel (Shared *s,
                  GRand  *rand,
                  guint8  pattern)
{
  Parcel *p = g_new0 (Parcel, 1);
  guint k;

  p->pattern = pattern;
  p->pool = g_rand_boolean (rand) ? s->shared_pool : s->default_pool;
  p->n = g_rand_int_range (rand, 1, N_CHUNKS + 1);
  for (k = 0; k < p->n; k++)
    {
      g_autoptr(GError) error = NULL;

      p->size[k] = g_rand_int_range (rand, 1, 70000);
      p->alignment[k] = (gsize) 1 << g_rand_int_range (rand, 0, 13);
      p->ptr[k] = ds_memory_resource_allocate (p->pool, p->size[k], p->alignment[k], &error);
      g_assert_no_error (error);
      fill (p, k);
    }
  return p;
}

static gpointer
producer (gpointer user_data)
{
  Worker *w = user_data;
  Shared *s = w->shared;
  g_autoptr(GRand) rand = g_rand_new_with_seed (7000 + w->index);
  guint it;

  for (it = 0; it < s->iterations; it++)
    {
      guint8 pattern = (guint8) (w->index * 37 + it);
      Parcel *p = g_rand_int_range (rand, 0, 3) == 0
                  ? make_pool_parcel (s, rand, pattern)
                  : make_scratch_parcel (s, rand, pattern);

      if (p->sp != NULL)
        {
          g_object_weak_ref (G_OBJECT (p->sp), count_finalized, &s->n_finalized);
          g_atomic_int_inc (&s->n_scratchpads);
        }
      hand_over (s, p);
    }

  g_mutex_lock (&s->lock);
  s->producers_left--;
  g_cond_broadcast (&s->cond);
  g_mutex_unlock (&s->lock);
  return NULL;
}

static gpointer
consumer (gpointer user_data)
{
  Worker *w = user_data;
  Shared *s = w->shared;

  for (;;)
    {
      Parcel *p;

      g_mutex_lock (&s->lock);
      while (g_queue_is_empty (&s->parcels) && s->producers_left > 0)
        g_cond_wait (&s->cond, &s->lock);
      p = g_queue_pop_head (&s->parcels);
      g_mutex_unlock (&s->lock);
      if (p == NULL)
        break;

      check (p);
      g_atomic_int_inc (&s->n_checked);
      if (p->sp != NULL)
        {
          /* Half of them are released here first; all are finalized here. */
          if (p->pattern % 2 == 0)
            ds_scratchpad_release (p->sp);
          g_object_unref (p->sp);
        }
      else
        {
          guint k;

          for (k = 0; k < p->n; k++)
            ds_memory_resource_deallocate (p->pool, p->ptr[k], p->size[k], p->alignment[k]);
        }
      g_free (p);
    }
  return NULL;
}

static void
test_shared_pools (void)
{
  g_autoptr(DsTestResource) up = ds_test_resource_new (DS_MEMORY_KIND_HOST, FALSE);
  g_autoptr(GError) error = NULL;
  GThread *threads[N_PRODUCERS + N_CONSUMERS];
  Worker workers[N_PRODUCERS + N_CONSUMERS];
  const char *env = g_getenv ("DS_STRESS_ITERATIONS");
  Shared s = { 0 };
  DsPoolStats stats;
  guint i;

  g_test_summary ("Six producer threads make host scratchpads on the default "
                  "pool and on a shared pool, and take blocks from both pools; "
                  "two consumer threads check the contents and finalize every "
                  "scratchpad and free every block: contents intact, every "
                  "scratchpad finalized, the shared pool's upstream gets every "
                  "block back exactly once");

  g_mutex_init (&s.lock);
  g_cond_init (&s.cond);
  g_queue_init (&s.parcels);
  s.producers_left = N_PRODUCERS;
  s.iterations = env != NULL ? (guint) strtoul (env, NULL, 10) : 1000;
  s.host = ds_access_order_new_host ();
  s.shared_pool = ds_pool_resource_new (DS_MEMORY_RESOURCE (up));
  s.default_pool = ds_memory_resource_get_default (DS_MEMORY_KIND_HOST, 0, &error);
  g_assert_no_error (error);

  for (i = 0; i < G_N_ELEMENTS (threads); i++)
    {
      workers[i].shared = &s;
      workers[i].index = i;
      threads[i] = g_thread_new (i < N_PRODUCERS ? "producer" : "consumer",
                                 i < N_PRODUCERS ? producer : consumer, &workers[i]);
    }
  for (i = 0; i < G_N_ELEMENTS (threads); i++)
    g_thread_join (threads[i]);

  g_assert_cmpint (g_atomic_int_get (&s.n_checked), ==, N_PRODUCERS * s.iterations);
  g_assert_cmpint (g_atomic_int_get (&s.n_scratchpads), >, 0);
  g_assert_cmpint (g_atomic_int_get (&s.n_finalized), ==, g_atomic_int_get (&s.n_scratchpads));
  g_assert_true (g_queue_is_empty (&s.parcels));

  ds_pool_resource_get_stats (DS_POOL_RESOURCE (s.shared_pool), &stats);
  g_assert_cmpuint (stats.bytes_in_use, ==, 0);
  g_assert_cmpuint (stats.bytes_held, ==, ds_test_resource_get_live_bytes (up));
  g_assert_cmpuint (stats.upstream_allocations, ==, ds_test_resource_count_allocs (up));
  ds_pool_resource_trim (DS_POOL_RESOURCE (s.shared_pool));
  g_assert_cmpuint (ds_test_resource_get_n_live (up), ==, 0);
  g_assert_cmpuint (ds_test_resource_get_n_mismatches (up), ==, 0);

  g_assert_finalize_object (s.shared_pool);
  ds_access_order_free (s.host);
  g_cond_clear (&s.cond);
  g_mutex_clear (&s.lock);
}

int
main (int    argc,
      char **argv)
{
  ds_test_init (&argc, &argv);

  g_test_add_func ("/Ds/Sanitizers/shared-pools-stress", test_shared_pools);

  return g_test_run ();
}
