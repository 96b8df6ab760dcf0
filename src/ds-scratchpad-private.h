/* ds-scratchpad-private.h
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "ds-scratchpad.h"

G_BEGIN_DECLS

/* Incremented by every release: memory handed out under an older
 * generation has been given back. */
guint64 ds_scratchpad_get_generation (DsScratchpad *self);

/* The order a kind's memory is used in by the scratchpad's own copies:
 * the device order for device memory; host order (NULL) otherwise. */
const DsAccessOrder *ds_scratchpad_get_work_order (DsScratchpad *self);

G_END_DECLS
