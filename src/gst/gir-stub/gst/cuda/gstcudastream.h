/* gir-stub/gst/cuda/gstcudastream.h: what g-ir-scanner needs of gstcuda's
 * header of that name (see gstcudacontext.h here)
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <gst/cuda/gstcudacontext.h>

typedef struct _GstCudaStream GstCudaStream;
