/* ds-host-wait-counter.c: the host's waits for the GPU, counted by CUPTI
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * CUPTI's callback API (libcupti, opened at run time) calls back on entry
 * to every driver function asked for, however the caller reached it:
 * through the driver's exports (GStreamer's CUDA library), or through
 * cuGetProcAddress () (the static CUDA runtime in libds and the plugins).
 * Each cuStreamSynchronize, cuEventSynchronize and cuCtxSynchronize (and
 * their _ptsz and _v2 variants) is a wait; each cuStreamQuery and
 * cuEventQuery a poll. Each is charged twice:
 *
 *   by stack    backtrace () from inside the driver call, past the driver
 *               and CUPTI, to the innermost library that is ds's (libds,
 *               libds-gst, a libgstds* plugin) or a GStreamer plugin
 *               (libgstNAME.so; libgstnvcodec is GStreamer's CUDA
 *               elements), else the program itself; GStreamer's and
 *               GLib's libraries (libgstcuda-1.0 ...) and the CUDA runtime
 *               are passed through, since the caller decides the wait;
 *   by element  the element whose pad the calling thread pushed a buffer
 *               to last and has not returned from (tracer hooks
 *               pad-push-pre/post), else the program.
 *
 * Test code only: nothing of this is in a library ds installs.
 */

#define _GNU_SOURCE
#include "config.h"

#include <dlfcn.h>
#include <execinfo.h>
#include <string.h>

#include "ds-host-wait-counter.h"

#if HAVE_CUDA
# include <cupti.h>
#endif

static DsHostWaits counts;

const char *
ds_wait_owner_name (DsWaitOwner owner)
{
  static const char *const names[DS_WAIT_N_OWNERS] = {
    "ds", "gst-cuda", "other-element", "app", "unknown",
  };

  g_return_val_if_fail (owner < DS_WAIT_N_OWNERS, NULL);
  return names[owner];
}

void
ds_host_wait_counter_read (DsHostWaits *waits)
{
  for (guint k = 0; k < DS_WAIT_N_KINDS; k++)
    for (guint o = 0; o < DS_WAIT_N_OWNERS; o++)
      {
        waits->by_stack[k][o] = __atomic_load_n (&counts.by_stack[k][o], __ATOMIC_RELAXED);
        waits->by_element[k][o] = __atomic_load_n (&counts.by_element[k][o], __ATOMIC_RELAXED);
      }
}

void
ds_host_waits_per_frame (const DsHostWaits *before,
                         const DsHostWaits *after,
                         guint              n_frames,
                         double             out[2][DS_WAIT_N_KINDS][DS_WAIT_N_OWNERS])
{
  for (guint k = 0; k < DS_WAIT_N_KINDS; k++)
    for (guint o = 0; o < DS_WAIT_N_OWNERS; o++)
      {
        out[0][k][o] = (double) (after->by_stack[k][o] - before->by_stack[k][o]) / MAX (n_frames, 1);
        out[1][k][o] = (double) (after->by_element[k][o] - before->by_element[k][o]) / MAX (n_frames, 1);
      }
}

/* --- by element: the thread's stack of pushed-to elements ------------------ */

DsWaitOwner
ds_wait_owner_of_element (GstElement *element)
{
  GstElementFactory *factory = element != NULL ? gst_element_get_factory (element) : NULL;
  const char *name, *plugin;

  if (factory == NULL)
    return DS_WAIT_OTHER_ELEMENT;
  name = gst_plugin_feature_get_name (GST_PLUGIN_FEATURE (factory));
  plugin = gst_plugin_feature_get_plugin_name (GST_PLUGIN_FEATURE (factory));
  if (g_str_has_prefix (name, "ds"))
    return DS_WAIT_DS;
  if (g_strcmp0 (plugin, "nvcodec") == 0 || g_str_has_prefix (name, "cuda"))
    return DS_WAIT_GST_CUDA;
  return DS_WAIT_OTHER_ELEMENT;
}

/* Per thread: the owners of the elements pushed to, innermost last. */
#define MAX_DEPTH 64
typedef struct
{
  guint       depth;
  DsWaitOwner owners[MAX_DEPTH];
} Scope;

static __thread Scope scope;

DsWaitOwner
ds_host_wait_counter_scope (void)
{
  if (scope.depth == 0)
    return DS_WAIT_APP;
  return scope.owners[MIN (scope.depth, MAX_DEPTH) - 1];
}

static void
push_pre (GObject      *tracer,
          GstClockTime  ts,
          GstPad       *pad,
          gpointer      buffer)
{
  GstPad *peer = gst_pad_get_peer (pad);
  GstElement *element = peer != NULL ? gst_pad_get_parent_element (peer) : NULL;

  if (scope.depth < MAX_DEPTH)
    scope.owners[scope.depth] = element != NULL ? ds_wait_owner_of_element (element) : DS_WAIT_APP;
  scope.depth++;
  gst_clear_object (&element);
  gst_clear_object (&peer);
}

static void
push_post (GObject       *tracer,
           GstClockTime   ts,
           GstPad        *pad,
           GstFlowReturn  res)
{
  if (scope.depth > 0)
    scope.depth--;
}

typedef struct { GstTracer parent; } DsWaitTracer;
typedef struct { GstTracerClass parent_class; } DsWaitTracerClass;
GType ds_wait_tracer_get_type (void);
G_DEFINE_TYPE (DsWaitTracer, ds_wait_tracer, GST_TYPE_TRACER)

static void
ds_wait_tracer_class_init (DsWaitTracerClass *klass)
{
}

static void
ds_wait_tracer_init (DsWaitTracer *self)
{
  GstTracer *tracer = GST_TRACER (self);

  gst_tracing_register_hook (tracer, "pad-push-pre", G_CALLBACK (push_pre));
  gst_tracing_register_hook (tracer, "pad-push-post", G_CALLBACK (push_post));
  gst_tracing_register_hook (tracer, "pad-push-list-pre", G_CALLBACK (push_pre));
  gst_tracing_register_hook (tracer, "pad-push-list-post", G_CALLBACK (push_post));
}

/* --- by stack --------------------------------------------------------------- */

static gboolean
has_prefix (const char *base,
            const char *prefix)
{
  return strncmp (base, prefix, strlen (prefix)) == 0;
}

static const char *
base_of (const void *address,
         const void **object)
{
  Dl_info info;
  const char *base;

  if (dladdr (address, &info) == 0 || info.dli_fname == NULL)
    return NULL;
  *object = info.dli_fbase;
  base = strrchr (info.dli_fname, '/');
  return base != NULL ? base + 1 : info.dli_fname;
}

static gboolean
is_driver (const char *base)
{
  return has_prefix (base, "libcuda.so") || has_prefix (base, "libcupti") ||
         has_prefix (base, "libnvidia-");
}

/* The owner by the calling thread's stack. */
static DsWaitOwner
owner_by_stack (void)
{
  static const void *program;
  void *frames[128];
  int n = backtrace (frames, G_N_ELEMENTS (frames));
  int i = 0;

  if (program == NULL)
    base_of ((const void *) ds_host_wait_counter_start, &program);
  /* This callback's frames, then the driver's and CUPTI's. */
  for (; i < n; i++)
    {
      const void *object = NULL;
      const char *base = base_of (frames[i], &object);

      if (base != NULL && is_driver (base))
        break;
    }
  if (i == n)
    return DS_WAIT_UNKNOWN;
  for (; i < n; i++)
    {
      const void *object = NULL;
      const char *base = base_of (frames[i], &object);

      if (base == NULL || is_driver (base))
        continue;
      if (has_prefix (base, "libds-") || has_prefix (base, "libgstds"))
        return DS_WAIT_DS;
      if (has_prefix (base, "libgstnvcodec"))
        return DS_WAIT_GST_CUDA;
      /* A plugin is libgstNAME.so; GStreamer's libraries are libgstNAME-1.0.so. */
      if (has_prefix (base, "libgst") && strstr (base, "-1.0") == NULL)
        return DS_WAIT_OTHER_ELEMENT;
      if (object == program)
        return DS_WAIT_APP;
    }
  return DS_WAIT_UNKNOWN;
}

#if HAVE_CUDA
static void CUPTIAPI
on_driver_call (void                *userdata,
                CUpti_CallbackDomain domain,
                CUpti_CallbackId     cbid,
                const void          *data)
{
  const CUpti_CallbackData *cb = data;
  DsWaitKind kind;

  if (domain != CUPTI_CB_DOMAIN_DRIVER_API || cb->callbackSite != CUPTI_API_ENTER)
    return;
  switch (cbid)
    {
    case CUPTI_DRIVER_TRACE_CBID_cuStreamQuery:
    case CUPTI_DRIVER_TRACE_CBID_cuStreamQuery_ptsz:
    case CUPTI_DRIVER_TRACE_CBID_cuEventQuery:
      kind = DS_WAIT_POLL;
      break;
    default:
      kind = DS_WAIT_SYNC;
      break;
    }
  __atomic_fetch_add (&counts.by_stack[kind][owner_by_stack ()], 1, __ATOMIC_RELAXED);
  __atomic_fetch_add (&counts.by_element[kind][ds_host_wait_counter_scope ()], 1, __ATOMIC_RELAXED);
}
#endif

static const char *
start_once (void)
{
#if HAVE_CUDA
  static const CUpti_CallbackId ids[] = {
    CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize,
    CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuEventSynchronize,
    CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize,
    CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize_v2,
    CUPTI_DRIVER_TRACE_CBID_cuStreamQuery,
    CUPTI_DRIVER_TRACE_CBID_cuStreamQuery_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuEventQuery,
  };
  CUptiResult (*subscribe) (CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *);
  CUptiResult (*enable) (uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain, CUpti_CallbackId);
  CUptiResult (*result_string) (CUptiResult, const char **);
  CUpti_SubscriberHandle subscriber;
  CUptiResult result;
  const char *what = NULL;
  void *lib;
  void *frames[4];

  /* compute-sanitizer (and Nsight) load themselves into the program and
   * take CUPTI's one subscriber. */
  if (g_getenv ("CUDA_INJECTION64_PATH") != NULL ||
      strstr (g_getenv ("LD_PRELOAD") != NULL ? g_getenv ("LD_PRELOAD") : "", "sanitizer") != NULL)
    return "a CUDA tool (compute-sanitizer, Nsight) is loaded into the program: CUPTI is its";
  lib = dlopen ("libcupti.so.13", RTLD_NOW | RTLD_LOCAL);
  if (lib == NULL)
    lib = dlopen ("libcupti.so", RTLD_NOW | RTLD_LOCAL);
  if (lib == NULL)
    return g_intern_string (dlerror ());
  subscribe = (CUptiResult (*) (CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *)) dlsym (lib, "cuptiSubscribe");
  enable = (CUptiResult (*) (uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain, CUpti_CallbackId))
    dlsym (lib, "cuptiEnableCallback");
  result_string = (CUptiResult (*) (CUptiResult, const char **)) dlsym (lib, "cuptiGetResultString");
  if (subscribe == NULL || enable == NULL || result_string == NULL)
    return "libcupti lacks cuptiSubscribe, cuptiEnableCallback or cuptiGetResultString";
  /* backtrace () loads libgcc_s the first time: not inside the driver. */
  backtrace (frames, G_N_ELEMENTS (frames));
  result = subscribe (&subscriber, on_driver_call, NULL);
  for (guint i = 0; result == CUPTI_SUCCESS && i < G_N_ELEMENTS (ids); i++)
    result = enable (1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API, ids[i]);
  if (result != CUPTI_SUCCESS)
    {
      result_string (result, &what);
      return g_intern_string (what != NULL ? what : "CUPTI failed");
    }
  gst_object_unref (gst_object_ref_sink (g_object_new (ds_wait_tracer_get_type (), NULL)));
  return NULL;
#else
  return "built without CUDA";
#endif
}

const char *
ds_host_wait_counter_start (void)
{
  static const char *why;
  static gsize once;

  if (g_once_init_enter (&once))
    {
      why = start_once ();
      g_once_init_leave (&once, 1);
    }
  return why;
}
