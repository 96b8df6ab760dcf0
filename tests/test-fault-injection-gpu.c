/* test-fault-injection-gpu.c: the Nth upstream allocation fails (all kinds)
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The workloads of ds-test-fault.c on each of the four kinds, with a
 * scratchpad on a stream, and the fault over the raw CUDA (or host)
 * resource, under a pool of its own, and over the kind's default pool.
 * Device memory is written and read back through copies in the stream.
 * Every case needs a CUDA device and skips without one.
 */

#include "config.h"

#include <string.h>

#include "ds-test-fault.h"

typedef struct
{
  const DsTestWorkload *workload;
  DsMemoryKind          kind;
  DsTestFaultConfig     config;
} Case;

static DsTestFaultTotals totals;

#if HAVE_CUDA

static cudaStream_t stream;

static void
gpu_fill (DsMemoryKind kind,
          gpointer     ptr,
          gsize        size,
          guint        seed,
          gpointer     data)
{
  if (kind == DS_MEMORY_KIND_DEVICE)
    {
      g_autofree guint8 *buf = g_malloc (size);

      ds_test_fill_pattern (buf, size, seed);
      DS_TEST_CUDA_CHECK (cudaMemcpyAsync (ptr, buf, size, cudaMemcpyHostToDevice, stream));
      DS_TEST_CUDA_CHECK (cudaStreamSynchronize (stream));
      return;
    }
  /* Host, pinned and managed memory: the CPU writes it, with nothing in
   * flight on the stream. */
  DS_TEST_CUDA_CHECK (cudaStreamSynchronize (stream));
  ds_test_fill_pattern (ptr, size, seed);
}

static gboolean
gpu_check (DsMemoryKind  kind,
           gconstpointer ptr,
           gsize         size,
           guint         seed,
           gpointer      data)
{
  g_autofree guint8 *buf = NULL;
  const guint8 *p = ptr;
  gsize i;

  if (kind == DS_MEMORY_KIND_DEVICE)
    {
      buf = g_malloc (size);
      DS_TEST_CUDA_CHECK (cudaMemcpyAsync (buf, ptr, size, cudaMemcpyDeviceToHost, stream));
      p = buf;
    }
  DS_TEST_CUDA_CHECK (cudaStreamSynchronize (stream));
  for (i = 0; i < size; i++)
    if (p[i] != (guint8) (i * 31 + seed))
      return FALSE;
  return TRUE;
}

static const DsTestFaultMemOps gpu_ops = { gpu_fill, gpu_check, NULL };

static void
test_fault (gconstpointer user_data)
{
  const Case *c = user_data;
  g_autoptr(DsAccessOrder) order = NULL;

  g_test_summary ("Each allocation below a scratchpad on a stream made to "
                  "fail in turn: a GError every time, the scratchpad usable "
                  "with its contents and statistics intact, every block back "
                  "exactly once");

  DS_TEST_REQUIRE_CUDA ();

  if (stream == NULL)
    stream = ds_test_stream_new ();
  order = ds_access_order_new_stream (stream, -1);
  ds_test_fault_run (c->workload, c->kind, c->config, order, &gpu_ops, &totals);
  DS_TEST_CUDA_CHECK (cudaStreamSynchronize (stream));
}

#endif /* HAVE_CUDA */

int
main (int    argc,
      char **argv)
{
  static const DsTestFaultConfig configs[] = {
    DS_TEST_FAULT_OVER_RAW, DS_TEST_FAULT_POOL_OVER_RAW, DS_TEST_FAULT_OVER_DEFAULT,
  };
  g_autoptr(GPtrArray) cases = g_ptr_array_new_with_free_func (g_free);
  guint w, c, kind;
  int ret;

  ds_test_init (&argc, &argv);

  for (kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
    for (w = 0; w < ds_test_fault_n_workloads; w++)
      {
        const DsTestWorkload *workload = &ds_test_fault_workloads[w];

        /* Uploads allocate only pinned and device scratch. */
        if (workload->needs_device &&
            kind != DS_MEMORY_KIND_PINNED && kind != DS_MEMORY_KIND_DEVICE)
          continue;
        for (c = 0; c < G_N_ELEMENTS (configs); c++)
          {
            Case *tc = g_new (Case, 1);
            g_autofree char *path = NULL;

            tc->workload = workload;
            tc->kind = kind;
            tc->config = configs[c];
            g_ptr_array_add (cases, tc);
            path = g_strdup_printf ("/Ds/FaultInjection/cuda/%s/%s/%s",
                                    ds_test_fault_kind_name (kind),
                                    workload->name,
                                    ds_test_fault_config_to_string (configs[c]));
            ds_test_add_gpu_data_func (path, tc, test_fault);
          }
      }

  ret = g_test_run ();

  g_print ("# fault injection, all kinds on a stream, total: %u runs, %u faults "
           "injected, %u surfaced as GError, %u failed steps retried, %u contents "
           "checks\n", totals.runs, totals.injected, totals.surfaced, totals.retried,
           totals.checked);

  return ret;
}
