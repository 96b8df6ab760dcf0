/* test-pool-resource-gpu.c: DsPoolResource with CUDA streams
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Stream-ordered reuse, fences, release policies and pending blocks, with
 * real streams and events. Most cases use DsTestPoolFixture: a pool over a
 * recording device-kind upstream, whose host memory serves as tokens for
 * device blocks. Every case needs a CUDA device and skips without one.
 */

#include "config.h"

#include <string.h>

#include "ds-test-fixtures.h"
#include "ds-fence-batch-private.h"
#include "ds-pool-resource-private.h"

typedef DsTestPoolFixture Fixture;

#if HAVE_CUDA

static void
test_cuda_same_stream (Fixture       *f,
                       gconstpointer  user_data)
{
  g_autoptr(GError) error = NULL;
  DsTestGate *gate;
  gpointer p, q, h;
  DsPoolStats s;

  g_test_summary ("A block given back in stream S is handed out again at once "
                  "to the next request in S, while S is still busy, and to a "
                  "host-order request only after S has drained");

  DS_TEST_REQUIRE_CUDA ();
  ds_test_pool_reset_policies ();

  gate = ds_test_gate_new (f->stream);
  p = ds_memory_resource_allocate_async (f->pool, 65536, 0, &f->order, &error);
  g_assert_no_error (error);
  g_assert_true (ds_memory_resource_deallocate_async (f->pool, p, 65536, 0, &f->order, &error));

  q = ds_memory_resource_allocate_async (f->pool, 65536, 0, &f->order, &error);
  g_assert_no_error (error);
  g_assert_true (q == p);
  DS_TEST_ASSERT_GATE_HELD (gate);
  g_assert_true (ds_memory_resource_deallocate_async (f->pool, q, 65536, 0, &f->order, &error));

  /* Host order may not have it while S is busy. */
  h = ds_memory_resource_allocate (f->pool, 65536, 0, &error);
  g_assert_no_error (error);
  g_assert_true (h != p);
  DS_TEST_ASSERT_GATE_HELD (gate);
  ds_memory_resource_deallocate (f->pool, h, 65536, 0);

  s = ds_test_pool_stats (f->pool);
  g_assert_cmpuint (s.events_recorded, ==, 2);
  g_assert_cmpuint (s.upstream_allocations, ==, 2);

  ds_test_gate_open (gate);
  DS_TEST_CUDA_CHECK (cudaStreamSynchronize (f->stream));
  g_assert_true (ds_test_gate_passed (gate));
  ds_test_gate_free (gate);

  /* Drained: now host order may have it (and the other block). */
  {
    gpointer a = ds_memory_resource_allocate (f->pool, 65536, 0, &error);
    gpointer b = ds_memory_resource_allocate (f->pool, 65536, 0, &error);

    g_assert_no_error (error);
    g_assert_true ((a == p && b == h) || (a == h && b == p));
    ds_memory_resource_deallocate (f->pool, a, 65536, 0);
    ds_memory_resource_deallocate (f->pool, b, 65536, 0);
  }
  g_assert_cmpuint (ds_test_pool_stats (f->pool).upstream_allocations, ==, 2);
}

static void
test_cuda_legacy_stream (Fixture       *f,
                         gconstpointer  user_data)
{
  DsAccessOrder order;
  g_autoptr(GError) error = NULL;
  gpointer p, q;

  g_test_summary ("Same-stream reuse works for the legacy default stream");

  DS_TEST_REQUIRE_CUDA ();
  ds_test_pool_reset_policies ();

  ds_access_order_init_stream (&order, NULL, -1);

  p = ds_memory_resource_allocate_async (f->pool, 1000, 0, &order, &error);
  g_assert_no_error (error);
  g_assert_true (ds_memory_resource_deallocate_async (f->pool, p, 1000, 0, &order, &error));
  q = ds_memory_resource_allocate_async (f->pool, 1000, 0, &order, &error);
  g_assert_true (q == p);
  g_assert_true (ds_memory_resource_deallocate_async (f->pool, q, 1000, 0, &order, &error));

  DS_TEST_CUDA_CHECK (cudaDeviceSynchronize ());
}

static void
test_cuda_cross_stream (Fixture       *f,
                        gconstpointer  user_data)
{
  cudaStream_t s1, s2;
  DsAccessOrder o1, o2;
  g_autoptr(GError) error = NULL;
  DsTestGate *gate;
  gpointer p, q;

  g_test_summary ("A block given back in stream S is not handed to stream T "
                  "while S is busy; it is reusable by T once S has drained");

  DS_TEST_REQUIRE_CUDA ();
  ds_test_pool_reset_policies ();

  s1 = ds_test_stream_new ();
  s2 = ds_test_stream_new ();
  ds_access_order_init_stream (&o1, s1, -1);
  ds_access_order_init_stream (&o2, s2, -1);

  /* Raise the peak demand first, so that the 2x memory bound leaves room
   * for a second block: this case is about reuse across streams, not
   * about what the pool does at the bound. */
  p = ds_memory_resource_allocate (f->pool, 100000, 0, &error);
  g_assert_no_error (error);
  ds_memory_resource_deallocate (f->pool, p, 100000, 0);

  gate = ds_test_gate_new (s1);
  p = ds_memory_resource_allocate_async (f->pool, 20000, 0, &o1, &error);
  g_assert_no_error (error);
  g_assert_true (ds_memory_resource_deallocate_async (f->pool, p, 20000, 0, &o1, &error));

  q = ds_memory_resource_allocate_async (f->pool, 20000, 0, &o2, &error);
  g_assert_no_error (error);

  g_assert_true (q != p);
  DS_TEST_ASSERT_GATE_HELD (gate);
  g_assert_cmpuint (ds_test_pool_stats (f->pool).stream_waits, ==, 0);
  ds_memory_resource_deallocate (f->pool, q, 20000, 0);

  ds_test_gate_open (gate);
  DS_TEST_CUDA_CHECK (cudaStreamSynchronize (s1));
  q = ds_memory_resource_allocate_async (f->pool, 20000, 0, &o2, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (ds_test_pool_stats (f->pool).upstream_allocations, ==, 3);
  ds_memory_resource_deallocate_async (f->pool, q, 20000, 0, &o2, NULL);

  ds_test_gate_free (gate);
  ds_test_stream_free (s1);
  ds_test_stream_free (s2);
  ds_test_pool_reset_policies ();
}

static void
test_cuda_lazy_same_stream (Fixture       *f,
                            gconstpointer  user_data)
{
  g_autoptr(GError) error = NULL;
  DsPoolStats before, after;
  gpointer p, q, buffer;
  guint i, n_memsets, n_calls;
  guint64 n_driver;
  gboolean spy;

  g_test_summary ("Lazy fences: a block given back in stream S and taken again "
                  "in S costs no CUDA call, not even a query, ever");

  DS_TEST_REQUIRE_CUDA ();
  ds_fence_set_check_every_for_testing (0);

  /* Work for the stream between reuses (the pool's blocks are tokens). */
  DS_TEST_CUDA_CHECK (cudaMalloc (&buffer, 4));

  /* The first release of a stream is checked: warm that up. */
  p = ds_memory_resource_allocate_async (f->pool, 1 << 20, 0, &f->order, &error);
  g_assert_no_error (error);
  g_assert_true (ds_memory_resource_deallocate_async (f->pool, p, 1 << 20, 0, &f->order, NULL));

  /* What the spy counts for the test's own memsets alone (asking whether
   * the spy works resets it: ask first). */
  spy = ds_test_cuda_spy_works ();
  ds_test_cuda_spy_reset ();
  for (i = 0; i < 1000; i++)
    DS_TEST_CUDA_CHECK (cudaMemsetAsync (buffer, 0, 4, f->stream));
  n_memsets = ds_test_cuda_spy_get_count ();

  before = ds_test_pool_stats (f->pool);
  ds_test_cuda_spy_reset ();
  /* The spy sees the runtime; queries and records go to the driver,
   * which ds counts itself. */
  n_driver = ds_cuda_get_n_driver_calls ();
  for (i = 0; i < 1000; i++)
    {
      q = ds_memory_resource_allocate_async (f->pool, 1 << 20, 0, &f->order, &error);
      g_assert_no_error (error);
      g_assert_true (q == p);
      DS_TEST_CUDA_CHECK (cudaMemsetAsync (buffer, 0, 4, f->stream));
      g_assert_true (ds_memory_resource_deallocate_async (f->pool, q, 1 << 20, 0, &f->order, NULL));
    }
  n_calls = ds_test_cuda_spy_get_count ();
  n_driver = ds_cuda_get_n_driver_calls () - n_driver;
  after = ds_test_pool_stats (f->pool);
  if (spy)
    g_assert_cmpuint (n_calls, ==, n_memsets);
  g_assert_cmpuint (n_driver, ==, 0);
  g_assert_cmpuint (ds_test_pool_cuda_calls (&after), ==, ds_test_pool_cuda_calls (&before));
  g_assert_cmpuint (after.bytes_pending, ==, 1 << 20);
  g_assert_cmpuint (after.bytes_in_use, ==, 0);
  ds_test_pool_assert_within_bound (f->pool);

  DS_TEST_CUDA_CHECK (cudaFree (buffer));
  ds_test_pool_reset_policies ();
}

static gint64 fake_now;

static gint64
fake_clock (void)
{
  return fake_now;
}

/* Replaces @f's pool with one made now, on the fake clock: release
 * threshold 1 MiB, idle timeout 1 s. */
static void
fake_clock_pool (Fixture *f)
{
  fake_now = g_get_monotonic_time ();
  ds_clock_set_for_testing (fake_clock);
  g_assert_finalize_object (g_steal_pointer (&f->pool));
  f->pool = ds_pool_resource_new (DS_MEMORY_RESOURCE (f->up));
  ds_pool_resource_set_release_threshold (DS_POOL_RESOURCE (f->pool), 1 << 20);
  ds_pool_resource_set_idle_timeout (DS_POOL_RESOURCE (f->pool), 1000);
}

/* One unit of steady work on @f's stream: four 4 KiB blocks, a memset. */
static void
lazy_idle_unit (Fixture *f,
                gpointer buffer)
{
  g_autoptr(GError) error = NULL;
  gpointer p[4];

  for (guint k = 0; k < 4; k++)
    {
      p[k] = ds_memory_resource_allocate_async (f->pool, 4096, 0, &f->order, &error);
      g_assert_no_error (error);
    }
  DS_TEST_CUDA_CHECK (cudaMemsetAsync (buffer, 0, 4, f->stream));
  for (guint k = 0; k < 4; k++)
    g_assert_true (ds_memory_resource_deallocate_async (f->pool, p[k], 4096, 0, &f->order, NULL));
}

static void
test_cuda_lazy_idle_release (Fixture       *f,
                             gconstpointer  user_data)
{
  g_autoptr(GError) error = NULL;
  gpointer burst[64], buffer;
  DsPoolStats s, settled;
  guint i;

  g_test_summary ("Lazy fences and idle release: a burst given back on a stream "
                  "without events goes back upstream once idle while that "
                  "stream keeps running small work (the pool checks the stream "
                  "the blocks just given back came on), at a few queries in "
                  "all, and none once the pool is within its threshold");

  DS_TEST_REQUIRE_CUDA ();
  ds_fence_set_check_every_for_testing (0);
  DS_TEST_CUDA_CHECK (cudaMalloc (&buffer, 4));

  fake_clock_pool (f);

  /* The burst: 16 MiB on the stream, given back in its order, one
   * release each: only the first is checked; the rest have no event. */
  for (i = 0; i < G_N_ELEMENTS (burst); i++)
    {
      burst[i] = ds_memory_resource_allocate_async (f->pool, 256 << 10, 0, &f->order, &error);
      g_assert_no_error (error);
    }
  DS_TEST_CUDA_CHECK (cudaMemsetAsync (buffer, 0, 4, f->stream));
  for (i = 0; i < G_N_ELEMENTS (burst); i++)
    g_assert_true (ds_memory_resource_deallocate_async (f->pool, burst[i], 256 << 10, 0,
                                                        &f->order, NULL));
  s = ds_test_pool_stats (f->pool);
  g_assert_cmpuint (s.bytes_held, ==, 16 << 20);
  /* At most the first release's check: an event if the memset ran. */
  g_assert_cmpuint (s.events_recorded, <=, 1);
  g_assert_cmpuint (s.bytes_pending, >, 0);

  /* Steady small work on the same stream, 10 ms apart (the pool looks
   * every 256 blocks given back: every 0.64 s here). */
  for (i = 0; i < 2000; i++)
    {
      lazy_idle_unit (f, buffer);
      fake_now += 10000;
      if (i == 150)
        g_assert_cmpuint (ds_test_pool_stats (f->pool).idle_releases, ==, 0);
    }

  settled = ds_test_pool_stats (f->pool);
  g_assert_cmpuint (settled.bytes_held, <=, 1 << 20);
  g_assert_cmpuint (settled.bytes_held, >, (1 << 20) - (256 << 10));
  g_assert_cmpuint (settled.idle_releases, ==, 61);
  g_assert_cmpuint (settled.upstream_deallocations, ==, settled.idle_releases);
  g_assert_cmpuint (ds_test_resource_get_live_bytes (f->up), ==, settled.bytes_held);
  /* The first release's check, then a check (a query, an event if the
   * stream was busy) per look at most (2000 * 4 / 256 = 31), and a query
   * of that event at the next: nowhere near one per unit. */
  g_assert_cmpuint (settled.event_queries, >=, 2);
  g_assert_cmpuint (ds_test_pool_cuda_calls (&settled), <=, 2 + 3 * (2000 * 4 / 256));

  /* Within the threshold: the steady state makes no CUDA call at all. */
  for (i = 0; i < 1000; i++)
    {
      lazy_idle_unit (f, buffer);
      fake_now += 10000;
    }
  s = ds_test_pool_stats (f->pool);
  g_assert_cmpuint (ds_test_pool_cuda_calls (&s), ==, ds_test_pool_cuda_calls (&settled));
  g_assert_cmpuint (s.idle_releases, ==, settled.idle_releases);

  DS_TEST_CUDA_CHECK (cudaStreamSynchronize (f->stream));
  DS_TEST_CUDA_CHECK (cudaFree (buffer));
  ds_clock_set_for_testing (NULL);
  ds_test_pool_reset_policies ();
}

#define N_DEAD_STREAMS 24

/* Makes N_DEAD_STREAMS streams, each given three units of 1 MiB in its
 * own order with work queued between them, then destroyed (the fake clock
 * moves 1 ms each). Its first release may be checked; the later ones are
 * not (the lazy policy checks every 8th), so its block is left pending
 * under a fence with no event. Returns the pool's statistics then. */
static DsPoolStats
make_dead_streams (Fixture  *f,
                   gpointer  buffer)
{
  g_autoptr(GError) error = NULL;
  DsPoolStats dead;

  for (guint i = 0; i < N_DEAD_STREAMS; i++)
    {
      cudaStream_t stream = ds_test_stream_new ();
      DsAccessOrder order;

      ds_access_order_init_stream (&order, stream, -1);
      for (guint k = 0; k < 3; k++)
        {
          gpointer p = ds_memory_resource_allocate_async (f->pool, 1 << 20, 0, &order, &error);

          g_assert_no_error (error);
          DS_TEST_CUDA_CHECK (cudaMemsetAsync (buffer, (int) k, 1 << 20, stream));
          g_assert_true (ds_memory_resource_deallocate_async (f->pool, p, 1 << 20, 0, &order,
                                                              NULL));
        }
      ds_test_stream_free (stream);
      fake_now += 1000;
    }

  dead = ds_test_pool_stats (f->pool);
  g_test_message ("after %u dead streams: held %" G_GUINT64_FORMAT " B, pending %"
                  G_GUINT64_FORMAT " B, %" G_GUINT64_FORMAT " upstream allocations",
                  N_DEAD_STREAMS, dead.bytes_held, dead.bytes_pending,
                  dead.upstream_allocations);
  /* Nobody can tell those blocks are free without waiting: each new
   * stream took a block of its own. */
  g_assert_cmpuint (dead.bytes_held, >=, (guint64) (N_DEAD_STREAMS / 2) << 20);
  g_assert_cmpuint (dead.bytes_pending, >=, (guint64) (N_DEAD_STREAMS / 2) << 20);
  g_assert_cmpuint (dead.bytes_in_use, ==, 0);

  return dead;
}

static void
test_cuda_lazy_dead_streams (Fixture       *f,
                             gconstpointer  user_data)
{
  gpointer buffer;
  DsPoolStats s, dead;
  guint i;

  g_test_summary ("Lazy fences and dead streams: blocks given back without an "
                  "event on streams destroyed since go back upstream once idle "
                  "(one device-wide wait for all of them), so that making and "
                  "destroying streams does not make the pool grow");

  DS_TEST_REQUIRE_CUDA ();
  ds_fence_set_check_every_for_testing (0);
  DS_TEST_CUDA_CHECK (cudaMalloc (&buffer, 1 << 20));

  fake_clock_pool (f);

  dead = make_dead_streams (f, buffer);

  /* Steady small work on a live stream, 10 ms apart, for 20 s of the
   * fake clock: the pool looks every 256 blocks given back. */
  for (i = 0; i < 2000; i++)
    {
      lazy_idle_unit (f, buffer);
      fake_now += 10000;
    }

  s = ds_test_pool_stats (f->pool);
  g_test_message ("after the steady work: held %" G_GUINT64_FORMAT " B, pending %"
                  G_GUINT64_FORMAT " B, %" G_GUINT64_FORMAT " idle releases, %"
                  G_GUINT64_FORMAT " waits",
                  s.bytes_held, s.bytes_pending, s.idle_releases, s.event_waits);
  g_assert_cmpuint (s.bytes_held, <=, 1 << 20);
  g_assert_cmpuint (s.idle_releases, >=, dead.bytes_held >> 20);
  g_assert_cmpuint (ds_test_resource_get_live_bytes (f->up), ==, s.bytes_held);
  /* The dead streams' fences were settled by one device-wide wait (two if
   * a look fell between their releases and the timeout of the last). */
  g_assert_cmpuint (s.event_waits - dead.event_waits, >=, 1);
  g_assert_cmpuint (s.event_waits - dead.event_waits, <=, 2);
  ds_test_pool_assert_within_bound (f->pool);

  DS_TEST_CUDA_CHECK (cudaStreamSynchronize (f->stream));
  DS_TEST_CUDA_CHECK (cudaFree (buffer));
  ds_clock_set_for_testing (NULL);
  ds_test_pool_reset_policies ();
}

static void
test_cuda_lazy_dead_streams_trim (Fixture       *f,
                                  gconstpointer  user_data)
{
  gpointer buffer;
  DsPoolStats dead, s;
  guint64 trimmed;

  g_test_summary ("Lazy fences and dead streams under the release threshold: "
                  "nothing goes back by itself, and trim gives back every block "
                  "that streams destroyed since left without an event (one "
                  "device-wide wait for all of them)");

  DS_TEST_REQUIRE_CUDA ();
  ds_fence_set_check_every_for_testing (0);
  DS_TEST_CUDA_CHECK (cudaMalloc (&buffer, 1 << 20));

  /* Never over the threshold. */
  fake_clock_pool (f);
  ds_pool_resource_set_release_threshold (DS_POOL_RESOURCE (f->pool), G_MAXUINT64);

  dead = make_dead_streams (f, buffer);

  /* 20 s later, nothing went back by itself. */
  fake_now += 20 * G_USEC_PER_SEC;
  s = ds_test_pool_stats (f->pool);
  g_assert_cmpuint (s.bytes_held, ==, dead.bytes_held);
  g_assert_cmpuint (s.idle_releases, ==, 0);

  trimmed = ds_pool_resource_trim (DS_POOL_RESOURCE (f->pool));
  s = ds_test_pool_stats (f->pool);
  g_test_message ("trim gave back %" G_GUINT64_FORMAT " B of %" G_GUINT64_FORMAT
                  " B (%" G_GUINT64_FORMAT " B pending on dead streams), with %"
                  G_GUINT64_FORMAT " waits",
                  trimmed, dead.bytes_held, dead.bytes_pending,
                  s.event_waits - dead.event_waits);
  g_assert_cmpuint (trimmed, ==, dead.bytes_held);
  g_assert_cmpuint (s.bytes_held, ==, 0);
  g_assert_cmpuint (s.bytes_pending, ==, 0);
  ds_test_resource_assert_clean (f->up);
  /* One device-wide wait settled every dead stream's fences. */
  g_assert_cmpuint (s.event_waits - dead.event_waits, ==, 1);

  DS_TEST_CUDA_CHECK (cudaFree (buffer));
  ds_clock_set_for_testing (NULL);
  ds_test_pool_reset_policies ();
}

static void
test_cuda_lazy_host_reuse (void)
{
  g_autoptr(DsMemoryResource) up = NULL;
  DsMemoryResource *pool;
  cudaStream_t stream;
  DsAccessOrder order;
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) busy = g_ptr_array_new ();
  DsPoolStats before, after;
  DsTestGate *gate;
  guint64 n_driver;
  guint i, reused = 0;

  g_test_summary ("Lazy fences: pinned blocks given back in a busy stream's "
                  "order never go to the host before that work is done; once "
                  "it is, they are reused, with at most a quarter of a CUDA "
                  "call per round, and each check of the idle explicit stream "
                  "is one driver call (the query, no context check)");

  DS_TEST_REQUIRE_CUDA ();
  ds_fence_set_check_every_for_testing (0);

  up = ds_pinned_memory_resource_new ();
  pool = ds_pool_resource_new (up);
  stream = ds_test_stream_new ();
  ds_access_order_init_stream (&order, stream, -1);

  /* While the stream is held at a gate, every block handed to the host is
   * new. */
  gate = ds_test_gate_new (stream);
  for (i = 0; i < 8; i++)
    {
      guint8 *p = ds_memory_resource_allocate (pool, 64 << 10, 0, &error);

      g_assert_no_error (error);
      g_assert_false (g_ptr_array_find (busy, p, NULL));
      p[0] = (guint8) i;
      g_ptr_array_add (busy, p);
      g_assert_true (ds_memory_resource_deallocate_async (pool, p, 64 << 10, 0, &order, NULL));
    }
  DS_TEST_ASSERT_GATE_HELD (gate);
  ds_test_gate_open (gate);
  DS_TEST_CUDA_CHECK (cudaStreamSynchronize (stream));
  ds_test_gate_free (gate);

  /* Idle now: the blocks come back, checked every few releases. */
  before = ds_test_pool_stats (pool);
  for (i = 0; i < 400; i++)
    {
      guint8 *p = ds_memory_resource_allocate (pool, 64 << 10, 0, &error);

      g_assert_no_error (error);
      reused += g_ptr_array_find (busy, p, NULL);
      p[0] = 1;
      g_assert_true (ds_memory_resource_deallocate_async (pool, p, 64 << 10, 0, &order, NULL));
    }
  after = ds_test_pool_stats (pool);
  g_test_message ("reused %u of 400; CUDA calls %" G_GUINT64_FORMAT "; upstream %" G_GUINT64_FORMAT
                  "; held %" G_GUINT64_FORMAT " B", reused,
                  ds_test_pool_cuda_calls (&after) - ds_test_pool_cuda_calls (&before),
                  after.upstream_allocations, after.bytes_held);
  g_assert_cmpuint (reused, >, 300);
  g_assert_cmpuint (10 * (ds_test_pool_cuda_calls (&after) - ds_test_pool_cuda_calls (&before)), <=, 3 * 400);
  g_assert_cmpuint (after.upstream_allocations, <=, before.upstream_allocations + 4);
  ds_test_pool_assert_within_bound (pool);

  /* Steady now: nothing from upstream, and the checks ask the driver
   * about the stream and nothing else. */
  before = after;
  n_driver = ds_cuda_get_n_driver_calls ();
  for (i = 0; i < 400; i++)
    {
      guint8 *p = ds_memory_resource_allocate (pool, 64 << 10, 0, &error);

      g_assert_no_error (error);
      p[0] = 2;
      g_assert_true (ds_memory_resource_deallocate_async (pool, p, 64 << 10, 0, &order, NULL));
    }
  n_driver = ds_cuda_get_n_driver_calls () - n_driver;
  after = ds_test_pool_stats (pool);
  g_test_message ("steady: %" G_GUINT64_FORMAT " queries, %" G_GUINT64_FORMAT " driver calls",
                  after.event_queries - before.event_queries, n_driver);
  g_assert_cmpuint (after.upstream_allocations, ==, before.upstream_allocations);
  g_assert_cmpuint (after.events_recorded, ==, before.events_recorded);
  g_assert_cmpuint (after.event_queries - before.event_queries, >=, 400 / 8 - 1);
  g_assert_cmpuint (n_driver, ==, after.event_queries - before.event_queries);

  ds_test_stream_free (stream);
  g_assert_finalize_object (pool);
  ds_test_pool_reset_policies ();
}

static void
destroy_stream (gpointer stream)
{
  DS_TEST_CUDA_CHECK (cudaStreamDestroy (stream));
}

static void
test_cuda_destroyed_stream (Fixture       *f,
                            gconstpointer  user_data)
{
  cudaStream_t s1, s2;
  DsAccessOrder o1, o2;
  g_autoptr(GError) error = NULL;
  DsTestGate *gate;
  gpointer p, q;

  g_test_summary ("A stream destroyed while it has pending releases: its "
                  "blocks are not handed to a new stream (even one that gets "
                  "the same handle) before its work is done, and are reused "
                  "once it is");

  DS_TEST_REQUIRE_CUDA ();
  ds_test_pool_reset_policies ();

  s1 = ds_test_stream_new ();
  ds_access_order_init_stream (&o1, s1, -1);

  /* The old stream stays busy, at a gate, until the checks below are
   * made, however slowly they run (compute-sanitizer). */
  gate = ds_test_gate_new (s1);
  p = ds_memory_resource_allocate_async (f->pool, 8192, 0, &o1, &error);
  g_assert_no_error (error);
  g_assert_true (ds_memory_resource_deallocate_async (f->pool, p, 8192, 0, &o1, &error));
  if (ds_test_gate_call (gate, 3000, destroy_stream, s1))
    {
      ds_test_gate_free (gate);
      DS_TEST_CUDA_CHECK (cudaDeviceSynchronize ());
      g_test_skip ("cudaStreamDestroy waited for the stream's work (as it does "
                   "under compute-sanitizer): a destroyed stream cannot be "
                   "kept busy here");
      return;
    }

  s2 = ds_test_stream_new ();
  ds_access_order_init_stream (&o2, s2, -1);
  g_test_message ("old handle %p, new handle %p", (void *) s1, (void *) s2);
  g_assert_cmpuint (ds_access_order_get_stream_id (&o1), !=, 0);
  g_assert_cmpuint (ds_access_order_get_stream_id (&o1), !=, ds_access_order_get_stream_id (&o2));

  q = ds_memory_resource_allocate_async (f->pool, 8192, 0, &o2, &error);
  g_assert_no_error (error);
  DS_TEST_ASSERT_GATE_HELD (gate);
  g_assert_true (q != p);
  ds_memory_resource_deallocate_async (f->pool, q, 8192, 0, &o2, NULL);

  /* The old stream's work finishes; its event with it. */
  ds_test_gate_open (gate);
  DS_TEST_CUDA_CHECK (cudaDeviceSynchronize ());
  g_assert_true (ds_test_gate_passed (gate));
  ds_test_gate_free (gate);
  {
    gpointer a = ds_memory_resource_allocate (f->pool, 8192, 0, &error);
    gpointer b = ds_memory_resource_allocate (f->pool, 8192, 0, &error);

    g_assert_no_error (error);
    g_assert_true (a == p || b == p);
    ds_memory_resource_deallocate (f->pool, a, 8192, 0);
    ds_memory_resource_deallocate (f->pool, b, 8192, 0);
  }
  g_assert_cmpuint (ds_test_pool_stats (f->pool).upstream_allocations, ==, 2);

  ds_test_stream_free (s2);
}

static void
test_cuda_release_batch (void)
{
  DsTestResource *ups[3];
  DsMemoryResource *pools[3];
  static const DsMemoryKind kinds[3] = {
    DS_MEMORY_KIND_PINNED, DS_MEMORY_KIND_DEVICE, DS_MEMORY_KIND_MANAGED,
  };
  cudaStream_t stream;
  DsAccessOrder order;
  DsTestGate *gate;
  guint round, i, k;

  g_test_summary ("A release of many blocks of three kinds in one stream's "
                  "order checks the stream once in all: an idle stream records "
                  "no event, a busy one one event");

  DS_TEST_REQUIRE_CUDA ();

  for (k = 0; k < 3; k++)
    {
      ups[k] = ds_test_resource_new (kinds[k], FALSE);
      pools[k] = ds_pool_resource_new (DS_MEMORY_RESOURCE (ups[k]));
    }
  stream = ds_test_stream_new ();
  ds_access_order_init_stream (&order, stream, -1);

  /* Every release checked: 0 and 2, idle; 1, busy. */
  ds_test_pool_reset_policies ();
  for (round = 0; round < 3; round++)
    {
      gpointer blocks[3][4];
      DsFenceBatch batch;
      guint64 before_events = 0, after_events = 0, before_queries = 0, after_queries = 0;

      gate = NULL;
      if (round == 1)
        gate = ds_test_gate_new (stream);
      else
        DS_TEST_CUDA_CHECK (cudaStreamSynchronize (stream));

      for (k = 0; k < 3; k++)
        {
          DsPoolStats s = ds_test_pool_stats (pools[k]);

          before_events += s.events_recorded;
          before_queries += s.event_queries;
          for (i = 0; i < 4; i++)
            {
              g_autoptr(GError) error = NULL;

              blocks[k][i] = ds_memory_resource_allocate_async (pools[k], 4096 << i, 0, &order, &error);
              g_assert_no_error (error);
            }
        }

      ds_fence_batch_init (&batch);
      for (k = 0; k < 3; k++)
        for (i = 0; i < 4; i++)
          g_assert_true (ds_test_batch_give_back (&batch, pools[k], blocks[k][3 - i],
                                                    4096 << (3 - i), 16, &order, NULL));
      ds_fence_batch_finish (&batch);

      for (k = 0; k < 3; k++)
        {
          DsPoolStats s = ds_test_pool_stats (pools[k]);

          after_events += s.events_recorded;
          after_queries += s.event_queries;
        }

      g_test_message ("round %u: %" G_GUINT64_FORMAT " event(s), %" G_GUINT64_FORMAT " query(ies)",
                      round, after_events - before_events, after_queries - before_queries);
      g_assert_cmpuint (after_queries - before_queries, ==, 1);
      g_assert_cmpuint (after_events - before_events, ==, round == 1 ? 1 : 0);
      if (gate != NULL)
        {
          DS_TEST_ASSERT_GATE_HELD (gate);
          ds_test_gate_free (gate);
        }
    }

  DS_TEST_CUDA_CHECK (cudaStreamSynchronize (stream));
  ds_test_pool_reset_policies ();
  ds_test_stream_free (stream);
  for (k = 0; k < 3; k++)
    {
      g_assert_finalize_object (pools[k]);
      ds_test_resource_assert_clean (ups[k]);
      g_object_unref (ups[k]);
    }
}

static void
test_cuda_trim_pending (Fixture       *f,
                        gconstpointer  user_data)
{
  g_autoptr(GError) error = NULL;
  DsTestGate *gate;
  gpointer p, h;
  DsPoolStats s;

  g_test_summary ("trim gives back what no stream uses any more and keeps "
                  "what a busy stream may still use, without waiting");

  DS_TEST_REQUIRE_CUDA ();
  ds_test_pool_reset_policies ();

  gate = ds_test_gate_new (f->stream);
  p = ds_memory_resource_allocate_async (f->pool, 16384, 0, &f->order, &error);
  h = ds_memory_resource_allocate (f->pool, 32768, 0, &error);
  g_assert_no_error (error);
  ds_memory_resource_deallocate_async (f->pool, p, 16384, 0, &f->order, NULL);
  ds_memory_resource_deallocate (f->pool, h, 32768, 0);

  g_assert_cmpuint (ds_pool_resource_trim (DS_POOL_RESOURCE (f->pool)), ==, 32768);
  DS_TEST_ASSERT_GATE_HELD (gate);
  g_assert_cmpuint (ds_test_resource_get_n_live (f->up), ==, 1);
  s = ds_test_pool_stats (f->pool);
  g_assert_cmpuint (s.event_waits, ==, 0);
  g_assert_cmpuint (s.bytes_cached, ==, 16384);

  ds_test_gate_open (gate);
  DS_TEST_CUDA_CHECK (cudaStreamSynchronize (f->stream));
  ds_test_gate_free (gate);
  g_assert_cmpuint (ds_pool_resource_trim (DS_POOL_RESOURCE (f->pool)), ==, 16384);
  ds_test_resource_assert_clean (f->up);
}

static void
test_cuda_finalize_pending (Fixture       *f,
                            gconstpointer  user_data)
{
  g_autoptr(GError) error = NULL;
  DsTestGate *gate;
  gpointer p;

  g_test_summary ("Finalizing a pool with blocks pending on a busy stream "
                  "waits for that stream's work before giving them back");

  DS_TEST_REQUIRE_CUDA ();
  ds_test_pool_reset_policies ();

  gate = ds_test_gate_new (f->stream);
  p = ds_memory_resource_allocate_async (f->pool, 16384, 0, &f->order, &error);
  g_assert_no_error (error);
  ds_memory_resource_deallocate_async (f->pool, p, 16384, 0, &f->order, NULL);
  DS_TEST_ASSERT_GATE_HELD (gate);

  /* Finalize blocks until the stream got past the gate, which another
   * thread opens while it waits. */
  ds_test_gate_open_later (gate, 100);
  g_assert_finalize_object (g_steal_pointer (&f->pool));
  g_assert_true (ds_test_gate_passed (gate));
  ds_test_gate_free (gate);
  ds_test_resource_assert_clean (f->up);
}

static void
test_cuda_bound_reuses_pending (Fixture       *f,
                                gconstpointer  user_data)
{
  cudaStream_t s1, s2, s3;
  DsAccessOrder o1, o2, o3;
  g_autoptr(GError) error = NULL;
  DsTestGate *g1, *g2;
  gint after = 0;
  gpointer p, q, r, h;
  DsPoolStats s;

  g_test_summary ("At twice the peak demand, a request reuses a block still "
                  "pending on another stream (its stream waits; host order "
                  "blocks) instead of giving it back and taking a new one");

  DS_TEST_REQUIRE_CUDA ();
  ds_test_pool_reset_policies ();

  s1 = ds_test_stream_new ();
  s2 = ds_test_stream_new ();
  s3 = ds_test_stream_new ();
  ds_access_order_init_stream (&o1, s1, -1);
  ds_access_order_init_stream (&o2, s2, -1);
  ds_access_order_init_stream (&o3, s3, -1);

  g1 = ds_test_gate_new (s1);
  g2 = ds_test_gate_new (s2);

  /* Peak demand: one 64 KiB block; the bound: two. */
  p = ds_memory_resource_allocate_async (f->pool, 65536, 0, &o1, &error);
  g_assert_no_error (error);
  ds_memory_resource_deallocate_async (f->pool, p, 65536, 0, &o1, NULL);
  q = ds_memory_resource_allocate_async (f->pool, 65536, 0, &o2, &error);
  g_assert_no_error (error);
  g_assert_true (q != p);
  ds_memory_resource_deallocate_async (f->pool, q, 65536, 0, &o2, NULL);
  g_assert_cmpuint (ds_test_pool_stats (f->pool).upstream_allocations, ==, 2);

  /* A third stream: both blocks pending, no room for a third. */
  r = ds_memory_resource_allocate_async (f->pool, 65536, 0, &o3, &error);
  g_assert_no_error (error);
  g_assert_true (r == p || r == q);
  s = ds_test_pool_stats (f->pool);
  g_assert_cmpuint (s.upstream_allocations, ==, 2);
  g_assert_cmpuint (s.upstream_deallocations, ==, 0);
  g_assert_cmpuint (s.stream_waits, ==, 1);
  g_assert_cmpuint (s.event_waits, ==, 0);
  ds_test_stream_set_flag (s3, &after);
  g_usleep (100 * G_TIME_SPAN_MILLISECOND);
  g_assert_cmpint (g_atomic_int_get (&after), ==, 0);
  DS_TEST_ASSERT_GATE_HELD (g1);

  /* Host order (demand back to one block): blocks until the oldest
   * pending release (q's, on s2) completes, and reuses q. Both gates are
   * opened by other threads while it blocks (s1's first: CUDA may run
   * host functions one at a time). */
  ds_memory_resource_deallocate_async (f->pool, r, 65536, 0, &o3, NULL);
  ds_test_gate_open_later (g1, 100);
  ds_test_gate_open_later (g2, 200);
  h = ds_memory_resource_allocate (f->pool, 65536, 0, &error);
  g_assert_no_error (error);
  g_assert_true (h == q);
  g_assert_true (ds_test_gate_passed (g2));
  s = ds_test_pool_stats (f->pool);
  g_assert_cmpuint (s.upstream_allocations, ==, 2);
  g_assert_cmpuint (s.upstream_deallocations, ==, 0);
  g_assert_cmpuint (s.event_waits, ==, 1);
  ds_test_pool_assert_within_bound (f->pool);

  ds_memory_resource_deallocate (f->pool, h, 65536, 0);
  ds_test_gate_free (g1);
  ds_test_gate_free (g2);
  ds_test_stream_free (s1);
  ds_test_stream_free (s2);
  ds_test_stream_free (s3);
  g_assert_cmpint (g_atomic_int_get (&after), ==, 1);
}

/* One same-stream trip of a 64 KiB block on @f's stream. */
static void
same_stream_trip (Fixture *f)
{
  g_autoptr(GError) error = NULL;
  gpointer p = ds_memory_resource_allocate_async (f->pool, 65536, 0, &f->order, &error);

  g_assert_no_error (error);
  g_assert_true (ds_memory_resource_deallocate_async (f->pool, p, 65536, 0, &f->order, &error));
  g_assert_no_error (error);
}

static guint64
queries_over_trips (Fixture *f,
                    guint    n)
{
  guint64 before = ds_test_pool_stats (f->pool).event_queries;

  for (guint i = 0; i < n; i++)
    same_stream_trip (f);

  return ds_test_pool_stats (f->pool).event_queries - before;
}

/* Whether requests from elsewhere want the blocks of @f's stream now. */
static gboolean
stream_demand (Fixture *f)
{
  DsStreamLoan loan;
  DsStreamState *ss = ds_stream_state_borrow (&f->order, &loan);
  gboolean demand = g_atomic_int_get (&ss->demand);

  ds_stream_state_end_loan (ss, &loan);
  return demand;
}

static void
test_cuda_lazy_cross_demand_fades (Fixture       *f,
                                   gconstpointer  user_data)
{
  g_autoptr(GError) error = NULL;
  cudaStream_t other;
  DsAccessOrder other_order;
  gpointer h, h0, o;
  gint64 start;
  guint i;

  g_test_summary ("A stream is checked at its releases while requests from "
                  "elsewhere want its blocks; once none has for a while, it "
                  "costs no query; the next request from elsewhere starts the "
                  "checks again; a stream whose blocks nobody else wants is "
                  "never checked after its first release, whatever others do");

  DS_TEST_REQUIRE_CUDA ();
  ds_fence_set_check_every_for_testing (0);
  fake_clock_pool (f);
  ds_clock_set_for_testing (fake_clock);
  DS_TEST_CUDA_CHECK (cudaStreamCreateWithFlags (&other, cudaStreamNonBlocking));
  ds_access_order_init_stream (&other_order, other, 0);

  /* The first release of the stream is checked (idle: the block goes
   * back complete, for anyone); the second is not, since nobody has
   * wanted its blocks from elsewhere yet. A host-order request then finds
   * the block pending on the stream: it takes a new one, and the stream
   * is checked from now on. */
  same_stream_trip (f);
  same_stream_trip (f);
  g_assert_cmpuint (ds_test_pool_stats (f->pool).event_queries, ==, 1);
  g_assert_false (stream_demand (f));
  h = ds_memory_resource_allocate (f->pool, 65536, 0, &error);
  g_assert_no_error (error);
  ds_memory_resource_deallocate (f->pool, h, 65536, 0);
  g_assert_true (stream_demand (f));
  g_assert_cmpuint (ds_test_pool_stats (f->pool).upstream_allocations, ==, 2);

  /* While it lasts: every 8th release is checked. */
  g_assert_cmpuint (queries_over_trips (f, 64), >=, 7);

  /* Nobody else asks: DS_FENCE_DEMAND_HOLD_US of the fence clock after
   * the last sign of it (looked at by the checks), it fades. */
  start = fake_now;
  for (i = 0; i < 64 && stream_demand (f); i++)
    {
      if (i % 4 == 0)
        fake_now += DS_FENCE_DEMAND_HOLD_US / 4;
      same_stream_trip (f);
    }
  g_assert_false (stream_demand (f));
  g_assert_cmpint (fake_now - start, >=, DS_FENCE_DEMAND_HOLD_US);
  g_assert_cmpuint (queries_over_trips (f, 1000), ==, 0);

  /* Another stream's requests take its own blocks, and a host-order
   * request takes a ready block (the one the first check left): neither
   * wants this stream's pending blocks, which stay unchecked. */
  o = ds_memory_resource_allocate_async (f->pool, 65536, 0, &other_order, &error);
  g_assert_no_error (error);
  g_assert_true (ds_memory_resource_deallocate_async (f->pool, o, 65536, 0, &other_order, &error));
  g_assert_no_error (error);
  h0 = ds_memory_resource_allocate (f->pool, 65536, 0, &error);
  g_assert_no_error (error);
  g_assert_false (stream_demand (f));
  g_assert_cmpuint (queries_over_trips (f, 64), ==, 0);

  /* The stream's releases since have no fence: a host-order request
   * misses them (it gets a new block, or the pool waits for the device
   * at its memory bound), and the checks start again at once. */
  h = ds_memory_resource_allocate (f->pool, 65536, 0, &error);
  g_assert_no_error (error);
  g_assert_true (stream_demand (f));
  g_assert_cmpuint (ds_test_pool_stats (f->pool).upstream_allocations, <=, 3);
  g_assert_cmpuint (queries_over_trips (f, 64), >=, 7);
  ds_memory_resource_deallocate (f->pool, h, 65536, 0);
  ds_memory_resource_deallocate (f->pool, h0, 65536, 0);

  DS_TEST_CUDA_CHECK (cudaStreamSynchronize (other));
  DS_TEST_CUDA_CHECK (cudaStreamDestroy (other));
  DS_TEST_CUDA_CHECK (cudaStreamSynchronize (f->stream));
  ds_clock_set_for_testing (NULL);
  ds_test_pool_assert_within_bound (f->pool);
}

static void
test_cuda_stream_states (Fixture       *f,
                         gconstpointer  user_data)
{
  g_autoptr(GError) error = NULL;
  guint before, i;

  g_test_summary ("Stream states of streams that come and go are dropped once "
                  "nothing they released is pending");

  DS_TEST_REQUIRE_CUDA ();
  ds_test_pool_reset_policies ();

  before = ds_stream_state_count ();

  for (i = 0; i < 200; i++)
    {
      cudaStream_t stream = ds_test_stream_new ();
      DsAccessOrder order;
      gpointer p;

      ds_access_order_init_stream (&order, stream, -1);
      p = ds_memory_resource_allocate_async (f->pool, 512, 0, &order, &error);
      g_assert_no_error (error);
      ds_memory_resource_deallocate_async (f->pool, p, 512, 0, &order, NULL);
      ds_test_stream_free (stream);
      /* Another request picks the block up (its stream is gone, its event
       * has completed), dropping the last reference to the state. */
      p = ds_memory_resource_allocate (f->pool, 512, 0, &error);
      g_assert_no_error (error);
      ds_memory_resource_deallocate (f->pool, p, 512, 0);
    }

  g_assert_cmpuint (ds_stream_state_count (), <=, before + 8);
  g_assert_cmpuint (ds_test_pool_stats (f->pool).upstream_allocations, ==, 1);
}

#endif /* HAVE_CUDA */

int
main (int    argc,
      char **argv)
{
  ds_test_init (&argc, &argv);

  /* On the fixture: a pool over a recording device-kind upstream, with a
   * stream (STREAM) or without. */
#define ADD(path, flags, func) \
  ds_test_add_gpu_pool ("/Ds/PoolResource/cuda/" path, DS_MEMORY_KIND_DEVICE, flags, func)
#define STREAM DS_TEST_FIXTURE_STREAM

  ADD ("same-stream", STREAM, test_cuda_same_stream);
  ADD ("lazy/same-stream", STREAM, test_cuda_lazy_same_stream);
  ds_test_add_gpu_func ("/Ds/PoolResource/cuda/lazy/host-reuse", test_cuda_lazy_host_reuse);
  ADD ("lazy/idle-release", STREAM, test_cuda_lazy_idle_release);
  ADD ("lazy/dead-streams", STREAM, test_cuda_lazy_dead_streams);
  ADD ("lazy/dead-streams-trim", STREAM, test_cuda_lazy_dead_streams_trim);
  ADD ("lazy/cross-demand-fades", STREAM, test_cuda_lazy_cross_demand_fades);
  ADD ("legacy-stream", 0, test_cuda_legacy_stream);
  ADD ("cross-stream", 0, test_cuda_cross_stream);
  ADD ("destroyed-stream", 0, test_cuda_destroyed_stream);
  ds_test_add_gpu_func ("/Ds/PoolResource/cuda/release-batch", test_cuda_release_batch);
  ADD ("trim-pending", STREAM, test_cuda_trim_pending);
  ADD ("finalize-pending", STREAM, test_cuda_finalize_pending);
  ADD ("bound-reuses-pending", 0, test_cuda_bound_reuses_pending);
  ADD ("stream-states", 0, test_cuda_stream_states);

#undef ADD
#undef STREAM

  return g_test_run ();
}
