/* ds-memory-kind.h: the four kinds of scratch memory
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
 * DsMemoryKind:
 * @DS_MEMORY_KIND_HOST: pageable host memory (aligned `malloc`); needs no CUDA
 * @DS_MEMORY_KIND_PINNED: page-locked host memory (`cudaMallocHost`), the
 *   source or target of asynchronous copies
 * @DS_MEMORY_KIND_DEVICE: memory on one GPU (`cudaMalloc`)
 * @DS_MEMORY_KIND_MANAGED: unified memory that the CPU and the GPU can both
 *   touch (`cudaMallocManaged`)
 *
 * The kind of memory a scratchpad or a memory resource hands out.
 *
 * The values are fixed (0 to 3) and usable as array indices; see
 * %DS_N_MEMORY_KINDS.
 */
typedef enum
{
  DS_MEMORY_KIND_HOST = 0,
  DS_MEMORY_KIND_PINNED = 1,
  DS_MEMORY_KIND_DEVICE = 2,
  DS_MEMORY_KIND_MANAGED = 3,
} DsMemoryKind;

/**
 * DS_N_MEMORY_KINDS:
 *
 * The number of [enum@Ds.MemoryKind] values.
 */
#define DS_N_MEMORY_KINDS 4

/**
 * DS_MEMORY_KIND_IS_VALID:
 * @kind: a value that may or may not be a #DsMemoryKind
 *
 * Evaluates to true when @kind is one of the four memory kinds.
 */
#define DS_MEMORY_KIND_IS_VALID(kind) ((guint) (kind) < DS_N_MEMORY_KINDS)

G_END_DECLS
