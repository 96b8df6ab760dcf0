/* install-consumer.c: a program built against the installed ds only
 *
 * run-install-test.py compiles it with nothing but
 * `pkg-config --cflags --libs ds-1.0` (pointed into the install tree) and
 * runs it. It prints the file libds was loaded from, so that the driver
 * can check it is the installed copy.
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>

#include <ds.h>

int
main (void)
{
  g_autoptr(DsScratchpad) pad = ds_scratchpad_new (NULL);
  g_autoptr(GError) error = NULL;
  Dl_info info = { 0 };
  gchar *text;

  text = DS_SCRATCHPAD_ALLOC_HOST (pad, gchar, 32, &error);
  if (text == NULL)
    {
      fprintf (stderr, "host scratch failed: %s\n", error ? error->message : "?");
      return 1;
    }
  g_strlcpy (text, "installed", 32);

  if (dladdr ((void *) ds_scratchpad_new, &info) == 0 || info.dli_fname == NULL)
    {
      fprintf (stderr, "dladdr failed\n");
      return 1;
    }
  printf ("libds: %s\n", info.dli_fname);
  printf ("ds %s (CUDA %s), host scratch: %s\n", DS_VERSION_S,
          DS_HAVE_CUDA ? "yes" : "no", text);
  return 0;
}
