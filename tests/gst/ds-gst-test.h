/* ds-gst-test.h: what the GStreamer integration tests share
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "config.h"

#include <ds-gst.h>
#include <gst/video/video.h>
#include <gst/check/gstharness.h>

#if HAVE_CUDA
# include <cuda_runtime_api.h>
#endif

G_BEGIN_DECLS

/* g_test_init () + gst_init (). Also takes --skip-prefix=PREFIX (or
 * --skip-prefix PREFIX) itself: GLib 2.74's GTest ignores that option (it
 * came in GLib 2.78), so the tests register their cases through the two
 * functions below, which leave out every path under such a prefix. -p
 * PATH does work in 2.74, for the direct cases of PATH only: GPU cases
 * live directly under .../gpu/, not in nested suites. */
void         ds_gst_test_init              (int          *argc,
                                            char       ***argv);
void         ds_gst_test_add_func          (const char    *path,
                                            GTestFunc      func);
void         ds_gst_test_add_data_func     (const char    *path,
                                            gconstpointer  data,
                                            GTestDataFunc  func);

/* Whether a CUDA device is usable: the CUDA runtime sees one and, in
 * builds with gstcuda, gst_cuda_load_library () succeeds. Checked once. */
gboolean     ds_gst_test_cuda_available    (void);
const char  *ds_gst_test_cuda_unavailable_reason (void);

#define DS_GST_TEST_REQUIRE_CUDA() \
  G_STMT_START { \
    if (!ds_gst_test_cuda_available ()) \
      { \
        g_test_skip (ds_gst_test_cuda_unavailable_reason ()); \
        return; \
      } \
  } G_STMT_END

#define DS_GST_TEST_REQUIRE_NO_CUDA() \
  G_STMT_START { \
    if (ds_gst_test_cuda_available ()) \
      { \
        g_test_skip ("a CUDA device is usable here; this case checks the " \
                     "behaviour without one"); \
        return; \
      } \
  } G_STMT_END

#define DS_GST_TEST_REQUIRE_ELEMENT(name) \
  G_STMT_START { \
    GstElementFactory *f_ = gst_element_factory_find (name); \
    if (f_ == NULL) \
      { \
        g_test_skip ("no GStreamer element " name " here (its plugin is not installed)"); \
        return; \
      } \
    gst_object_unref (f_); \
  } G_STMT_END

#if HAVE_CUDA
/* A gate on a stream, as tests/ds-test-utils.h's DsTestGate (which lives
 * with ds's internal static copy, not for these tests): work queued on
 * @stream after the gate does not start until the test opens it, however
 * fast or slow the machine, or compute-sanitizer, runs. A host function
 * that blocks; it opens itself after 20 s, and ds_gst_test_gate_free ()
 * then fails the test rather than letting it hang. Make no host wait on
 * the gated stream before opening it. */
typedef struct _DsGstTestGate DsGstTestGate;

DsGstTestGate *ds_gst_test_gate_new        (cudaStream_t   stream);
void           ds_gst_test_gate_open       (DsGstTestGate *gate);
/* Whether the stream got past the gate. */
gboolean       ds_gst_test_gate_passed     (DsGstTestGate *gate);
/* Opens the gate if it is not, waits until the stream is past it, asserts
 * that it did not open itself, frees it. */
void           ds_gst_test_gate_free       (DsGstTestGate *gate);
#endif

/* The luma statistics of an 8-bit plane, computed on the CPU. */
typedef struct
{
  guint32 histogram[256];
  guint32 min;
  guint32 max;
  guint64 sum;
} DsGstTestLuma;

void         ds_gst_test_luma_compute      (const guint8  *plane,
                                            gint           width,
                                            gint           height,
                                            gint           stride,
                                            DsGstTestLuma *out);
/* Of the first plane of a video buffer described by @info. */
gboolean     ds_gst_test_luma_of_buffer    (const GstVideoInfo *info,
                                            GstBuffer          *buffer,
                                            DsGstTestLuma      *out);
#if DS_GST_HAVE_CUDA
/* GstCudaMemory of @ctx laid out as @info (on @stream, a GstCudaStream,
 * with GStreamer 1.24+; NULL otherwise), from gstcuda's own allocator
 * (GStreamer 1.22 takes no NULL allocator). Asserts it was made: note
 * that GstCudaMemory has no GRAY8. */
GstMemory   *ds_gst_test_cuda_alloc        (gpointer            ctx,
                                            gpointer            stream,
                                            const GstVideoInfo *info);
#endif

/* Compares a ds-luma-stats message structure with @ref; on a difference
 * sets *@why and returns FALSE. Checks the fields the message has. */
gboolean     ds_gst_test_luma_matches      (const GstStructure  *s,
                                            const DsGstTestLuma *ref,
                                            char               **why);

G_END_DECLS
