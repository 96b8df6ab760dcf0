/* ds-bench-cub-none.c: stands in for CUB when it cannot be built
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <stddef.h>

#include "ds-bench-cub.h"

int
ds_bench_cub_available (void)
{
  return 0;
}

void *
ds_bench_cub_new (void)
{
  return NULL;
}

void
ds_bench_cub_free (void *cub)
{
}

int
ds_bench_cub_alloc (void *cub, void **ptr, size_t size, void *stream)
{
  return 1;
}

int
ds_bench_cub_dealloc (void *cub, void *ptr)
{
  return 1;
}
