/* test-fault-injection.c: the Nth upstream allocation fails (host kind)
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Every scripted workload of ds-test-fault.c runs once for each N with the
 * Nth allocation below the scratchpad failing, over a recording resource,
 * a pool over it, the raw host resource, a pool over that, and the default
 * host resource. Each failure must be a GError, the scratchpad must stay
 * usable with its contents and statistics intact, and every block must go
 * back exactly once. The GPU kinds are in test-fault-injection-gpu.c.
 */

#include "config.h"

#include <string.h>

#include "ds-test-fault.h"

typedef struct
{
  const DsTestWorkload *workload;
  DsTestFaultConfig     config;
} Case;

static DsTestFaultTotals totals;

static void
host_fill (DsMemoryKind kind,
           gpointer     ptr,
           gsize        size,
           guint        seed,
           gpointer     data)
{
  ds_test_fill_pattern (ptr, size, seed);
}

static gboolean
host_check (DsMemoryKind  kind,
            gconstpointer ptr,
            gsize         size,
            guint         seed,
            gpointer      data)
{
  const guint8 *p = ptr;
  gsize i;

  for (i = 0; i < size; i++)
    if (p[i] != (guint8) (i * 31 + seed))
      return FALSE;
  return TRUE;
}

static const DsTestFaultMemOps host_ops = { host_fill, host_check, NULL };

static void
test_fault (gconstpointer user_data)
{
  const Case *c = user_data;

  g_test_summary ("Each allocation below a host scratchpad made to fail in "
                  "turn: a GError every time, the scratchpad usable with its "
                  "contents and statistics intact, every block back once");

  ds_test_fault_run (c->workload, DS_MEMORY_KIND_HOST, c->config, NULL, &host_ops, &totals);
}

int
main (int    argc,
      char **argv)
{
  static const DsTestFaultConfig configs[] = {
    DS_TEST_FAULT_OVER_TEST, DS_TEST_FAULT_POOL_OVER_TEST, DS_TEST_FAULT_OVER_RAW,
    DS_TEST_FAULT_POOL_OVER_RAW, DS_TEST_FAULT_OVER_DEFAULT,
  };
  g_autoptr(GPtrArray) cases = g_ptr_array_new_with_free_func (g_free);
  guint w, c;
  int ret;

  ds_test_init (&argc, &argv);

  for (w = 0; w < ds_test_fault_n_workloads; w++)
    {
      const DsTestWorkload *workload = &ds_test_fault_workloads[w];

      if (workload->needs_device)
        continue;
      for (c = 0; c < G_N_ELEMENTS (configs); c++)
        {
          Case *tc = g_new (Case, 1);
          g_autofree char *path = NULL;

          tc->workload = workload;
          tc->config = configs[c];
          g_ptr_array_add (cases, tc);
          path = g_strdup_printf ("/Ds/FaultInjection/host/%s/%s", workload->name,
                                  ds_test_fault_config_to_string (configs[c]));
          g_test_add_data_func (path, tc, test_fault);
        }
    }

  ret = g_test_run ();

  g_print ("# fault injection, host kind, total: %u runs, %u faults injected, "
           "%u surfaced as GError, %u failed steps retried, %u contents checks\n",
           totals.runs, totals.injected, totals.surfaced, totals.retried, totals.checked);

  return ret;
}
