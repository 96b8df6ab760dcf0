/* ds-cuda.c: CUDA availability, errors, scopes, streams, events, copies
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "ds-cuda-private.h"


/* Driver API functions reached through the runtime's entry-point query, so
 * that libds never links libcuda (which does not exist on a machine without
 * a driver). CUcontext and CUstream are pointers; CUresult is an int. */
typedef int (*DsCuCtxGetCurrent) (gpointer *ctx);
typedef int (*DsCuCtxSetCurrent) (gpointer ctx);
typedef int (*DsCuStreamGetCtx) (gpointer stream, gpointer *ctx);
typedef int (*DsCuDeviceGet) (int *device, int ordinal);
typedef int (*DsCuDevicePrimaryCtxGetState) (int device, unsigned int *flags, int *active);
typedef int (*DsCuDevicePrimaryCtxRetain) (gpointer *ctx, int device);
typedef int (*DsCuDevicePrimaryCtxRelease) (int device);
typedef int (*DsCuStreamGetId) (gpointer stream, unsigned long long *id);
typedef int (*DsCuStreamQuery) (gpointer stream);
typedef int (*DsCuEventRecord) (gpointer event, gpointer stream);

/* CUDA_SUCCESS and CUDA_ERROR_NOT_READY (cuda.h is not included here). */
#define CU_OK        0
#define CU_NOT_READY 600

#define MAX_CACHED_DEVICES 64
/* Stream descriptions remembered per thread (see ds_cuda_stream_describe). */
#define N_CACHED_STREAMS   8

/* What ds keeps per thread here, in a GPrivate (a call to reach, next to
 * a CUDA call that costs a hundred times more). */
typedef struct
{
  /* Driver calls made by this thread: the runtime's are counted by the
   * tests' interposer, these cannot be (they are reached through entry
   * points), so ds counts them itself. */
  guint64 n_driver_calls;
  /* Stream descriptions remembered (see ds_cuda_stream_describe ()). */
  struct
  {
    guint64  id;
    gint     device;
    gpointer context;
  } seen[N_CACHED_STREAMS];
  guint next;
} ThreadCache;

static GPrivate thread_cache_key = G_PRIVATE_INIT (g_free);

static ThreadCache *
thread_cache (void)
{
  ThreadCache *cache = g_private_get (&thread_cache_key);

  if (G_UNLIKELY (cache == NULL))
    {
      cache = g_new0 (ThreadCache, 1);
      g_private_set (&thread_cache_key, cache);
    }

  return cache;
}

#define DRIVER(call) (thread_cache ()->n_driver_calls++, (call))

static struct
{
  gsize              initialized;
  gboolean           available;
  gint               device_count;
  cudaError_t        error;
  DsCuCtxGetCurrent  ctx_get_current;
  DsCuCtxSetCurrent  ctx_set_current;
  DsCuStreamGetCtx   stream_get_ctx;
  DsCuDeviceGet      device_get;
  DsCuDevicePrimaryCtxGetState primary_get_state;
  DsCuDevicePrimaryCtxRetain   primary_retain;
  DsCuDevicePrimaryCtxRelease  primary_release;
  /* The calls of every release check and every new stream order, straight
   * to the driver: the runtime's wrappers cost more than the call itself
   * (H200, one thread: cudaStreamGetId 66-77 ns against 22-27 for
   * cuStreamGetId, cudaStreamQuery 319-352 against 244-288 for
   * cuStreamQuery, cudaEventRecord 195 against 162). Explicit streams
   * only (see by_driver ()); where the driver fails, the runtime call runs
   * instead and names the error. NULL where the entry point is missing:
   * the runtime only. */
  DsCuStreamGetId    stream_get_id;
  DsCuStreamQuery    stream_query;
  DsCuEventRecord    event_record;
  gpointer           primary[MAX_CACHED_DEVICES];
} cuda;

/* Whether a call on @stream may go to the driver: an explicit stream,
 * which carries its context. The legacy and per-thread default streams
 * (NULL, cudaStreamLegacy, cudaStreamPerThread) mean the current
 * context's, and on a thread that has none the driver refuses them
 * (CUDA_ERROR_INVALID_CONTEXT, which compute-sanitizer reports as an
 * error) where the runtime sets the device's primary context up. */
static inline gboolean
by_driver (gboolean  have_entry_point,
           gpointer  stream)
{
  return have_entry_point && (guintptr) stream > (guintptr) cudaStreamPerThread;
}

static gpointer
get_entry_point (const char *symbol)
{
  void *fn = NULL;
  enum cudaDriverEntryPointQueryResult status;

  if (cudaGetDriverEntryPointByVersion (symbol, &fn, 12000, cudaEnableDefault,
                                        &status) != cudaSuccess ||
      status != cudaDriverEntryPointSuccess)
    {
      (void) cudaGetLastError ();
      return NULL;
    }

  return fn;
}

static void
cuda_init (void)
{
  if (g_once_init_enter (&cuda.initialized))
    {
      int count = 0;

      cuda.error = cudaGetDeviceCount (&count);
      if (cuda.error == cudaSuccess && count == 0)
        cuda.error = cudaErrorNoDevice;
      cuda.available = cuda.error == cudaSuccess;
      cuda.device_count = cuda.available ? count : 0;
      (void) cudaGetLastError ();

      if (cuda.available)
        {
          cuda.ctx_get_current = get_entry_point ("cuCtxGetCurrent");
          cuda.ctx_set_current = get_entry_point ("cuCtxSetCurrent");
          cuda.stream_get_ctx = get_entry_point ("cuStreamGetCtx");
          cuda.device_get = get_entry_point ("cuDeviceGet");
          cuda.primary_get_state = get_entry_point ("cuDevicePrimaryCtxGetState");
          cuda.primary_retain = get_entry_point ("cuDevicePrimaryCtxRetain");
          cuda.primary_release = get_entry_point ("cuDevicePrimaryCtxRelease");
          cuda.stream_get_id = get_entry_point ("cuStreamGetId");
          cuda.stream_query = get_entry_point ("cuStreamQuery");
          cuda.event_record = get_entry_point ("cuEventRecord");
          g_debug ("CUDA runtime sees %d device(s)", count);
        }
      else
        {
          g_debug ("CUDA is not usable: %s (%s)",
                   cudaGetErrorName (cuda.error),
                   cudaGetErrorString (cuda.error));
        }

      g_once_init_leave (&cuda.initialized, 1);
    }
}

gboolean
ds_cuda_ensure_available (GError **error)
{
  cuda_init ();

  if (G_LIKELY (cuda.available))
    return TRUE;

  g_set_error (error, DS_ERROR, DS_ERROR_NO_DEVICE,
               "No usable CUDA device: %s (%s); only host memory is available",
               cudaGetErrorName (cuda.error), cudaGetErrorString (cuda.error));
  return FALSE;
}

gint
ds_cuda_get_device_count (void)
{
  cuda_init ();
  return cuda.device_count;
}

/* Set once a call failed because the runtime is unloading (at process
 * exit): from then on failures are expected, not worth a warning. */
static gint cuda_unloading;

static inline void
note_result (cudaError_t result)
{
  if (G_UNLIKELY (result == cudaErrorCudartUnloading))
    g_atomic_int_set (&cuda_unloading, TRUE);
}

static DsError
error_code_for (cudaError_t result)
{
  switch (result)
    {
    case cudaErrorMemoryAllocation:
      return DS_ERROR_OUT_OF_MEMORY;
    case cudaErrorInsufficientDriver:
    case cudaErrorNoDevice:
    case cudaErrorDevicesUnavailable:
    case cudaErrorCallRequiresNewerDriver:
      return DS_ERROR_NO_DEVICE;
    case cudaErrorInvalidDevice:
      return DS_ERROR_INVALID_ARGUMENT;
    case cudaErrorNotSupported:
      return DS_ERROR_NOT_SUPPORTED;
    default:
      return DS_ERROR_CUDA;
    }
}

gboolean
ds_cuda_set_error (GError      **error,
                   cudaError_t   result,
                   const char   *call)
{
  /* Clear the runtime's last error so that a non-sticky failure does not
   * show up again in an unrelated cudaGetLastError (). */
  (void) cudaGetLastError ();
  note_result (result);

  g_set_error (error, DS_ERROR, error_code_for (result),
               "%s failed: %s (%s)", call,
               cudaGetErrorName (result), cudaGetErrorString (result));
  return FALSE;
}

static void
log_failure (cudaError_t  result,
             const char  *call)
{
  (void) cudaGetLastError ();
  note_result (result);

  if (result == cudaErrorCudartUnloading)
    g_debug ("%s at process exit: %s", call, cudaGetErrorName (result));
  else
    g_warning ("%s failed: %s (%s)", call,
               cudaGetErrorName (result), cudaGetErrorString (result));
}

gboolean
ds_cuda_is_unloading (void)
{
  return g_atomic_int_get (&cuda_unloading);
}

guint64
ds_cuda_get_n_driver_calls (void)
{
  return thread_cache ()->n_driver_calls;
}

void
ds_cuda_clear_error (void)
{
  (void) cudaGetLastError ();
}

gint
ds_cuda_get_device (void)
{
  int current = -1;

  cuda_init ();
  if (!cuda.available)
    return -1;
  if (cudaGetDevice (&current) != cudaSuccess)
    {
      (void) cudaGetLastError ();
      return -1;
    }

  return current;
}

gpointer
ds_cuda_get_current_context (void)
{
  gpointer ctx = NULL;

  cuda_init ();
  if (cuda.ctx_get_current == NULL || DRIVER (cuda.ctx_get_current (&ctx)) != 0)
    return NULL;

  return ctx;
}

gpointer
ds_cuda_get_primary_context (gint device)
{
  gpointer ctx;
  int dev = 0, active = 0;
  unsigned int flags = 0;

  cuda_init ();
  if (device < 0 || device >= cuda.device_count || device >= MAX_CACHED_DEVICES)
    return NULL;

  ctx = g_atomic_pointer_get (&cuda.primary[device]);
  if (ctx != NULL)
    return ctx;

  if (cuda.device_get == NULL || cuda.primary_get_state == NULL ||
      cuda.primary_retain == NULL || cuda.primary_release == NULL)
    return NULL;
  if (DRIVER (cuda.device_get (&dev, device)) != 0 ||
      DRIVER (cuda.primary_get_state (dev, &flags, &active)) != 0 || !active)
    return NULL;

  /* Active already, so retain + release only reads the handle. */
  if (DRIVER (cuda.primary_retain (&ctx, dev)) != 0)
    return NULL;
  DRIVER (cuda.primary_release (dev));

  g_atomic_pointer_set (&cuda.primary[device], ctx);
  return ctx;
}

gboolean
ds_cuda_stream_describe (gpointer  stream,
                         gint      device_hint,
                         gint     *device,
                         gpointer *context,
                         guint64  *id)
{
  *device = device_hint;
  *context = NULL;
  *id = 0;

  cuda_init ();
  if (!cuda.available)
    return TRUE;

  if (stream != NULL)
    {
      /* The identity first: it is never reused, so what else a stream is
       * (device, context) can be remembered by it. One driver call for a
       * stream seen before on this thread. */
      ThreadCache *cache = thread_cache ();
      unsigned long long stream_id = 0;
      int d = device_hint;
      cudaError_t status = cudaSuccess;

      if ((!by_driver (cuda.stream_get_id != NULL, stream) ||
           DRIVER (cuda.stream_get_id (stream, &stream_id)) != CU_OK) &&
          (status = cudaStreamGetId (stream, &stream_id)) != cudaSuccess)
        {
          (void) cudaGetLastError ();
          stream_id = 0;
          /* What the driver says of a handle that is no stream it knows
           * (it cannot tell every such handle). */
          if (status == cudaErrorInvalidResourceHandle || status == cudaErrorContextIsDestroyed ||
              status == cudaErrorInvalidValue)
            return FALSE;
        }
      *id = stream_id;

      for (guint i = 0; stream_id != 0 && i < N_CACHED_STREAMS; i++)
        if (cache->seen[i].id == stream_id &&
            (device_hint < 0 || device_hint == cache->seen[i].device))
          {
            *device = cache->seen[i].device;
            *context = cache->seen[i].context;
            return TRUE;
          }

      if (d < 0 && cudaStreamGetDevice (stream, &d) != cudaSuccess)
        {
          (void) cudaGetLastError ();
          d = -1;
        }
      *device = d;
      if (cuda.stream_get_ctx == NULL || DRIVER (cuda.stream_get_ctx (stream, context)) != 0)
        *context = NULL;

      if (stream_id != 0)
        {
          cache->seen[cache->next].id = stream_id;
          cache->seen[cache->next].device = d;
          cache->seen[cache->next].context = *context;
          cache->next = (cache->next + 1) % N_CACHED_STREAMS;
        }
    }
  else
    {
      gint current = ds_cuda_get_device ();

      if (device_hint < 0)
        *device = current;
      /* The legacy stream of the current device belongs to the context
       * current now (GStreamer's, say); another device's to its primary
       * context, which a scope switch makes current. */
      if (*device == current)
        *context = ds_cuda_get_current_context ();
    }

  return TRUE;
}

gboolean
ds_cuda_scope_enter (DsCudaScope  *scope,
                     gint          device,
                     gpointer      context,
                     GError      **error)
{
  int current = -1;

  scope->switched = FALSE;
  scope->restore_context = FALSE;
  scope->previous_context = NULL;
  scope->previous_device = -1;

  if (!ds_cuda_ensure_available (error))
    return FALSE;

  if (context != NULL && cuda.ctx_set_current != NULL)
    {
      gpointer previous = ds_cuda_get_current_context ();

      if (previous == context)
        return TRUE;

      if (DRIVER (cuda.ctx_set_current (context)) != 0)
        return ds_cuda_set_error (error, cudaErrorInvalidResourceHandle,
                                  "cuCtxSetCurrent");
      scope->switched = TRUE;
      scope->restore_context = TRUE;
      scope->previous_context = previous;
      return TRUE;
    }

  if (device < 0)
    return TRUE;

  if (!DS_CUDA_CHECK (cudaGetDevice (&current), error))
    return FALSE;
  if (current == device)
    return TRUE;

  /* cudaSetDevice () makes the primary context current; remember the
   * caller's context (which may be a non-primary one, e.g. GStreamer's) so
   * that leaving the scope puts exactly that one back. */
  scope->previous_device = current;
  if (cuda.ctx_set_current != NULL)
    {
      scope->previous_context = ds_cuda_get_current_context ();
      scope->restore_context = TRUE;
    }
  if (!DS_CUDA_CHECK (cudaSetDevice (device), error))
    return FALSE;

  scope->switched = TRUE;
  return TRUE;
}

void
ds_cuda_scope_leave (DsCudaScope *scope)
{
  if (!scope->switched)
    return;

  if (scope->restore_context)
    {
      if (DRIVER (cuda.ctx_set_current (scope->previous_context)) != 0)
        g_warning ("Could not restore the caller's CUDA context");
    }
  else if (scope->previous_device >= 0)
    {
      cudaError_t result = cudaSetDevice (scope->previous_device);

      if (result != cudaSuccess)
        log_failure (result, "cudaSetDevice");
    }

  scope->switched = FALSE;
}

static DsCudaStatus
status_of (cudaError_t   result,
           const char   *call,
           GError      **error)
{
  if (result == cudaSuccess)
    return DS_CUDA_DONE;
  if (result == cudaErrorNotReady)
    {
      (void) cudaGetLastError ();
      return DS_CUDA_PENDING;
    }

  ds_cuda_set_error (error, result, call);
  return DS_CUDA_FAILED;
}

DsCudaStatus
ds_cuda_stream_query_contextless (gpointer stream)
{
  if (by_driver (cuda.stream_query != NULL, stream))
    {
      int result = DRIVER (cuda.stream_query (stream));

      if (result == CU_OK)
        return DS_CUDA_DONE;
      if (result == CU_NOT_READY)
        return DS_CUDA_PENDING;
    }

  return DS_CUDA_FAILED;
}

DsCudaStatus
ds_cuda_stream_query (gpointer   stream,
                      GError   **error)
{
  DsCudaStatus status = ds_cuda_stream_query_contextless (stream);

  /* Where the driver fails, the runtime's call names the error. */
  if (G_LIKELY (status != DS_CUDA_FAILED))
    return status;

  return status_of (cudaStreamQuery (stream), "cudaStreamQuery", error);
}

gboolean
ds_cuda_stream_synchronize (gpointer   stream,
                            GError   **error)
{
  return DS_CUDA_CHECK (cudaStreamSynchronize (stream), error);
}

gboolean
ds_cuda_stream_wait_event (gpointer   stream,
                           gpointer   event,
                           GError   **error)
{
  return DS_CUDA_CHECK (cudaStreamWaitEvent (stream, event, 0), error);
}

gboolean
ds_cuda_device_synchronize (GError **error)
{
  return DS_CUDA_CHECK (cudaDeviceSynchronize (), error);
}

gpointer
ds_cuda_event_new (GError **error)
{
  cudaEvent_t event = NULL;

  if (!DS_CUDA_CHECK (cudaEventCreateWithFlags (&event, cudaEventDisableTiming), error))
    return NULL;

  return event;
}

void
ds_cuda_event_free (gpointer event)
{
  cudaError_t result;

  if (event == NULL)
    return;

  /* Destroying an event that has not completed, or that a stream waits
   * for, is allowed: the wait still happens. */
  result = cudaEventDestroy (event);
  if (result != cudaSuccess)
    log_failure (result, "cudaEventDestroy");
}

gboolean
ds_cuda_event_record (gpointer   event,
                      gpointer   stream,
                      GError   **error)
{
  if (G_LIKELY (by_driver (cuda.event_record != NULL, stream)) &&
      DRIVER (cuda.event_record (event, stream)) == CU_OK)
    return TRUE;

  return DS_CUDA_CHECK (cudaEventRecord (event, stream), error);
}

DsCudaStatus
ds_cuda_event_query (gpointer   event,
                     GError   **error)
{
  return status_of (cudaEventQuery (event), "cudaEventQuery", error);
}

gboolean
ds_cuda_event_synchronize (gpointer   event,
                           GError   **error)
{
  return DS_CUDA_CHECK (cudaEventSynchronize (event), error);
}

gboolean
ds_cuda_memcpy (gpointer        dst,
                gconstpointer   src,
                gsize           size,
                gpointer        stream,
                gboolean        wait,
                GError        **error)
{
  return DS_CUDA_CHECK (cudaMemcpyAsync (dst, src, size, cudaMemcpyDefault, stream), error) &&
         (!wait || DS_CUDA_CHECK (cudaStreamSynchronize (stream), error));
}

gboolean
ds_cuda_memset (gpointer   dst,
                guint8     value,
                gsize      size,
                gpointer   stream,
                gboolean   wait,
                GError   **error)
{
  return DS_CUDA_CHECK (cudaMemsetAsync (dst, value, size, stream), error) &&
         (!wait || DS_CUDA_CHECK (cudaStreamSynchronize (stream), error));
}

static GMutex overaligned_lock;
static GHashTable *overaligned;   /* aligned pointer -> base pointer */

static gsize
guaranteed_alignment (DsMemoryKind kind)
{
  return kind == DS_MEMORY_KIND_PINNED ? 4096 : 256;
}

static cudaError_t
raw_alloc (DsMemoryKind   kind,
           void         **ptr,
           gsize          size)
{
  switch (kind)
    {
    case DS_MEMORY_KIND_PINNED:
      return cudaHostAlloc (ptr, size, cudaHostAllocPortable);
    case DS_MEMORY_KIND_DEVICE:
      return cudaMalloc (ptr, size);
    case DS_MEMORY_KIND_MANAGED:
      return cudaMallocManaged (ptr, size, cudaMemAttachGlobal);
    case DS_MEMORY_KIND_HOST:
    default:
      g_assert_not_reached ();
    }
}

static cudaError_t
raw_free (DsMemoryKind kind,
          void        *ptr)
{
  return kind == DS_MEMORY_KIND_PINNED ? cudaFreeHost (ptr) : cudaFree (ptr);
}

static const char *
raw_alloc_name (DsMemoryKind kind)
{
  return kind == DS_MEMORY_KIND_PINNED ? "cudaHostAlloc" :
         kind == DS_MEMORY_KIND_DEVICE ? "cudaMalloc" : "cudaMallocManaged";
}

gpointer
ds_cuda_raw_alloc (DsMemoryKind   kind,
                   gint           device,
                   gsize          size,
                   gsize          alignment,
                   GError       **error)
{
  DsCudaScope scope;
  gboolean over = alignment > guaranteed_alignment (kind);
  gsize total = over ? size + alignment : size;
  void *base = NULL;
  guintptr aligned;
  cudaError_t result;

  if (!ds_cuda_scope_enter (&scope, kind == DS_MEMORY_KIND_PINNED ? -1 : device,
                            NULL, error))
    return NULL;
  result = raw_alloc (kind, &base, total);
  ds_cuda_scope_leave (&scope);

  if (result != cudaSuccess)
    {
      ds_cuda_set_error (error, result, raw_alloc_name (kind));
      g_prefix_error (error, "Could not allocate %" G_GSIZE_FORMAT " bytes of %s memory: ",
                      size, kind == DS_MEMORY_KIND_PINNED ? "pinned" :
                      kind == DS_MEMORY_KIND_DEVICE ? "device" : "managed");
      return NULL;
    }

  if (!over)
    return base;

  aligned = ((guintptr) base + alignment - 1) & ~(guintptr) (alignment - 1);
  g_mutex_lock (&overaligned_lock);
  if (overaligned == NULL)
    overaligned = g_hash_table_new (NULL, NULL);
  g_hash_table_insert (overaligned, (gpointer) aligned, base);
  g_mutex_unlock (&overaligned_lock);

  return (gpointer) aligned;
}

void
ds_cuda_raw_free (DsMemoryKind kind,
                  gint         device,
                  gpointer     ptr,
                  gsize        size,
                  gsize        alignment)
{
  DsCudaScope scope;
  cudaError_t result;

  if (alignment > guaranteed_alignment (kind))
    {
      gpointer base;

      g_mutex_lock (&overaligned_lock);
      base = overaligned != NULL ? g_hash_table_lookup (overaligned, ptr) : NULL;
      if (base != NULL)
        g_hash_table_remove (overaligned, ptr);
      g_mutex_unlock (&overaligned_lock);

      if (base == NULL)
        {
          g_critical ("%s: %p was not allocated with alignment %" G_GSIZE_FORMAT,
                      G_STRFUNC, ptr, alignment);
          return;
        }
      ptr = base;
    }

  if (!ds_cuda_scope_enter (&scope, kind == DS_MEMORY_KIND_PINNED ? -1 : device,
                            NULL, NULL))
    return;
  result = raw_free (kind, ptr);
  ds_cuda_scope_leave (&scope);

  if (result != cudaSuccess)
    log_failure (result, kind == DS_MEMORY_KIND_PINNED ? "cudaFreeHost" : "cudaFree");
}
