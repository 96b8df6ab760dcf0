/* bench-cuda-calls.c: every CUDA runtime call a lifecycle makes
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Needs a GPU. Linked with the tests' CUDA call spy (tests/ds-test-utils.c),
 * which interposes the runtime functions ds uses and counts every call, so
 * the counts here include what the pool statistics do not see (device and
 * stream look-ups of the access order, device scopes). Driver-API calls
 * made through entry points (cuCtxGetCurrent, cuStreamGetCtx) are not
 * counted. No timing here: the spy adds its own cost.
 */

#include "ds-bench.h"

#include "ds-test-utils.h"

#define N 1000

static gpointer volatile sink;

typedef enum
{
  CASE_FOUR_NEW,
  CASE_FOUR_NEW_SAME_ORDER,
  CASE_FOUR_REUSED,
  CASE_DEVICE_ONLY,
  CASE_PINNED_ONLY,
  CASE_HOST_ONLY,
  N_CASES,
} Case;

static const char * const case_names[N_CASES] = {
  "four-kind, new scratchpad + order init",
  "four-kind, new scratchpad, order made once",
  "four-kind, reused scratchpad + release",
  "device-only 1 MiB, new scratchpad + order",
  "pinned-only 64 KiB, new scratchpad + order",
  "host-only 8 allocs, new scratchpad (NULL order)",
};

static void
run_case (Case          which,
          cudaStream_t  stream,
          DsScratchpad *reused,
          const DsAccessOrder *once,
          guint         n)
{
  guint i, k;

  for (i = 0; i < n; i++)
    {
      DsAccessOrder order;
      DsScratchpad *sp;

      switch (which)
        {
        case CASE_FOUR_NEW:
        case CASE_FOUR_NEW_SAME_ORDER:
          if (which == CASE_FOUR_NEW)
            ds_access_order_init_stream (&order, stream, 0);
          sp = ds_scratchpad_new (which == CASE_FOUR_NEW ? &order : once);
          for (k = 0; k < G_N_ELEMENTS (ds_bench_four_kind); k++)
            sink = ds_scratchpad_alloc (sp, ds_bench_four_kind[k].kind, ds_bench_four_kind[k].size, 0, NULL);
          g_object_unref (sp);
          break;

        case CASE_FOUR_REUSED:
          for (k = 0; k < G_N_ELEMENTS (ds_bench_four_kind); k++)
            sink = ds_scratchpad_alloc (reused, ds_bench_four_kind[k].kind, ds_bench_four_kind[k].size, 0, NULL);
          ds_scratchpad_release (reused);
          break;

        case CASE_DEVICE_ONLY:
          ds_access_order_init_stream (&order, stream, 0);
          sp = ds_scratchpad_new (&order);
          sink = ds_scratchpad_alloc (sp, DS_MEMORY_KIND_DEVICE, 1 << 20, 0, NULL);
          g_object_unref (sp);
          break;

        case CASE_PINNED_ONLY:
          ds_access_order_init_stream (&order, stream, 0);
          sp = ds_scratchpad_new (&order);
          sink = ds_scratchpad_alloc (sp, DS_MEMORY_KIND_PINNED, 64 << 10, 0, NULL);
          g_object_unref (sp);
          break;

        case CASE_HOST_ONLY:
        default:
          sp = ds_scratchpad_new (NULL);
          for (k = 0; k < G_N_ELEMENTS (ds_bench_four_kind); k++)
            sink = ds_scratchpad_alloc (sp, DS_MEMORY_KIND_HOST, ds_bench_four_kind[k].size, 0, NULL);
          g_object_unref (sp);
          break;
        }
    }
}

int
main (int    argc,
      char **argv)
{
  cudaStream_t stream;
  DsAccessOrder once;
  DsScratchpad *reused;
  Case which;

  ds_bench_init (&argc, &argv, "bench-cuda-calls: CUDA runtime calls per lifecycle (interposed and counted)");
  ds_bench_require_cuda ();

  if (!ds_test_cuda_spy_works ())
    {
      printf ("SKIP: the CUDA call spy cannot interpose the runtime in this build\n");
      return DS_BENCH_SKIP;
    }

  CHECK (cudaSetDevice (0));
  CHECK (cudaStreamCreateWithFlags (&stream, cudaStreamNonBlocking));
  ds_access_order_init_stream (&once, stream, 0);
  reused = ds_scratchpad_new (&once);

  printf ("\n== CUDA calls per lifecycle (%u lifecycles each, pools warm, stream idle) ==\n", N);
  printf ("%-48s %14s %14s %12s %12s\n", "case", "all runtime", "pool-counted", "events rec.", "upstream");
  for (which = 0; which < N_CASES; which++)
    {
      DsPoolStats before, after;
      guint count;

      run_case (which, stream, reused, &once, 100);
      CHECK (cudaStreamSynchronize (stream));

      ds_bench_default_pool_stats (&before);
      ds_test_cuda_spy_reset ();
      run_case (which, stream, reused, &once, N);
      count = ds_test_cuda_spy_get_count ();
      ds_bench_default_pool_stats (&after);
      CHECK (cudaStreamSynchronize (stream));

      printf ("%-48s %14.2f %14.2f %12.2f %12.3f\n", case_names[which],
              (double) count / N,
              (double) (ds_bench_pool_cuda_calls (&after) - ds_bench_pool_cuda_calls (&before)) / N,
              (double) (after.events_recorded - before.events_recorded) / N,
              (double) (after.upstream_allocations + after.upstream_deallocations -
                        before.upstream_allocations - before.upstream_deallocations) / N);
    }
  printf ("  all runtime = every interposed cudaXxx call (incl. cudaGetDevice, cudaStreamGetId, "
          "cudaGetLastError); pool-counted = events recorded/created, queries, waits\n");
  printf ("  target: no cudaMalloc*/cudaFree* in steady state (upstream 0.000) and at most one "
          "cudaEventRecord per release per stream\n");

  g_object_unref (reused);
  CHECK (cudaStreamDestroy (stream));
  return 0;
}
