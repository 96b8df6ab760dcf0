/* ds-bench-threads.c: thread scaling and the GObject baseline
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Linked only into the benchmarks that use them (tests/bench/meson.build:
 * 'threads'), so that the others keep their code where it was.
 */

#include "ds-bench.h"

struct _DsBenchPlain
{
  GObject parent_instance;
};

G_DEFINE_FINAL_TYPE (DsBenchPlain, ds_bench_plain, G_TYPE_OBJECT)

static void
ds_bench_plain_class_init (DsBenchPlainClass *klass)
{
}

static void
ds_bench_plain_init (DsBenchPlain *self)
{
}

struct _DsBenchUnchained
{
  GObject parent_instance;
};

G_DEFINE_FINAL_TYPE (DsBenchUnchained, ds_bench_unchained, G_TYPE_OBJECT)

/* Does not chain up: GObject's dispose (its signal handlers, closures and
 * weak references dropped) never runs. Never do this outside a benchmark. */
static void
ds_bench_unchained_dispose (GObject *object)
{
}

static void
ds_bench_unchained_class_init (DsBenchUnchainedClass *klass)
{
  G_OBJECT_CLASS (klass)->dispose = ds_bench_unchained_dispose;
}

static void
ds_bench_unchained_init (DsBenchUnchained *self)
{
}

/* GObject baseline: as many plain read-write properties as
 * DsScratchpad has (none construct), so that GLib freezes and thaws its
 * notify queue at construction as it does for a scratchpad. */
#define N_PLAIN_PROPS 13

struct _DsBenchPlainProps
{
  GObject parent_instance;
  guint64 values[N_PLAIN_PROPS];
};

G_DEFINE_FINAL_TYPE (DsBenchPlainProps, ds_bench_plain_props, G_TYPE_OBJECT)

static void
ds_bench_plain_props_get_property (GObject    *object,
                                   guint       prop_id,
                                   GValue     *value,
                                   GParamSpec *pspec)
{
  DsBenchPlainProps *self = (DsBenchPlainProps *) object;

  if (prop_id >= 1 && prop_id <= N_PLAIN_PROPS)
    g_value_set_uint64 (value, self->values[prop_id - 1]);
  else
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
}

static void
ds_bench_plain_props_set_property (GObject      *object,
                                   guint         prop_id,
                                   const GValue *value,
                                   GParamSpec   *pspec)
{
  DsBenchPlainProps *self = (DsBenchPlainProps *) object;

  if (prop_id >= 1 && prop_id <= N_PLAIN_PROPS)
    self->values[prop_id - 1] = g_value_get_uint64 (value);
  else
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
}

static void
ds_bench_plain_props_class_init (DsBenchPlainPropsClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->get_property = ds_bench_plain_props_get_property;
  object_class->set_property = ds_bench_plain_props_set_property;
  for (guint i = 1; i <= N_PLAIN_PROPS; i++)
    {
      g_autofree char *name = g_strdup_printf ("value-%u", i);

      g_object_class_install_property (object_class, i,
        g_param_spec_uint64 (g_intern_string (name), NULL, NULL, 0, G_MAXUINT64, 0,
                             G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY |
                             G_PARAM_STATIC_STRINGS));
    }
}

static void
ds_bench_plain_props_init (DsBenchPlainProps *self)
{
}

/* One cache line each, so that no two workers share one. */
struct _DsBenchWorker
{
  DsBenchWorkerFunc  func;
  gpointer           data;
  gint              *ready;
  const gint        *go;
  const gint        *stop;
  guint              index;
  guint64            lifecycles;
} __attribute__ ((aligned (64)));

static gpointer
worker_thread (gpointer data)
{
  DsBenchWorker *w = data;

  ds_bench_pin_worker (w->index);
  w->lifecycles = w->func (w, w->data);
  return NULL;
}

void
ds_bench_worker_wait (DsBenchWorker *worker)
{
  g_atomic_int_inc (worker->ready);
  while (!g_atomic_int_get (worker->go))
    ;
}

gboolean
ds_bench_worker_running (DsBenchWorker *worker)
{
  return !g_atomic_int_get (worker->stop);
}

double
ds_bench_threads_rate (guint              n_threads,
                       DsBenchWorkerFunc  func,
                       gpointer           data,
                       double             seconds,
                       guint64           *lifecycles)
{
  g_autofree DsBenchWorker *workers = g_new0 (DsBenchWorker, n_threads);
  g_autofree GThread **threads = g_new0 (GThread *, n_threads);
  gint ready = 0, go = 0, stop = 0;
  guint64 total = 0;
  gint64 t0, t1;
  guint i;

  for (i = 0; i < n_threads; i++)
    {
      workers[i].func = func;
      workers[i].index = i;
      workers[i].data = data;
      workers[i].ready = &ready;
      workers[i].go = &go;
      workers[i].stop = &stop;
      threads[i] = g_thread_new ("bench", worker_thread, &workers[i]);
    }
  /* Every thread set up (a stream, say) and waiting. */
  while ((guint) g_atomic_int_get (&ready) < n_threads)
    g_usleep (1000);

  t0 = ds_bench_now_ns ();
  g_atomic_int_set (&go, 1);
  g_usleep ((gulong) (seconds * G_USEC_PER_SEC));
  g_atomic_int_set (&stop, 1);
  t1 = ds_bench_now_ns ();
  for (i = 0; i < n_threads; i++)
    {
      g_thread_join (threads[i]);
      total += workers[i].lifecycles;
    }

  if (lifecycles != NULL)
    *lifecycles = total;
  return total / ((t1 - t0) / 1e9);
}
