/* test-observer.c: the observer hook: what pools and scratchpads tell it
 * (host memory: runs anywhere)
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "ds-test-utils.h"

#include <string.h>

#include "ds-clock-private.h"

typedef struct
{
  GMutex   lock;
  GArray  *seen;        /* of DsObservation, observed */
  guint    n_wanted;    /* want () calls */
  gboolean want;        /* what want () answers */
  gboolean want_saw_figures;
} Log;

static gboolean
log_want (const DsObservation *o,
          gpointer             user_data)
{
  Log *log = user_data;

  g_mutex_lock (&log->lock);
  log->n_wanted++;
  if (o->held != 0 || o->in_use != 0 || o->peak != 0 || o->upstream != NULL)
    log->want_saw_figures = TRUE;
  g_mutex_unlock (&log->lock);
  return log->want;
}

static void
log_observe (const DsObservation *o,
             gpointer             user_data)
{
  Log *log = user_data;

  g_mutex_lock (&log->lock);
  g_array_append_vals (log->seen, o, 1);
  g_mutex_unlock (&log->lock);
}

static const DsObserver everything = { .observe = log_observe };
static const DsObserver asking = { .want = log_want, .observe = log_observe };

static void
log_init (Log *log)
{
  memset (log, 0, sizeof *log);
  g_mutex_init (&log->lock);
  log->seen = g_array_new (FALSE, FALSE, sizeof (DsObservation));
  log->want = TRUE;
}

static void
log_clear (Log *log)
{
  g_array_free (log->seen, TRUE);
  g_mutex_clear (&log->lock);
}

/* How many observations of @event about @object; the last in @last. */
static guint
count (Log             *log,
       DsObserverEvent  event,
       gpointer         object,
       DsObservation   *last)
{
  guint n = 0;

  for (guint i = 0; i < log->seen->len; i++)
    {
      DsObservation *o = &g_array_index (log->seen, DsObservation, i);

      if (o->event == event && (object == NULL || o->object == object))
        {
          n++;
          if (last != NULL)
            *last = *o;
        }
    }
  return n;
}

static void
test_install (void)
{
  static const DsObserver other = { .observe = log_observe };
  Log log;

  g_test_summary ("One observer at a time; removing it is final, and removing "
                  "one that is not installed is a programmer error");

  log_init (&log);
  g_assert_true (ds_observer_install (&everything, &log));
  g_assert_false (ds_observer_install (&other, &log));
  g_test_expect_message ("Ds", G_LOG_LEVEL_CRITICAL, "*not the installed observer*");
  ds_observer_remove (&other);
  g_test_assert_expected_messages ();
  ds_observer_remove (&everything);
  g_assert_true (ds_observer_install (&other, &log));
  ds_observer_remove (&other);
  log_clear (&log);
}

static void
test_pool_events (void)
{
  g_autoptr(DsMemoryResource) host = ds_host_memory_resource_new ();
  g_autoptr(GError) error = NULL;
  DsMemoryResource *pool = ds_pool_resource_new (host);
  DsScratchpad *sp = g_object_new (DS_TYPE_SCRATCHPAD, "host-resource", pool, NULL);
  DsObservation o = { 0, };
  Log log;

  g_test_summary ("A pool tells its misses, upstream calls, hits, frees, trims "
                  "and disposal with its figures after each; a scratchpad its "
                  "blocks and releases, with its upstream; nothing once removed");

  log_init (&log);
  g_assert_true (ds_observer_install (&everything, &log));

  g_assert_nonnull (ds_scratchpad_alloc (sp, DS_MEMORY_KIND_HOST, 1000, 0, &error));
  g_assert_cmpuint (count (&log, DS_OBSERVER_EVENT_UPSTREAM_ALLOC, pool, &o), ==, 1);
  g_assert_cmpuint (o.bytes, ==, 65536);
  g_assert_cmpuint (o.held, ==, 65536);
  g_assert_cmpint (o.kind, ==, DS_MEMORY_KIND_HOST);
  g_assert_cmpint (o.device, ==, -1);
  g_assert_null (o.label);
  g_assert_cmpuint (count (&log, DS_OBSERVER_EVENT_MISS, pool, &o), ==, 1);
  g_assert_cmpuint (o.in_use, ==, 65536);
  g_assert_cmpuint (o.peak, ==, 65536);
  g_assert_cmpuint (count (&log, DS_OBSERVER_EVENT_BLOCK, sp, &o), ==, 1);
  g_assert_cmpuint (o.bytes, ==, 65536);
  g_assert_cmpuint (o.held, ==, 65536);
  g_assert_cmpuint (o.in_use, ==, 1008);
  g_assert_true (o.upstream == pool);

  ds_scratchpad_release (sp);
  g_assert_cmpuint (count (&log, DS_OBSERVER_EVENT_FREE, pool, &o), ==, 1);
  g_assert_cmpuint (o.held, ==, 65536);
  g_assert_cmpuint (o.in_use, ==, 0);
  g_assert_cmpuint (count (&log, DS_OBSERVER_EVENT_RELEASE, sp, &o), ==, 1);
  g_assert_cmpuint (o.bytes, ==, 65536);
  g_assert_cmpuint (o.held, ==, 0);

  g_assert_nonnull (ds_scratchpad_alloc (sp, DS_MEMORY_KIND_HOST, 1000, 0, &error));
  g_assert_cmpuint (count (&log, DS_OBSERVER_EVENT_HIT, pool, &o), ==, 1);
  g_assert_cmpuint (o.in_use, ==, 65536);
  ds_scratchpad_release (sp);

  g_assert_cmpuint (ds_pool_resource_trim (DS_POOL_RESOURCE (pool)), ==, 65536);
  g_assert_cmpuint (count (&log, DS_OBSERVER_EVENT_TRIM, pool, &o), ==, 1);
  g_assert_cmpuint (o.bytes, ==, 65536);
  g_assert_cmpuint (o.held, ==, 0);

  ds_pool_resource_set_max_cached_size (DS_POOL_RESOURCE (pool), 4096);
  g_assert_nonnull (ds_scratchpad_alloc (sp, DS_MEMORY_KIND_HOST, 1000, 0, &error));
  ds_scratchpad_release (sp);
  g_assert_cmpuint (count (&log, DS_OBSERVER_EVENT_UPSTREAM_FREE, pool, &o), ==, 1);
  g_assert_cmpuint (o.held, ==, 0);

  g_assert_finalize_object (sp);
  g_assert_finalize_object (pool);
  g_assert_cmpuint (count (&log, DS_OBSERVER_EVENT_DISPOSE, NULL, NULL), ==, 1);

  ds_observer_remove (&everything);
  g_array_set_size (log.seen, 0);
  pool = ds_pool_resource_new (host);
  sp = g_object_new (DS_TYPE_SCRATCHPAD, "host-resource", pool, NULL);
  g_assert_nonnull (ds_scratchpad_alloc (sp, DS_MEMORY_KIND_HOST, 1000, 0, &error));
  g_assert_finalize_object (sp);
  g_assert_finalize_object (pool);
  g_assert_cmpuint (log.seen->len, ==, 0);
  log_clear (&log);
}

static void
test_want (void)
{
  g_autoptr(DsMemoryResource) host = ds_host_memory_resource_new ();
  g_autoptr(GError) error = NULL;
  DsMemoryResource *pool = ds_pool_resource_new (host);
  DsScratchpad *sp = g_object_new (DS_TYPE_SCRATCHPAD, "host-resource", pool, NULL);
  Log log;

  g_test_summary ("want () is asked for every frequent event before the figures "
                  "are read, and FALSE drops it; rare events are always observed");

  log_init (&log);
  log.want = FALSE;
  g_assert_true (ds_observer_install (&asking, &log));
  for (guint i = 0; i < 10; i++)
    {
      g_assert_nonnull (ds_scratchpad_alloc (sp, DS_MEMORY_KIND_HOST, 1000, 0, &error));
      ds_scratchpad_release (sp);
    }
  ds_observer_remove (&asking);

  /* 10 blocks, 10 releases, 9 hits, 10 frees. */
  g_assert_cmpuint (log.n_wanted, ==, 39);
  g_assert_false (log.want_saw_figures);
  g_assert_cmpuint (count (&log, DS_OBSERVER_EVENT_MISS, pool, NULL), ==, 1);
  g_assert_cmpuint (count (&log, DS_OBSERVER_EVENT_UPSTREAM_ALLOC, pool, NULL), ==, 1);
  g_assert_cmpuint (log.seen->len, ==, 2);

  g_assert_finalize_object (sp);
  g_assert_finalize_object (pool);
  log_clear (&log);
}

static void
test_look (void)
{
  g_autoptr(DsMemoryResource) host = ds_host_memory_resource_new ();
  DsMemoryResource *a = ds_pool_resource_new (host);
  DsMemoryResource *b = ds_pool_resource_new (host);
  gint ia = -1, ib = -1;
  Log log;

  g_test_summary ("ds_observer_look_at_pools () shows every pool alive, oldest "
                  "first, used or not; without an observer it does nothing");

  log_init (&log);
  ds_observer_look_at_pools ();
  g_assert_true (ds_observer_install (&everything, &log));
  ds_observer_look_at_pools ();
  ds_observer_remove (&everything);
  ds_observer_look_at_pools ();

  for (guint i = 0; i < log.seen->len; i++)
    {
      DsObservation *o = &g_array_index (log.seen, DsObservation, i);

      g_assert_cmpint (o->event, ==, DS_OBSERVER_EVENT_LOOK);
      if (o->object == a)
        ia = (gint) i;
      if (o->object == b)
        ib = (gint) i;
    }
  g_assert_cmpint (ia, >=, 0);
  g_assert_cmpint (ib, >, ia);
  g_assert_cmpuint (count (&log, DS_OBSERVER_EVENT_LOOK, a, NULL), ==, 1);

  g_assert_finalize_object (a);
  g_assert_finalize_object (b);
  log_clear (&log);
}

static void
test_default_label (void)
{
  g_autoptr(GError) error = NULL;
  DsScratchpad *sp = ds_scratchpad_new (NULL);
  DsObservation o = { 0, };
  Log log;

  g_test_summary ("The default pools are labelled \"default\"");

  log_init (&log);
  g_assert_true (ds_observer_install (&everything, &log));
  g_assert_nonnull (ds_scratchpad_alloc (sp, DS_MEMORY_KIND_HOST, 100, 0, &error));
  g_assert_finalize_object (sp);
  ds_observer_remove (&everything);

  g_assert_cmpuint (count (&log, DS_OBSERVER_EVENT_FREE, NULL, &o), >=, 1);
  g_assert_cmpstr (o.label, ==, "default");
  log_clear (&log);
}

static gint64 fake_now;

static gint64
fake_clock (void)
{
  return fake_now;
}

static void
test_idle_release (void)
{
  g_autoptr(DsMemoryResource) host = ds_host_memory_resource_new ();
  DsMemoryResource *pool;
  DsObservation o = { 0, };
  gpointer burst[16];
  Log log;

  g_test_summary ("A pool's idle release is told, with what it gave back and "
                  "what it holds after");

  fake_now = g_get_monotonic_time ();
  ds_clock_set_for_testing (fake_clock);
  pool = ds_pool_resource_new (host);
  ds_pool_resource_set_release_threshold (DS_POOL_RESOURCE (pool), 0);
  ds_pool_resource_set_idle_timeout (DS_POOL_RESOURCE (pool), 1000);

  log_init (&log);
  g_assert_true (ds_observer_install (&everything, &log));
  for (guint i = 0; i < G_N_ELEMENTS (burst); i++)
    burst[i] = ds_memory_resource_allocate (pool, 256 << 10, 0, NULL);
  for (guint i = 0; i < G_N_ELEMENTS (burst); i++)
    ds_memory_resource_deallocate (pool, burst[i], 256 << 10, 0);
  for (guint i = 0; i < 2000; i++)
    {
      gpointer p = ds_memory_resource_allocate (pool, 4096, 0, NULL);

      ds_memory_resource_deallocate (pool, p, 4096, 0);
      fake_now += 10000;
    }
  ds_observer_remove (&everything);
  ds_clock_set_for_testing (NULL);

  g_assert_cmpuint (count (&log, DS_OBSERVER_EVENT_IDLE_RELEASE, pool, &o), >=, 1);
  g_assert_cmpuint (o.held, ==, 4096);
  g_assert_cmpuint (o.bytes, >=, 256 << 10);

  g_assert_finalize_object (pool);
  log_clear (&log);
}

static void
test_exports (void)
{
  g_autoptr(DsMemoryResource) host = ds_host_memory_resource_new ();
  g_autoptr(GError) error = NULL;
  DsMemoryResource *pool = ds_pool_resource_new (host);
  DsScratchpad *sp = g_object_new (DS_TYPE_SCRATCHPAD, "host-resource", pool, NULL);
  DsBlock *small, *big, *export;
  DsObservation o = { 0, };
  guint64 first;
  Log log;

  g_test_summary ("A release that meets a live export tells what it keeps for it "
                  "(EXPORT_HOLD) and, once the export dies, what goes back "
                  "(EXPORT_RETURN), both about the scratchpad; blocks kept before "
                  "the observer came are not told when they go back");

  log_init (&log);
  g_assert_true (ds_observer_install (&everything, &log));
  small = ds_scratchpad_alloc_block (sp, DS_MEMORY_KIND_HOST, 64, 0, &error);
  g_assert_no_error (error);
  first = ds_scratchpad_get_reserved (sp, DS_MEMORY_KIND_HOST);
  big = ds_scratchpad_alloc_block (sp, DS_MEMORY_KIND_HOST, 4 * first, 0, &error);
  g_assert_no_error (error);
  export = ds_block_export (small, &error);
  g_assert_no_error (error);

  g_assert_true (ds_scratchpad_try_release (sp, &error));
  g_assert_cmpuint (count (&log, DS_OBSERVER_EVENT_EXPORT_HOLD, sp, &o), ==, 1);
  g_assert_cmpint (o.kind, ==, DS_MEMORY_KIND_HOST);
  g_assert_cmpint (o.device, ==, -1);
  g_assert_cmpuint (o.bytes, ==, first);
  g_assert_cmpuint (o.held, ==, first);
  g_assert_true (o.upstream == pool);
  g_assert_cmpuint (count (&log, DS_OBSERVER_EVENT_RELEASE, sp, &o), ==, 1);
  g_assert_cmpuint (o.held, ==, 0);
  g_assert_cmpuint (count (&log, DS_OBSERVER_EVENT_EXPORT_RETURN, NULL, NULL), ==, 0);

  ds_block_unref (export);
  g_assert_cmpuint (count (&log, DS_OBSERVER_EVENT_EXPORT_RETURN, sp, &o), ==, 1);
  g_assert_cmpuint (o.bytes, ==, first);
  g_assert_cmpuint (o.held, ==, 0);
  g_assert_true (o.upstream == pool);
  ds_block_unref (small);
  ds_block_unref (big);

  /* Kept while nothing observed: its return is not told. */
  ds_observer_remove (&everything);
  g_array_set_size (log.seen, 0);
  small = ds_scratchpad_alloc_block (sp, DS_MEMORY_KIND_HOST, 64, 0, &error);
  export = ds_block_export (small, &error);
  g_assert_no_error (error);
  g_assert_true (ds_scratchpad_try_release (sp, &error));
  g_assert_cmpuint (ds_scratchpad_get_held_by_exports (sp, DS_MEMORY_KIND_HOST), >, 0);
  g_assert_true (ds_observer_install (&everything, &log));
  ds_block_unref (export);
  g_assert_cmpuint (ds_scratchpad_get_held_by_exports (sp, DS_MEMORY_KIND_HOST), ==, 0);
  g_assert_cmpuint (count (&log, DS_OBSERVER_EVENT_EXPORT_RETURN, NULL, NULL), ==, 0);
  ds_observer_remove (&everything);

  ds_block_unref (small);
  g_assert_finalize_object (sp);
  g_assert_finalize_object (pool);
  log_clear (&log);
}

int
main (int    argc,
      char **argv)
{
  ds_test_init (&argc, &argv);

  g_test_add_func ("/Ds/Observer/install", test_install);
  g_test_add_func ("/Ds/Observer/pool-events", test_pool_events);
  g_test_add_func ("/Ds/Observer/want", test_want);
  g_test_add_func ("/Ds/Observer/look", test_look);
  g_test_add_func ("/Ds/Observer/default-label", test_default_label);
  g_test_add_func ("/Ds/Observer/idle-release", test_idle_release);
  g_test_add_func ("/Ds/Observer/exports", test_exports);

  return g_test_run ();
}
