/* gir-stub/gst/cuda/gstcudacontext.h: what g-ir-scanner needs of gstcuda's
 * header of that name
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * gstcuda's headers include the CUDA toolkit's (cuda.h, and from
 * GStreamer 1.26 on cudaGL.h and all of cuda-gst.h), which the scanner
 * cannot parse. It takes gstcuda's types from GstCuda-1.0.gir and needs
 * only their names here. Never used to compile.
 */

#pragma once

#include <gst/gst.h>

typedef struct _GstCudaContext GstCudaContext;
