/* bench-bump.c: the cost of one allocation inside a scratchpad block
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Runs on any machine (host kind). DESIGN.md §4: <= 5 ns per call on the C
 * fast path (ds_scratchpad_alloc), <= 20 ns through
 * ds_scratchpad_iface_alloc.
 */

#include "ds-bench.h"

#include <stdlib.h>

#define BLOCK_SIZE   ((gsize) 8 << 20)
#define ALLOC_SIZE   ((gsize) 16)
#define PER_RELEASE  ((guint) (BLOCK_SIZE / ALLOC_SIZE / 2))

typedef struct
{
  DsScratchpad      *sp;
  DsScratchpadIface *iface;
  guint              used;     /* allocations since the last release */
  guint8            *floor_cur;
  guint8            *floor_block;
  gboolean           by_iface;  /* run_call () through the interface (runs are made in turn) */
} Bump;

/* Keeps every run inside one block: releases (untimed) when the next batch
 * might not fit, and takes the first block again. */
static void
bump_between (gpointer data,
              guint    n)
{
  Bump *b = data;

  b->used += n;
  if (b->used + 65536 > PER_RELEASE)
    {
      ds_scratchpad_release (b->sp);
      ds_bench_sink = ds_scratchpad_alloc (b->sp, DS_MEMORY_KIND_HOST, ALLOC_SIZE, 16, NULL);
      b->used = 1;
      b->floor_cur = b->floor_block;
    }
}

static void
run_alloc (gpointer data,
           guint    n)
{
  Bump *b = data;
  DsScratchpad *sp = b->sp;
  guint i;

  for (i = 0; i < n; i++)
    ds_bench_sink = ds_scratchpad_alloc (sp, DS_MEMORY_KIND_HOST, ALLOC_SIZE, 16, NULL);
}

/* With a GError location, as most callers pass: the inline bump then
 * also checks that no error is set already (GLib's rule). */
static void
run_alloc_error (gpointer data,
                 guint    n)
{
  Bump *b = data;
  DsScratchpad *sp = b->sp;
  GError *error = NULL;
  guint i;

  for (i = 0; i < n; i++)
    ds_bench_sink = ds_scratchpad_alloc (sp, DS_MEMORY_KIND_HOST, ALLOC_SIZE, 16, &error);
  g_assert_no_error (error);
}

static void
run_alloc_macro (gpointer data,
                 guint    n)
{
  Bump *b = data;
  DsScratchpad *sp = b->sp;
  guint i;

  for (i = 0; i < n; i++)
    ds_bench_sink = DS_SCRATCHPAD_ALLOC_HOST (sp, guint32, 4, NULL);
}

static void
run_iface (gpointer data,
           guint    n)
{
  Bump *b = data;
  DsScratchpadIface *iface = b->iface;
  guint i;

  for (i = 0; i < n; i++)
    ds_bench_sink = ds_scratchpad_iface_alloc (iface, DS_MEMORY_KIND_HOST, ALLOC_SIZE, 16, NULL);
}

/* One allocation per call, as a real caller makes it (a kernel that
 * holds a scratchpad and asks it for one buffer): nothing of the
 * allocation can be hoisted out of a loop. The scratchpad is read from
 * memory at every call, as a caller's field would be. */
/* Both start on a cache line of their own, so that where the linker
 * happens to put them (a fetch block split across a branch) does not
 * weigh on the comparison: a fraction of a nanosecond either way. */
#define PER_CALL G_GNUC_NO_INLINE __attribute__ ((aligned (64)))

static PER_CALL gpointer
alloc_one_c (Bump  *b,
             gsize  size)
{
  return ds_scratchpad_alloc (b->sp, DS_MEMORY_KIND_HOST, size, 16, NULL);
}

static PER_CALL gpointer
alloc_one_iface (Bump  *b,
                 gsize  size)
{
  return ds_scratchpad_iface_alloc (b->iface, DS_MEMORY_KIND_HOST, size, 16, NULL);
}

static void
run_call (gpointer data,
          guint    n)
{
  Bump *b = data;
  guint i;

  for (i = 0; i < n; i++)
    ds_bench_sink = b->by_iface ? alloc_one_iface (b, ALLOC_SIZE) : alloc_one_c (b, ALLOC_SIZE);
}

/* The floor: an inline aligned bump with no checks beyond the bound. */
static void
run_floor (gpointer data,
           guint    n)
{
  Bump *b = data;
  guint8 *cur = b->floor_cur, *end = b->floor_block + BLOCK_SIZE;
  guint i;

  for (i = 0; i < n; i++)
    {
      guint8 *p = (guint8 *) (((guintptr) cur + 15) & ~(guintptr) 15);

      if (G_UNLIKELY (p + ALLOC_SIZE > end))
        p = b->floor_block;
      cur = p + ALLOC_SIZE;
      ds_bench_sink = p;
    }
  b->floor_cur = cur;
}

static void
run_malloc (gpointer data,
            guint    n)
{
  guint i;

  for (i = 0; i < n; i++)
    {
      void *p = malloc (ALLOC_SIZE);

      ds_bench_sink = p;
      free (p);
    }
}

int
main (int    argc,
      char **argv)
{
  g_autoptr(DsBenchTable) table = NULL;
  gsize sizes[DS_N_MEMORY_KINDS] = { BLOCK_SIZE, 0, 0, 0 };
  g_autoptr(GError) error = NULL;
  DsBenchResult *c_path, *iface_path, *c_call, *iface_call;
  Bump b = { 0, };

  ds_bench_init (&argc, &argv, "bench-bump: one 16-byte host allocation inside a scratchpad block");

  b.sp = ds_scratchpad_new_full (NULL, NULL, NULL, sizes);
  b.iface = DS_SCRATCHPAD_IFACE (b.sp);
  b.floor_block = g_malloc (BLOCK_SIZE);
  b.floor_cur = b.floor_block;
  ds_bench_sink = ds_scratchpad_alloc (b.sp, DS_MEMORY_KIND_HOST, ALLOC_SIZE, 16, &error);
  g_assert_no_error (error);
  b.used = 1;

  table = ds_bench_table_new ("bump allocation, host kind, in-block, 16 B aligned to 16 (ns per call)");
  c_path = ds_bench_table_add (table, ds_bench_run ("ds_scratchpad_alloc (C fast path)",
                                                    run_alloc, bump_between, &b, 65536, 400, 0.5));
  ds_bench_table_add (table, ds_bench_run ("ds_scratchpad_alloc, &error (C fast path)",
                                           run_alloc_error, bump_between, &b, 65536, 400, 0.5));
  ds_bench_table_add (table, ds_bench_run ("DS_SCRATCHPAD_ALLOC_HOST (alloc_array)",
                                           run_alloc_macro, bump_between, &b, 65536, 400, 0.5));
  iface_path = ds_bench_table_add (table, ds_bench_run ("ds_scratchpad_iface_alloc (interface)",
                                                        run_iface, bump_between, &b, 65536, 400, 0.5));
  c_call = ds_bench_table_add (table, ds_bench_run ("ds_scratchpad_alloc, one per (non-inlined) call",
                                                    run_call, bump_between, &b, 65536, 400, 0.5));
  b.by_iface = TRUE;
  iface_call = ds_bench_table_add (table, ds_bench_run ("ds_scratchpad_iface_alloc, one per (non-inlined) call",
                                                        run_call, bump_between, &b, 65536, 400, 0.5));
  ds_bench_table_add (table, ds_bench_run ("floor: inline pointer bump",
                                           run_floor, NULL, &b, 65536, 400, 0.5));
  ds_bench_table_add (table, ds_bench_run ("baseline: malloc + free (glibc)",
                                           run_malloc, NULL, &b, 65536, 400, 0.5));

  ds_bench_table_target (table, "C fast path", c_path->median_ns, "<=", 2, "ns");
  ds_bench_table_target (table, "interface", iface_path->median_ns, "<=", 4, "ns");
  ds_bench_table_target (table, "interface vs C, one allocation per call",
                         iface_call->median_ns / c_call->median_ns, "<=", 1.1, "x");
  ds_bench_table_print (table);

  g_assert_cmpuint (ds_scratchpad_get_n_blocks (b.sp, DS_MEMORY_KIND_HOST), ==, 1);
  g_object_unref (b.sp);
  g_free (b.floor_block);

  return 0;
}
