/* ds-test-fixtures.c: the GTest fixtures the test programs share
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "ds-test-fixtures.h"

#define KIND_OF(user_data)  (GPOINTER_TO_UINT (user_data) & 0xff)
#define FLAGS_OF(user_data) (GPOINTER_TO_UINT (user_data) & ~0xffu)

/* The scratchpad fixture ---------------------------------------------------- */

void
ds_test_scratchpad_fixture_setup (DsTestScratchpadFixture *f,
                                  gconstpointer            user_data)
{
  gboolean stream_ordered = (FLAGS_OF (user_data) & DS_TEST_FIXTURE_STREAM_ORDERED) != 0;
  guint kind;

  for (kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
    f->res[kind] = ds_test_resource_new (kind, stream_ordered);
  f->host = ds_access_order_new_host ();
  f->sp = g_object_new (DS_TYPE_SCRATCHPAD,
                        "device-order", f->host,
                        "host-resource", f->res[DS_MEMORY_KIND_HOST],
                        "pinned-resource", f->res[DS_MEMORY_KIND_PINNED],
                        "device-resource", f->res[DS_MEMORY_KIND_DEVICE],
                        "managed-resource", f->res[DS_MEMORY_KIND_MANAGED],
                        NULL);
}

void
ds_test_scratchpad_fixture_teardown (DsTestScratchpadFixture *f,
                                     gconstpointer            user_data)
{
  guint kind;

  if (f->sp != NULL)
    g_assert_finalize_object (g_steal_pointer (&f->sp));

  for (kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
    {
      ds_test_resource_assert_clean (f->res[kind]);
      g_assert_finalize_object (g_steal_pointer (&f->res[kind]));
    }
  g_clear_pointer (&f->host, ds_access_order_free);
}

guint
ds_test_scratchpad_total_calls (DsTestScratchpadFixture *f)
{
  guint kind, n = 0;

  for (kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
    n += ds_test_resource_get_n_calls (f->res[kind]);
  return n;
}

gpointer
ds_test_scratchpad_alloc_ok (DsTestScratchpadFixture *f,
                             DsMemoryKind             kind,
                             gsize                    size,
                             gsize                    alignment)
{
  g_autoptr(GError) error = NULL;
  gpointer p = ds_scratchpad_alloc (f->sp, kind, size, alignment, &error);

  g_assert_no_error (error);
  g_assert_nonnull (p);
  ds_test_assert_aligned (p, alignment != 0 ? alignment : 16);
  g_assert_true (ds_test_resource_owns (f->res[kind], p, size));

  return p;
}

DsTestKindState
ds_test_scratchpad_kind_state (DsTestScratchpadFixture *f,
                               DsMemoryKind             kind)
{
  DsTestKindState s;

  s.reserved = ds_scratchpad_get_reserved (f->sp, kind);
  s.allocated = ds_scratchpad_get_allocated (f->sp, kind);
  s.n_blocks = ds_scratchpad_get_n_blocks (f->sp, kind);
  s.n_calls = ds_test_resource_get_n_calls (f->res[kind]);
  return s;
}

/* The pool fixture ----------------------------------------------------------- */

void
ds_test_pool_fixture_setup (DsTestPoolFixture *f,
                            gconstpointer      user_data)
{
  guint flags = FLAGS_OF (user_data);

  f->up = ds_test_resource_new (KIND_OF (user_data),
                                (flags & DS_TEST_FIXTURE_STREAM_ORDERED) != 0);
  /* For a GPU kind the upstream hands out host memory: the pointers are
   * only tokens there; the streams, events and waits are real. */
  f->pool = ds_pool_resource_new (DS_MEMORY_RESOURCE (f->up));
  f->stream = NULL;
  ds_access_order_init_host (&f->order);

#if HAVE_CUDA
  if ((flags & DS_TEST_FIXTURE_STREAM) != 0 && ds_test_cuda_available ())
    {
      f->stream = ds_test_stream_new ();
      ds_access_order_init_stream (&f->order, f->stream, -1);
    }
#endif
}

void
ds_test_pool_fixture_teardown (DsTestPoolFixture *f,
                               gconstpointer      user_data)
{
#if HAVE_CUDA
  if (f->stream != NULL)
    ds_test_stream_free (g_steal_pointer (&f->stream));
#endif
  if (f->pool != NULL)
    g_assert_finalize_object (g_steal_pointer (&f->pool));
  ds_test_resource_assert_clean (f->up);
  g_clear_object (&f->up);
}

DsPoolStats
ds_test_pool_stats (DsMemoryResource *pool)
{
  DsPoolStats stats;

  ds_pool_resource_get_stats (DS_POOL_RESOURCE (pool), &stats);
  return stats;
}

guint64
ds_test_pool_cuda_calls (const DsPoolStats *s)
{
  return s->events_recorded + s->events_created + s->event_queries +
         s->stream_waits + s->event_waits;
}

void
ds_test_pool_assert_within_bound (DsMemoryResource *pool)
{
  DsPoolStats s = ds_test_pool_stats (pool);

  g_assert_cmpuint (s.bytes_held, <=, 2 * s.peak_bytes_in_use);
  g_assert_cmpuint (s.bytes_cached, <=, s.bytes_held);
}

void
ds_test_pool_reset_policies (void)
{
  ds_fence_set_check_every_for_testing (1);
}

gboolean
ds_test_batch_give_back (DsFenceBatch         *batch,
                         DsMemoryResource     *resource,
                         gpointer              ptr,
                         gsize                 size,
                         gsize                 alignment,
                         const DsAccessOrder  *order,
                         GError              **error)
{
  DsUpstream upstream;

  g_assert_true (ds_upstream_bind (&upstream, resource, NULL));
  /* By address (no handle), as a block the test took from the resource's
   * own API. */
  ds_fence_batch_give_back (batch, &upstream, ptr, size, alignment != 0 ? alignment : 16, NULL,
                            order);
  return ds_fence_batch_take_error (batch, error) == 0;
}

/* The arena fixture ---------------------------------------------------------- */

void
ds_test_arena_fixture_setup (DsTestArenaFixture *f,
                             gconstpointer       user_data)
{
  gsize initial = GPOINTER_TO_SIZE (user_data);

  f->sync = ds_test_resource_new (DS_MEMORY_KIND_DEVICE, FALSE);
  f->async = ds_test_resource_new (DS_MEMORY_KIND_DEVICE, TRUE);
  ds_arena_init (&f->arena, &f->window, initial != 0 ? initial : 64 * 1024,
                 DS_SCRATCHPAD_DEFAULT_MAX_BLOCK_SIZE);
}

void
ds_test_arena_fixture_teardown (DsTestArenaFixture *f,
                                gconstpointer       user_data)
{
  ds_arena_clear (&f->arena);
  g_assert_finalize_object (f->sync);
  g_assert_finalize_object (f->async);
}

void
ds_test_arena_bind (DsTestArenaFixture *f,
                    DsMemoryResource   *upstream)
{
  g_autoptr(GError) error = NULL;

  if (f->arena.upstream.resource == upstream)
    return;
  g_assert_true (ds_arena_bind (&f->arena, upstream, &error));
  g_assert_no_error (error);
}

gboolean
ds_test_arena_release (DsTestArenaFixture   *f,
                       DsMemoryResource     *upstream,
                       const DsAccessOrder  *order,
                       GError              **error)
{
  DsFenceBatch batch;
  gboolean ok;

  ds_test_arena_bind (f, upstream);
  ds_fence_batch_init (&batch);
  ok = ds_arena_release (&f->arena, &batch, order, FALSE, error);
  ds_fence_batch_finish (&batch);

  return ok;
}

gpointer
ds_test_arena_grow_or_bump (DsTestArenaFixture *f,
                            DsMemoryResource   *upstream,
                            gsize               size,
                            gsize               alignment)
{
  g_autoptr(GError) error = NULL;
  gpointer p = _ds_bump (&f->window, size, alignment);

  if (p == NULL)
    {
      ds_test_arena_bind (f, upstream);
      p = ds_arena_grow (&f->arena, size, alignment, NULL, &error);
      g_assert_no_error (error);
    }
  g_assert_nonnull (p);
  ds_test_assert_aligned (p, alignment);

  return p;
}
