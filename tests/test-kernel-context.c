/* test-kernel-context.c: DsKernelContext and its run helper
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>

#include "ds-test-resource.h"
#include "ds-test-utils.h"

/* Host memory of the scratchpads that run() creates comes from the default
 * host resource: a recording one for these tests. */
typedef struct
{
  DsTestResource *host;
  DsAccessOrder  *order;
} Fixture;

static void
fixture_setup (Fixture       *f,
               gconstpointer  user_data)
{
  f->host = ds_test_resource_new (DS_MEMORY_KIND_HOST, FALSE);
  ds_memory_resource_set_default (DS_MEMORY_KIND_HOST, -1, DS_MEMORY_RESOURCE (f->host));
  f->order = ds_access_order_new_host ();
}

static void
fixture_teardown (Fixture       *f,
                  gconstpointer  user_data)
{
  ds_memory_resource_set_default (DS_MEMORY_KIND_HOST, -1, NULL);
  ds_test_resource_assert_clean (f->host);
  g_clear_object (&f->host);
  g_clear_pointer (&f->order, ds_access_order_free);
}

typedef struct
{
  DsScratchpad *seen;
  DsScratchpad *weak;
  gpointer      ptr;
  guint         n_calls;
  gboolean      fail;
  gboolean      nested;
} RunData;

static gboolean
run_func (DsKernelContext  *context,
          gpointer          user_data,
          GError          **error)
{
  RunData *data = user_data;
  DsScratchpad *sp = ds_kernel_context_get_scratchpad (context);

  data->n_calls++;
  g_assert_nonnull (sp);
  g_assert_true (DS_IS_SCRATCHPAD (sp));
  data->seen = sp;
  if (data->weak == NULL)
    {
      data->weak = sp;
      g_object_add_weak_pointer (G_OBJECT (sp), (gpointer *) &data->weak);
    }

  /* The scratchpad works in the context's order. */
  g_assert_true (ds_access_order_equal (ds_scratchpad_get_device_order (sp),
                                        ds_kernel_context_get_order (context)));

  data->ptr = ds_scratchpad_alloc (sp, DS_MEMORY_KIND_HOST, 1000, 0, error);
  g_assert_nonnull (data->ptr);
  memset (data->ptr, 0x5a, 1000);

  if (data->nested)
    {
      RunData inner = { 0, };

      /* Not tracked: inner lives on this stack frame only. */
      inner.weak = sp;
      g_assert_true (ds_kernel_context_run (context, run_func, &inner, error));
      /* The nested run shares the outer scratchpad. */
      g_assert_true (inner.seen == sp);
      g_assert_true (ds_kernel_context_get_scratchpad (context) == sp);
    }

  if (data->fail)
    {
      g_set_error_literal (error, DS_ERROR, DS_ERROR_CUDA, "kernel failed");
      return FALSE;
    }

  return TRUE;
}

static void
test_new (Fixture       *f,
          gconstpointer  user_data)
{
  g_autoptr(DsKernelContext) ctx = ds_kernel_context_new (f->order, NULL);
  g_autoptr(DsScratchpad) sp = ds_scratchpad_new (f->order);
  DsKernelContext *copy;

  g_test_summary ("A context holds a copy of its order and an optional "
                  "scratchpad (a reference); it is a refcounted boxed type");

  g_assert_true (ds_access_order_equal (ds_kernel_context_get_order (ctx), f->order));
  g_assert_true (ds_kernel_context_get_order (ctx) != f->order);
  g_assert_null (ds_kernel_context_get_scratchpad (ctx));

  ds_kernel_context_set_scratchpad (ctx, sp);
  g_assert_true (ds_kernel_context_get_scratchpad (ctx) == sp);
  g_assert_cmpuint (G_OBJECT (sp)->ref_count, ==, 2);
  ds_kernel_context_set_scratchpad (ctx, NULL);
  g_assert_null (ds_kernel_context_get_scratchpad (ctx));
  g_assert_cmpuint (G_OBJECT (sp)->ref_count, ==, 1);

  g_assert_true (G_TYPE_IS_BOXED (DS_TYPE_KERNEL_CONTEXT));
  copy = g_boxed_copy (DS_TYPE_KERNEL_CONTEXT, ctx);
  g_assert_true (copy == ctx);
  g_boxed_free (DS_TYPE_KERNEL_CONTEXT, copy);

  {
    DsKernelContext *with = ds_kernel_context_new (f->order, sp);

    g_assert_true (ds_kernel_context_get_scratchpad (with) == sp);
    ds_kernel_context_unref (with);
    g_assert_cmpuint (G_OBJECT (sp)->ref_count, ==, 1);
  }
}

static void
test_new_default_order (Fixture       *f,
                        gconstpointer  user_data)
{
  g_autoptr(DsKernelContext) ctx = ds_kernel_context_new (NULL, NULL);

  g_test_summary ("A NULL order means the legacy default stream");

  g_assert_true (ds_access_order_is_device (ds_kernel_context_get_order (ctx)));
  g_assert_null (ds_access_order_get_stream (ds_kernel_context_get_order (ctx)));
}

static void
test_run_creates_scratchpad (Fixture       *f,
                             gconstpointer  user_data)
{
  g_autoptr(DsKernelContext) ctx = ds_kernel_context_new (f->order, NULL);
  g_autoptr(GError) error = NULL;
  RunData data = { 0, };

  g_test_summary ("run() with no scratchpad in the context creates one in the "
                  "context's order for the call, and releases and drops it "
                  "afterwards (DALI's KernelManager::Run)");

  g_assert_true (ds_kernel_context_run (ctx, run_func, &data, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (data.n_calls, ==, 1);
  g_assert_nonnull (data.seen);

  /* Gone, and its memory given back. */
  g_assert_null (data.weak);
  g_assert_null (ds_kernel_context_get_scratchpad (ctx));
  g_assert_cmpuint (ds_test_resource_count_allocs (f->host), ==, 1);
  g_assert_cmpuint (ds_test_resource_count_deallocs (f->host), ==, 1);

  /* A second run gets a fresh one. */
  memset (&data, 0, sizeof data);
  g_assert_true (ds_kernel_context_run (ctx, run_func, &data, &error));
  g_assert_null (data.weak);
  g_assert_cmpuint (ds_test_resource_count_deallocs (f->host), ==, 2);
}

static void
test_run_error (Fixture       *f,
                gconstpointer  user_data)
{
  g_autoptr(DsKernelContext) ctx = ds_kernel_context_new (f->order, NULL);
  g_autoptr(GError) error = NULL;
  RunData data = { 0, };

  g_test_summary ("run() returns the function's result and error, and drops "
                  "the scratchpad it made on failure too");

  data.fail = TRUE;
  g_assert_false (ds_kernel_context_run (ctx, run_func, &data, &error));
  g_assert_error (error, DS_ERROR, DS_ERROR_CUDA);
  g_assert_cmpstr (error->message, ==, "kernel failed");
  g_assert_null (data.weak);
  g_assert_null (ds_kernel_context_get_scratchpad (ctx));
  g_assert_cmpuint (ds_test_resource_count_deallocs (f->host), ==, 1);
}

typedef struct
{
  DsBlock      *export;
  DsScratchpad *weak;
  guint8       *viewed;
  gpointer      big;
} ExportData;

static gboolean
export_func (DsKernelContext  *context,
             gpointer          user_data,
             GError          **error)
{
  ExportData *data = user_data;
  DsScratchpad *sp = ds_kernel_context_get_scratchpad (context);
  g_autoptr(DsBlock) block = NULL;

  data->weak = sp;
  g_object_add_weak_pointer (G_OBJECT (sp), (gpointer *) &data->weak);
  block = ds_scratchpad_alloc_block (sp, DS_MEMORY_KIND_HOST, 100, 0, error);
  g_assert_nonnull (block);
  data->viewed = ds_block_get_pointer (block);
  memset (data->viewed, 0x3c, 100);
  /* A view that outlives the call (a NumPy array a callback returns). */
  data->export = ds_block_export (block, error);
  g_assert_nonnull (data->export);
  /* An upstream block of its own that no view uses. */
  data->big = ds_scratchpad_alloc (sp, DS_MEMORY_KIND_HOST, 1 << 20, 0, error);
  g_assert_nonnull (data->big);
  return TRUE;
}

static void
test_run_views_keep_memory (Fixture       *f,
                            gconstpointer  user_data)
{
  g_autoptr(DsKernelContext) ctx = ds_kernel_context_new (f->order, NULL);
  g_autoptr(GError) error = NULL;
  ExportData data = { NULL, NULL, NULL, NULL };
  DsScratchpad *sp;

  g_test_summary ("run() releases the scratchpad it made as try_release () "
                  "does: what no view uses goes back when the function "
                  "returns, the block a view uses when the view is gone");

  g_assert_true (ds_kernel_context_run (ctx, export_func, &data, &error));
  g_assert_no_error (error);
  g_assert_null (ds_kernel_context_get_scratchpad (ctx));

  /* The view keeps the scratchpad and its block; the big block went back. */
  sp = ds_block_get_scratchpad (data.export);
  g_assert_true (sp == data.weak);
  g_assert_cmpuint (ds_test_resource_count_allocs (f->host), ==, 2);
  g_assert_cmpuint (ds_test_resource_count_deallocs (f->host), ==, 1);
  g_assert_false (ds_test_resource_owns (f->host, data.big, 1 << 20));
  g_assert_cmpuint (ds_scratchpad_get_reserved (sp, DS_MEMORY_KIND_HOST), ==, 0);
  g_assert_cmpuint (ds_scratchpad_get_held_by_exports (sp, DS_MEMORY_KIND_HOST), >=, 100);
  g_assert_cmpuint (ds_scratchpad_get_held_by_exports (sp, DS_MEMORY_KIND_HOST), ==,
                    ds_test_resource_get_live_bytes (f->host));
  /* Released: the export keeps its memory, so it stays valid (and can be
   * exported again) while it lives. */
  g_assert_true (ds_block_is_valid (data.export));
  g_assert_true (ds_block_get_pointer (data.export) == data.viewed);
  g_assert_true (ds_test_resource_owns (f->host, data.viewed, 100));
  for (guint i = 0; i < 100; i++)
    g_assert_cmpuint (data.viewed[i], ==, 0x3c);

  /* The view goes: its block goes back, and the scratchpad with it. */
  ds_block_unref (data.export);
  g_assert_null (data.weak);
  g_assert_cmpuint (ds_test_resource_count_deallocs (f->host), ==, 2);
  g_assert_cmpuint (ds_test_resource_get_n_live (f->host), ==, 0);
}

static void
test_run_keeps_given (Fixture       *f,
                      gconstpointer  user_data)
{
  DsScratchpad *sp = ds_scratchpad_new (f->order);
  g_autoptr(DsKernelContext) ctx = ds_kernel_context_new (f->order, sp);
  g_autoptr(GError) error = NULL;
  RunData data = { 0, };

  g_test_summary ("run() with a scratchpad in the context uses that one and "
                  "leaves it (and its memory) to its owner");

  g_assert_true (ds_kernel_context_run (ctx, run_func, &data, &error));
  g_assert_no_error (error);
  g_assert_true (data.seen == sp);
  g_assert_true (ds_kernel_context_get_scratchpad (ctx) == sp);
  g_assert_nonnull (data.weak);
  g_assert_true (ds_test_resource_owns (f->host, data.ptr, 1000));
  g_assert_cmpuint (ds_test_resource_count_deallocs (f->host), ==, 0);

  ds_kernel_context_set_scratchpad (ctx, NULL);
  g_assert_finalize_object (sp);
  g_assert_cmpuint (ds_test_resource_count_deallocs (f->host), ==, 1);
}

static void
test_run_nested (Fixture       *f,
                 gconstpointer  user_data)
{
  g_autoptr(DsKernelContext) ctx = ds_kernel_context_new (f->order, NULL);
  g_autoptr(GError) error = NULL;
  RunData data = { 0, };

  g_test_summary ("A nested run() on the same context shares the scratchpad "
                  "the outer run created");

  data.nested = TRUE;
  g_assert_true (ds_kernel_context_run (ctx, run_func, &data, &error));
  g_assert_no_error (error);
  g_assert_null (data.weak);
  g_assert_null (ds_kernel_context_get_scratchpad (ctx));
  g_assert_cmpuint (ds_test_resource_count_allocs (f->host), ==, 1);
  g_assert_cmpuint (ds_test_resource_count_deallocs (f->host), ==, 1);
}

typedef struct
{
  DsScratchpad *replacement;
  DsScratchpad *created;
} ReplaceData;

static gboolean
replace_func (DsKernelContext  *context,
              gpointer          user_data,
              GError          **error)
{
  ReplaceData *data = user_data;

  data->created = ds_kernel_context_get_scratchpad (context);
  g_object_add_weak_pointer (G_OBJECT (data->created), (gpointer *) &data->created);
  ds_kernel_context_set_scratchpad (context, data->replacement);
  return TRUE;
}

static void
run_replace (gboolean with_other)
{
  g_autoptr(DsAccessOrder) host = ds_access_order_new_host ();
  g_autoptr(DsKernelContext) ctx = ds_kernel_context_new (host, NULL);
  g_autoptr(GError) error = NULL;
  ReplaceData data = { NULL, NULL };
  DsScratchpad *other = NULL;

  if (with_other)
    {
      other = ds_scratchpad_new (host);
      data.replacement = other;
    }

  g_assert_true (ds_kernel_context_run (ctx, replace_func, &data, &error));
  g_assert_no_error (error);

  /* The one run() made is gone exactly once; the replacement stays. */
  g_assert_null (data.created);
  g_assert_true (ds_kernel_context_get_scratchpad (ctx) == other);
  if (other != NULL)
    {
      g_assert_cmpuint (G_OBJECT (other)->ref_count, ==, 2);
      ds_kernel_context_set_scratchpad (ctx, NULL);
      g_assert_finalize_object (other);
    }
}

static void
test_run_func_replaces_scratchpad (void)
{
  if (g_test_subprocess ())
    {
      run_replace (FALSE);
      run_replace (TRUE);
      return;
    }

  g_test_summary ("A function that clears or replaces the context's "
                  "scratchpad during run() causes no double unref and no "
                  "leak (run in a subprocess: a double unref would abort)");

  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_passed ();
  g_test_trap_assert_stderr_unmatched ("*CRITICAL*");
}

static void
test_preconditions (Fixture       *f,
                    gconstpointer  user_data)
{
  g_autoptr(DsKernelContext) ctx = ds_kernel_context_new (f->order, NULL);
  g_autoptr(GObject) not_a_scratchpad = g_object_new (G_TYPE_OBJECT, NULL);
  RunData data = { 0, };

  g_test_summary ("NULL contexts and functions and non-scratchpads are "
                  "programmer errors");

  if (!g_test_undefined ())
    return;

  g_test_expect_message ("Ds", G_LOG_LEVEL_CRITICAL, "*assertion*failed*");
  g_assert_false (ds_kernel_context_run (NULL, run_func, &data, NULL));
  g_test_assert_expected_messages ();

  g_test_expect_message ("Ds", G_LOG_LEVEL_CRITICAL, "*assertion*failed*");
  g_assert_false (ds_kernel_context_run (ctx, NULL, &data, NULL));
  g_test_assert_expected_messages ();

  g_test_expect_message ("Ds", G_LOG_LEVEL_CRITICAL, "*assertion*failed*");
  g_assert_null (ds_kernel_context_new (f->order, (DsScratchpad *) not_a_scratchpad));
  g_test_assert_expected_messages ();

  g_test_expect_message ("Ds", G_LOG_LEVEL_CRITICAL, "*assertion*failed*");
  ds_kernel_context_set_scratchpad (ctx, (DsScratchpad *) not_a_scratchpad);
  g_test_assert_expected_messages ();

  g_test_expect_message ("Ds", G_LOG_LEVEL_CRITICAL, "*assertion*failed*");
  g_assert_null (ds_kernel_context_get_order (NULL));
  g_test_assert_expected_messages ();

  g_assert_cmpuint (data.n_calls, ==, 0);
  g_assert_null (ds_kernel_context_get_scratchpad (ctx));
}

int
main (int    argc,
      char **argv)
{
  ds_test_init (&argc, &argv);

#define ADD(path, func) \
  g_test_add ("/Ds/KernelContext/" path, Fixture, NULL, fixture_setup, func, fixture_teardown)

  ADD ("new", test_new);
  ADD ("new-default-order", test_new_default_order);
  ADD ("run/creates-scratchpad", test_run_creates_scratchpad);
  ADD ("run/error", test_run_error);
  ADD ("run/views-keep-memory", test_run_views_keep_memory);
  ADD ("run/keeps-given", test_run_keeps_given);
  ADD ("run/nested", test_run_nested);
  g_test_add_func ("/Ds/KernelContext/run/func-replaces-scratchpad", test_run_func_replaces_scratchpad);
  ADD ("preconditions", test_preconditions);

#undef ADD

  return g_test_run ();
}
