/* ds-host-wait-spy.h: counts the host's waits for the GPU, by who waits
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

typedef enum
{
  DS_HOST_WAIT_DS,        /* libds, libds-gst or a libgstds* plugin on the stack */
  DS_HOST_WAIT_NVCODEC,   /* GStreamer's CUDA elements (libgstnvcodec) */
  DS_HOST_WAIT_OTHER,
  DS_HOST_WAIT_N_CALLERS
} DsHostWaitCaller;

/* cuStreamSynchronize + cuEventSynchronize + cuCtxSynchronize calls so
 * far whose caller is @caller. Sanitizer builds have no spy (it replaces
 * dlsym (), which their runtimes call before they are set up): there it
 * counts nothing. */
#if DS_HAVE_HOST_WAIT_SPY
unsigned long ds_host_wait_spy_count (DsHostWaitCaller caller);
#else
static inline unsigned long
ds_host_wait_spy_count (DsHostWaitCaller caller)
{
  (void) caller;
  return 0;
}
#endif
