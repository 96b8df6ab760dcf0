/* ds-bench.h: timing, tables and skips for the ds benchmarks
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Every benchmark times a case in batches of B iterations (B = 1 for slow
 * cases; else about 200 us worth, after about 20 ms of warm-up) and
 * reports the median and the 90th percentile of the time per iteration
 * over the batches, then the ratio of each other case of its table to the
 * first row (the ds case), all measured in the same run.
 *
 * The cases of a table that sets ds against baselines for a target are
 * timed interleaved (ds_bench_table_add_case (), ds_bench_table_measure
 * ()): about 2 ms of each in turn, so that a machine whose speed drifts
 * over the seconds a table takes (the H200 VM's CPUs do, by up to 1.9x
 * within two minutes) drifts for every case alike.
 *
 * DS_BENCH_TIME (seconds, default 1.0) scales how long each case runs.
 * The main thread runs pinned to one CPU, and each worker of the thread
 * benchmarks to one of its own (DS_BENCH_CPU=N picks the main thread's,
 * DS_BENCH_CPU=none pins nothing); see ds-bench.c.
 */

#pragma once

#include "config.h"

#include <stdio.h>

#include <ds.h>

#if HAVE_CUDA
# include <cuda_runtime_api.h>
#endif

G_BEGIN_DECLS

#if HAVE_CUDA
/* Aborts the benchmark on a CUDA failure: a number measured after one
 * would mean nothing. */
# define CHECK(call) \
  G_STMT_START { \
    cudaError_t _r = (call); \
    if (G_UNLIKELY (_r != cudaSuccess)) \
      ds_bench_cuda_failed (__FILE__, __LINE__, #call, _r); \
  } G_STMT_END

/* Names the error, the case that ran last and the thread's device and
 * context as the runtime sees them, then aborts. */
G_NORETURN void ds_bench_cuda_failed (const char  *file,
                                      int          line,
                                      const char  *call,
                                      cudaError_t  result);
#endif

/* The case being run (warm-up, timing or counting), for failure messages. */
extern const char *ds_bench_current;

/* One temporary of a unit of work. */
typedef struct
{
  DsMemoryKind kind;
  gsize        size;
} DsBenchTemp;

/* The four-kind unit of work of DESIGN.md §4: 8 temporaries over the 4
 * kinds, each <= 256 KiB. */
extern const DsBenchTemp ds_bench_four_kind[8];

/* Where the timed bodies keep what they allocate, so that no call is
 * optimized away.  One per thread: a single shared sink written by every
 * worker of bench-threads would bounce its cache line between cores and
 * measure that instead of ds. */
extern _Thread_local gpointer volatile ds_bench_sink;

/* For a local the timed body fills (an order on the stack): the compiler
 * must assume @ptr's memory is read, so the filling stays, without the
 * local's address landing in ds_bench_sink, where it would dangle once
 * the loop moves on (gcc 14's -Wdangling-pointer). */
#define ds_bench_keep(ptr) __asm__ volatile ("" : : "r" (ptr) : "memory")

/* A new scratchpad on a new order for @stream of @device: how a "new"
 * lifecycle starts (the order made each time, as a caller would). */
static inline DsScratchpad *
ds_bench_scratchpad_new (gpointer stream,
                         int      device)
{
  DsAccessOrder order;

  ds_access_order_init_stream (&order, stream, device);
  return ds_scratchpad_new (&order);
}

/* Allocates each of the @n_temps temporaries @temps from @sp. */
static inline void
ds_bench_alloc_temps (DsScratchpad      *sp,
                      const DsBenchTemp *temps,
                      guint              n_temps)
{
  for (guint k = 0; k < n_temps; k++)
    ds_bench_sink = ds_scratchpad_alloc (sp, temps[k].kind, temps[k].size, 0, NULL);
}

/* The GObject baselines (ds-bench-threads.c): a final type with no
 * properties, and the one ds is measured against: a final type with as many plain read-write
 * properties as DsScratchpad (13, none construct). */
#define DS_TYPE_BENCH_PLAIN (ds_bench_plain_get_type ())
G_DECLARE_FINAL_TYPE (DsBenchPlain, ds_bench_plain, DS, BENCH_PLAIN, GObject)
#define DS_TYPE_BENCH_PLAIN_PROPS (ds_bench_plain_props_get_type ())
G_DECLARE_FINAL_TYPE (DsBenchPlainProps, ds_bench_plain_props, DS, BENCH_PLAIN_PROPS, GObject)
/* A final type whose dispose does not chain up to GObject's (as
 * DsScratchpad's did before ds's house rule): beside DS_TYPE_BENCH_PLAIN,
 * what GObject's own dispose costs, which every GObject pays. */
#define DS_TYPE_BENCH_UNCHAINED (ds_bench_unchained_get_type ())
G_DECLARE_FINAL_TYPE (DsBenchUnchained, ds_bench_unchained, DS, BENCH_UNCHAINED, GObject)

/* The exit status meson reads as "skipped". */
#define DS_BENCH_SKIP 77

typedef void (*DsBenchFunc) (gpointer data,
                             guint    n_iterations);

typedef struct
{
  char    *name;
  double   median_ns;   /* per iteration */
  double   p90_ns;
  guint64  iterations;  /* timed */
  guint64  total;       /* all calls of the body, warm-up included */
  guint    batch;
  char    *note;        /* printed after the row, may be NULL */
} DsBenchResult;

typedef struct
{
  char      *title;
  GPtrArray *rows;      /* DsBenchResult * */
  GPtrArray *lines;     /* char *, printed after the table */
  GPtrArray *pending;   /* cases added, not measured yet (ds-bench.c) */
} DsBenchTable;

void           ds_bench_init             (int          *argc,
                                          char       ***argv,
                                          const char   *what);

gint64         ds_bench_now_ns           (void);
/* DS_BENCH_TIME, 1.0 when unset. */
double         ds_bench_time_scale       (void);

/* Times @func: warm-up, then batches of @batch iterations until
 * @max_batches are done or the time budget (@seconds x DS_BENCH_TIME) is
 * spent, whichever comes first (at least 5 batches). @between, if not
 * NULL, runs untimed after each batch (e.g. a stream synchronization).
 * @batch 0 picks a batch size that makes a batch last about 200 us. */
DsBenchResult *ds_bench_run              (const char   *name,
                                          DsBenchFunc   func,
                                          DsBenchFunc   between,
                                          gpointer      data,
                                          guint         batch,
                                          guint         max_batches,
                                          double        seconds);

DsBenchTable  *ds_bench_table_new        (const char   *title);
/* Adds @result (taken) as a row; the first row is the reference. */
DsBenchResult *ds_bench_table_add        (DsBenchTable *table,
                                          DsBenchResult *result);
/* Adds a row for the case ds_bench_run () would time, but does not time
 * it yet: ds_bench_table_measure () times every case added so, about 2 ms
 * of each in turn, so that ds and its baselines see the same machine (the
 * H200 VM's CPUs change speed within minutes). The result is filled in
 * then; read it only afterwards. */
DsBenchResult *ds_bench_table_add_case   (DsBenchTable *table,
                                          const char   *name,
                                          DsBenchFunc   func,
                                          DsBenchFunc   between,
                                          gpointer      data,
                                          guint         batch,
                                          guint         max_batches,
                                          double        seconds);
void           ds_bench_table_measure    (DsBenchTable *table);
void           ds_bench_table_note       (DsBenchTable *table,
                                          const char   *format,
                                          ...) G_GNUC_PRINTF (2, 3);
/* Prints the table: name, median, p90, iterations, and "x N" = the row's
 * median / the first row's median (how much faster the first row is). */
void           ds_bench_table_print      (DsBenchTable *table);
void           ds_bench_table_free       (DsBenchTable *table);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (DsBenchTable, ds_bench_table_free)

/* "MET" / "MISSED" line for a target: @value compared with @limit. */
void           ds_bench_table_target     (DsBenchTable *table,
                                          const char   *what,
                                          double        value,
                                          const char   *op,
                                          double        limit,
                                          const char   *unit);

/* The same line, printed at once (outside a table). */
void           ds_bench_print_target     (const char   *what,
                                          double        value,
                                          const char   *op,
                                          double        limit,
                                          const char   *unit);

char          *ds_bench_format_time      (double        ns);

/* Thread scaling (ds-bench-threads.c): @n_threads threads run @func at
 * once for @seconds. @func sets itself up, calls ds_bench_worker_wait ()
 * (which waits for the start), then does lifecycles while
 * ds_bench_worker_running (), tears itself down and returns how many it
 * did. The clock starts when every thread waits and stops when they are
 * told to stop. Returns the lifecycles per second of all threads
 * together, and their number in *@lifecycles (may be NULL). */
typedef struct _DsBenchWorker DsBenchWorker;
typedef guint64 (*DsBenchWorkerFunc) (DsBenchWorker *worker,
                                      gpointer       data);

double         ds_bench_threads_rate     (guint              n_threads,
                                          DsBenchWorkerFunc  func,
                                          gpointer           data,
                                          double             seconds,
                                          guint64           *lifecycles);
void           ds_bench_worker_wait      (DsBenchWorker     *worker);
/* Pins the calling thread, worker @index of ds_bench_threads_rate (), to a
 * CPU of its own (worker 0 on the main thread's): the CPUs the process
 * may use, in order, round robin. Nothing under DS_BENCH_CPU=none. */
void           ds_bench_pin_worker       (guint              index);
/* The number of CPUs the workers are pinned to (0: none). */
guint          ds_bench_n_cpus           (void);
/* Worker i runs on the (@base + i)-th CPU of that order from now on;
 * returns the CPU worker 0 gets (-1 when nothing is pinned). */
int            ds_bench_set_worker_base  (guint              base);
gboolean       ds_bench_worker_running   (DsBenchWorker     *worker);

/* Exits DS_BENCH_SKIP with the reason when no CUDA device is usable. */
void           ds_bench_require_cuda     (void);

/* The sum of the statistics of the default pools of every kind (of
 * device 0 for the CUDA kinds); kinds without a default are skipped. */
void           ds_bench_default_pool_stats (DsPoolStats *total);

/* What the default pools counted since @before (taken with
 * ds_bench_default_pool_stats ()): the counters are differences, the
 * gauges (bytes_*, n_cached_blocks) what they are now. */
void           ds_bench_default_pool_stats_since (const DsPoolStats *before,
                                                  DsPoolStats       *delta);

/* Runs @func (@data, @n) once, between two calls of @between (e.g. a
 * stream synchronization; NULL: none), and returns in @delta what the
 * default pools counted meanwhile. */
void           ds_bench_count_pool_stats (DsBenchFunc   func,
                                          DsBenchFunc   between,
                                          gpointer      data,
                                          guint         n,
                                          DsPoolStats  *delta);

/* The pool's own CUDA calls (events, queries, waits) in @s. */
guint64        ds_bench_pool_cuda_calls  (const DsPoolStats *s);
/* Its calls to the upstream resource in @s: allocations + deallocations. */
guint64        ds_bench_pool_upstream_calls (const DsPoolStats *s);

/* A fixed-seed source of Poisson(@mean) sizes and uniform counts. */
guint          ds_bench_poisson          (GRand        *rand,
                                          double        mean);

G_END_DECLS
