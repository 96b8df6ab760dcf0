/* ds-bench-dali-load.c: finds DALI's side of bench-lifecycle, if built
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <gmodule.h>

#include "ds-bench-dali.h"

const DsBenchDali *
ds_bench_dali_load (const char **why)
{
#ifdef DS_BENCH_DALI_MODULE
  static char reason[512];
  g_autofree char *exe = g_file_read_link ("/proc/self/exe", NULL);
  g_autofree char *dir = exe != NULL ? g_path_get_dirname (exe) : g_strdup (".");
  g_autofree char *path = g_build_filename (dir, DS_BENCH_DALI_MODULE, NULL);
  GModule *module;
  gpointer symbol = NULL;

  /* The module is built beside the benchmark, and travels with it. Never
   * unloaded: DALI's default resources live until exit. */
  module = g_module_open (path, G_MODULE_BIND_LOCAL);
  if (module == NULL)
    {
      g_snprintf (reason, sizeof reason, "built, but not loadable here: %s", g_module_error ());
      *why = reason;
      return NULL;
    }
  if (!g_module_symbol (module, DS_BENCH_DALI_SYMBOL, &symbol) || symbol == NULL)
    {
      g_snprintf (reason, sizeof reason, "%s has no %s", path, DS_BENCH_DALI_SYMBOL);
      *why = reason;
      return NULL;
    }
  return symbol;
#else
  *why = "not built (configure with -Ddali_source=<a checkout of NVIDIA/DALI>)";
  return NULL;
#endif
}
