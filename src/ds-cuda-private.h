/* ds-cuda-private.h: the CUDA runtime, as the rest of ds sees it
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The only header that includes the CUDA runtime API. Never installed.
 * When ds is built without CUDA (-Dcuda=disabled) the helpers here still
 * exist and report DS_ERROR_NOT_SUPPORTED, so callers need no #if.
 */

#pragma once

#include "config.h"

#include <string.h>
#include <glib.h>

#include "ds-error.h"
#include "ds-access-order.h"
#include "ds-memory-kind.h"

#if HAVE_CUDA
# include <cuda_runtime_api.h>
#endif

G_BEGIN_DECLS

/* Whether the CUDA runtime can talk to a device. Checked once per process;
 * the answer (and the error message naming the CUDA error when there is no
 * driver or device) is cached. Never fails with -Dcuda=enabled on a GPU
 * machine; on a CPU machine sets DS_ERROR_NO_DEVICE; without CUDA support
 * sets DS_ERROR_NOT_SUPPORTED. */
gboolean ds_cuda_ensure_available   (GError     **error);

/* The number of devices, 0 when there is no driver or no CUDA support. */
gint     ds_cuda_get_device_count   (void);

#if HAVE_CUDA
/* Turns a failed CUDA call into a DS_ERROR; clears the runtime's last
 * error so that it does not leak into unrelated calls. @call is the text of
 * the call, e.g. "cudaMalloc". Always returns FALSE. */
gboolean ds_cuda_set_error          (GError     **error,
                                     cudaError_t  result,
                                     const char  *call);

/* Evaluates @call; on failure sets @error through ds_cuda_set_error() and
 * evaluates to FALSE. */
# define DS_CUDA_CHECK(call, error) \
  ({ cudaError_t ds_cuda_check_result_ = (call); \
     G_LIKELY (ds_cuda_check_result_ == cudaSuccess) ? TRUE : \
       ds_cuda_set_error ((error), ds_cuda_check_result_, G_STRINGIFY (call)); })

/* Logs (at debug level for cudaErrorCudartUnloading, which is normal at
 * process exit; as a warning otherwise) a CUDA failure on a path that has no
 * GError, such as a deallocation. */
void     ds_cuda_log_failure        (cudaError_t  result,
                                     const char  *call);
#endif

/* The driver context current on this thread (a CUcontext), or NULL. Never
 * initialises CUDA by itself. */
gpointer ds_cuda_get_current_context (void);

/* The primary context of @device if it is active, else NULL. Never
 * creates a context. */
gpointer ds_cuda_get_primary_context (gint        device);

/* The driver context a stream belongs to (cuStreamGetCtx), or NULL. */
gpointer ds_cuda_get_stream_context  (gpointer    stream);

/*
 * DsCudaScope: makes a device (and, where known, a driver context)
 * current for the duration of a few calls, and puts the caller's back
 * afterwards. Used where ds may run on a thread that has another device or
 * another context current, e.g. finalize on a GStreamer streaming thread.
 * Does nothing (and costs one cudaGetDevice) when they are already current.
 */
typedef struct
{
  gboolean switched;
  gboolean restore_context;
  gpointer previous_context;
  gint     previous_device;
} DsCudaScope;

gboolean ds_cuda_scope_enter        (DsCudaScope *scope,
                                     gint         device,
                                     gpointer     context,
                                     GError     **error);
void     ds_cuda_scope_leave        (DsCudaScope *scope);

/* The raw CUDA allocations behind the pinned (cudaHostAlloc, portable),
 * device (cudaMalloc) and managed (cudaMallocManaged) resources, on
 * @device (-1: the current one). Alignments beyond what CUDA guarantees
 * (256 bytes; a page for pinned memory) are met by over-allocating; the
 * matching free must get the same size and alignment. */
gpointer ds_cuda_raw_alloc          (DsMemoryKind kind,
                                     gint         device,
                                     gsize        size,
                                     gsize        alignment,
                                     GError     **error);
void     ds_cuda_raw_free           (DsMemoryKind kind,
                                     gint         device,
                                     gpointer     ptr,
                                     gsize        size,
                                     gsize        alignment);

/* Enters the scope of @order's device and context (does nothing for host
 * order). */
gboolean ds_cuda_scope_enter_order  (DsCudaScope         *scope,
                                     const DsAccessOrder *order,
                                     GError             **error);

G_END_DECLS
