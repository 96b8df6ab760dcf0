/* ds-template-kernel.h: the template element's kernel, callable from C
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

/* Queues on @stream the sum of the 8-bit plane at @plane (device memory,
 * @stride bytes from row to row) into *@sum (device memory). */
cudaError_t ds_template_sum (const uint8_t      *plane,
                             int                 width,
                             int                 height,
                             int                 stride,
                             unsigned long long *sum,
                             cudaStream_t        stream);

#ifdef __cplusplus
}
#endif
