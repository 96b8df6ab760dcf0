/* gir-stub/cuda.h: the few CUDA driver types gstcuda's headers use, for
 * g-ir-scanner only
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The toolkit's cuda.h uses C11 constructs (_Alignas) that the scanner's
 * parser rejects, with pages of syntax errors; GStreamer scans its own CUDA
 * headers against a stub for the same reason. Never used to compile.
 */

#pragma once

typedef struct CUctx_st *CUcontext;
typedef struct CUstream_st *CUstream;
typedef int CUdevice;
typedef int CUresult;
