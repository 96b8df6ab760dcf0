/* ds-gst-test.c: what the GStreamer integration tests share
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <string.h>

#include "ds-gst-test.h"

#if DS_GST_HAVE_CUDA
# include <gst/cuda/gstcudaloader.h>
# include <gst/cuda/gstcudamemory.h>
#endif

static GPtrArray *skipped_prefixes;

void
ds_gst_test_init (int    *argc,
                  char ***argv)
{
  char **args = *argv;
  int i, kept = 0;

  skipped_prefixes = g_ptr_array_new_with_free_func (g_free);
  for (i = 0; i < *argc; i++)
    {
      if (g_str_has_prefix (args[i], "--skip-prefix="))
        g_ptr_array_add (skipped_prefixes, g_strdup (args[i] + strlen ("--skip-prefix=")));
      else if (strcmp (args[i], "--skip-prefix") == 0 && i + 1 < *argc)
        g_ptr_array_add (skipped_prefixes, g_strdup (args[++i]));
      else
        args[kept++] = args[i];
    }
  args[kept] = NULL;
  *argc = kept;

  g_test_init (argc, argv, NULL);
  gst_init (argc, argv);
}

static gboolean
path_skipped (const char *path)
{
  for (guint i = 0; skipped_prefixes != NULL && i < skipped_prefixes->len; i++)
    if (g_str_has_prefix (path, skipped_prefixes->pdata[i]))
      return TRUE;
  return FALSE;
}

void
ds_gst_test_add_func (const char *path,
                      GTestFunc   func)
{
  if (!path_skipped (path))
    g_test_add_func (path, func);
}

void
ds_gst_test_add_data_func (const char    *path,
                           gconstpointer  data,
                           GTestDataFunc  func)
{
  if (!path_skipped (path))
    g_test_add_data_func (path, data, func);
}

static char *unavailable_reason;

gboolean
ds_gst_test_cuda_available (void)
{
  static gsize once;
  static gboolean available;

  if (g_once_init_enter (&once))
    {
#if HAVE_CUDA
      int count = 0;
      cudaError_t result = cudaGetDeviceCount (&count);

      (void) cudaGetLastError ();
      if (result != cudaSuccess)
        unavailable_reason = g_strdup_printf ("%s: %s (%s)",
                                              result == cudaErrorNoDevice ||
                                              result == cudaErrorInsufficientDriver
                                                ? "no GPU on this machine" : "no usable CUDA device",
                                              cudaGetErrorName (result),
                                              cudaGetErrorString (result));
      else if (count == 0)
        unavailable_reason = g_strdup ("no GPU on this machine: the driver sees 0 devices");
# if DS_GST_HAVE_CUDA
      else if (!gst_cuda_load_library ())
        unavailable_reason = g_strdup ("no CUDA device: GStreamer could not load libcuda");
# endif
      else
        available = TRUE;
#else
      unavailable_reason = g_strdup (DS_NO_CUDA_REASON);
#endif
      g_once_init_leave (&once, 1);
    }

  return available;
}

const char *
ds_gst_test_cuda_unavailable_reason (void)
{
  return ds_gst_test_cuda_available () ? NULL : unavailable_reason;
}

#if HAVE_CUDA
#define GATE_SELF_OPEN_S 20

struct _DsGstTestGate
{
  GMutex   lock;
  GCond    cond;
  gboolean open;
  gboolean passed;
  gboolean timed_out;
  gint     ref_count;   /* the test's and the host function's */
};

static void
gate_unref (DsGstTestGate *gate)
{
  if (!g_atomic_int_dec_and_test (&gate->ref_count))
    return;
  g_mutex_clear (&gate->lock);
  g_cond_clear (&gate->cond);
  g_free (gate);
}

static void CUDART_CB
gate_wait (void *data)
{
  DsGstTestGate *gate = data;
  gint64 end = g_get_monotonic_time () + GATE_SELF_OPEN_S * G_TIME_SPAN_SECOND;

  g_mutex_lock (&gate->lock);
  while (!gate->open)
    if (!g_cond_wait_until (&gate->cond, &gate->lock, end))
      {
        gate->timed_out = TRUE;
        break;
      }
  gate->passed = TRUE;
  g_cond_broadcast (&gate->cond);
  g_mutex_unlock (&gate->lock);
  gate_unref (gate);
}

DsGstTestGate *
ds_gst_test_gate_new (cudaStream_t stream)
{
  DsGstTestGate *gate = g_new0 (DsGstTestGate, 1);

  g_mutex_init (&gate->lock);
  g_cond_init (&gate->cond);
  gate->ref_count = 2;
  g_assert_cmpint (cudaLaunchHostFunc (stream, gate_wait, gate), ==, cudaSuccess);
  return gate;
}

void
ds_gst_test_gate_open (DsGstTestGate *gate)
{
  g_mutex_lock (&gate->lock);
  gate->open = TRUE;
  g_cond_broadcast (&gate->cond);
  g_mutex_unlock (&gate->lock);
}

gboolean
ds_gst_test_gate_passed (DsGstTestGate *gate)
{
  gboolean passed;

  g_mutex_lock (&gate->lock);
  passed = gate->passed;
  g_mutex_unlock (&gate->lock);
  return passed;
}

void
ds_gst_test_gate_free (DsGstTestGate *gate)
{
  gint64 end = g_get_monotonic_time () + 2 * GATE_SELF_OPEN_S * G_TIME_SPAN_SECOND;
  gboolean timed_out;

  ds_gst_test_gate_open (gate);
  g_mutex_lock (&gate->lock);
  while (!gate->passed)
    if (!g_cond_wait_until (&gate->cond, &gate->lock, end))
      g_error ("the gated stream never reached its gate");
  timed_out = gate->timed_out;
  g_mutex_unlock (&gate->lock);
  gate_unref (gate);
  g_assert_false (timed_out);
}
#endif

void
ds_gst_test_luma_compute (const guint8  *plane,
                          gint           width,
                          gint           height,
                          gint           stride,
                          DsGstTestLuma *out)
{
  memset (out, 0, sizeof *out);
  out->min = G_MAXUINT32;

  for (gint y = 0; y < height; y++)
    {
      const guint8 *row = plane + (gsize) y * stride;

      for (gint x = 0; x < width; x++)
        {
          guint v = row[x];

          out->histogram[v]++;
          out->min = MIN (out->min, v);
          out->max = MAX (out->max, v);
          out->sum += v;
        }
    }
}

gboolean
ds_gst_test_luma_of_buffer (const GstVideoInfo *info,
                            GstBuffer          *buffer,
                            DsGstTestLuma      *out)
{
  GstVideoFrame frame;

  if (!gst_video_frame_map (&frame, info, buffer, GST_MAP_READ))
    return FALSE;
  ds_gst_test_luma_compute (GST_VIDEO_FRAME_COMP_DATA (&frame, 0),
                            GST_VIDEO_FRAME_COMP_WIDTH (&frame, 0),
                            GST_VIDEO_FRAME_COMP_HEIGHT (&frame, 0),
                            GST_VIDEO_FRAME_COMP_STRIDE (&frame, 0), out);
  gst_video_frame_unmap (&frame);
  return TRUE;
}

gboolean
ds_gst_test_luma_matches (const GstStructure  *s,
                          const DsGstTestLuma *ref,
                          char               **why)
{
  gint width = 0, height = 0;
  guint64 sum;
  guint min, max;
  gdouble mean;
  const GValue *hist;

  if (!gst_structure_has_name (s, "ds-luma-stats") ||
      !gst_structure_get_int (s, "width", &width) ||
      !gst_structure_get_int (s, "height", &height))
    {
      *why = g_strdup_printf ("not a ds-luma-stats message: %s", gst_structure_get_name (s));
      return FALSE;
    }

  if (gst_structure_get_uint64 (s, "sum", &sum))
    {
      if (sum != ref->sum)
        {
          *why = g_strdup_printf ("sum %" G_GUINT64_FORMAT " != %" G_GUINT64_FORMAT,
                                  sum, ref->sum);
          return FALSE;
        }
      if (!gst_structure_get_double (s, "mean", &mean) ||
          mean != (gdouble) ref->sum / ((gdouble) width * height))
        {
          *why = g_strdup_printf ("mean %f != %f", mean,
                                  (gdouble) ref->sum / ((gdouble) width * height));
          return FALSE;
        }
    }
  if (gst_structure_get_uint (s, "min", &min) &&
      (!gst_structure_get_uint (s, "max", &max) || min != ref->min || max != ref->max))
    {
      *why = g_strdup_printf ("min/max %u/%u != %u/%u", min, max, ref->min, ref->max);
      return FALSE;
    }
  hist = gst_structure_get_value (s, "histogram");
  if (hist != NULL)
    {
      if (gst_value_array_get_size (hist) != 256)
        {
          *why = g_strdup_printf ("histogram of %u bins", gst_value_array_get_size (hist));
          return FALSE;
        }
      for (guint i = 0; i < 256; i++)
        {
          guint v = g_value_get_uint (gst_value_array_get_value (hist, i));

          if (v != ref->histogram[i])
            {
              *why = g_strdup_printf ("histogram[%u] %u != %u", i, v, ref->histogram[i]);
              return FALSE;
            }
        }
    }

  return TRUE;
}

#if DS_GST_HAVE_CUDA
GstMemory *
ds_gst_test_cuda_alloc (gpointer            ctx,
                        gpointer            stream,
                        const GstVideoInfo *info)
{
  g_autoptr(GstAllocator) allocator = NULL;
  GstMemory *mem;

  gst_cuda_memory_init_once ();
  allocator = gst_allocator_find (GST_CUDA_MEMORY_TYPE_NAME);
  g_assert_true (GST_IS_CUDA_ALLOCATOR (allocator));
#if DS_GST_HAVE_CUDA_STREAM
  mem = gst_cuda_allocator_alloc (GST_CUDA_ALLOCATOR (allocator), ctx, stream, info);
#else
  g_assert_null (stream);
  mem = gst_cuda_allocator_alloc (GST_CUDA_ALLOCATOR (allocator), ctx, info);
#endif
  g_assert_nonnull (mem);
  return mem;
}
#endif
