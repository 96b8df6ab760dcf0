/* test-memory-resource.c: the DsMemoryResource interface, the raw
 * resources and the default-resource registry
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>

#include "ds-test-resource.h"
#include "ds-test-utils.h"

#define FAKE_STREAM (ds_test_stream_handle (0))

/* Raw host resource ----------------------------------------------------------- */

static void
test_host_resource (void)
{
  g_autoptr(DsMemoryResource) res = ds_host_memory_resource_new ();
  g_autoptr(GError) error = NULL;
  gsize alignment;

  g_test_summary ("The raw host resource hands out writable memory aligned "
                  "as asked (0 = 16), is not stream-ordered and takes "
                  "every block back");

  g_assert_true (DS_IS_MEMORY_RESOURCE (res));
  g_assert_true (DS_IS_HOST_MEMORY_RESOURCE (res));
  g_assert_cmpint (ds_memory_resource_get_kind (res), ==, DS_MEMORY_KIND_HOST);
  g_assert_false (ds_memory_resource_is_stream_ordered (res));

  /* Host memory belongs to no device: no such property. */
  g_assert_null (g_object_class_find_property (G_OBJECT_GET_CLASS (res), "device"));

  for (alignment = 1; alignment <= 65536; alignment *= 2)
    {
      gpointer p = ds_memory_resource_allocate (res, 1000, alignment, &error);

      g_assert_no_error (error);
      g_assert_nonnull (p);
      ds_test_assert_aligned (p, alignment);
      memset (p, 0xab, 1000);
      ds_memory_resource_deallocate (res, p, 1000, alignment);
    }

  {
    gpointer ps[8];
    guint i;

    for (i = 0; i < G_N_ELEMENTS (ps); i++)
      {
        ps[i] = ds_memory_resource_allocate (res, 3, 0, &error);
        g_assert_no_error (error);
        ds_test_assert_aligned (ps[i], 16);
      }
    for (i = 0; i < G_N_ELEMENTS (ps); i++)
      ds_memory_resource_deallocate (res, ps[i], 3, 0);
  }

  /* NULL is accepted and ignored. */
  ds_memory_resource_deallocate (res, NULL, 16, 16);

  g_assert_finalize_object (g_steal_pointer (&res));
}

static void
test_host_resource_errors (void)
{
  g_autoptr(DsMemoryResource) res = ds_host_memory_resource_new ();
  g_autoptr(GError) error = NULL;
  static const gsize bad_alignments[] = { 3, 5, 6, 12, 24, 48, 100, 4097, G_MAXSIZE };
  guint i;

  g_test_summary ("The host resource: size 0 is NULL without error; a "
                  "non-power-of-two alignment or an overflowing size is "
                  "DS_ERROR_INVALID_ARGUMENT; an impossible size is "
                  "DS_ERROR_OUT_OF_MEMORY");

  g_assert_null (ds_memory_resource_allocate (res, 0, 16, &error));
  g_assert_no_error (error);

  for (i = 0; i < G_N_ELEMENTS (bad_alignments); i++)
    {
      g_assert_null (ds_memory_resource_allocate (res, 64, bad_alignments[i], &error));
      g_assert_error (error, DS_ERROR, DS_ERROR_INVALID_ARGUMENT);
      g_clear_error (&error);
    }

  g_assert_null (ds_memory_resource_allocate (res, G_MAXSIZE, 16, &error));
  g_assert_error (error, DS_ERROR, DS_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);

  g_assert_null (ds_memory_resource_allocate (res, G_MAXSIZE - 8, 16, &error));
  g_assert_error (error, DS_ERROR, DS_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);

  /* Representable but far more than any machine has. */
  g_assert_null (ds_memory_resource_allocate (res, G_MAXSIZE / 4, 16, &error));
  g_assert_error (error, DS_ERROR, DS_ERROR_OUT_OF_MEMORY);
  g_clear_error (&error);

  /* The NULL-error form must not crash either. */
  g_assert_null (ds_memory_resource_allocate (res, 64, 3, NULL));
}

static void
test_host_resource_async_fallback (void)
{
  g_autoptr(DsMemoryResource) res = ds_host_memory_resource_new ();
  g_autoptr(DsAccessOrder) host = ds_access_order_new_host ();
  g_autoptr(GError) error = NULL;
  gpointer p;

  g_test_summary ("allocate_async/deallocate_async on a resource that is not "
                  "stream-ordered fall back to allocate/deallocate in host "
                  "order");

  p = ds_memory_resource_allocate_async (res, 128, 64, host, &error);
  g_assert_no_error (error);
  g_assert_nonnull (p);
  ds_test_assert_aligned (p, 64);
  g_assert_true (ds_memory_resource_deallocate_async (res, p, 128, 64, host, &error));
  g_assert_no_error (error);
}

/* The interface wrappers, through the recording resource ---------------------- */

static void
test_wrappers_dispatch (void)
{
  g_autoptr(DsTestResource) sync = ds_test_resource_new (DS_MEMORY_KIND_DEVICE, FALSE);
  g_autoptr(DsTestResource) async = ds_test_resource_new (DS_MEMORY_KIND_PINNED, TRUE);
  g_autoptr(DsAccessOrder) host = ds_access_order_new_host ();
  g_autoptr(DsAccessOrder) stream = ds_access_order_new_stream (FAKE_STREAM, 0);
  g_autoptr(GError) error = NULL;
  DsMemoryResource *s = DS_MEMORY_RESOURCE (sync);
  DsMemoryResource *a = DS_MEMORY_RESOURCE (async);
  DsTestCall call;
  gpointer p;

  g_test_summary ("The DsMemoryResource wrappers dispatch to the vfuncs with "
                  "the same size, alignment (0 = 16) and order, and skip "
                  "size 0 and bad arguments");

  g_assert_cmpint (ds_memory_resource_get_kind (s), ==, DS_MEMORY_KIND_DEVICE);
  g_assert_cmpint (ds_memory_resource_get_kind (a), ==, DS_MEMORY_KIND_PINNED);
  g_assert_false (ds_memory_resource_is_stream_ordered (s));
  g_assert_true (ds_memory_resource_is_stream_ordered (a));

  p = ds_memory_resource_allocate (s, 100, 0, &error);
  g_assert_no_error (error);
  call = ds_test_resource_get_call (sync, 0);
  g_assert_cmpint (call.op, ==, DS_TEST_OP_ALLOCATE);
  g_assert_cmpuint (call.size, ==, 100);
  g_assert_cmpuint (call.alignment, ==, 16);
  ds_memory_resource_deallocate (s, p, 100, 0);
  call = ds_test_resource_get_call (sync, 1);
  g_assert_cmpint (call.op, ==, DS_TEST_OP_DEALLOCATE);
  g_assert_true (call.ptr == p);
  g_assert_cmpuint (call.alignment, ==, 16);

  p = ds_memory_resource_allocate_async (a, 300, 512, stream, &error);
  g_assert_no_error (error);
  call = ds_test_resource_get_call (async, 0);
  g_assert_cmpint (call.op, ==, DS_TEST_OP_ALLOCATE_ASYNC);
  g_assert_cmpuint (call.size, ==, 300);
  g_assert_cmpuint (call.alignment, ==, 512);
  g_assert_true (call.has_order);
  g_assert_true (ds_access_order_equal (&call.order, stream));
  g_assert_true (ds_memory_resource_deallocate_async (a, p, 300, 512, stream, &error));
  g_assert_no_error (error);
  call = ds_test_resource_get_call (async, 1);
  g_assert_cmpint (call.op, ==, DS_TEST_OP_DEALLOCATE_ASYNC);
  g_assert_true (ds_access_order_equal (&call.order, stream));

  /* Size 0 and bad arguments never reach the vfunc. */
  g_assert_null (ds_memory_resource_allocate (s, 0, 16, &error));
  g_assert_no_error (error);
  g_assert_null (ds_memory_resource_allocate (s, 10, 24, &error));
  g_assert_error (error, DS_ERROR, DS_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  g_assert_null (ds_memory_resource_allocate_async (a, 0, 16, stream, &error));
  g_assert_no_error (error);
  g_assert_null (ds_memory_resource_allocate_async (a, G_MAXSIZE, 16, stream, &error));
  g_assert_error (error, DS_ERROR, DS_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  g_assert_cmpuint (ds_test_resource_get_n_calls (sync), ==, 2);
  g_assert_cmpuint (ds_test_resource_get_n_calls (async), ==, 2);

  /* A failing upstream passes its error through. */
  ds_test_resource_fail_next (sync, 1);
  g_assert_null (ds_memory_resource_allocate (s, 10, 16, &error));
  g_assert_error (error, DS_ERROR, DS_ERROR_OUT_OF_MEMORY);
  g_clear_error (&error);

  ds_test_resource_assert_clean (sync);
  ds_test_resource_assert_clean (async);
  g_assert_finalize_object (g_steal_pointer (&sync));
  g_assert_finalize_object (g_steal_pointer (&async));
}

static void
test_sync_resource_device_order_no_device (void)
{
  g_autoptr(DsTestResource) rec = ds_test_resource_new (DS_MEMORY_KIND_DEVICE, FALSE);
  g_autoptr(DsAccessOrder) stream = ds_access_order_new_stream (FAKE_STREAM, 0);
  g_autoptr(GError) error = NULL;
  DsMemoryResource *r = DS_MEMORY_RESOURCE (rec);
  gpointer p;

  DS_TEST_REQUIRE_NO_CUDA ();

  g_test_summary ("deallocate_async of a block of a resource that is not "
                  "stream-ordered, in a device order that cannot be waited "
                  "for, fails and does not give the block back early");

  p = ds_memory_resource_allocate (r, 64, 16, &error);
  g_assert_no_error (error);

  g_assert_false (ds_memory_resource_deallocate_async (r, p, 64, 16, stream, &error));
  g_assert_error (error, DS_ERROR, DS_TEST_NO_DEVICE_ERROR);
  g_assert_cmpuint (ds_test_resource_count_deallocs (rec), ==, 0);
  g_assert_cmpuint (ds_test_resource_get_n_live (rec), ==, 1);
}

static void
test_wrapper_preconditions (void)
{
  g_autoptr(DsTestResource) rec = ds_test_resource_new (DS_MEMORY_KIND_HOST, TRUE);
  g_autoptr(GObject) not_a_resource = g_object_new (G_TYPE_OBJECT, NULL);
  DsMemoryResource *r = DS_MEMORY_RESOURCE (rec);

  g_test_summary ("NULL or wrong resources and NULL orders are programmer "
                  "errors: a critical, no crash");

  if (!g_test_undefined ())
    return;

  g_test_expect_message ("Ds", G_LOG_LEVEL_CRITICAL, "*assertion*failed*");
  g_assert_null (ds_memory_resource_allocate (NULL, 10, 16, NULL));
  g_test_assert_expected_messages ();

  g_test_expect_message ("Ds", G_LOG_LEVEL_CRITICAL, "*assertion*failed*");
  g_assert_null (ds_memory_resource_allocate ((DsMemoryResource *) not_a_resource, 10, 16, NULL));
  g_test_assert_expected_messages ();

  g_test_expect_message ("Ds", G_LOG_LEVEL_CRITICAL, "*assertion*failed*");
  ds_memory_resource_deallocate (NULL, (gpointer) 0x10, 10, 16);
  g_test_assert_expected_messages ();

  g_test_expect_message ("Ds", G_LOG_LEVEL_CRITICAL, "*assertion*failed*");
  g_assert_null (ds_memory_resource_allocate_async (r, 10, 16, NULL, NULL));
  g_test_assert_expected_messages ();

  g_test_expect_message ("Ds", G_LOG_LEVEL_CRITICAL, "*assertion*failed*");
  g_assert_false (ds_memory_resource_deallocate_async (r, (gpointer) 0x10, 10, 16, NULL, NULL));
  g_test_assert_expected_messages ();

  g_test_expect_message ("Ds", G_LOG_LEVEL_CRITICAL, "*assertion*failed*");
  g_assert_false (ds_memory_resource_is_stream_ordered (NULL));
  g_test_assert_expected_messages ();

  g_assert_cmpuint (ds_test_resource_get_n_calls (rec), ==, 0);
}

/* Raw CUDA resources without a device ----------------------------------------- */

static void
test_raw_cuda_no_device (void)
{
  DsMemoryKind kind;

  DS_TEST_REQUIRE_NO_CUDA ();

  g_test_summary ("Without a device, the raw pinned/device/managed resources "
                  "can be created and fail to allocate with "
                  "DS_ERROR_NO_DEVICE (or NOT_SUPPORTED without CUDA)");

  for (kind = DS_MEMORY_KIND_PINNED; kind <= DS_MEMORY_KIND_MANAGED; kind++)
    {
      g_autoptr(DsMemoryResource) res = ds_test_raw_resource_new (kind);
      g_autoptr(GError) error = NULL;

      g_assert_cmpint (ds_memory_resource_get_kind (res), ==, kind);
      g_assert_false (ds_memory_resource_is_stream_ordered (res));
      g_assert_null (ds_memory_resource_allocate (res, 1024, 16, &error));
      g_assert_error (error, DS_ERROR, DS_TEST_NO_DEVICE_ERROR);
      g_assert_nonnull (strstr (error->message, "CUDA"));
      g_assert_finalize_object (g_steal_pointer (&res));
    }
}

/* The registry ------------------------------------------------------------------- */

static void
test_default_host (void)
{
  g_autoptr(GError) error = NULL;
  DsMemoryResource *a, *b, *c;
  gpointer p;

  g_test_summary ("The default host resource exists without CUDA, is the "
                  "same object every time (device ignored) and works");

  a = ds_memory_resource_get_default (DS_MEMORY_KIND_HOST, -1, &error);
  g_assert_no_error (error);
  g_assert_true (DS_IS_MEMORY_RESOURCE (a));
  g_assert_cmpint (ds_memory_resource_get_kind (a), ==, DS_MEMORY_KIND_HOST);
  b = ds_memory_resource_get_default (DS_MEMORY_KIND_HOST, -1, &error);
  c = ds_memory_resource_get_default (DS_MEMORY_KIND_HOST, 0, &error);
  g_assert_no_error (error);
  g_assert_true (a == b);
  g_assert_true (a == c);

  p = ds_memory_resource_allocate (a, 4096, 64, &error);
  g_assert_no_error (error);
  ds_test_assert_aligned (p, 64);
  memset (p, 1, 4096);
  ds_memory_resource_deallocate (a, p, 4096, 64);
}

static void
test_default_host_no_cuda_calls (void)
{
  if (g_test_subprocess ())
    {
      g_autoptr(GError) error = NULL;
      DsMemoryResource *res;
      gpointer p;

#if HAVE_CUDA
      g_assert_true (ds_test_cuda_spy_works ());
#endif
      ds_test_cuda_spy_reset ();

      /* First use in this process: creates the default. */
      res = ds_memory_resource_get_default (DS_MEMORY_KIND_HOST, -1, &error);
      g_assert_no_error (error);
      p = ds_memory_resource_allocate (res, 100, 16, &error);
      g_assert_no_error (error);
      ds_memory_resource_deallocate (res, p, 100, 16);
      g_assert_true (ds_memory_resource_get_default (DS_MEMORY_KIND_HOST, 0, NULL) == res);

      ds_test_assert_no_cuda_calls ();
      return;
    }

  g_test_summary ("Creating and using the default host resource never calls "
                  "CUDA (fresh process)");

  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_passed ();
}

#define N_THREADS 8
#define N_CALLS 2000

typedef struct
{
  gint              *start;
  DsMemoryKind       kind;
  DsMemoryResource  *seen[N_CALLS];
  guint              n_errors;
} HammerData;

static gpointer
hammer_thread (gpointer user_data)
{
  HammerData *data = user_data;
  guint i;

  while (!g_atomic_int_get (data->start))
    ;

  for (i = 0; i < N_CALLS; i++)
    {
      GError *error = NULL;

      data->seen[i] = ds_memory_resource_get_default (data->kind, -1, &error);
      if (error != NULL)
        {
          data->n_errors++;
          g_error_free (error);
        }
    }

  return NULL;
}

static void
hammer (DsMemoryKind kind)
{
  HammerData *data = g_new0 (HammerData, N_THREADS);
  GThread *threads[N_THREADS];
  gint start = 0;
  guint t, i;

  for (t = 0; t < N_THREADS; t++)
    {
      data[t].start = &start;
      data[t].kind = kind;
      threads[t] = g_thread_new ("hammer", hammer_thread, &data[t]);
    }
  g_atomic_int_set (&start, 1);
  for (t = 0; t < N_THREADS; t++)
    g_thread_join (threads[t]);

  for (t = 0; t < N_THREADS; t++)
    {
      g_assert_cmpuint (data[t].n_errors, ==, 0);
      for (i = 0; i < N_CALLS; i++)
        g_assert_true (data[t].seen[i] == data[0].seen[0]);
    }
  g_assert_nonnull (data[0].seen[0]);
  g_assert_cmpint (ds_memory_resource_get_kind (data[0].seen[0]), ==, kind);

  g_free (data);
}

static void
test_default_threads (void)
{
  if (g_test_subprocess ())
    {
      /* A fresh process: the threads race to create the default. */
      hammer (DS_MEMORY_KIND_HOST);
      hammer (DS_MEMORY_KIND_HOST);
      if (ds_test_cuda_available ())
        {
          hammer (DS_MEMORY_KIND_PINNED);
          hammer (DS_MEMORY_KIND_DEVICE);
          hammer (DS_MEMORY_KIND_MANAGED);
        }
      return;
    }

  g_test_summary ("Threads calling get_default at once, the first time and "
                  "later, all get the same object and no error");

  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_passed ();
}

static void
test_default_set (void)
{
  g_autoptr(DsTestResource) rec = ds_test_resource_new (DS_MEMORY_KIND_HOST, FALSE);
  g_autoptr(GError) error = NULL;
  DsMemoryResource *builtin, *now;

  g_test_summary ("set_default replaces the default of a kind (every thread "
                  "sees it) and NULL goes back to a built-in default");

  builtin = ds_memory_resource_get_default (DS_MEMORY_KIND_HOST, -1, &error);
  g_assert_no_error (error);

  ds_memory_resource_set_default (DS_MEMORY_KIND_HOST, -1, DS_MEMORY_RESOURCE (rec));
  now = ds_memory_resource_get_default (DS_MEMORY_KIND_HOST, -1, &error);
  g_assert_no_error (error);
  g_assert_true (now == DS_MEMORY_RESOURCE (rec));
  g_assert_true (ds_memory_resource_get_default (DS_MEMORY_KIND_HOST, 0, NULL) == now);

  /* The registry holds its own reference. */
  g_clear_object (&rec);
  g_assert_true (G_IS_OBJECT (now));
  g_assert_true (ds_memory_resource_get_default (DS_MEMORY_KIND_HOST, -1, NULL) == now);

  ds_memory_resource_set_default (DS_MEMORY_KIND_HOST, -1, NULL);
  now = ds_memory_resource_get_default (DS_MEMORY_KIND_HOST, -1, &error);
  g_assert_no_error (error);
  g_assert_nonnull (now);
  g_assert_false (DS_IS_TEST_RESOURCE (now));
  g_assert_cmpint (ds_memory_resource_get_kind (now), ==, DS_MEMORY_KIND_HOST);
  (void) builtin;
}

static void
test_default_bad_input (void)
{
  g_autoptr(GError) error = NULL;

  g_test_summary ("get_default with an unknown kind or device < -1 is "
                  "DS_ERROR_INVALID_ARGUMENT; set_default with a NULL-incompatible "
                  "kind or wrong resource kind is a critical");

  g_assert_null (ds_memory_resource_get_default ((DsMemoryKind) 7, -1, &error));
  g_assert_error (error, DS_ERROR, DS_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);

  g_assert_null (ds_memory_resource_get_default ((DsMemoryKind) -1, -1, &error));
  g_assert_error (error, DS_ERROR, DS_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);

  g_assert_null (ds_memory_resource_get_default (DS_MEMORY_KIND_HOST, -2, &error));
  g_assert_error (error, DS_ERROR, DS_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);

  if (g_test_undefined ())
    {
      g_autoptr(DsTestResource) pinned = ds_test_resource_new (DS_MEMORY_KIND_PINNED, FALSE);

      g_test_expect_message ("Ds", G_LOG_LEVEL_CRITICAL, "*assertion*failed*");
      ds_memory_resource_set_default (DS_MEMORY_KIND_HOST, -1, DS_MEMORY_RESOURCE (pinned));
      g_test_assert_expected_messages ();

      g_test_expect_message ("Ds", G_LOG_LEVEL_CRITICAL, "*assertion*failed*");
      ds_memory_resource_set_default ((DsMemoryKind) 9, -1, NULL);
      g_test_assert_expected_messages ();

      g_assert_false (ds_memory_resource_get_default (DS_MEMORY_KIND_HOST, -1, NULL) ==
                      DS_MEMORY_RESOURCE (pinned));
    }
}

static void
test_default_no_device (void)
{
  DsMemoryKind kind;

  DS_TEST_REQUIRE_NO_CUDA ();

  g_test_summary ("Without a device, the pinned/device/managed defaults fail "
                  "with DS_ERROR_NO_DEVICE and a message that says why");

  for (kind = DS_MEMORY_KIND_PINNED; kind <= DS_MEMORY_KIND_MANAGED; kind++)
    {
      g_autoptr(GError) error = NULL;

      g_assert_null (ds_memory_resource_get_default (kind, -1, &error));
      g_assert_error (error, DS_ERROR, DS_TEST_NO_DEVICE_ERROR);
      g_test_message ("kind %d: %s", kind, error->message);
      g_assert_nonnull (strstr (error->message, "CUDA"));
#if HAVE_CUDA
      /* The CUDA error that says why, e.g. cudaErrorInsufficientDriver. */
      g_assert_nonnull (strstr (error->message, "cudaError"));
#endif
      g_clear_error (&error);

      g_assert_null (ds_memory_resource_get_default (kind, 0, &error));
      g_assert_error (error, DS_ERROR, DS_TEST_NO_DEVICE_ERROR);
    }
}

static void
test_default_trim (void)
{
  g_autoptr(GError) error = NULL;
  DsMemoryResource *pool = ds_memory_resource_get_default (DS_MEMORY_KIND_HOST, -1, &error);
  DsScratchpad *sp = ds_scratchpad_new (NULL);
  DsPoolStats stats;

  g_test_summary ("ds_memory_resource_trim_defaults () gives back everything the "
                  "default pools cache, and they work again afterwards");

  g_assert_no_error (error);
  g_assert_nonnull (ds_scratchpad_alloc (sp, DS_MEMORY_KIND_HOST, 100000, 0, &error));
  g_assert_no_error (error);
  g_assert_finalize_object (sp);

  ds_pool_resource_get_stats (DS_POOL_RESOURCE (pool), &stats);
  g_assert_cmpuint (stats.bytes_cached, >, 0);
  g_assert_cmpuint (ds_memory_resource_trim_defaults (), >=, stats.bytes_cached);
  ds_pool_resource_get_stats (DS_POOL_RESOURCE (pool), &stats);
  g_assert_cmpuint (stats.bytes_cached, ==, 0);
  g_assert_cmpuint (stats.bytes_held, ==, 0);

  sp = ds_scratchpad_new (NULL);
  g_assert_nonnull (ds_scratchpad_alloc (sp, DS_MEMORY_KIND_HOST, 100, 0, &error));
  g_assert_no_error (error);
  g_assert_finalize_object (sp);
}

int
main (int    argc,
      char **argv)
{
  ds_test_init (&argc, &argv);

  g_test_add_func ("/Ds/MemoryResource/host/basic", test_host_resource);
  g_test_add_func ("/Ds/MemoryResource/host/errors", test_host_resource_errors);
  g_test_add_func ("/Ds/MemoryResource/host/async-fallback", test_host_resource_async_fallback);
  g_test_add_func ("/Ds/MemoryResource/wrappers/dispatch", test_wrappers_dispatch);
  g_test_add_func ("/Ds/MemoryResource/wrappers/sync-in-device-order-no-device",
                   test_sync_resource_device_order_no_device);
  g_test_add_func ("/Ds/MemoryResource/wrappers/preconditions", test_wrapper_preconditions);
  g_test_add_func ("/Ds/MemoryResource/raw/no-device", test_raw_cuda_no_device);
  g_test_add_func ("/Ds/MemoryResource/default/host", test_default_host);
  g_test_add_func ("/Ds/MemoryResource/default/host-no-cuda-calls", test_default_host_no_cuda_calls);
  g_test_add_func ("/Ds/MemoryResource/default/threads", test_default_threads);
  g_test_add_func ("/Ds/MemoryResource/default/set", test_default_set);
  g_test_add_func ("/Ds/MemoryResource/default/bad-input", test_default_bad_input);
  g_test_add_func ("/Ds/MemoryResource/default/no-device", test_default_no_device);
  g_test_add_func ("/Ds/MemoryResource/default/trim", test_default_trim);

  return g_test_run ();
}
