/* ds.h: the one header users include
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <glib-object.h>

#if !GLIB_CHECK_VERSION (2, 74, 0)
# error "ds needs GLib 2.74 or newer"
#endif

#define DS_INSIDE
# include "ds-version.h"
# include "ds-version-macros.h"
# include "ds-types.h"
# include "ds-memory-kind.h"
# include "ds-error.h"
# include "ds-enum-types.h"
# include "ds-bump.h"
# include "ds-access-order.h"
# include "ds-order-mark.h"
# include "ds-memory-resource.h"
# include "ds-host-memory-resource.h"
# include "ds-pinned-memory-resource.h"
# include "ds-device-memory-resource.h"
# include "ds-managed-memory-resource.h"
# include "ds-pool-stats.h"
# include "ds-pool-resource.h"
# include "ds-observer.h"
# include "ds-scratchpad-iface.h"
# include "ds-scratchpad.h"
# include "ds-block.h"
# include "ds-kernel-context.h"
#undef DS_INSIDE
