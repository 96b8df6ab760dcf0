/* install-gst-consumer.c: a program built against the installed ds-gst only
 *
 * run-install-test.py compiles it with nothing but
 * `pkg-config --cflags --libs ds-gst-1.0` (pointed into the install tree),
 * -Wall -Wextra -Werror, and runs it. <ds-gst.h> includes gstcuda's
 * headers, and with them the CUDA toolkit's <cuda.h>, when libds-gst was
 * built with gstreamer-cuda: the .pc file must give all of that. It prints
 * the file libds-gst was loaded from, so that the driver can check it is
 * the installed copy.
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>

#include <ds-gst.h>

int
main (int    argc,
      char **argv)
{
  g_autoptr(DsScratchpad) pad = NULL;
  GstBuffer *buffer;
  Dl_info info = { 0 };
  gboolean found;

  gst_init (&argc, &argv);

  /* Host scratch tied to a buffer: needs no GPU. */
  pad = ds_scratchpad_new (NULL);
  buffer = gst_buffer_new ();
  ds_gst_buffer_add_scratch_meta (buffer, pad);
  found = ds_gst_buffer_get_scratch_meta (buffer, 0) != NULL;
  gst_buffer_unref (buffer);
  if (!found)
    {
      fprintf (stderr, "the scratch meta is not on the buffer\n");
      return 1;
    }

  if (dladdr ((void *) ds_gst_buffer_add_scratch_meta, &info) == 0 || info.dli_fname == NULL)
    {
      fprintf (stderr, "dladdr failed\n");
      return 1;
    }
  printf ("libds-gst: %s\n", info.dli_fname);

#if DS_GST_HAVE_CUDA
  /* Linked, not called: that needs a GPU. */
  printf ("with gstreamer-cuda: ds_gst_cuda_context_new_scratchpad at %p\n",
          (void *) ds_gst_cuda_context_new_scratchpad);
#endif
#if DS_GST_HAVE_CUDA_STREAM
  printf ("with GstCudaStream: ds_gst_cuda_stream_new_scratchpad at %p\n",
          (void *) ds_gst_cuda_stream_new_scratchpad);
#endif

  gst_deinit ();
  return 0;
}
