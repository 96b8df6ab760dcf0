/* ds-filter-kernel.h: the filter template's kernel, callable from C
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <stdint.h>

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Queues on @stream a 3x3 blur ([1 2 1] x [1 2 1] / 16, rounded, edges
 * repeated) of the 8-bit plane @src into @dst (device memory, @src_stride
 * and @dst_stride bytes from row to row), through @tmp (device memory,
 * @width * @height values). */
cudaError_t ds_filter_blur (const uint8_t *src,
                            int            src_stride,
                            uint8_t       *dst,
                            int            dst_stride,
                            uint16_t      *tmp,
                            int            width,
                            int            height,
                            cudaStream_t   stream);

#ifdef __cplusplus
}
#endif
