/* ds-gst-version-macros.h: export macros of the GStreamer integration
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined (DS_GST_INSIDE) && !defined (DS_GST_COMPILATION)
# error "Only <ds-gst.h> can be included directly."
#endif

#include <glib.h>

#ifndef _DS_GST_EXTERN
# if defined (DS_GST_COMPILATION) && defined (__GNUC__)
#  define _DS_GST_EXTERN __attribute__((visibility ("default"))) extern
# else
#  define _DS_GST_EXTERN extern
# endif
#endif

/**
 * DS_GST_AVAILABLE_IN_ALL:
 *
 * Marks a symbol of libds-gst that exists in every version of it.
 */
#define DS_GST_AVAILABLE_IN_ALL _DS_GST_EXTERN
