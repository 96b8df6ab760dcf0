/* test-recorder.c: DsRecorder, its ring and what pools and scratchpads
 * report (host memory: runs anywhere)
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <string.h>

#include "ds-recorder.h"
#include "ds-recorder-ring-private.h"

static void
count_notify (GObject    *object,
              GParamSpec *pspec,
              gpointer    user_data)
{
  (*(guint *) user_data)++;
}

/* The ring ------------------------------------------------------------------------ */

typedef struct
{
  GArray *samples;   /* of DsRecorderSample */
} Collected;

static void
collect_cb (const DsRecorderSample *sample,
            gpointer                user_data)
{
  Collected *c = user_data;

  g_array_append_vals (c->samples, sample, 1);
}

static DsRecorderSample
numbered (guint64 id)
{
  DsRecorderSample s = { 0, };

  s.time = id * 10;
  s.event = DS_RECORDER_EVENT_HIT;
  s.source = DS_RECORDER_SOURCE_POOL;
  s.id = id;
  s.count = 1;
  /* Every field a function of the id, so that a torn sample shows. */
  s.bytes = id + 1;
  s.held = id * 2;
  s.in_use = id * 3;
  s.pending = id * 5;
  s.peak = id * 7;
  s.pool = id * 11;
  s.device = (gint) (id % 100);
  return s;
}

static void
assert_whole (const DsRecorderSample *s)
{
  g_assert_cmpuint (s->bytes, ==, s->id + 1);
  g_assert_cmpuint (s->held, ==, s->id * 2);
  g_assert_cmpuint (s->in_use, ==, s->id * 3);
  g_assert_cmpuint (s->pending, ==, s->id * 5);
  g_assert_cmpuint (s->peak, ==, s->id * 7);
  g_assert_cmpuint (s->pool, ==, s->id * 11);
  g_assert_cmpint (s->device, ==, (gint) (s->id % 100));
}

static void
test_ring_bounded (void)
{
  DsRecorderRing *ring = ds_recorder_ring_new (8);
  Collected c = { g_array_new (FALSE, FALSE, sizeof (DsRecorderSample)) };
  guint64 cursor = 0, lost = 0;

  g_test_summary ("The ring keeps its capacity's newest samples, whatever was "
                  "pushed; a reader that fell behind is told how many it lost");

  for (guint64 i = 0; i < 100; i++)
    {
      DsRecorderSample s = numbered (i);

      g_assert_cmpuint (ds_recorder_ring_push (ring, &s), ==, i);
    }
  g_assert_cmpuint (ds_recorder_ring_head (ring), ==, 100);
  g_assert_cmpuint (ds_recorder_ring_capacity (ring), ==, 8);

  g_assert_cmpuint (ds_recorder_ring_read (ring, &cursor, &lost, collect_cb, &c), ==, 8);
  g_assert_cmpuint (lost, ==, 92);
  g_assert_cmpuint (cursor, ==, 100);
  g_assert_cmpuint (c.samples->len, ==, 8);
  for (guint i = 0; i < 8; i++)
    {
      DsRecorderSample *s = &g_array_index (c.samples, DsRecorderSample, i);

      g_assert_cmpuint (s->id, ==, 92 + i);
      assert_whole (s);
    }

  /* Nothing new: nothing read. */
  g_assert_cmpuint (ds_recorder_ring_read (ring, &cursor, &lost, collect_cb, &c), ==, 0);
  g_assert_cmpuint (lost, ==, 92);

  g_array_free (c.samples, TRUE);
  ds_recorder_ring_free (ring);
}

static void
test_ring_ordered (void)
{
  DsRecorderRing *ring = ds_recorder_ring_new (64);
  Collected c = { g_array_new (FALSE, FALSE, sizeof (DsRecorderSample)) };
  guint64 cursor = 0, lost = 0, pushed = 0;

  g_test_summary ("Samples come out in the order they went in, read as they "
                  "come, without loss while the reader keeps up");

  for (guint round = 0; round < 50; round++)
    {
      guint n = 1 + round % 64;

      for (guint i = 0; i < n; i++)
        {
          DsRecorderSample s = numbered (pushed++);

          ds_recorder_ring_push (ring, &s);
        }
      ds_recorder_ring_read (ring, &cursor, &lost, collect_cb, &c);
    }

  g_assert_cmpuint (lost, ==, 0);
  g_assert_cmpuint (c.samples->len, ==, pushed);
  for (guint i = 0; i < c.samples->len; i++)
    g_assert_cmpuint (g_array_index (c.samples, DsRecorderSample, i).id, ==, i);

  g_array_free (c.samples, TRUE);
  ds_recorder_ring_free (ring);
}

#define N_PUSHERS 8
#define N_PUSHES  20000

typedef struct
{
  DsRecorderRing *ring;
  guint           thread;
  gint           *done;
} Pusher;

static gpointer
pusher_thread (gpointer data)
{
  Pusher *p = data;

  for (guint64 i = 0; i < N_PUSHES; i++)
    {
      DsRecorderSample s = numbered (((guint64) p->thread << 32) | i);

      ds_recorder_ring_push (p->ring, &s);
    }
  g_atomic_int_inc (p->done);

  return NULL;
}

typedef struct
{
  guint64 next[N_PUSHERS];   /* the least index each thread may still show */
  guint64 read;
} Checker;

static void
check_cb (const DsRecorderSample *s,
          gpointer                user_data)
{
  Checker *c = user_data;
  guint thread = (guint) (s->id >> 32);
  guint64 i = s->id & G_MAXUINT32;

  assert_whole (s);
  g_assert_cmpuint (thread, <, N_PUSHERS);
  /* Each thread's samples in its order (some may be lost between). */
  g_assert_cmpuint (i, >=, c->next[thread]);
  c->next[thread] = i + 1;
  c->read++;
}

static void
test_ring_threads (void)
{
  DsRecorderRing *ring = ds_recorder_ring_new (4096);
  GThread *threads[N_PUSHERS];
  Pusher pushers[N_PUSHERS];
  Checker checker = { { 0, }, 0 };
  guint64 cursor = 0, lost = 0;
  gint done = 0;

  g_test_summary ("Eight threads push while a reader reads: every sample is "
                  "read whole or counted lost, each thread's in its order");

  for (guint t = 0; t < N_PUSHERS; t++)
    {
      pushers[t] = (Pusher) { ring, t, &done };
      threads[t] = g_thread_new ("pusher", pusher_thread, &pushers[t]);
    }
  while (g_atomic_int_get (&done) < N_PUSHERS)
    ds_recorder_ring_read (ring, &cursor, &lost, check_cb, &checker);
  for (guint t = 0; t < N_PUSHERS; t++)
    g_thread_join (threads[t]);
  ds_recorder_ring_read (ring, &cursor, &lost, check_cb, &checker);

  g_assert_cmpuint (cursor, ==, (guint64) N_PUSHERS * N_PUSHES);
  g_assert_cmpuint (checker.read + lost, ==, (guint64) N_PUSHERS * N_PUSHES);
  g_assert_cmpuint (checker.read, >=, 4096);
  g_test_message ("read %" G_GUINT64_FORMAT ", lost %" G_GUINT64_FORMAT, checker.read, lost);

  ds_recorder_ring_free (ring);
}

/* The recorder -------------------------------------------------------------------- */

static void
test_properties (void)
{
  DsRecorder *recorder = ds_recorder_new (0);
  guint capacity, interval, n_notify = 0;
  g_autofree char *file = NULL;
  gboolean running;

  g_test_summary ("A recorder's properties: defaults, construct-only ones, an "
                  "interval that notifies on change only");

  g_object_get (recorder, "capacity", &capacity, "interval", &interval,
                "file", &file, "running", &running, NULL);
  g_assert_cmpuint (capacity, ==, DS_RECORDER_DEFAULT_CAPACITY);
  g_assert_cmpuint (interval, ==, DS_RECORDER_DEFAULT_INTERVAL);
  g_assert_null (file);
  g_assert_false (running);
  g_assert_cmpuint (ds_recorder_get_n_samples (recorder), ==, 0);
  g_assert_cmpuint (ds_recorder_get_n_lost (recorder), ==, 0);

  g_signal_connect (recorder, "notify::interval", G_CALLBACK (count_notify), &n_notify);
  ds_recorder_set_interval (recorder, 5);
  ds_recorder_set_interval (recorder, 5);
  g_object_set (recorder, "interval", 5u, NULL);
  g_assert_cmpuint (n_notify, ==, 1);
  g_assert_cmpuint (ds_recorder_get_interval (recorder), ==, 5);
  g_assert_finalize_object (recorder);

  recorder = ds_recorder_new_for_file ("/nonexistent/dir/x.csv", 16);
  g_assert_cmpstr (ds_recorder_get_file (recorder), ==, "/nonexistent/dir/x.csv");
  g_assert_cmpuint (ds_recorder_get_capacity (recorder), ==, 16);
  g_assert_finalize_object (recorder);
}

static void
test_one_at_a_time (void)
{
  g_autoptr(GError) error = NULL;
  DsRecorder *a = ds_recorder_new (16);
  DsRecorder *b = ds_recorder_new (16);
  DsRecorder *running;
  guint n_notify = 0;

  g_test_summary ("One recorder runs at a time: another's start is "
                  "DS_ERROR_BUSY; dup_running gives the running one; a file "
                  "that cannot be opened is a GFileError");

  g_assert_null (ds_recorder_dup_running ());
  g_signal_connect (a, "notify::running", G_CALLBACK (count_notify), &n_notify);

  g_assert_true (ds_recorder_start (a, &error));
  g_assert_no_error (error);
  g_assert_true (ds_recorder_start (a, &error));   /* again: no error, no notify */
  g_assert_cmpuint (n_notify, ==, 1);
  g_assert_true (ds_recorder_get_running (a));

  g_assert_false (ds_recorder_start (b, &error));
  g_assert_error (error, DS_ERROR, DS_ERROR_BUSY);
  g_clear_error (&error);
  g_assert_false (ds_recorder_get_running (b));

  running = ds_recorder_dup_running ();
  g_assert_true (running == a);
  g_object_unref (running);

  ds_recorder_stop (b);   /* not running: nothing */
  ds_recorder_stop (a);
  ds_recorder_stop (a);
  g_assert_cmpuint (n_notify, ==, 2);
  g_assert_false (ds_recorder_get_running (a));
  g_assert_null (ds_recorder_dup_running ());

  g_assert_true (ds_recorder_start (b, &error));
  ds_recorder_stop (b);

  g_assert_finalize_object (a);
  g_assert_finalize_object (b);

  a = ds_recorder_new_for_file ("/nonexistent/dir/x.csv", 16);
  g_assert_false (ds_recorder_start (a, &error));
  g_assert_error (error, G_FILE_ERROR, G_FILE_ERROR_NOENT);
  g_assert_false (ds_recorder_get_running (a));
  g_assert_finalize_object (a);
}

/* What pools and scratchpads report ----------------------------------------------- */

typedef struct
{
  GMutex  lock;
  GArray *samples;   /* of DsRecorderSample */
} Watched;

static void
watch_cb (DsRecorder             *recorder,
          const DsRecorderSample *sample,
          gpointer                user_data)
{
  Watched *w = user_data;

  g_mutex_lock (&w->lock);
  g_array_append_vals (w->samples, sample, 1);
  g_mutex_unlock (&w->lock);
}

static void
watched_init (Watched *w)
{
  g_mutex_init (&w->lock);
  w->samples = g_array_new (FALSE, FALSE, sizeof (DsRecorderSample));
}

static void
watched_clear (Watched *w)
{
  g_array_free (w->samples, TRUE);
  g_mutex_clear (&w->lock);
}

/* The samples of @source @id for @event, in order, into @out (may be
 * NULL); how many. */
static guint
find (Watched          *w,
      DsRecorderSource  source,
      guint64           id,
      DsRecorderEvent   event,
      DsRecorderSample *last)
{
  guint n = 0;

  for (guint i = 0; i < w->samples->len; i++)
    {
      DsRecorderSample *s = &g_array_index (w->samples, DsRecorderSample, i);

      if (s->source == source && s->id == id && s->event == event)
        {
          n++;
          if (last != NULL)
            *last = *s;
        }
    }

  return n;
}

static guint64
pool_id_of (Watched *w)
{
  for (guint i = 0; i < w->samples->len; i++)
    {
      DsRecorderSample *s = &g_array_index (w->samples, DsRecorderSample, i);

      if (s->source == DS_RECORDER_SOURCE_POOL && s->event == DS_RECORDER_EVENT_UPSTREAM_ALLOC)
        return s->id;
    }

  return 0;
}

static void
test_pool_events (void)
{
  g_autoptr(DsMemoryResource) host = ds_host_memory_resource_new ();
  g_autoptr(GError) error = NULL;
  DsRecorder *recorder = ds_recorder_new (1024);
  DsMemoryResource *pool;
  DsScratchpad *sp;
  DsRecorderSample s;
  Watched w;
  guint64 pool_id, sp_id = 0;
  guint id;

  g_test_summary ("A pool reports its upstream calls, misses, hits, frees and "
                  "trims with what it holds and has in use after each; a "
                  "scratchpad its blocks and releases, naming the pool");

  watched_init (&w);
  ds_recorder_set_interval (recorder, 0);   /* every event */
  id = ds_recorder_add_watch (recorder, watch_cb, &w, NULL);
  pool = ds_pool_resource_new (host);
  sp = g_object_new (DS_TYPE_SCRATCHPAD, "host-resource", pool, NULL);

  g_assert_true (ds_recorder_start (recorder, &error));
  g_assert_no_error (error);

  /* A first unit: one 64 KiB block from upstream. */
  g_assert_nonnull (ds_scratchpad_alloc (sp, DS_MEMORY_KIND_HOST, 1000, 0, &error));
  pool_id = pool_id_of (&w);
  g_assert_cmpuint (pool_id, !=, 0);
  g_assert_cmpuint (find (&w, DS_RECORDER_SOURCE_POOL, pool_id, DS_RECORDER_EVENT_UPSTREAM_ALLOC, &s), ==, 1);
  g_assert_cmpuint (s.bytes, ==, 65536);
  g_assert_cmpuint (s.held, ==, 65536);
  g_assert_cmpint (s.kind, ==, DS_MEMORY_KIND_HOST);
  g_assert_cmpint (s.device, ==, -1);
  g_assert_null (s.label);
  g_assert_cmpuint (find (&w, DS_RECORDER_SOURCE_POOL, pool_id, DS_RECORDER_EVENT_MISS, &s), ==, 1);
  g_assert_cmpuint (s.in_use, ==, 65536);
  g_assert_cmpuint (s.peak, ==, 65536);
  g_assert_cmpuint (s.pool, ==, pool_id);

  for (guint i = 0; i < w.samples->len; i++)
    if (g_array_index (w.samples, DsRecorderSample, i).source == DS_RECORDER_SOURCE_SCRATCHPAD)
      sp_id = g_array_index (w.samples, DsRecorderSample, i).id;
  g_assert_cmpuint (sp_id, !=, 0);
  g_assert_cmpuint (find (&w, DS_RECORDER_SOURCE_SCRATCHPAD, sp_id, DS_RECORDER_EVENT_BLOCK, &s), ==, 1);
  g_assert_cmpuint (s.bytes, ==, 65536);
  g_assert_cmpuint (s.held, ==, 65536);
  g_assert_cmpuint (s.in_use, ==, 1008);
  g_assert_cmpuint (s.pool, ==, pool_id);
  g_assert_cmpuint (s.count, ==, 1);

  ds_scratchpad_release (sp);
  g_assert_cmpuint (find (&w, DS_RECORDER_SOURCE_POOL, pool_id, DS_RECORDER_EVENT_FREE, &s), ==, 1);
  g_assert_cmpuint (s.held, ==, 65536);
  g_assert_cmpuint (s.in_use, ==, 0);
  g_assert_cmpuint (find (&w, DS_RECORDER_SOURCE_SCRATCHPAD, sp_id, DS_RECORDER_EVENT_RELEASE, &s), ==, 1);
  g_assert_cmpuint (s.bytes, ==, 65536);
  g_assert_cmpuint (s.held, ==, 0);

  /* A second unit: a cache hit. */
  g_assert_nonnull (ds_scratchpad_alloc (sp, DS_MEMORY_KIND_HOST, 1000, 0, &error));
  g_assert_cmpuint (find (&w, DS_RECORDER_SOURCE_POOL, pool_id, DS_RECORDER_EVENT_HIT, &s), ==, 1);
  g_assert_cmpuint (s.bytes, ==, 65536);
  g_assert_cmpuint (s.in_use, ==, 65536);
  ds_scratchpad_release (sp);

  /* A trim gives the cached block back. */
  g_assert_cmpuint (ds_pool_resource_trim (DS_POOL_RESOURCE (pool)), ==, 65536);
  g_assert_cmpuint (find (&w, DS_RECORDER_SOURCE_POOL, pool_id, DS_RECORDER_EVENT_TRIM, &s), ==, 1);
  g_assert_cmpuint (s.bytes, ==, 65536);
  g_assert_cmpuint (s.held, ==, 0);

  /* Too large to cache: straight back upstream. */
  ds_pool_resource_set_max_cached_size (DS_POOL_RESOURCE (pool), 4096);
  g_assert_nonnull (ds_scratchpad_alloc (sp, DS_MEMORY_KIND_HOST, 1000, 0, &error));
  ds_scratchpad_release (sp);
  g_assert_cmpuint (find (&w, DS_RECORDER_SOURCE_POOL, pool_id, DS_RECORDER_EVENT_UPSTREAM_FREE, &s), ==, 1);
  g_assert_cmpuint (s.bytes, ==, 65536);
  g_assert_cmpuint (s.held, ==, 0);

  /* Stopping looks at every pool a last time. */
  ds_recorder_stop (recorder);
  g_assert_cmpuint (find (&w, DS_RECORDER_SOURCE_POOL, pool_id, DS_RECORDER_EVENT_SAMPLE, &s), >=, 1);
  g_assert_cmpuint (s.held, ==, 0);
  g_assert_cmpuint (s.count, ==, 0);

  /* Not running: nothing reported. */
  g_array_set_size (w.samples, 0);
  g_assert_nonnull (ds_scratchpad_alloc (sp, DS_MEMORY_KIND_HOST, 1000, 0, &error));
  ds_scratchpad_release (sp);
  g_assert_cmpuint (w.samples->len, ==, 0);

  /* Samples are in time order in the recording. */
  g_assert_cmpuint (ds_recorder_get_n_samples (recorder), >=, 12);

  g_assert_finalize_object (sp);
  g_assert_cmpuint (find (&w, DS_RECORDER_SOURCE_POOL, pool_id, DS_RECORDER_EVENT_DISPOSE, NULL), ==, 0);
  g_assert_true (ds_recorder_start (recorder, &error));
  g_assert_finalize_object (pool);
  ds_recorder_stop (recorder);
  g_assert_cmpuint (find (&w, DS_RECORDER_SOURCE_POOL, pool_id, DS_RECORDER_EVENT_DISPOSE, &s), ==, 1);
  g_assert_cmpuint (s.held, ==, 0);

  ds_recorder_remove_watch (recorder, id);
  g_assert_finalize_object (recorder);
  watched_clear (&w);
}

static void
test_default_pool_label (void)
{
  g_autoptr(GError) error = NULL;
  DsRecorder *recorder = ds_recorder_new (1024);
  DsScratchpad *sp = ds_scratchpad_new (NULL);
  gboolean seen = FALSE;
  Watched w;

  g_test_summary ("The default pools are labelled \"default\" in recordings");

  watched_init (&w);
  ds_recorder_add_watch (recorder, watch_cb, &w, NULL);
  g_assert_true (ds_recorder_start (recorder, &error));
  g_assert_nonnull (ds_scratchpad_alloc (sp, DS_MEMORY_KIND_HOST, 100, 0, &error));
  g_assert_finalize_object (sp);
  ds_recorder_stop (recorder);

  for (guint i = 0; i < w.samples->len; i++)
    {
      DsRecorderSample *s = &g_array_index (w.samples, DsRecorderSample, i);

      if (s->source == DS_RECORDER_SOURCE_POOL && s->kind == DS_MEMORY_KIND_HOST)
        {
          g_assert_cmpstr (s->label, ==, "default");
          seen = TRUE;
        }
    }
  g_assert_true (seen);

  g_assert_finalize_object (recorder);
  watched_clear (&w);
}

static void
test_coalesced (void)
{
  g_autoptr(DsMemoryResource) host = ds_host_memory_resource_new ();
  g_autoptr(GError) error = NULL;
  DsRecorder *recorder = ds_recorder_new (1024);
  DsMemoryResource *pool = ds_pool_resource_new (host);
  DsScratchpad *sp = g_object_new (DS_TYPE_SCRATCHPAD, "host-resource", pool, NULL);
  guint64 pool_id = 0, events = 0;
  guint n_blocks = 0, n_releases = 0;
  Watched w;

  g_test_summary ("With an interval, frequent events are coalesced in the "
                  "recording (a sample counts those since the last one), "
                  "while watches see every scratchpad event");

  watched_init (&w);
  ds_recorder_set_interval (recorder, 3600 * 1000);
  ds_recorder_add_watch (recorder, watch_cb, &w, NULL);
  g_assert_true (ds_recorder_start (recorder, &error));

  for (guint i = 0; i < 1000; i++)
    {
      g_assert_nonnull (ds_scratchpad_alloc (sp, DS_MEMORY_KIND_HOST, 100, 0, &error));
      ds_scratchpad_release (sp);
    }

  pool_id = pool_id_of (&w);
  /* One miss and one upstream block (always kept), one hit sample (the
   * first; the rest wait for the next interval). */
  g_assert_cmpuint (find (&w, DS_RECORDER_SOURCE_POOL, pool_id, DS_RECORDER_EVENT_MISS, NULL), ==, 1);
  g_assert_cmpuint (find (&w, DS_RECORDER_SOURCE_POOL, pool_id, DS_RECORDER_EVENT_HIT, NULL), ==, 1);
  g_assert_cmpuint (find (&w, DS_RECORDER_SOURCE_POOL, pool_id, DS_RECORDER_EVENT_FREE, NULL), ==, 1);

  for (guint i = 0; i < w.samples->len; i++)
    {
      DsRecorderSample *s = &g_array_index (w.samples, DsRecorderSample, i);

      if (s->source != DS_RECORDER_SOURCE_SCRATCHPAD)
        continue;
      g_assert_cmpuint (s->count, ==, 1);
      n_blocks += s->event == DS_RECORDER_EVENT_BLOCK;
      n_releases += s->event == DS_RECORDER_EVENT_RELEASE;
    }
  g_assert_cmpuint (n_blocks, ==, 1000);
  g_assert_cmpuint (n_releases, ==, 1000);

  ds_recorder_stop (recorder);
  /* In the recording: few samples, standing for all the events. */
  g_assert_cmpuint (ds_recorder_get_n_samples (recorder), <, 20);
  for (guint i = 0; i < w.samples->len; i++)
    {
      DsRecorderSample *s = &g_array_index (w.samples, DsRecorderSample, i);

      if (s->source == DS_RECORDER_SOURCE_POOL && s->event == DS_RECORDER_EVENT_HIT)
        events += s->count;
    }
  g_assert_cmpuint (events, >=, 1);

  g_assert_finalize_object (sp);
  g_assert_finalize_object (pool);
  g_assert_finalize_object (recorder);
  watched_clear (&w);
}

/* The format ---------------------------------------------------------------------- */

/* The data lines of a recording, split into fields (quotes undone). */
static GPtrArray *
parse_recording (const char *path,
                 guint      *n_comments)
{
  g_autofree char *text = NULL;
  g_auto(GStrv) lines = NULL;
  GPtrArray *rows = g_ptr_array_new_with_free_func ((GDestroyNotify) g_strfreev);
  gboolean header = FALSE;

  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  g_assert_true (g_str_has_prefix (text, "# ds memory recording, format 1\n"));
  g_assert_true (g_str_has_suffix (text, "\n"));
  lines = g_strsplit (text, "\n", -1);
  *n_comments = 0;
  for (guint i = 0; lines[i] != NULL && lines[i][0] != '\0'; i++)
    {
      GPtrArray *fields;
      const char *c = lines[i];

      if (lines[i][0] == '#')
        {
          g_assert_false (header);
          (*n_comments)++;
          continue;
        }
      if (!header)
        {
          g_assert_cmpstr (lines[i], ==, "time,event,source,id,kind,device,count,bytes,held,"
                           "in_use,pending,peak,pool,label");
          header = TRUE;
          continue;
        }

      fields = g_ptr_array_new ();
      while (TRUE)
        {
          GString *f = g_string_new (NULL);

          if (*c == '"')
            {
              for (c++; *c != '\0'; c++)
                {
                  if (*c == '"' && c[1] == '"')
                    g_string_append_c (f, *c++);
                  else if (*c == '"')
                    {
                      c++;
                      break;
                    }
                  else
                    g_string_append_c (f, *c);
                }
            }
          else
            {
              for (; *c != ',' && *c != '\0'; c++)
                g_string_append_c (f, *c);
            }
          g_ptr_array_add (fields, g_string_free (f, FALSE));
          if (*c != ',')
            break;
          c++;
        }
      g_assert_cmpuint (fields->len, ==, 14);
      g_ptr_array_add (fields, NULL);
      g_ptr_array_add (rows, g_ptr_array_free (fields, FALSE));
    }
  g_assert_true (header);

  return rows;
}

static void
test_format (void)
{
  g_autoptr(DsMemoryResource) host = ds_host_memory_resource_new ();
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("ds-recorder-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "rec.csv", NULL);
  DsRecorder *recorder = ds_recorder_new (1024);
  DsMemoryResource *pool = ds_pool_resource_new (host);
  g_autoptr(GPtrArray) rows = NULL;
  gboolean mark = FALSE, upstream = FALSE;
  double last = -1;
  guint n_comments;
  gpointer p;

  g_test_summary ("write () writes the documented CSV: a format line, "
                  "comments, the header, 14 fields a line, times in order, "
                  "nicks for events, sources and kinds, labels quoted");

  ds_recorder_set_interval (recorder, 0);
  g_assert_true (ds_recorder_start (recorder, &error));
  p = ds_memory_resource_allocate (pool, 5000, 0, &error);
  ds_recorder_mark (recorder, "a \"quoted\", label");
  ds_memory_resource_deallocate (pool, p, 5000, 0);
  ds_recorder_stop (recorder);
  ds_recorder_mark (recorder, "not running: not recorded");

  g_assert_true (ds_recorder_write (recorder, path, &error));
  g_assert_no_error (error);
  rows = parse_recording (path, &n_comments);
  g_assert_cmpuint (n_comments, ==, 2);
  g_assert_cmpuint (rows->len, ==, ds_recorder_get_n_samples (recorder));

  for (guint i = 0; i < rows->len; i++)
    {
      char **f = rows->pdata[i];
      double t = g_ascii_strtod (f[0], NULL);

      g_assert_cmpfloat (t, >=, last);
      last = t;
      g_assert_true (strchr (f[0], '.') != NULL && strlen (strchr (f[0], '.')) == 10);
      if (g_str_equal (f[1], "mark"))
        {
          g_assert_cmpstr (f[2], ==, "recorder");
          g_assert_cmpstr (f[4], ==, "");
          g_assert_cmpstr (f[13], ==, "a \"quoted\", label");
          mark = TRUE;
        }
      if (g_str_equal (f[1], "upstream-alloc"))
        {
          g_assert_cmpstr (f[2], ==, "pool");
          g_assert_cmpstr (f[4], ==, "host");
          g_assert_cmpstr (f[5], ==, "-1");
          g_assert_cmpstr (f[7], ==, "5120");   /* the size class of 5000 */
          g_assert_cmpstr (f[8], ==, "5120");
          upstream = TRUE;
        }
    }
  g_assert_true (mark);
  g_assert_true (upstream);

  g_assert_finalize_object (pool);
  g_assert_finalize_object (recorder);
  g_remove (path);
  g_rmdir (dir);
}

static void
test_write_overwritten (void)
{
  g_autoptr(DsMemoryResource) host = ds_host_memory_resource_new ();
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("ds-recorder-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "rec.csv", NULL);
  DsRecorder *recorder = ds_recorder_new (16);
  g_autoptr(GPtrArray) rows = NULL;
  guint n_comments;

  g_test_summary ("A recorder keeps its capacity's newest samples in memory, "
                  "however many came, and says how many it overwrote");

  g_assert_true (ds_recorder_start (recorder, &error));
  for (guint i = 0; i < 100; i++)
    ds_recorder_mark (recorder, "m");
  ds_recorder_stop (recorder);
  g_assert_cmpuint (ds_recorder_get_n_lost (recorder), ==, ds_recorder_get_n_samples (recorder) - 16);

  g_assert_true (ds_recorder_write (recorder, path, &error));
  rows = parse_recording (path, &n_comments);
  g_assert_cmpuint (rows->len, ==, 16);
  g_assert_cmpuint (n_comments, ==, 3);   /* with the overwritten ones */

  g_assert_finalize_object (recorder);
  g_remove (path);
  g_rmdir (dir);
}

static void
test_file (void)
{
  g_autoptr(DsMemoryResource) host = ds_host_memory_resource_new ();
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("ds-recorder-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "rec.csv", NULL);
  DsRecorder *recorder = ds_recorder_new_for_file (path, 64);
  DsMemoryResource *pool = ds_pool_resource_new (host);
  g_autoptr(GPtrArray) rows = NULL;
  guint64 marks = 0, lost = 0;
  guint n_comments;

  g_test_summary ("A recorder with a file writes every sample there, more "
                  "than its capacity, or says how many it lost");

  ds_recorder_set_interval (recorder, 0);
  g_assert_true (ds_recorder_start (recorder, &error));
  g_assert_no_error (error);
  for (guint i = 0; i < 1000; i++)
    {
      gpointer p = ds_memory_resource_allocate (pool, 100, 0, NULL);

      ds_memory_resource_deallocate (pool, p, 100, 0);
      if (i % 100 == 0)
        ds_recorder_mark (recorder, "hundred");
    }
  ds_recorder_stop (recorder);

  rows = parse_recording (path, &n_comments);
  for (guint i = 0; i < rows->len; i++)
    {
      char **f = rows->pdata[i];

      if (g_str_equal (f[1], "mark"))
        marks++;
      if (g_str_equal (f[1], "lost"))
        lost += g_ascii_strtoull (f[6], NULL, 10);
    }
  g_assert_cmpuint (lost, ==, ds_recorder_get_n_lost (recorder));
  g_assert_cmpuint (rows->len - (lost != 0 ? 1 : 0) + lost, >=, ds_recorder_get_n_samples (recorder));
  g_assert_cmpuint (rows->len, >, 64);
  g_test_message ("%u lines, %" G_GUINT64_FORMAT " lost, %" G_GUINT64_FORMAT " marks",
                  rows->len, lost, marks);

  g_assert_finalize_object (pool);
  g_assert_finalize_object (recorder);
  g_remove (path);
  g_rmdir (dir);
}

static void
test_environment (void)
{
  g_autofree char *dir = g_dir_make_tmp ("ds-recorder-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "env.csv", NULL);
  g_autoptr(GPtrArray) rows = NULL;
  guint n_comments, n_upstream = 0;

  g_test_summary ("DS_RECORD=FILE records a program that does not know about "
                  "it (it links libds only, which loads the recorder), from its "
                  "first pool to its exit");

  {
    const char *child = g_getenv ("DS_TEST_RECORD_CHILD");
    const char *lib_dir = g_getenv ("DS_TEST_RECORDER_DIR");
    const char *argv[] = { child, NULL };
    g_auto(GStrv) envp = g_get_environ ();
    g_autofree char *library_path = NULL;
    g_autofree char *err = NULL;
    g_autoptr(GError) error = NULL;
    int status;

    if (child == NULL || lib_dir == NULL)
      {
        g_test_skip ("DS_TEST_RECORD_CHILD and DS_TEST_RECORDER_DIR are not set (meson test sets them)");
        g_rmdir (dir);
        return;
      }
    library_path = g_getenv ("LD_LIBRARY_PATH") != NULL ?
                   g_strconcat (lib_dir, ":", g_getenv ("LD_LIBRARY_PATH"), NULL) :
                   g_strdup (lib_dir);
    envp = g_environ_setenv (envp, "LD_LIBRARY_PATH", library_path, TRUE);
    envp = g_environ_setenv (envp, "DS_RECORD", path, TRUE);
    g_assert_true (g_spawn_sync (NULL, (char **) argv, envp, G_SPAWN_STDOUT_TO_DEV_NULL,
                                 NULL, NULL, NULL, &err, &status, &error));
    g_assert_no_error (error);
    g_assert_null (strstr (err, "WARNING"));
    g_assert_true (g_spawn_check_wait_status (status, &error));
    g_assert_no_error (error);
  }

  rows = parse_recording (path, &n_comments);
  for (guint i = 0; i < rows->len; i++)
    {
      char **f = rows->pdata[i];

      if (g_str_equal (f[1], "upstream-alloc") && g_str_equal (f[13], "default"))
        n_upstream++;
    }
  g_assert_cmpuint (n_upstream, ==, 1);

  g_remove (path);
  g_rmdir (dir);
}

/* Threads ------------------------------------------------------------------------- */

typedef struct
{
  DsMemoryResource *pool;
  gint             *stop;
} Worker;

static gpointer
worker_thread (gpointer data)
{
  Worker *w = data;
  DsScratchpad *sp = g_object_new (DS_TYPE_SCRATCHPAD, "host-resource", w->pool, NULL);
  guint i = 0;

  while (!g_atomic_int_get (w->stop))
    {
      g_assert_nonnull (ds_scratchpad_alloc (sp, DS_MEMORY_KIND_HOST, 64 + (i++ % 7) * 9000, 0, NULL));
      ds_scratchpad_release (sp);
    }
  g_object_unref (sp);

  return NULL;
}

static void
count_cb (DsRecorder             *recorder,
          const DsRecorderSample *sample,
          gpointer                user_data)
{
  g_atomic_int_inc ((gint *) user_data);
}

static void
test_threads (void)
{
  g_autoptr(DsMemoryResource) host = ds_host_memory_resource_new ();
  DsMemoryResource *pool = ds_pool_resource_new (host);
  GThread *threads[4];
  Worker worker;
  gint stop = 0, seen = 0;

  g_test_summary ("Threads use a pool and scratchpads while recorders start "
                  "and stop and watches come and go: nothing is lost track "
                  "of, nothing used after it went (ThreadSanitizer checks)");

  worker = (Worker) { pool, &stop };
  for (guint t = 0; t < G_N_ELEMENTS (threads); t++)
    threads[t] = g_thread_new ("worker", worker_thread, &worker);

  for (guint round = 0; round < 20; round++)
    {
      DsRecorder *recorder = ds_recorder_new (256);
      g_autoptr(GError) error = NULL;
      guint id;

      ds_recorder_set_interval (recorder, round % 2);
      id = ds_recorder_add_watch (recorder, count_cb, &seen, NULL);
      g_assert_true (ds_recorder_start (recorder, &error));
      for (guint i = 0; i < 20; i++)
        {
          ds_recorder_mark (recorder, "round");
          g_usleep (100);
        }
      if (round % 3 == 0)
        ds_recorder_remove_watch (recorder, id);
      ds_recorder_stop (recorder);
      g_assert_finalize_object (recorder);
    }

  g_atomic_int_set (&stop, 1);
  for (guint t = 0; t < G_N_ELEMENTS (threads); t++)
    g_thread_join (threads[t]);
  g_assert_cmpint (g_atomic_int_get (&seen), >, 0);
  g_assert_finalize_object (pool);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/Ds/Recorder/ring/bounded", test_ring_bounded);
  g_test_add_func ("/Ds/Recorder/ring/ordered", test_ring_ordered);
  g_test_add_func ("/Ds/Recorder/ring/threads", test_ring_threads);
  g_test_add_func ("/Ds/Recorder/properties", test_properties);
  g_test_add_func ("/Ds/Recorder/one-at-a-time", test_one_at_a_time);
  g_test_add_func ("/Ds/Recorder/pool-events", test_pool_events);
  g_test_add_func ("/Ds/Recorder/default-pool-label", test_default_pool_label);
  g_test_add_func ("/Ds/Recorder/coalesced", test_coalesced);
  g_test_add_func ("/Ds/Recorder/format", test_format);
  g_test_add_func ("/Ds/Recorder/write-overwritten", test_write_overwritten);
  g_test_add_func ("/Ds/Recorder/file", test_file);
  g_test_add_func ("/Ds/Recorder/environment", test_environment);
  g_test_add_func ("/Ds/Recorder/threads", test_threads);

  return g_test_run ();
}
