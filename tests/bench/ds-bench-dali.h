/* ds-bench-dali.h: NVIDIA DALI's own DynamicScratchpad, for bench-lifecycle
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * DALI's side is a module of its own (ds-bench-dali.cpp, built only with
 * -Ddali_source=<a checkout of NVIDIA/DALI>), loaded at run time: it links
 * the NVIDIA driver (libcuda.so.1), which a machine without a GPU lacks,
 * and the benchmark then goes on without DALI's rows.
 */

#pragma once

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct
{
  /* Which of DALI's default memory resources this process got, one
   * "# ..." line per kind, or why not. */
  const char *(*describe)  (void);

  /* One lifecycle of a DALI DynamicScratchpad on @stream, made with its
   * default initial sizes and an AccessOrder of @stream (made in the
   * lifecycle): for each of @n_runs runs, @counts[r] allocations of kind
   * @kinds[r] (a DsMemoryKind: host, pinned, device, managed map to
   * DALI's kinds of the same names) of the sizes @sizes[r][0..counts[r]),
   * aligned to @alignment; then the scratchpad goes out of scope. With
   * @iface, through a `kernels::Scratchpad *` (a virtual call per
   * allocation, as DALI's kernels make it), else through the concrete
   * type's AllocImpl<Kind>. @sink gets each pointer. 0, or -1 when DALI
   * threw (error () says what). */
  int         (*lifecycle) (void                *stream,
                            unsigned             n_runs,
                            const int           *kinds,
                            const unsigned      *counts,
                            const size_t *const *sizes,
                            size_t               alignment,
                            int                  iface,
                            void * volatile     *sink);

  const char *(*error)     (void);
} DsBenchDali;

/* The module's one symbol. */
#define DS_BENCH_DALI_SYMBOL "ds_bench_dali"

/* DALI's side, or NULL with *@why (static) when it is not built or cannot
 * be loaded here (ds-bench-dali-load.c). */
const DsBenchDali *ds_bench_dali_load (const char **why);

#ifdef __cplusplus
}
#endif
