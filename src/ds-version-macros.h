/* ds-version-macros.h: export and availability macros
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined (DS_INSIDE) && !defined (DS_COMPILATION)
# error "Only <ds.h> can be included directly."
#endif

#include <glib.h>

#include "ds-version.h"

#ifndef _DS_EXTERN
# if defined (DS_COMPILATION) && defined (__GNUC__)
#  define _DS_EXTERN __attribute__((visibility ("default"))) extern
# else
#  define _DS_EXTERN extern
# endif
#endif

#define DS_VERSION_CUR_STABLE (G_ENCODE_VERSION (DS_MAJOR_VERSION, DS_MINOR_VERSION))

/**
 * DS_VERSION_0_1:
 *
 * A macro that evaluates to the 0.1 version of ds, in a format
 * that can be used by the C pre-processor.
 */
#define DS_VERSION_0_1 (G_ENCODE_VERSION (0, 1))

/**
 * DS_VERSION_0_2:
 *
 * The version number of ds 0.2, for DS_VERSION_MIN_REQUIRED and
 * DS_VERSION_MAX_ALLOWED.
 */
#define DS_VERSION_0_2 (G_ENCODE_VERSION (0, 2))

#ifndef DS_VERSION_MIN_REQUIRED
# define DS_VERSION_MIN_REQUIRED (DS_VERSION_CUR_STABLE)
#endif

#ifndef DS_VERSION_MAX_ALLOWED
# define DS_VERSION_MAX_ALLOWED (DS_VERSION_CUR_STABLE)
#endif

#define DS_AVAILABLE_IN_ALL _DS_EXTERN

#if DS_VERSION_MAX_ALLOWED < DS_VERSION_0_1
# define DS_AVAILABLE_IN_0_1 G_UNAVAILABLE (0, 1) _DS_EXTERN
#else
# define DS_AVAILABLE_IN_0_1 _DS_EXTERN
#endif

#if DS_VERSION_MAX_ALLOWED < DS_VERSION_0_2
# define DS_AVAILABLE_IN_0_2 G_UNAVAILABLE (0, 2) _DS_EXTERN
#else
# define DS_AVAILABLE_IN_0_2 _DS_EXTERN
#endif

/**
 * DS_DEPRECATED_IN_0_1_FOR:
 * @f: the replacement
 *
 * Marks a symbol deprecated in 0.1 in favour of @f.
 */
#if DS_VERSION_MIN_REQUIRED >= DS_VERSION_0_1
# define DS_DEPRECATED_IN_0_1 G_DEPRECATED _DS_EXTERN
# define DS_DEPRECATED_IN_0_1_FOR(f) G_DEPRECATED_FOR (f) _DS_EXTERN
#else
# define DS_DEPRECATED_IN_0_1 _DS_EXTERN
# define DS_DEPRECATED_IN_0_1_FOR(f) _DS_EXTERN
#endif
