/* ds-fuzz-replay.c: run the fuzz target over files, without libFuzzer
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Usage: ds-fuzz-replay FILE-OR-DIRECTORY...
 *
 * Feeds every file (a directory: every file in it, sorted) to
 * LLVMFuzzerTestOneInput () of ds-fuzz.c, as libFuzzer would, and prints
 * one TAP line per file. Built with the ordinary compiler in every build,
 * so that the seed corpus (tests/fuzz/corpus) runs as the test fuzz-replay
 * everywhere, under valgrind and ASan too; also the way to replay a crash
 * file the fuzzer wrote.
 */

#include "config.h"

#include <stdint.h>
#include <stdlib.h>

#include <glib.h>

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);
int LLVMFuzzerInitialize (int *argc, char ***argv);

static gint
compare_strings (gconstpointer a,
                 gconstpointer b)
{
  return g_strcmp0 (*(char * const *) a, *(char * const *) b);
}

static void
collect (const char *path,
         GPtrArray  *files)
{
  if (g_file_test (path, G_FILE_TEST_IS_DIR))
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(GDir) dir = g_dir_open (path, 0, &error);
      g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
      const char *name;
      guint i;

      g_assert_no_error (error);
      while ((name = g_dir_read_name (dir)) != NULL)
        g_ptr_array_add (names, g_build_filename (path, name, NULL));
      g_ptr_array_sort (names, compare_strings);
      for (i = 0; i < names->len; i++)
        collect (names->pdata[i], files);
    }
  else
    g_ptr_array_add (files, g_strdup (path));
}

int
main (int    argc,
      char **argv)
{
  g_autoptr(GPtrArray) files = g_ptr_array_new_with_free_func (g_free);
  int i;

  if (argc < 2)
    {
      g_printerr ("usage: %s FILE-OR-DIRECTORY...\n", argv[0]);
      return 2;
    }
  LLVMFuzzerInitialize (&argc, &argv);
  /* Options are the test harness's (meson and the GPU bundle pass GTest's
   * --tap, -k): this program always speaks TAP, so it ignores them. */
  for (i = 1; i < argc; i++)
    if (argv[i][0] != '-')
      collect (argv[i], files);
  if (files->len == 0)
    {
      g_printerr ("%s: no input files\n", argv[0]);
      return 1;
    }

  g_print ("1..%u\n", files->len);
  for (i = 0; i < (int) files->len; i++)
    {
      g_autoptr(GError) error = NULL;
      g_autofree char *contents = NULL;
      gsize length;

      if (!g_file_get_contents (files->pdata[i], &contents, &length, &error))
        {
          g_print ("not ok %d %s # %s\n", i + 1, (char *) files->pdata[i], error->message);
          return 1;
        }
      /* A failing check aborts: the TAP stream stops at this file. */
      LLVMFuzzerTestOneInput ((const uint8_t *) contents, length);
      g_print ("ok %d %s (%" G_GSIZE_FORMAT " bytes)\n", i + 1,
               (char *) files->pdata[i], length);
    }
  return 0;
}
