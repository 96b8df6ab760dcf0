/* consumer.c: a program of a Meson project that pulls ds in as a subproject
 *
 * Takes host scratch, which works everywhere, and device scratch, which
 * works on a GPU, fails with DS_ERROR_NO_DEVICE without a driver or device,
 * and with DS_ERROR_NOT_SUPPORTED when ds was built with -Dcuda=disabled.
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <ds.h>

#include <stdio.h>
#include <string.h>

int
main (void)
{
  g_autoptr(DsScratchpad) pad = ds_scratchpad_new (NULL);
  g_autoptr(GError) error = NULL;
  guint32 *host;
  gpointer device;
  guint i, sum = 0;

  host = DS_SCRATCHPAD_ALLOC_HOST (pad, guint32, 1024, &error);
  if (host == NULL)
    {
      fprintf (stderr, "host scratch failed: %s\n", error ? error->message : "?");
      return 1;
    }
  for (i = 0; i < 1024; i++)
    host[i] = i;
  for (i = 0; i < 1024; i++)
    sum += host[i];
  if (sum != 1023 * 1024 / 2)
    return 1;
  printf ("host scratch: 4096 bytes at %p, sum %u\n", (void *) host, sum);

  device = ds_scratchpad_alloc (pad, DS_MEMORY_KIND_DEVICE, 1 << 20, 256, &error);
  if (device != NULL)
    printf ("device scratch: 1 MiB at %p\n", device);
  else if (g_error_matches (error, DS_ERROR, DS_ERROR_NO_DEVICE) ||
           (!DS_HAVE_CUDA && g_error_matches (error, DS_ERROR, DS_ERROR_NOT_SUPPORTED)))
    printf ("device scratch: not here (%s), accepted\n", error->message);
  else
    {
      fprintf (stderr, "device scratch: unexpected failure: %s\n",
               error ? error->message : "?");
      return 1;
    }

  ds_scratchpad_release (pad);
  printf ("ds %s as a subproject: ok\n", DS_VERSION_S);
  return 0;
}
