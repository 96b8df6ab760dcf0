/* ds-alloc.h: ds memory for PyTorch, CuPy and other frameworks
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <sys/types.h>

#include <ds.h>

G_BEGIN_DECLS

#ifndef _DS_ALLOC_EXTERN
# if defined (DS_ALLOC_COMPILATION) && defined (__GNUC__)
#  define _DS_ALLOC_EXTERN __attribute__((visibility ("default"))) extern
# else
#  define _DS_ALLOC_EXTERN extern
# endif
#endif

/**
 * DS_ALLOC_AVAILABLE_IN_ALL:
 *
 * Marks a symbol of libds-alloc that exists in every version of it.
 */
#define DS_ALLOC_AVAILABLE_IN_ALL _DS_ALLOC_EXTERN

/**
 * DS_ALLOC_ALIGNMENT:
 *
 * The alignment of every block libds-alloc hands out: 256 bytes, what
 * `cudaMalloc` gives.
 */
#define DS_ALLOC_ALIGNMENT 256

/* The entry points of torch.cuda.memory.CUDAPluggableAllocator: `stream`
 * is a cudaStream_t (a pointer), kept out of this header so that it needs
 * no CUDA headers. */
DS_ALLOC_AVAILABLE_IN_ALL
void     *ds_torch_alloc         (ssize_t            size,
                                  int                device,
                                  void              *stream);
DS_ALLOC_AVAILABLE_IN_ALL
void      ds_torch_free          (void              *ptr,
                                  ssize_t            size,
                                  int                device,
                                  void              *stream);

DS_ALLOC_AVAILABLE_IN_ALL
gboolean  ds_alloc_push_resource (DsMemoryResource  *resource,
                                  GError           **error);
DS_ALLOC_AVAILABLE_IN_ALL
void      ds_alloc_pop_resource  (void);
DS_ALLOC_AVAILABLE_IN_ALL
gboolean  ds_alloc_set_resource  (gint               device,
                                  DsMemoryResource  *resource,
                                  GError           **error);

DS_ALLOC_AVAILABLE_IN_ALL
gpointer  ds_alloc_allocate      (DsMemoryResource  *resource,
                                  gsize              size,
                                  gint               device,
                                  gpointer           stream,
                                  GError           **error);
DS_ALLOC_AVAILABLE_IN_ALL
gboolean  ds_alloc_deallocate    (gpointer           ptr,
                                  GError           **error);
DS_ALLOC_AVAILABLE_IN_ALL
gboolean  ds_alloc_add_reader    (gconstpointer      ptr,
                                  gint               device,
                                  gpointer           stream,
                                  GError           **error);

DS_ALLOC_AVAILABLE_IN_ALL
guint     ds_alloc_get_n_blocks  (void);
DS_ALLOC_AVAILABLE_IN_ALL
guint64   ds_alloc_get_bytes     (void);
DS_ALLOC_AVAILABLE_IN_ALL
guint64   ds_alloc_get_peak_bytes   (void);
DS_ALLOC_AVAILABLE_IN_ALL
void      ds_alloc_reset_peak_bytes (void);

G_END_DECLS
