/* ds-cuda-private.h: the CUDA runtime, as the rest of ds sees it
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The bottom layer: every CUDA runtime and driver call ds makes goes
 * through a helper here, so that errors are turned into GErrors (or log
 * lines) and cleared in one place, and the rest of ds needs no #if
 * HAVE_CUDA. It knows devices, driver contexts, streams and events as
 * plain pointers, and nothing of orders, resources or pools.
 *
 * Built with -Dcuda=disabled, the same helpers exist: availability checks
 * fail with DS_ERROR_NOT_SUPPORTED and everything else reports failure.
 * Never installed.
 */

#pragma once

#include "config.h"

#include <string.h>
#include <glib.h>

#include "ds-error.h"
#include "ds-memory-kind.h"

#if HAVE_CUDA
# include <cuda_runtime_api.h>
#endif

G_BEGIN_DECLS

/* Availability ------------------------------------------------------------ */

/* Whether the CUDA runtime can talk to a device. Checked once per process;
 * the answer (and the error message naming the CUDA error when there is no
 * driver or device) is cached. On a CPU machine sets DS_ERROR_NO_DEVICE;
 * without CUDA support DS_ERROR_NOT_SUPPORTED. */
gboolean ds_cuda_ensure_available    (GError     **error);

/* The number of devices, 0 when there is no driver or no CUDA support. */
gint     ds_cuda_get_device_count    (void);

/* Errors -------------------------------------------------------------------- */

#if HAVE_CUDA
/* Turns a failed CUDA call into a DS_ERROR naming the call and the CUDA
 * error, and clears the runtime's last error so that it does not leak into
 * unrelated calls. Always returns FALSE. */
gboolean ds_cuda_set_error           (GError     **error,
                                      cudaError_t  result,
                                      const char  *call);

/* Evaluates @call; on failure sets @error through ds_cuda_set_error() and
 * evaluates to FALSE. */
# define DS_CUDA_CHECK(call, error) \
  ({ cudaError_t ds_cuda_check_result_ = (call); \
     G_LIKELY (ds_cuda_check_result_ == cudaSuccess) ? TRUE : \
       ds_cuda_set_error ((error), ds_cuda_check_result_, G_STRINGIFY (call)); })
#endif

/* The driver API calls (cuCtxGetCurrent, cuStreamGetCtx, ...) ds made on
 * the calling thread so far: the tests count runtime calls by interposing
 * them, and these with this. */
guint64  ds_cuda_get_n_driver_calls  (void);

/* Clears the runtime's last error (after a call whose failure is an
 * answer, not a problem). */
void     ds_cuda_clear_error         (void);

/* Whether a CUDA call failed because the runtime is unloading (at process
 * exit): failures on paths that cannot report them are then not worth a
 * warning. */
gboolean ds_cuda_is_unloading        (void);

/* Devices, contexts, streams --------------------------------------------------- */

/* The current device, or -1 when there is none (no driver, an error). */
gint     ds_cuda_get_device          (void);

/* The driver context current on this thread (a CUcontext), or NULL. Never
 * initialises CUDA by itself. */
gpointer ds_cuda_get_current_context (void);

/* The primary context of @device if it is active, else NULL. Never
 * creates a context. */
gpointer ds_cuda_get_primary_context (gint        device);

/* What ds needs to know of a stream to use it from any thread: its device
 * (@device_hint when >= 0, else the stream's own; for the legacy default
 * stream, NULL, the current device), its driver context (NULL when it is
 * the primary context of a device that is not current) and its identity
 * (cudaStreamGetId (); 0 for the legacy default stream), which unlike the
 * handle is never reused by a later stream. Leaves -1/NULL/0 where the
 * runtime cannot tell. FALSE only where a driver is present and refuses
 * the identity of an explicit stream (a destroyed or made-up handle that
 * it can tell from a stream: it cannot always). */
gboolean ds_cuda_stream_describe     (gpointer    stream,
                                      gint        device_hint,
                                      gint       *device,
                                      gpointer   *context,
                                      guint64    *id);

/*
 * DsCudaScope: makes a device (and, where known, a driver context)
 * current for the duration of a few calls, and puts the caller's back
 * afterwards. Used where ds may run on a thread that has another device or
 * another context current, e.g. finalize on a GStreamer streaming thread.
 * Does nothing (and costs one context or device query) when they are
 * already current.
 */
typedef struct
{
  gboolean switched;
  gboolean restore_context;
  gpointer previous_context;
  gint     previous_device;
} DsCudaScope;

gboolean ds_cuda_scope_enter         (DsCudaScope *scope,
                                      gint         device,
                                      gpointer     context,
                                      GError     **error);
void     ds_cuda_scope_leave         (DsCudaScope *scope);

/* Streams and events (in the current device and context) ------------------------ */

/* The answer of a completion query. */
typedef enum
{
  DS_CUDA_DONE,
  DS_CUDA_PENDING,
  DS_CUDA_FAILED,
} DsCudaStatus;

DsCudaStatus ds_cuda_stream_query       (gpointer      stream,
                                         GError      **error);
/* ds_cuda_stream_query () where it needs no context current: an explicit
 * stream (it carries its context), asked of the driver alone. FAILED for
 * the legacy and per-thread default streams (they mean the current
 * context's), without the driver's entry point, or when the driver fails
 * (the caller then asks ds_cuda_stream_query () in the stream's scope,
 * which names the error). Sets no error. */
DsCudaStatus ds_cuda_stream_query_contextless (gpointer stream);
gboolean     ds_cuda_stream_synchronize (gpointer      stream,
                                         GError      **error);
gboolean     ds_cuda_stream_wait_event  (gpointer      stream,
                                         gpointer      event,
                                         GError      **error);
gboolean     ds_cuda_device_synchronize (GError      **error);

/* Events without timing (cudaEventDisableTiming). */
gpointer     ds_cuda_event_new          (GError      **error);
void         ds_cuda_event_free         (gpointer      event);
gboolean     ds_cuda_event_record       (gpointer      event,
                                         gpointer      stream,
                                         GError      **error);
DsCudaStatus ds_cuda_event_query        (gpointer      event,
                                         GError      **error);
gboolean     ds_cuda_event_synchronize  (gpointer      event,
                                         GError      **error);

/* Copies @size bytes (cudaMemcpyDefault: any direction, with unified
 * addressing) on @stream; with @wait, the copy has completed when this
 * returns. */
gboolean     ds_cuda_memcpy             (gpointer      dst,
                                         gconstpointer src,
                                         gsize         size,
                                         gpointer      stream,
                                         gboolean      wait,
                                         GError      **error);
/* Fills @size bytes with @value on @stream; with @wait, completed on
 * return. */
gboolean     ds_cuda_memset             (gpointer      dst,
                                         guint8        value,
                                         gsize         size,
                                         gpointer      stream,
                                         gboolean      wait,
                                         GError      **error);

/* Raw memory -------------------------------------------------------------------- */

/* The raw CUDA allocations behind the pinned (cudaHostAlloc, portable),
 * device (cudaMalloc) and managed (cudaMallocManaged) resources, on
 * @device (-1: the current one). Alignments beyond what CUDA guarantees
 * (256 bytes; a page for pinned memory) are met by over-allocating; the
 * matching free must get the same size and alignment. */
gpointer ds_cuda_raw_alloc           (DsMemoryKind kind,
                                      gint         device,
                                      gsize        size,
                                      gsize        alignment,
                                      GError     **error);
void     ds_cuda_raw_free            (DsMemoryKind kind,
                                      gint         device,
                                      gpointer     ptr,
                                      gsize        size,
                                      gsize        alignment);

G_END_DECLS
