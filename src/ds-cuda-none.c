/* ds-cuda-none.c: the CUDA helpers of a -Dcuda=disabled build
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Built instead of ds-cuda.c when ds is built without CUDA: availability
 * checks fail with DS_ERROR_NOT_SUPPORTED, everything else reports
 * failure, so the rest of ds needs no #if.
 */

#include "config.h"

#include "ds-cuda-private.h"


static gboolean
not_supported (GError **error)
{
  g_set_error_literal (error, DS_ERROR, DS_ERROR_NOT_SUPPORTED,
                       DS_NO_CUDA_REASON "; only host memory is available");
  return FALSE;
}

gboolean
ds_cuda_ensure_available (GError **error)
{
  return not_supported (error);
}

gint
ds_cuda_get_device_count (void)
{
  return 0;
}

guint64
ds_cuda_get_n_driver_calls (void)
{
  return 0;
}

void
ds_cuda_clear_error (void)
{
}

gboolean
ds_cuda_is_unloading (void)
{
  return FALSE;
}

gint
ds_cuda_get_device (void)
{
  return -1;
}

gpointer
ds_cuda_get_current_context (void)
{
  return NULL;
}

gpointer
ds_cuda_get_primary_context (gint device)
{
  return NULL;
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
  return TRUE;
}

gboolean
ds_cuda_scope_enter (DsCudaScope  *scope,
                     gint          device,
                     gpointer      context,
                     GError      **error)
{
  memset (scope, 0, sizeof *scope);
  return not_supported (error);
}

void
ds_cuda_scope_leave (DsCudaScope *scope)
{
}

DsCudaStatus
ds_cuda_stream_query (gpointer   stream,
                      GError   **error)
{
  not_supported (error);
  return DS_CUDA_FAILED;
}

DsCudaStatus
ds_cuda_stream_query_contextless (gpointer stream)
{
  return DS_CUDA_FAILED;
}

gboolean
ds_cuda_stream_synchronize (gpointer   stream,
                            GError   **error)
{
  return not_supported (error);
}

gboolean
ds_cuda_stream_wait_event (gpointer   stream,
                           gpointer   event,
                           GError   **error)
{
  return not_supported (error);
}

gboolean
ds_cuda_device_synchronize (GError **error)
{
  return not_supported (error);
}

gpointer
ds_cuda_event_new (GError **error)
{
  not_supported (error);
  return NULL;
}

void
ds_cuda_event_free (gpointer event)
{
}

gboolean
ds_cuda_event_record (gpointer   event,
                      gpointer   stream,
                      GError   **error)
{
  return not_supported (error);
}

DsCudaStatus
ds_cuda_event_query (gpointer   event,
                     GError   **error)
{
  not_supported (error);
  return DS_CUDA_FAILED;
}

gboolean
ds_cuda_event_synchronize (gpointer   event,
                           GError   **error)
{
  return not_supported (error);
}

gboolean
ds_cuda_memcpy (gpointer        dst,
                gconstpointer   src,
                gsize           size,
                gpointer        stream,
                gboolean        wait,
                GError        **error)
{
  return not_supported (error);
}

gboolean
ds_cuda_memset (gpointer   dst,
                guint8     value,
                gsize      size,
                gpointer   stream,
                gboolean   wait,
                GError   **error)
{
  return not_supported (error);
}

gpointer
ds_cuda_raw_alloc (DsMemoryKind   kind,
                   gint           device,
                   gsize          size,
                   gsize          alignment,
                   GError       **error)
{
  not_supported (error);
  return NULL;
}

void
ds_cuda_raw_free (DsMemoryKind kind,
                  gint         device,
                  gpointer     ptr,
                  gsize        size,
                  gsize        alignment)
{
}
