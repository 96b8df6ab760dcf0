/* ds-observer.c: the one observer of pools, fences and scratchpads
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The observer is installed and removed under a lock; those who tell
 * enter (a count of calls under way), read the observer, call it and
 * leave, and ds_observer_remove () waits until none is under way, so an
 * observer is never called after its removal returned. The pools alive
 * are kept in a list for ds_observer_look_at_pools (). DS_RECORD loads
 * the recorder library through GModule (ds-observer.h).
 */

#include "config.h"

#include <gmodule.h>

#include "ds-observer-private.h"

typedef struct
{
  gpointer pool;
  void   (*look) (gpointer pool);
} Pool;

gint ds_observing;

static GMutex observer_lock;
static const DsObserver *observer;     /* atomic; set under observer_lock */
static gpointer observer_data;
static gint in_flight;                 /* atomic: tells under way */

static GMutex pools_lock;
static GArray *pools;                  /* of Pool, oldest first, under pools_lock */

gboolean
ds_observer_install (const DsObserver *obs,
                     gpointer          user_data)
{
  g_return_val_if_fail (obs != NULL, FALSE);
  g_return_val_if_fail (obs->observe != NULL, FALSE);

  g_mutex_lock (&observer_lock);
  if (observer != NULL)
    {
      g_mutex_unlock (&observer_lock);
      return FALSE;
    }
  observer_data = user_data;
  g_atomic_pointer_set (&observer, obs);
  g_atomic_int_set (&ds_observing, 1);
  g_mutex_unlock (&observer_lock);

  return TRUE;
}

void
ds_observer_remove (const DsObserver *obs)
{
  g_return_if_fail (obs != NULL);

  g_mutex_lock (&observer_lock);
  if (observer != obs)
    {
      g_mutex_unlock (&observer_lock);
      g_critical ("ds_observer_remove: %p is not the installed observer", obs);
      return;
    }
  g_atomic_int_set (&ds_observing, 0);
  g_atomic_pointer_set (&observer, NULL);
  /* Those who read it before are still counted. */
  while (g_atomic_int_get (&in_flight) != 0)
    g_thread_yield ();
  observer_data = NULL;
  g_mutex_unlock (&observer_lock);
}

void
ds_observer_tell (DsObservation     *observation,
                  gboolean           frequent,
                  DsObservationFill  fill)
{
  const DsObserver *obs;

  g_atomic_int_inc (&in_flight);
  obs = g_atomic_pointer_get (&observer);
  if (obs != NULL && (!frequent || obs->want == NULL || obs->want (observation, observer_data)))
    {
      if (fill != NULL)
        fill (observation);
      obs->observe (observation, observer_data);
    }
  (void) g_atomic_int_add (&in_flight, -1);
}

/* Pools ----------------------------------------------------------------------------- */

void
ds_observer_add_pool (gpointer pool,
                      void   (*look) (gpointer pool))
{
  Pool p = { pool, look };

  g_mutex_lock (&pools_lock);
  if (pools == NULL)
    pools = g_array_new (FALSE, FALSE, sizeof (Pool));
  g_array_append_val (pools, p);
  g_mutex_unlock (&pools_lock);
}

void
ds_observer_forget_pool (gpointer pool)
{
  g_mutex_lock (&pools_lock);
  for (guint i = 0; pools != NULL && i < pools->len; i++)
    if (g_array_index (pools, Pool, i).pool == pool)
      {
        g_array_remove_index (pools, i);
        break;
      }
  g_mutex_unlock (&pools_lock);
}

void
ds_observer_look_at_pools (void)
{
  if (!DS_OBSERVING ())
    return;

  g_mutex_lock (&pools_lock);
  for (guint i = 0; pools != NULL && i < pools->len; i++)
    {
      Pool *p = &g_array_index (pools, Pool, i);

      p->look (p->pool);
    }
  g_mutex_unlock (&pools_lock);
}

/* DS_RECORD ------------------------------------------------------------------------- */

void
ds_observer_start_from_environment (void)
{
  static gsize once;

  if (g_once_init_enter (&once))
    {
      const char *path = g_getenv ("DS_RECORD");

      if (path != NULL && *path != '\0' && !DS_OBSERVING ())
        {
          /* The copy already loaded (a program or plugin that links it),
           * or the one on the library path, else the installed one. */
          GModule *module = g_module_open (DS_RECORDER_MODULE, G_MODULE_BIND_LOCAL);
          g_autofree char *first_error = NULL;
          void (*start) (void) = NULL;

          if (module == NULL)
            {
              first_error = g_strdup (g_module_error ());
              module = g_module_open (DS_LIBDIR G_DIR_SEPARATOR_S DS_RECORDER_MODULE,
                                      G_MODULE_BIND_LOCAL);
            }
          if (module == NULL)
            g_warning ("DS_RECORD=%s: not recording: %s; %s", path, first_error,
                       g_module_error ());
          else if (!g_module_symbol (module, "ds_recorder_start_from_environment",
                                     (gpointer *) &start) || start == NULL)
            g_warning ("DS_RECORD=%s: not recording: %s", path, g_module_error ());
          else
            {
              /* It stays for the life of the process: its recorder does. */
              g_module_make_resident (module);
              start ();
            }
        }
      g_once_init_leave (&once, 1);
    }
}
