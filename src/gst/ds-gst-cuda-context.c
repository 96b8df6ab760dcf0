/* ds-gst-cuda-context.c: ds orders, scratchpads and pools on a GstCudaContext
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <gmodule.h>

#include "ds-gst-cuda-context-private.h"
#include "ds-gst-debug-private.h"

/* GStreamer's `GstCudaContext` makes its own, non-primary CUDA context
 * (`cuCtxCreate`), and the CUDA runtime works in whatever context is
 * current on the calling thread. Memory for an element that uses such a
 * context must be allocated and given back with that context current,
 * whichever thread does it — a buffer may be freed, and with it a
 * DsGstScratchMeta, on any streaming thread. The functions here make sure
 * of it:
 *
 * - ds_gst_cuda_context_new_order() creates the order of a stream of
 *   the context (or of its legacy default stream) with the context pushed,
 *   so that the order records the context; every scratchpad allocation and
 *   release on that order switches to it, on any thread.
 * - Each `GstCudaContext` gets its own pinned, device and managed
 *   DsPoolResources (ds_gst_cuda_context_get_resource()), kept
 *   on the context and torn down — with the context current, waiting for
 *   releases still pending on its streams — when the context is disposed,
 *   before GStreamer destroys the CUDA context. (The process-wide default
 *   pools are keyed by the context's handle and are never told that a
 *   context was destroyed, so a later context at the same address could
 *   otherwise be handed blocks of the dead one.)
 * - ds_gst_cuda_context_new_scratchpad() creates a scratchpad on those
 *   pools that holds a reference on the context until it is finalized, so
 *   the context outlives every block of it.
 * - While a DsGstStream (ds-gst-stream.c) of the context is alive, its
 *   elements are running; when the last one goes (an element stops, and
 *   the buffers that carry its scratch are gone), the pools give back
 *   every block they hold idle: a pipeline in READY holds no scratch.
 *
 * The same text, for readers of the API reference, is on the functions
 * below and in the guide (introspection/docs/gst-element.md).
 */

typedef int (*CuStreamGetCtxFunc) (gpointer stream, gpointer *context);

typedef struct
{
  GstCudaContext   *context;   /* not owned: the data lives on it */
  gint              device;
  DsMemoryResource *resources[DS_N_MEMORY_KINDS];   /* [HOST] stays NULL */
  guint             n_streams;   /* live DsGstStreams, under context_data_lock */
} ContextData;

static GMutex context_data_lock;

static GQuark
context_data_quark (void)
{
  return g_quark_from_static_string ("ds-gst-cuda-context-data");
}

static GQuark
scratchpad_context_quark (void)
{
  return g_quark_from_static_string ("ds-gst-cuda-context");
}

/* The driver's cuStreamGetCtx, from the libcuda that gstcuda loaded
 * (gst_cuda_load_library () succeeded before any GstCudaContext existed):
 * libds-gst links no CUDA library of its own. NULL where it cannot be
 * found; the check it serves is then left out. */
static CuStreamGetCtxFunc
get_stream_ctx_func (void)
{
  static gsize once;
  static CuStreamGetCtxFunc func;

  if (g_once_init_enter (&once))
    {
      GModule *driver = g_module_open ("libcuda.so.1", G_MODULE_BIND_LAZY | G_MODULE_BIND_LOCAL);
      gpointer fn = NULL;

      if (driver != NULL && g_module_symbol (driver, "cuStreamGetCtx", &fn))
        {
          /* Kept open: the pointer is used for the life of the process. */
          g_module_make_resident (driver);
          func = (CuStreamGetCtxFunc) fn;
        }
      else
        {
          GST_DEBUG ("no cuStreamGetCtx in libcuda.so.1 (%s): streams are not checked "
                     "against their context", g_module_error ());
        }
      if (driver != NULL)
        g_module_close (driver);
      g_once_init_leave (&once, 1);
    }

  return func;
}

/* Runs in the context's dispose (a weak reference), before GStreamer
 * destroys the CUDA context in finalize. By then no scratchpad made here is
 * alive (each holds a reference on the context), so the pools hold only
 * cached blocks and blocks whose stream-ordered release is pending:
 * disposing a pool waits for those and gives everything back, in the
 * context it was taken in. */
static void
context_disposed_cb (gpointer  data,
                     GObject  *where_the_object_was)
{
  ContextData *cd = data;
  gboolean pushed;

  g_mutex_lock (&context_data_lock);
  g_object_set_qdata (where_the_object_was, context_data_quark (), NULL);
  g_mutex_unlock (&context_data_lock);

  GST_DEBUG ("tearing down the pools of %" GST_PTR_FORMAT, cd->context);

  pushed = gst_cuda_context_push (cd->context);
  if (!pushed)
    GST_WARNING ("could not push %" GST_PTR_FORMAT " to tear its pools down",
                 cd->context);
  for (guint kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
    g_clear_object (&cd->resources[kind]);
  /* The fences of the context's streams (and any default resource made
   * for it) go now, while the context exists: later, another context may
   * have its address. */
  if (pushed)
    ds_memory_resource_forget_context (gst_cuda_context_get_handle (cd->context));
  if (pushed)
    gst_cuda_context_pop (NULL);

  g_free (cd);
}

/* The data of @context, made on first use. Once there it is read without
 * the lock (GLib's qdata is safe across threads, and it goes only in the
 * context's dispose, when no caller may use the context any more): the
 * per-buffer scratchpads of the streaming threads of every element would
 * otherwise take one process-wide mutex each. The lock orders making it. */
static ContextData *
context_data_get (GstCudaContext *context)
{
  ContextData *cd = g_object_get_qdata (G_OBJECT (context), context_data_quark ());

  if (G_LIKELY (cd != NULL))
    return cd;

  g_mutex_lock (&context_data_lock);
  cd = g_object_get_qdata (G_OBJECT (context), context_data_quark ());
  if (cd == NULL)
    {
      guint device_id = 0;
      g_autoptr(DsMemoryResource) pinned = NULL;
      g_autoptr(DsMemoryResource) device = NULL;
      g_autoptr(DsMemoryResource) managed = NULL;

      g_object_get (context, "cuda-device-id", &device_id, NULL);

      cd = g_new0 (ContextData, 1);
      cd->context = context;
      cd->device = (gint) device_id;

      /* Nothing here calls CUDA: each pool records the device and context
       * of its first upstream allocation, which happens inside a
       * scratchpad's scope, i.e. with this context current. */
      pinned = ds_pinned_memory_resource_new ();
      device = ds_device_memory_resource_new (cd->device);
      managed = ds_managed_memory_resource_new (cd->device);
      cd->resources[DS_MEMORY_KIND_PINNED] = ds_pool_resource_new (pinned);
      cd->resources[DS_MEMORY_KIND_DEVICE] = ds_pool_resource_new (device);
      cd->resources[DS_MEMORY_KIND_MANAGED] = ds_pool_resource_new (managed);

      g_object_set_qdata (G_OBJECT (context), context_data_quark (), cd);
      g_object_weak_ref (G_OBJECT (context), context_disposed_cb, cd);

      GST_DEBUG ("new pools for %" GST_PTR_FORMAT " (CUDA context %p, device %d)",
                 context, gst_cuda_context_get_handle (context), cd->device);
    }
  g_mutex_unlock (&context_data_lock);

  return cd;
}

static gboolean
init_order (GstCudaContext  *context,
            ContextData     *cd,
            gpointer         stream,
            DsAccessOrder   *order,
            GError         **error)
{
  if (stream != NULL)
    {
      CuStreamGetCtxFunc stream_get_ctx = get_stream_ctx_func ();
      gpointer owner = NULL;

      if (stream_get_ctx != NULL && stream_get_ctx (stream, &owner) == 0 &&
          owner != gst_cuda_context_get_handle (context))
        {
          g_set_error (error, DS_ERROR, DS_ERROR_INVALID_ARGUMENT,
                       "Stream %p belongs to CUDA context %p, not to %s (CUDA context %p)",
                       stream, owner, GST_OBJECT_NAME (context),
                       gst_cuda_context_get_handle (context));
          return FALSE;
        }

      /* An explicit stream's order is the stream's own device and context,
       * looked up from the stream whatever is current: no push needed (two
       * driver calls a buffer saved). */
      ds_access_order_init_stream (order, stream, cd->device);
      return TRUE;
    }

  /* The legacy default stream is the current context's. */
  if (!gst_cuda_context_push (context))
    {
      g_set_error (error, DS_ERROR, DS_ERROR_CUDA,
                   "Could not make the CUDA context of %s current (cuCtxPushCurrent failed)",
                   GST_OBJECT_NAME (context));
      return FALSE;
    }
  ds_access_order_init_stream (order, NULL, cd->device);
  gst_cuda_context_pop (NULL);

  return TRUE;
}

gboolean
ds_gst_cuda_context_init_order (GstCudaContext  *context,
                                gpointer         stream,
                                DsAccessOrder   *order,
                                GError         **error)
{
  return init_order (context, context_data_get (context), stream, order, error);
}

void
ds_gst_cuda_context_bind_scratchpad (GstCudaContext *context,
                                     DsScratchpad   *scratchpad)
{
  ContextData *cd = context_data_get (context);

  /* The resources set directly, not as properties by name (g_object_new ()
   * with four properties costs as much as three scratchpads without). */
  ds_scratchpad_set_resource (scratchpad, DS_MEMORY_KIND_PINNED, cd->resources[DS_MEMORY_KIND_PINNED]);
  ds_scratchpad_set_resource (scratchpad, DS_MEMORY_KIND_DEVICE, cd->resources[DS_MEMORY_KIND_DEVICE]);
  ds_scratchpad_set_resource (scratchpad, DS_MEMORY_KIND_MANAGED, cd->resources[DS_MEMORY_KIND_MANAGED]);

  /* GObject clears qdata after the scratchpad's own finalize has given
   * every block back, so the context outlives its memory. */
  if (g_object_get_qdata (G_OBJECT (scratchpad), scratchpad_context_quark ()) != context)
    g_object_set_qdata_full (G_OBJECT (scratchpad), scratchpad_context_quark (),
                             gst_object_ref (context), gst_object_unref);
}

void
ds_gst_cuda_context_hold (GstCudaContext *context)
{
  ContextData *cd = context_data_get (context);

  g_mutex_lock (&context_data_lock);
  cd->n_streams++;
  g_mutex_unlock (&context_data_lock);
}

void
ds_gst_cuda_context_release (GstCudaContext *context)
{
  ContextData *cd = context_data_get (context);
  gboolean last;
  guint64 freed = 0;

  g_mutex_lock (&context_data_lock);
  g_assert (cd->n_streams > 0);
  last = --cd->n_streams == 0;
  g_mutex_unlock (&context_data_lock);
  if (!last)
    return;

  /* No element of this context is running: what the pools keep is idle
   * until the next start, so it goes back to CUDA now (a trim waits for
   * work still queued on the blocks it gives back). */
  if (!gst_cuda_context_push (context))
    {
      GST_WARNING ("could not push %" GST_PTR_FORMAT " to trim its pools", context);
      return;
    }
  for (guint kind = DS_MEMORY_KIND_PINNED; kind < DS_N_MEMORY_KINDS; kind++)
    freed += ds_pool_resource_trim (DS_POOL_RESOURCE (cd->resources[kind]));
  gst_cuda_context_pop (NULL);

  GST_DEBUG ("no stream of %" GST_PTR_FORMAT " left: its pools gave back %" G_GUINT64_FORMAT
             " bytes", context, freed);
}

/**
 * ds_gst_cuda_context_new_order:
 * @context: a #GstCudaContext
 * @stream: (nullable): a `CUstream` (`cudaStream_t`) created in @context,
 *   or `NULL` for the legacy default stream of @context
 * @error: return location for a #GError
 *
 * Creates the order of @stream in @context: the order records @context
 * (for the legacy default stream, by pushing it), so that scratchpads on
 * it allocate and give memory back with @context current, on any thread.
 *
 * With GStreamer 1.24 or newer, `ds_gst_cuda_stream_new_order()` takes a
 * `GstCudaStream` instead.
 *
 * Returns: (transfer full) (nullable): a new #DsAccessOrder, or `NULL`
 *   with @error set: %DS_ERROR_INVALID_ARGUMENT when @stream belongs to
 *   another CUDA context, %DS_ERROR_CUDA when @context cannot be made
 *   current (for the legacy default stream)
 */
DsAccessOrder *
ds_gst_cuda_context_new_order (GstCudaContext  *context,
                               gpointer         stream,
                               GError         **error)
{
  DsAccessOrder order;

  g_return_val_if_fail (GST_IS_CUDA_CONTEXT (context), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  ds_gst_debug_init ();
  if (!init_order (context, context_data_get (context), stream, &order, error))
    return NULL;

  return ds_access_order_copy (&order);
}

/**
 * ds_gst_cuda_context_new_scratchpad:
 * @context: a #GstCudaContext
 * @stream: (nullable): a `CUstream` (`cudaStream_t`) created in @context,
 *   or `NULL` for the legacy default stream of @context
 * @error: return location for a #GError
 *
 * Creates a scratchpad whose device order is @stream in @context (see
 * [func@DsGst.cuda_context_new_order]) and whose pinned, device and managed
 * memory come from the pools of @context
 * ([func@DsGst.cuda_context_get_resource]); host memory comes from the
 * default host resource. The scratchpad holds a reference on @context
 * until it is finalized.
 *
 * Every allocation and every release — `ds_scratchpad_release()`, or the
 * finalize when the last reference goes, on whatever thread — runs with
 * @context current and gives the memory back in the stream's order.
 *
 * @stream must outlive the scratchpad's memory: an element that does not
 * manage its stream's life that way takes a [struct@DsGst.Stream], which
 * ds-gst keeps alive for its scratchpads ([method@DsGst.Stream.new_scratchpad]).
 * The fast path is one scratchpad per element, released after each buffer;
 * a new one per buffer costs an object and an order each time, and is for
 * scratch that must live as long as the buffer
 * ([func@DsGst.buffer_add_scratch_meta]).
 *
 * Returns: (transfer full) (nullable): a new #DsScratchpad, or `NULL` with
 *   @error set as by [func@DsGst.cuda_context_new_order]
 */
DsScratchpad *
ds_gst_cuda_context_new_scratchpad (GstCudaContext  *context,
                                    gpointer         stream,
                                    GError         **error)
{
  DsAccessOrder order;
  DsScratchpad *scratchpad;

  g_return_val_if_fail (GST_IS_CUDA_CONTEXT (context), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  ds_gst_debug_init ();
  if (!init_order (context, context_data_get (context), stream, &order, error))
    return NULL;

  scratchpad = ds_scratchpad_new (&order);
  ds_gst_cuda_context_bind_scratchpad (context, scratchpad);

  return scratchpad;
}

/**
 * ds_gst_cuda_context_get_resource:
 * @context: a #GstCudaContext
 * @kind: a memory kind
 * @error: return location for a #GError
 *
 * The resource that scratchpads made by
 * [func@DsGst.cuda_context_new_scratchpad] take @kind memory from: for
 * pinned, device and managed memory the [class@Ds.PoolResource] of
 * @context (created on first use, torn down when @context is disposed);
 * for host memory the process-wide default host resource. Its statistics
 * ([method@Ds.PoolResource.get_stats]) show what the elements on @context
 * hold.
 *
 * The resource is valid while @context is; do not keep a reference on it
 * beyond that. When the last [struct@DsGst.Stream] of @context goes, the
 * pools give back every block they hold idle.
 *
 * Returns: (transfer none) (nullable): the resource, or `NULL` with @error
 *   set (%DS_ERROR_INVALID_ARGUMENT for an unknown kind)
 */
DsMemoryResource *
ds_gst_cuda_context_get_resource (GstCudaContext  *context,
                                  DsMemoryKind     kind,
                                  GError         **error)
{
  g_return_val_if_fail (GST_IS_CUDA_CONTEXT (context), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if ((guint) kind >= DS_N_MEMORY_KINDS)
    {
      g_set_error (error, DS_ERROR, DS_ERROR_INVALID_ARGUMENT,
                   "Unknown memory kind %d", (int) kind);
      return NULL;
    }
  if (kind == DS_MEMORY_KIND_HOST)
    return ds_memory_resource_get_default (kind, 0, error);

  ds_gst_debug_init ();
  return context_data_get (context)->resources[kind];
}
