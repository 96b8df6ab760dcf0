/* ds-host-wait-spy.c: counts the host's waits for the GPU, by who waits
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A test program that links this library (before libc) sees every
 * cuStreamSynchronize, cuEventSynchronize and cuCtxSynchronize of the
 * process, however the caller reached the driver: GStreamer's CUDA library
 * looks the functions up with dlsym (), the static CUDA runtime of libds
 * and of the plugins with cuGetProcAddress (), whose own address it also
 * takes from dlsym (). Both are wrapped here, and hand out counting
 * wrappers for the three functions. Each wait is charged to the first
 * library on the caller's stack that is ds's (libds, libds-gst, a
 * libgstds* plugin) or GStreamer's CUDA plugin (libgstnvcodec), else to
 * "other". Test code only: nothing of this is in a library ds installs.
 */

#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <execinfo.h>
#include <stdint.h>
#include <string.h>

#include "ds-host-wait-spy.h"

typedef int (*SyncFunc) (void *arg);

enum { N_FUNCS = 3, N_SLOTS = 4 };

static const char *const func_names[N_FUNCS] = {
  "cuStreamSynchronize", "cuEventSynchronize", "cuCtxSynchronize",
};
static SyncFunc real_funcs[N_FUNCS][N_SLOTS];
static unsigned long counts[DS_HOST_WAIT_N_CALLERS];

static DsHostWaitCaller
caller_of_stack (void)
{
  void *frames[64];
  int n = backtrace (frames, 64);

  for (int i = 1; i < n; i++)
    {
      Dl_info info;
      const char *base;

      if (dladdr (frames[i], &info) == 0 || info.dli_fname == NULL)
        continue;
      base = strrchr (info.dli_fname, '/');
      base = base != NULL ? base + 1 : info.dli_fname;
      if (strncmp (base, "libds-", 6) == 0 || strncmp (base, "libgstds", 8) == 0)
        return DS_HOST_WAIT_DS;
      if (strncmp (base, "libgstnvcodec", 13) == 0)
        return DS_HOST_WAIT_NVCODEC;
    }
  return DS_HOST_WAIT_OTHER;
}

static int
counted (int   func,
         int   slot,
         void *arg)
{
  __atomic_fetch_add (&counts[caller_of_stack ()], 1, __ATOMIC_RELAXED);
  return real_funcs[func][slot] (arg);
}

#define WRAPPER(f, s) static int wrap_##f##_##s (void *arg) { return counted (f, s, arg); }
#define WRAPPERS(f) WRAPPER (f, 0) WRAPPER (f, 1) WRAPPER (f, 2) WRAPPER (f, 3)
WRAPPERS (0)
WRAPPERS (1)
WRAPPERS (2)
#define ROW(f) { wrap_##f##_0, wrap_##f##_1, wrap_##f##_2, wrap_##f##_3 }
static const SyncFunc wrappers[N_FUNCS][N_SLOTS] = { ROW (0), ROW (1), ROW (2) };

/* The wrapper for @real, one of the variants of the function called
 * @name (cuStreamSynchronize_ptsz, ...), or @real itself. */
static void *
wrap (const char *name,
      void       *real)
{
  if (real == NULL || name == NULL)
    return real;
  for (int f = 0; f < N_FUNCS; f++)
    {
      if (strncmp (name, func_names[f], strlen (func_names[f])) != 0)
        continue;
      for (int s = 0; s < N_SLOTS; s++)
        {
          SyncFunc expected = NULL;

          if (__atomic_load_n (&real_funcs[f][s], __ATOMIC_ACQUIRE) == (SyncFunc) real ||
              __atomic_compare_exchange_n (&real_funcs[f][s], &expected, (SyncFunc) real, 0,
                                           __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE) ||
              expected == (SyncFunc) real)
            return (void *) wrappers[f][s];
        }
    }
  return real;
}

typedef int (*GetProcV2) (const char *, void **, int, uint64_t, void *);
typedef int (*GetProc) (const char *, void **, int, uint64_t);
static GetProcV2 real_get_proc_v2;
static GetProc real_get_proc;

static int
get_proc_v2 (const char *symbol, void **pfn, int version, uint64_t flags, void *status)
{
  int result = real_get_proc_v2 (symbol, pfn, version, flags, status);

  if (result == 0 && pfn != NULL)
    *pfn = wrap (symbol, *pfn);
  return result;
}

static int
get_proc (const char *symbol, void **pfn, int version, uint64_t flags)
{
  int result = real_get_proc (symbol, pfn, version, flags);

  if (result == 0 && pfn != NULL)
    *pfn = wrap (symbol, *pfn);
  return result;
}

void *
dlsym (void       *handle,
       const char *name)
{
  static void *(*real_dlsym) (void *, const char *);
  void *sym;

  if (real_dlsym == NULL)
    {
      real_dlsym = dlvsym (RTLD_NEXT, "dlsym", "GLIBC_2.34");
      if (real_dlsym == NULL)
        real_dlsym = dlvsym (RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
    }
  if (handle == RTLD_NEXT)
    {
      /* The next object after the caller's, not after this library's: the
       * objects that follow the caller in the link map, in order. */
      struct link_map *map = NULL;
      Dl_info info;

      sym = NULL;
      if (dladdr1 (__builtin_return_address (0), &info, (void **) &map, RTLD_DL_LINKMAP) != 0)
        for (map = map != NULL ? map->l_next : NULL; map != NULL && sym == NULL; map = map->l_next)
          {
            void *next = dlopen (map->l_name, RTLD_LAZY | RTLD_NOLOAD);

            if (next != NULL)
              {
                sym = real_dlsym (next, name);
                dlclose (next);
              }
          }
    }
  else
    {
      sym = real_dlsym (handle, name);
    }
  if (sym == NULL)
    return sym;
  if (strcmp (name, "cuGetProcAddress_v2") == 0)
    {
      real_get_proc_v2 = (GetProcV2) sym;
      return (void *) get_proc_v2;
    }
  if (strcmp (name, "cuGetProcAddress") == 0)
    {
      real_get_proc = (GetProc) sym;
      return (void *) get_proc;
    }
  return wrap (name, sym);
}

unsigned long
ds_host_wait_spy_count (DsHostWaitCaller caller)
{
  return __atomic_load_n (&counts[caller], __ATOMIC_RELAXED);
}
