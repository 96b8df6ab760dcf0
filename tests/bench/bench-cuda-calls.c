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
#include "ds-cuda-private.h"
#include "ds-fence-private.h"

#define N 1000

typedef enum
{
  CASE_FOUR_NEW,
  CASE_FOUR_NEW_SAME_ORDER,
  CASE_FOUR_REUSED,
  CASE_FOUR_REUSED_OWN_POOLS,
  CASE_FOUR_NEW_OWN_POOLS,
  CASE_DEVICE_NEW,
  CASE_DEVICE_REUSED,
  CASE_PINNED_NEW,
  CASE_PINNED_REUSED,
  CASE_MANAGED_REUSED,
  CASE_HOST_NEW,
  CASE_HOST_REUSED,
  CASE_ORDER_ONLY,
  N_CASES,
} Case;

static const char * const case_names[N_CASES] = {
  "four-kind, new scratchpad + order",
  "four-kind, new scratchpad, order made once",
  "four-kind, reused scratchpad + release",
  "four-kind, reused, own pools (ds-gst's set-up)",
  "four-kind, new + order, own pools (ds-gst's)",
  "device-only 1 MiB, new scratchpad + order",
  "device-only 1 MiB, reused + release",
  "pinned-only 64 KiB, new scratchpad + order",
  "pinned-only 64 KiB, reused + release",
  "managed-only 64 KiB, reused + release",
  "host-only 8 allocs, new scratchpad (NULL order)",
  "host-only 8 allocs, reused + release",
  "a new stream order alone (init_stream)",
};

/* A scratchpad over pools of its own, as ds-gst makes them for a
 * GstCudaContext (ds_pool_resource_new () over the plain resources,
 * bound to a device at their first upstream allocation), in @order. */
static DsScratchpad *own_pools_scratchpad;
static DsMemoryResource *own_pools[DS_N_MEMORY_KINDS];

static void
own_pools_init (void)
{
  g_autoptr(DsMemoryResource) pinned = ds_pinned_memory_resource_new ();
  g_autoptr(DsMemoryResource) device = ds_device_memory_resource_new (0);
  g_autoptr(DsMemoryResource) managed = ds_managed_memory_resource_new (0);

  own_pools[DS_MEMORY_KIND_PINNED] = ds_pool_resource_new (pinned);
  own_pools[DS_MEMORY_KIND_DEVICE] = ds_pool_resource_new (device);
  own_pools[DS_MEMORY_KIND_MANAGED] = ds_pool_resource_new (managed);
}

/* A scratchpad over the own pools, as ds_gst_cuda_context_new_scratchpad ()
 * makes one per buffer. */
static DsScratchpad *
own_pools_new (const DsAccessOrder *order)
{
  return g_object_new (DS_TYPE_SCRATCHPAD, "device-order", order,
                       "pinned-resource", own_pools[DS_MEMORY_KIND_PINNED],
                       "device-resource", own_pools[DS_MEMORY_KIND_DEVICE],
                       "managed-resource", own_pools[DS_MEMORY_KIND_MANAGED], NULL);
}

/* The default pools' statistics and those of the own pools, summed. */
static void
own_pools_stats (DsPoolStats *total)
{
  ds_bench_default_pool_stats (total);
  for (guint kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
    {
      DsPoolStats s;

      if (own_pools[kind] == NULL)
        continue;
      ds_pool_resource_get_stats (DS_POOL_RESOURCE (own_pools[kind]), &s);
      total->upstream_allocations += s.upstream_allocations;
      total->upstream_deallocations += s.upstream_deallocations;
      total->events_recorded += s.events_recorded;
      total->events_created += s.events_created;
      total->event_queries += s.event_queries;
      total->stream_waits += s.stream_waits;
      total->event_waits += s.event_waits;
    }
}

static void
own_pools_stats_since (const DsPoolStats *before,
                       DsPoolStats       *delta)
{
  own_pools_stats (delta);
  delta->upstream_allocations -= before->upstream_allocations;
  delta->upstream_deallocations -= before->upstream_deallocations;
  delta->events_recorded -= before->events_recorded;
  delta->events_created -= before->events_created;
  delta->event_queries -= before->event_queries;
  delta->stream_waits -= before->stream_waits;
  delta->event_waits -= before->event_waits;
}

static void
one_kind (DsScratchpad *sp,
          DsMemoryKind  kind,
          gsize         size)
{
  guint8 *p = ds_scratchpad_alloc (sp, kind, size, 0, NULL);

  /* The host writes what it can reach, as real code does. */
  if (kind != DS_MEMORY_KIND_DEVICE)
    p[0] = 1;
  ds_bench_sink = p;
}

static void
run_case (Case                 which,
          cudaStream_t         stream,
          DsScratchpad        *reused,
          const DsAccessOrder *once,
          guint                n)
{
  guint i, k;

  for (i = 0; i < n; i++)
    {
      DsAccessOrder order;
      DsScratchpad *sp = NULL;

      switch (which)
        {
        case CASE_FOUR_NEW:
        case CASE_FOUR_NEW_SAME_ORDER:
          if (which == CASE_FOUR_NEW)
            ds_access_order_init_stream (&order, stream, 0);
          sp = ds_scratchpad_new (which == CASE_FOUR_NEW ? &order : once);
          for (k = 0; k < G_N_ELEMENTS (ds_bench_four_kind); k++)
            one_kind (sp, ds_bench_four_kind[k].kind, ds_bench_four_kind[k].size);
          break;

        case CASE_FOUR_REUSED:
        case CASE_FOUR_REUSED_OWN_POOLS:
          {
            DsScratchpad *r = which == CASE_FOUR_REUSED ? reused : own_pools_scratchpad;

            for (k = 0; k < G_N_ELEMENTS (ds_bench_four_kind); k++)
              one_kind (r, ds_bench_four_kind[k].kind, ds_bench_four_kind[k].size);
            ds_scratchpad_release (r);
          }
          break;

        case CASE_FOUR_NEW_OWN_POOLS:
          ds_access_order_init_stream (&order, stream, 0);
          sp = own_pools_new (&order);
          for (k = 0; k < G_N_ELEMENTS (ds_bench_four_kind); k++)
            one_kind (sp, ds_bench_four_kind[k].kind, ds_bench_four_kind[k].size);
          break;

        case CASE_DEVICE_NEW:
        case CASE_PINNED_NEW:
          ds_access_order_init_stream (&order, stream, 0);
          sp = ds_scratchpad_new (&order);
          one_kind (sp, which == CASE_DEVICE_NEW ? DS_MEMORY_KIND_DEVICE : DS_MEMORY_KIND_PINNED,
                    which == CASE_DEVICE_NEW ? 1 << 20 : 64 << 10);
          break;

        case CASE_DEVICE_REUSED:
        case CASE_PINNED_REUSED:
        case CASE_MANAGED_REUSED:
          one_kind (reused, which == CASE_DEVICE_REUSED ? DS_MEMORY_KIND_DEVICE :
                            which == CASE_PINNED_REUSED ? DS_MEMORY_KIND_PINNED : DS_MEMORY_KIND_MANAGED,
                    which == CASE_DEVICE_REUSED ? 1 << 20 : 64 << 10);
          ds_scratchpad_release (reused);
          break;

        case CASE_HOST_NEW:
          sp = ds_scratchpad_new (NULL);
          for (k = 0; k < G_N_ELEMENTS (ds_bench_four_kind); k++)
            one_kind (sp, DS_MEMORY_KIND_HOST, ds_bench_four_kind[k].size);
          break;

        case CASE_HOST_REUSED:
          for (k = 0; k < G_N_ELEMENTS (ds_bench_four_kind); k++)
            one_kind (reused, DS_MEMORY_KIND_HOST, ds_bench_four_kind[k].size);
          ds_scratchpad_release (reused);
          break;

        case CASE_ORDER_ONLY:
        default:
          ds_access_order_init_stream (&order, stream, 0);
          ds_bench_keep (&order);
          break;
        }

      if (sp != NULL)
        g_object_unref (sp);
    }
}

/* The issue-9 targets: the most CUDA calls (runtime + driver) a lifecycle
 * of each case may make in steady state; < 0: none set. */
static const double limits[N_CASES] = {
  [CASE_FOUR_NEW] = -1,
  [CASE_FOUR_NEW_SAME_ORDER] = -1,
  [CASE_FOUR_REUSED] = 0.25,
  [CASE_FOUR_REUSED_OWN_POOLS] = 0.25,
  [CASE_FOUR_NEW_OWN_POOLS] = -1,
  [CASE_DEVICE_NEW] = -1,
  [CASE_DEVICE_REUSED] = 0,
  [CASE_PINNED_NEW] = -1,
  [CASE_PINNED_REUSED] = 0.25,
  [CASE_MANAGED_REUSED] = 0.25,
  [CASE_HOST_NEW] = 0,
  [CASE_HOST_REUSED] = 0,
  [CASE_ORDER_ONLY] = 1,
};

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
  own_pools_init ();
  own_pools_scratchpad = own_pools_new (&once);

  printf ("\n== CUDA calls per lifecycle (%u lifecycles each, pools warm, stream idle, "
          "each case alone for %d ms first) ==\n", N,
          (int) ((DS_FENCE_DEMAND_HOLD_US + 20 * G_TIME_SPAN_MILLISECOND) / G_TIME_SPAN_MILLISECOND));
  printf ("%-48s %9s %9s %9s %12s %12s %10s\n", "case", "runtime", "driver", "all",
          "pool-counted", "events rec.", "upstream");
  for (which = 0; which < N_CASES; which++)
    {
      DsPoolStats before, d;
      guint64 driver;
      double all;
      guint count;

      /* The steady state of this case alone: the cases before it made
       * requests from the host for the stream's blocks (pinned, managed),
       * a demand its checks go on serving until it has not been seen for
       * DS_FENCE_DEMAND_HOLD_US. Warm up, wait that out, warm up again
       * (the first due check sees the demand has faded). */
      run_case (which, stream, reused, &once, 100);
      CHECK (cudaStreamSynchronize (stream));
      g_usleep (DS_FENCE_DEMAND_HOLD_US + 20 * G_TIME_SPAN_MILLISECOND);
      run_case (which, stream, reused, &once, 100);
      CHECK (cudaStreamSynchronize (stream));

      own_pools_stats (&before);
      ds_test_cuda_spy_reset ();
      driver = ds_cuda_get_n_driver_calls ();
      run_case (which, stream, reused, &once, N);
      count = ds_test_cuda_spy_get_count ();
      driver = ds_cuda_get_n_driver_calls () - driver;
      own_pools_stats_since (&before, &d);
      CHECK (cudaStreamSynchronize (stream));

      all = (double) (count + driver) / N;
      printf ("%-48s %9.3f %9.3f %9.3f %12.3f %12.3f %10.3f\n", case_names[which],
              (double) count / N, (double) driver / N, all,
              (double) ds_bench_pool_cuda_calls (&d) / N,
              (double) d.events_recorded / N,
              (double) ds_bench_pool_upstream_calls (&d) / N);
      if (limits[which] >= 0)
        {
          g_autofree char *what = g_strdup_printf ("CUDA calls per lifecycle, %s", case_names[which]);

          ds_bench_print_target (what, all, "<=", limits[which], "");
        }
      if (ds_bench_pool_upstream_calls (&d) != 0)
        printf ("  MISSED: %s took memory from upstream in steady state\n", case_names[which]);
    }
  printf ("  runtime = every interposed cudaXxx call (incl. cudaGetDevice, cudaStreamGetId); "
          "driver = the driver calls ds made (cuCtxGetCurrent, cuStreamGetCtx, ...), counted by ds; "
          "pool-counted = events recorded/created, queries, waits\n");

  g_object_unref (reused);
  g_object_unref (own_pools_scratchpad);
  for (guint kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
    g_clear_object (&own_pools[kind]);
  CHECK (cudaStreamDestroy (stream));
  return 0;
}
