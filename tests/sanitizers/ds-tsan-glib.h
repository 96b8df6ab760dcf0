/* ds-tsan-glib.h: make GLib's locks visible to ThreadSanitizer
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Force-included (-include) into every C file of a -Db_sanitize=thread
 * build, and only there (the top-level meson.build adds it). Nothing else
 * may include it.
 *
 * Debian's GLib is not built with TSan. GMutex and GCond are futexes inside
 * libglib, g_once_init_leave() is an atomic store inside libglib, and
 * g_object_unref() drops the reference count with an atomic inside
 * libgobject: TSan sees none of them, so every access that those order
 * would look like a data race. (GRecMutex, GRWLock, thread creation and
 * join go through pthreads, which TSan intercepts even from uninstrumented
 * code; they need nothing.)
 *
 * After <glib-object.h>, the names below become object-like macros for
 * inline wrappers that call the real function (the name in parentheses,
 * which no macro touches) and tell TSan what it did, on the address of the
 * lock, once-location or object:
 *
 *   g_mutex_lock / g_mutex_trylock   acquire after taking the lock
 *   g_mutex_unlock                   release before giving it up
 *   g_cond_wait / g_cond_wait_until  release before, acquire after (the
 *                                    mutex is given up and taken again)
 *   g_once_init_enter / _leave       acquire when the value is already set,
 *                                    release before setting it
 *   g_object_new                     acquire on the class (see below)
 *   g_object_unref                   release and acquire before dropping
 *                                    the reference: the count is an acq_rel
 *                                    atomic, and the last unref finalizes
 *                                    with everything the other owners wrote
 *
 * Object-like macros also catch the function used as a pointer
 * (g_clear_object, g_clear_pointer (&x, g_object_unref)). What GLib's own
 * headers expanded before this point (G_DEFINE_AUTOPTR_CLEANUP_FUNC for
 * GObject, GMutexLocker) is not wrapped: ds does not use those across
 * threads. What happens wholly inside GLib (GAsyncQueue, GThreadPool, the
 * type system's own locks) is not seen either: tests/sanitizers/tsan.supp
 * says what is suppressed and why.
 */

#pragma once

#ifndef _GNU_SOURCE
# define _GNU_SOURCE 1
#endif

#include <glib.h>
#include <glib-object.h>

#if defined (__SANITIZE_THREAD__)
# define DS_TSAN_GLIB 1
#elif defined (__has_feature)
# if __has_feature (thread_sanitizer)
#  define DS_TSAN_GLIB 1
# endif
#endif

#ifdef DS_TSAN_GLIB

void __tsan_acquire (void *addr);
void __tsan_release (void *addr);

static inline void
ds_tsan_g_mutex_lock (GMutex *mutex)
{
  (g_mutex_lock) (mutex);
  __tsan_acquire (mutex);
}

static inline gboolean
ds_tsan_g_mutex_trylock (GMutex *mutex)
{
  gboolean taken = (g_mutex_trylock) (mutex);

  if (taken)
    __tsan_acquire (mutex);
  return taken;
}

static inline void
ds_tsan_g_mutex_unlock (GMutex *mutex)
{
  __tsan_release (mutex);
  (g_mutex_unlock) (mutex);
}

static inline void
ds_tsan_g_cond_wait (GCond  *cond,
                     GMutex *mutex)
{
  __tsan_release (mutex);
  (g_cond_wait) (cond, mutex);
  __tsan_acquire (mutex);
}

static inline gboolean
ds_tsan_g_cond_wait_until (GCond  *cond,
                           GMutex *mutex,
                           gint64  end_time)
{
  gboolean signalled;

  __tsan_release (mutex);
  signalled = (g_cond_wait_until) (cond, mutex, end_time);
  __tsan_acquire (mutex);
  return signalled;
}

static inline gboolean
ds_tsan_g_once_init_enter (volatile void *location)
{
  gboolean first;

  if (__atomic_load_n ((gpointer *) location, __ATOMIC_ACQUIRE) != NULL)
    {
      __tsan_acquire ((void *) location);
      return FALSE;
    }
  first = (g_once_init_enter) (location);
  if (!first)
    __tsan_acquire ((void *) location);
  return first;
}

static inline void
ds_tsan_g_once_init_leave (volatile void *location,
                           gsize          result)
{
  __tsan_release ((void *) location);
  (g_once_init_leave) (location, result);
}

static inline void
ds_tsan_g_object_unref (gpointer object)
{
  if (object != NULL)
    {
      __tsan_release (object);
      __tsan_acquire (object);
    }
  (g_object_unref) (object);
}

/* A class is made once, under GLib's type locks, by the first thread that
 * instantiates the type; the others find it through an atomic TSan does
 * not see, and then read the class (G_TYPE_CHECK_INSTANCE_TYPE reads
 * g_class->g_type). Before each g_object_new: a reference to the class
 * (made now if need be), then release and acquire on its address, so
 * that whoever made the class published it. */
static inline GType
ds_tsan_class_ready (GType type)
{
  gpointer klass = g_type_class_ref (type);

  __tsan_release (klass);
  __tsan_acquire (klass);
  g_type_class_unref (klass);
  return type;
}

# define g_object_new(object_type, ...) \
  (g_object_new) (ds_tsan_class_ready (object_type), __VA_ARGS__)
# define g_mutex_lock ds_tsan_g_mutex_lock
# define g_mutex_trylock ds_tsan_g_mutex_trylock
# define g_mutex_unlock ds_tsan_g_mutex_unlock
# define g_cond_wait ds_tsan_g_cond_wait
# define g_cond_wait_until ds_tsan_g_cond_wait_until
# undef g_once_init_enter
# undef g_once_init_leave
# define g_once_init_enter(location) ds_tsan_g_once_init_enter ((location))
# define g_once_init_leave(location, result) \
  ds_tsan_g_once_init_leave ((location), (gsize) (result))
# define g_object_unref ds_tsan_g_object_unref

#endif /* DS_TSAN_GLIB */
