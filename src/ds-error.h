/* ds-error.h: the DS_ERROR domain
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined (DS_INSIDE) && !defined (DS_COMPILATION)
# error "Only <ds.h> can be included directly."
#endif

#include <glib.h>

#include "ds-version-macros.h"

G_BEGIN_DECLS

/**
 * DS_ERROR:
 *
 * The error domain of ds. Errors in it use the codes of [error@Ds.Error].
 */
#define DS_ERROR (ds_error_quark ())

/**
 * DsError:
 * @DS_ERROR_INVALID_ARGUMENT: a size, alignment, kind, device or order that
 *   cannot be honoured (not a power-of-two alignment, a size that overflows,
 *   an unknown memory kind, a device index out of range)
 * @DS_ERROR_NOT_SUPPORTED: ds was built without CUDA, or the resource cannot
 *   do what was asked
 * @DS_ERROR_NO_DEVICE: no CUDA driver or no CUDA device is available; the
 *   message says which
 * @DS_ERROR_OUT_OF_MEMORY: the upstream resource could not provide the memory
 * @DS_ERROR_CUDA: any other CUDA runtime failure; the message names the CUDA
 *   error and the call that failed
 * @DS_ERROR_DISPOSED: the object was disposed (`g_object_run_dispose()`, or
 *   a binding's explicit teardown) and refuses further work; its memory and
 *   resources were given back
 * @DS_ERROR_BUSY: another thread is inside the same scratchpad (one
 *   scratchpad is used by one thread at a time); nothing was done. Since 0.2
 *
 * Error codes in the %DS_ERROR domain.
 */
typedef enum
{
  DS_ERROR_INVALID_ARGUMENT,
  DS_ERROR_NOT_SUPPORTED,
  DS_ERROR_NO_DEVICE,
  DS_ERROR_OUT_OF_MEMORY,
  DS_ERROR_CUDA,
  DS_ERROR_DISPOSED,
  DS_ERROR_BUSY,
} DsError;

DS_AVAILABLE_IN_ALL
GQuark ds_error_quark (void);

G_END_DECLS
