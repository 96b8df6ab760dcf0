/* ds-error.c: the DS_ERROR domain
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "ds-error.h"

/**
 * ds_error_quark:
 *
 * The quark of the [error@Ds.Error] domain.
 *
 * Returns: the error domain
 */
G_DEFINE_QUARK (ds-error-quark, ds_error)
