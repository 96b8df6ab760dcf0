/* ds-block-private.h
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "ds-block.h"

G_BEGIN_DECLS

/* The number of exports alive in the process (atomic). */
extern gint ds_block_n_exports;

gboolean ds_block_release_is_blocked_slow (DsScratchpad *self);

/* TRUE, after a critical, when exports of @self's blocks are alive (see
 * ds_block_export ()): then ds_scratchpad_release () must not give the
 * memory back. One atomic load while no export exists in the process. */
static inline gboolean
ds_block_release_is_blocked (DsScratchpad *self)
{
  return G_UNLIKELY (g_atomic_int_get (&ds_block_n_exports) != 0) &&
         ds_block_release_is_blocked_slow (self);
}

G_END_DECLS
