/* ds-gst.h: the one header of the GStreamer integration
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * pkg-config: ds-gst-1.0, GI: DsGst-1.0. Includes <ds.h> and <gst/gst.h>;
 * when built with GStreamer's CUDA library (DS_GST_HAVE_CUDA) also
 * <gst/cuda/gstcudacontext.h>, which needs the CUDA toolkit's include
 * directory (for <cuda.h>) and GST_USE_UNSTABLE_API, as
 * gstreamer-cuda-1.0 itself does.
 */

#pragma once

#include <ds.h>
#include <gst/gst.h>

#define DS_GST_INSIDE
# include "ds-gst-config.h"
# include "ds-gst-version-macros.h"
# include "ds-gst-scratch-meta.h"
# if DS_GST_HAVE_CUDA
#  include "ds-gst-cuda-context.h"
#  include "ds-gst-stream.h"
# endif
# if DS_GST_HAVE_CUDA_STREAM
#  include "ds-gst-cuda-stream.h"
# endif
#undef DS_GST_INSIDE
