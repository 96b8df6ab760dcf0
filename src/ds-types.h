/* ds-types.h: forward declarations of the public types
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined (DS_INSIDE) && !defined (DS_COMPILATION)
# error "Only <ds.h> can be included directly."
#endif

#include <glib-object.h>

#include "ds-version-macros.h"

G_BEGIN_DECLS

typedef struct _DsAccessOrder       DsAccessOrder;
typedef struct _DsBlock             DsBlock;
typedef struct _DsKernelContext     DsKernelContext;
typedef struct _DsMemoryResource    DsMemoryResource;
typedef struct _DsOrderMark         DsOrderMark;
typedef struct _DsScratchpad        DsScratchpad;
typedef struct _DsScratchpadIface   DsScratchpadIface;

G_END_DECLS
