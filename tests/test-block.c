/* test-block.c: DsBlock, the allocation view for bindings
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>

#include "ds-test-fixtures.h"

typedef DsTestScratchpadFixture Fixture;

static DsBlock *
block_ok (Fixture      *f,
          DsMemoryKind  kind,
          gsize         size,
          gsize         alignment)
{
  g_autoptr(GError) error = NULL;
  DsBlock *block = ds_scratchpad_alloc_block (f->sp, kind, size, alignment, &error);

  g_assert_no_error (error);
  g_assert_nonnull (block);
  return block;
}

static void
test_values (Fixture       *f,
             gconstpointer  user_data)
{
  guint kind;

  g_test_summary ("A block carries its address (as guint64 and pointer), "
                  "size, kind and scratchpad; it is scratch memory of that "
                  "kind, aligned as asked");

  for (kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
    {
      g_autoptr(DsBlock) block = block_ok (f, kind, 1000, 256);
      gpointer p = ds_block_get_pointer (block);

      g_assert_cmpuint (ds_block_get_address (block), ==, (guint64) (guintptr) p);
      g_assert_cmpuint (ds_block_get_size (block), ==, 1000);
      g_assert_cmpint (ds_block_get_kind (block), ==, kind);
      g_assert_true (ds_block_get_scratchpad (block) == f->sp);
      g_assert_true (ds_block_is_valid (block));
      ds_test_assert_aligned (p, 256);
      g_assert_true (ds_test_resource_owns (f->res[kind], p, 1000));
      /* At the start of the block: 1000 bytes take 1008. */
      g_assert_cmpuint (ds_scratchpad_get_allocated (f->sp, kind), ==, 1008);
    }
}

static void
test_boxed (Fixture       *f,
            gconstpointer  user_data)
{
  DsBlock *block = block_ok (f, DS_MEMORY_KIND_HOST, 10, 0);
  DsBlock *copy;

  g_test_summary ("DsBlock is a refcounted boxed type");

  g_assert_true (G_TYPE_IS_BOXED (DS_TYPE_BLOCK));
  copy = g_boxed_copy (DS_TYPE_BLOCK, block);
  g_assert_true (copy == block);
  g_assert_true (ds_block_ref (block) == block);
  ds_block_unref (block);
  g_boxed_free (DS_TYPE_BLOCK, copy);
  g_assert_true (ds_block_is_valid (block));
  ds_block_unref (block);
}

static void
test_keeps_scratchpad_alive (Fixture       *f,
                             gconstpointer  user_data)
{
  DsBlock *block = block_ok (f, DS_MEMORY_KIND_PINNED, 64, 0);
  DsScratchpad *sp = f->sp;
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) data = g_bytes_new_static ("0123456789", 10);
  g_autoptr(GBytes) back = NULL;

  g_test_summary ("A block keeps its scratchpad (and its memory) alive after "
                  "the caller's last reference to the scratchpad is gone");

  g_object_add_weak_pointer (G_OBJECT (sp), (gpointer *) &sp);
  g_clear_object (&f->sp);
  g_assert_nonnull (sp);
  g_assert_cmpuint (ds_test_resource_count_deallocs (f->res[DS_MEMORY_KIND_PINNED]), ==, 0);

  g_assert_true (ds_block_write (block, 0, data, &error));
  g_assert_no_error (error);
  back = ds_block_read (block, 0, 10, &error);
  g_assert_no_error (error);
  g_assert_true (g_bytes_equal (back, data));

  ds_block_unref (block);
  g_assert_null (sp);
  g_assert_cmpuint (ds_test_resource_count_deallocs (f->res[DS_MEMORY_KIND_PINNED]), ==, 1);
}

static void
test_read_write_fill (Fixture       *f,
                      gconstpointer  user_data)
{
  guint kind;

  g_test_summary ("write copies in, read copies out, fill sets every byte, "
                  "for the host-visible kinds; ranges are checked");

  for (kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
    {
      g_autoptr(DsBlock) block = NULL;
      g_autoptr(GError) error = NULL;
      g_autoptr(GBytes) in = g_bytes_new_static ("abcdef", 6);
      g_autoptr(GBytes) out = NULL;
      g_autoptr(GBytes) empty = NULL;
      const guint8 *bytes;
      gsize len, i;

      if (kind == DS_MEMORY_KIND_DEVICE)
        continue;

      block = block_ok (f, kind, 100, 0);
      g_assert_true (ds_block_fill (block, 0x11, &error));
      g_assert_no_error (error);
      g_assert_true (ds_block_write (block, 94, in, &error));
      g_assert_no_error (error);

      out = ds_block_read (block, 0, 100, &error);
      g_assert_no_error (error);
      bytes = g_bytes_get_data (out, &len);
      g_assert_cmpuint (len, ==, 100);
      for (i = 0; i < 94; i++)
        g_assert_cmpint (bytes[i], ==, 0x11);
      g_assert_cmpmem (bytes + 94, 6, "abcdef", 6);
      /* The memory itself holds it. */
      g_assert_cmpmem ((guint8 *) ds_block_get_pointer (block) + 94, 6, "abcdef", 6);

      empty = ds_block_read (block, 100, 0, &error);
      g_assert_no_error (error);
      g_assert_cmpuint (g_bytes_get_size (empty), ==, 0);

      /* Out of range. */
      g_assert_false (ds_block_write (block, 95, in, &error));
      g_assert_error (error, DS_ERROR, DS_ERROR_INVALID_ARGUMENT);
      g_clear_error (&error);
      g_assert_false (ds_block_write (block, G_MAXSIZE, in, &error));
      g_assert_error (error, DS_ERROR, DS_ERROR_INVALID_ARGUMENT);
      g_clear_error (&error);
      g_assert_null (ds_block_read (block, 50, 51, &error));
      g_assert_error (error, DS_ERROR, DS_ERROR_INVALID_ARGUMENT);
      g_clear_error (&error);
      g_assert_null (ds_block_read (block, 101, 0, &error));
      g_assert_error (error, DS_ERROR, DS_ERROR_INVALID_ARGUMENT);
      g_clear_error (&error);
      g_assert_null (ds_block_read (block, 1, G_MAXSIZE, &error));
      g_assert_error (error, DS_ERROR, DS_ERROR_INVALID_ARGUMENT);
      g_clear_error (&error);
    }
}

static void
test_host_order_no_cuda (Fixture       *f,
                         gconstpointer  user_data)
{
  g_autoptr(DsBlock) pinned = block_ok (f, DS_MEMORY_KIND_PINNED, 32, 0);
  g_autoptr(DsBlock) managed = block_ok (f, DS_MEMORY_KIND_MANAGED, 32, 0);
  g_autoptr(GBytes) in = g_bytes_new_static ("xyz", 3);
  g_autoptr(GBytes) out = NULL;
  g_autoptr(GError) error = NULL;

  g_test_summary ("On a scratchpad in host order, reading and writing "
                  "pinned and managed blocks calls no CUDA");

  ds_test_cuda_spy_reset ();
  g_assert_true (ds_block_write (pinned, 0, in, &error));
  g_assert_true (ds_block_fill (managed, 0, &error));
  out = ds_block_read (pinned, 0, 3, &error);
  g_assert_no_error (error);
  g_assert_true (g_bytes_equal (in, out));
  ds_test_assert_no_cuda_calls ();
}

static void
test_invalid_after_release (Fixture       *f,
                            gconstpointer  user_data)
{
  guint kind;

  g_test_summary ("After ds_scratchpad_release a block no longer matches its "
                  "scratchpad's generation: is_valid is FALSE and read, write "
                  "and fill fail with an error instead of touching freed "
                  "memory; blocks taken afterwards are valid");

  for (kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
    {
      g_autoptr(DsBlock) old = block_ok (f, kind, 64, 0);
      g_autoptr(DsBlock) fresh = NULL;
      g_autoptr(GError) error = NULL;
      g_autoptr(GBytes) in = g_bytes_new_static ("data", 4);
      guint64 generation = ds_block_get_generation (old);

      ds_scratchpad_release (f->sp);
      /* The memory is gone: the recording resource freed it. */
      g_assert_cmpuint (ds_test_resource_get_n_live (f->res[kind]), ==, 0);

      g_assert_false (ds_block_is_valid (old));
      g_assert_null (ds_block_read (old, 0, 4, &error));
      g_assert_error (error, DS_ERROR, DS_ERROR_INVALID_ARGUMENT);
      g_clear_error (&error);
      g_assert_false (ds_block_write (old, 0, in, &error));
      g_assert_error (error, DS_ERROR, DS_ERROR_INVALID_ARGUMENT);
      g_clear_error (&error);
      g_assert_false (ds_block_fill (old, 0, &error));
      g_assert_error (error, DS_ERROR, DS_ERROR_INVALID_ARGUMENT);
      g_clear_error (&error);
      /* Its values are still readable. */
      g_assert_cmpuint (ds_block_get_size (old), ==, 64);
      g_assert_cmpint (ds_block_get_kind (old), ==, kind);

      fresh = block_ok (f, kind, 64, 0);
      g_assert_true (ds_block_is_valid (fresh));
      g_assert_cmpuint (ds_block_get_generation (fresh), !=, generation);
      g_assert_false (ds_block_is_valid (old));
    }
}

static void
test_errors (Fixture       *f,
             gconstpointer  user_data)
{
  g_autoptr(GError) error = NULL;

  g_test_summary ("alloc_block: bad alignment, overflow and upstream failure "
                  "are GErrors (size 0: see /Ds/Block/empty)");

  g_assert_null (ds_scratchpad_alloc_block (f->sp, DS_MEMORY_KIND_HOST, 10, 24, &error));
  g_assert_error (error, DS_ERROR, DS_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);

  g_assert_null (ds_scratchpad_alloc_block (f->sp, DS_MEMORY_KIND_HOST, G_MAXSIZE, 0, &error));
  g_assert_error (error, DS_ERROR, DS_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);

  ds_test_resource_fail_next (f->res[DS_MEMORY_KIND_HOST], 1);
  g_assert_null (ds_scratchpad_alloc_block (f->sp, DS_MEMORY_KIND_HOST, 10, 0, &error));
  g_assert_error (error, DS_ERROR, DS_ERROR_OUT_OF_MEMORY);
}

static void
test_device_no_cuda (Fixture       *f,
                     gconstpointer  user_data)
{
  g_autoptr(DsBlock) block = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) in = g_bytes_new_static ("x", 1);

  DS_TEST_REQUIRE_NO_CUDA ();

  g_test_summary ("Without CUDA, copying in or out of a device block fails "
                  "with an error, no crash");

  block = block_ok (f, DS_MEMORY_KIND_DEVICE, 16, 0);
  g_assert_false (ds_block_write (block, 0, in, &error));
  g_assert_nonnull (error);
  g_assert_true (error->domain == DS_ERROR);
  g_clear_error (&error);
  g_assert_null (ds_block_read (block, 0, 1, &error));
  g_assert_nonnull (error);
  g_clear_error (&error);
  g_assert_false (ds_block_fill (block, 0, &error));
  g_assert_nonnull (error);
}

static void
test_preconditions (Fixture       *f,
                    gconstpointer  user_data)
{
  g_autoptr(DsBlock) block = block_ok (f, DS_MEMORY_KIND_HOST, 8, 0);

  g_test_summary ("NULL blocks and NULL data are programmer errors");

  if (!g_test_undefined ())
    return;

  g_test_expect_message ("Ds", G_LOG_LEVEL_CRITICAL, "*assertion*failed*");
  g_assert_null (ds_block_ref (NULL));
  g_test_assert_expected_messages ();

  g_test_expect_message ("Ds", G_LOG_LEVEL_CRITICAL, "*assertion*failed*");
  ds_block_unref (NULL);
  g_test_assert_expected_messages ();

  g_test_expect_message ("Ds", G_LOG_LEVEL_CRITICAL, "*assertion*failed*");
  g_assert_cmpuint (ds_block_get_address (NULL), ==, 0);
  g_test_assert_expected_messages ();

  g_test_expect_message ("Ds", G_LOG_LEVEL_CRITICAL, "*assertion*failed*");
  g_assert_null (ds_block_read (NULL, 0, 1, NULL));
  g_test_assert_expected_messages ();

  g_test_expect_message ("Ds", G_LOG_LEVEL_CRITICAL, "*assertion*failed*");
  g_assert_false (ds_block_write (block, 0, NULL, NULL));
  g_test_assert_expected_messages ();

  g_test_expect_message ("Ds", G_LOG_LEVEL_CRITICAL, "*assertion*failed*");
  g_assert_false (ds_block_is_valid (NULL));
  g_test_assert_expected_messages ();
}

static void
test_address_after_release (Fixture       *f,
                            gconstpointer  user_data)
{
  g_autoptr(DsBlock) block = block_ok (f, DS_MEMORY_KIND_HOST, 64, 0);

  g_test_summary ("Once the scratchpad is released a block hands out no "
                  "address: get_address is 0 and get_pointer NULL");
  g_test_bug ("10");

  g_assert_cmpuint (ds_block_get_address (block), !=, 0);
  g_assert_nonnull (ds_block_get_pointer (block));
  ds_scratchpad_release (f->sp);
  g_assert_cmpuint (ds_block_get_address (block), ==, 0);
  g_assert_null (ds_block_get_pointer (block));
  g_assert_cmpuint (ds_block_get_size (block), ==, 64);
}

static void
test_write_data (Fixture       *f,
                 gconstpointer  user_data)
{
  g_autoptr(DsBlock) block = block_ok (f, DS_MEMORY_KIND_HOST, 16, 0);
  g_autoptr(GError) error = NULL;
  static const guint8 data[] = { 1, 2, 3, 4, 5 };

  g_test_summary ("write_data copies an array in, with the checks of write; "
                  "an empty write of NULL is fine");
  g_test_bug ("10");

  g_assert_true (ds_block_fill (block, 0, &error));
  g_assert_true (ds_block_write_data (block, 11, data, sizeof data, &error));
  g_assert_no_error (error);
  g_assert_cmpmem ((guint8 *) ds_block_get_pointer (block) + 11, 5, data, 5);
  g_assert_true (ds_block_write_data (block, 16, NULL, 0, &error));
  g_assert_no_error (error);

  g_assert_false (ds_block_write_data (block, 12, data, sizeof data, &error));
  g_assert_error (error, DS_ERROR, DS_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);

  ds_scratchpad_release (f->sp);
  g_assert_false (ds_block_write_data (block, 0, data, 1, &error));
  g_assert_error (error, DS_ERROR, DS_ERROR_INVALID_ARGUMENT);
}

static void
test_export (Fixture       *f,
             gconstpointer  user_data)
{
  guint kind;

  g_test_summary ("An export is a new block for the same memory; while one "
                  "lives the scratchpad refuses to release (a critical, the "
                  "memory and the blocks stay valid); once the exports are "
                  "gone it releases as before");
  g_test_bug ("10");

  for (kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
    {
      g_autoptr(DsBlock) block = block_ok (f, kind, 100, 64);
      g_autoptr(GError) error = NULL;
      DsBlock *a, *b;

      g_assert_cmpuint (ds_scratchpad_get_n_exports (f->sp), ==, 0);
      g_assert_false (ds_block_is_export (block));

      a = ds_block_export (block, &error);
      g_assert_no_error (error);
      g_assert_true (a != block);
      g_assert_true (ds_block_is_export (a));
      g_assert_cmpuint (ds_block_get_address (a), ==, ds_block_get_address (block));
      g_assert_cmpuint (ds_block_get_size (a), ==, 100);
      g_assert_cmpint (ds_block_get_kind (a), ==, kind);
      g_assert_true (ds_block_get_scratchpad (a) == f->sp);
      g_assert_cmpuint (ds_scratchpad_get_n_exports (f->sp), ==, 1);
      b = ds_block_export (a, &error);
      g_assert_no_error (error);
      g_assert_cmpuint (ds_scratchpad_get_n_exports (f->sp), ==, 2);
      /* A ref is not another export. */
      ds_block_unref (ds_block_ref (b));
      g_assert_cmpuint (ds_scratchpad_get_n_exports (f->sp), ==, 2);

      if (g_test_undefined ())
        {
          g_test_expect_message ("Ds", G_LOG_LEVEL_CRITICAL,
                                 "*2 export(s)*alive*not given back*");
          ds_scratchpad_release (f->sp);
          g_test_assert_expected_messages ();
          /* Nothing was given back, nothing became invalid. */
          g_assert_cmpuint (ds_test_resource_get_n_live (f->res[kind]), ==, 1);
          g_assert_true (ds_block_is_valid (block));
          g_assert_true (ds_block_is_valid (a));
          g_assert_cmpuint (ds_block_get_address (b), !=, 0);
        }

      ds_block_unref (a);
      g_assert_cmpuint (ds_scratchpad_get_n_exports (f->sp), ==, 1);
      ds_block_unref (b);
      g_assert_cmpuint (ds_scratchpad_get_n_exports (f->sp), ==, 0);

      ds_scratchpad_release (f->sp);
      g_assert_cmpuint (ds_test_resource_get_n_live (f->res[kind]), ==, 0);
      g_assert_false (ds_block_is_valid (block));
    }
}

static void
test_export_keeps_memory (Fixture       *f,
                          gconstpointer  user_data)
{
  g_autoptr(GError) error = NULL;
  DsBlock *block = block_ok (f, DS_MEMORY_KIND_HOST, 32, 0);
  DsBlock *export = ds_block_export (block, &error);
  DsScratchpad *sp = f->sp;

  g_test_summary ("An export keeps the scratchpad, and so the memory, alive "
                  "after every other reference is gone; its memory goes back "
                  "when the export does");
  g_test_bug ("10");

  g_assert_no_error (error);
  ds_block_unref (block);
  g_object_add_weak_pointer (G_OBJECT (sp), (gpointer *) &sp);
  g_clear_object (&f->sp);
  g_assert_nonnull (sp);
  g_assert_cmpuint (ds_test_resource_get_n_live (f->res[DS_MEMORY_KIND_HOST]), ==, 1);
  memset (ds_block_get_pointer (export), 0x5a, 32);

  ds_block_unref (export);
  g_assert_null (sp);
  g_assert_cmpuint (ds_test_resource_get_n_live (f->res[DS_MEMORY_KIND_HOST]), ==, 0);
}

static void
test_export_invalid (Fixture       *f,
                     gconstpointer  user_data)
{
  g_autoptr(DsBlock) block = block_ok (f, DS_MEMORY_KIND_HOST, 32, 0);
  g_autoptr(GError) error = NULL;

  g_test_summary ("A block whose scratchpad was released cannot be exported: "
                  "DS_ERROR_INVALID_ARGUMENT, no export counted");
  g_test_bug ("10");

  ds_scratchpad_release (f->sp);
  g_assert_null (ds_block_export (block, &error));
  g_assert_error (error, DS_ERROR, DS_ERROR_INVALID_ARGUMENT);
  g_assert_cmpuint (ds_scratchpad_get_n_exports (f->sp), ==, 0);
}

static void
test_to_device_block (Fixture       *f,
                      gconstpointer  user_data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(DsBlock) block = NULL;
  g_autoptr(DsBlock) whole = NULL;
  g_autoptr(GPtrArray) blocks = NULL;
  static const guint8 data[] = "0123456789";
  g_autoptr(GBytes) a = g_bytes_new_static ("abc", 3);
  g_autoptr(GBytes) empty = g_bytes_new_static ("", 0);
  g_autoptr(GBytes) b = g_bytes_new_static ("defgh", 5);
  GBytes *arrays[3];

  g_test_summary ("to_device_block and to_contiguous_device_block give device "
                  "blocks of the uploaded data (one per array, inside the "
                  "whole); without a device they fail with a DS_ERROR");
  g_test_bug ("10");

  /* Size 0: NULL, no error. */
  g_assert_null (ds_scratchpad_to_device_block (f->sp, NULL, 0, 0, &error));
  g_assert_no_error (error);

  if (ds_test_cuda_available ())
    {
      /* The fixture's "device" memory is host memory: the real upload is
       * /Ds/Block/gpu/to-device-block. */
      g_test_skip ("checked with real device memory by /Ds/Block/gpu/to-device-block");
      return;
    }

  /* Without a device (or built without CUDA) the copy cannot be made. */
  block = ds_scratchpad_to_device_block (f->sp, data, 10, 0, &error);
  g_assert_null (block);
  g_assert_error (error, DS_ERROR, DS_TEST_NO_DEVICE_ERROR);
  g_clear_error (&error);

  arrays[0] = a;
  arrays[1] = empty;
  arrays[2] = b;
  whole = ds_scratchpad_to_contiguous_device_block (f->sp, arrays, 3, 64, &blocks, &error);
  g_assert_null (whole);
  g_assert_error (error, DS_ERROR, DS_TEST_NO_DEVICE_ERROR);
  g_assert_null (blocks);
}

static gboolean
keep_and_alloc (DsKernelContext  *context,
                gpointer          user_data,
                GError          **error)
{
  DsScratchpad **kept = user_data;

  /* What a binding's wrapper does: hold the scratchpad past the call. */
  *kept = g_object_ref (ds_kernel_context_get_scratchpad (context));
  return ds_scratchpad_alloc (*kept, DS_MEMORY_KIND_HOST, 100, 0, error) != NULL;
}

static gboolean
export_and_alloc (DsKernelContext  *context,
                  gpointer          user_data,
                  GError          **error)
{
  DsBlock **export = user_data;
  g_autoptr(DsBlock) block = NULL;

  block = ds_scratchpad_alloc_block (ds_kernel_context_get_scratchpad (context),
                                     DS_MEMORY_KIND_HOST, 100, 0, error);
  if (block == NULL)
    return FALSE;
  *export = ds_block_export (block, error);
  return *export != NULL;
}

static void
test_kernel_context_releases (void)
{
  g_autoptr(DsAccessOrder) host = ds_access_order_new_host ();
  g_autoptr(DsKernelContext) context = ds_kernel_context_new (host, NULL);
  g_autoptr(GError) error = NULL;
  DsScratchpad *kept = NULL;
  DsBlock *export = NULL;
  DsScratchpad *sp;

  g_test_summary ("ds_kernel_context_run releases the call's scratchpad when "
                  "it returns, even while a binding still holds it, keeping the "
                  "block a view of its memory uses");
  g_test_bug ("10");

  g_assert_true (ds_kernel_context_run (context, keep_and_alloc, &kept, &error));
  g_assert_no_error (error);
  g_assert_nonnull (kept);
  g_assert_cmpuint (ds_scratchpad_get_reserved (kept, DS_MEMORY_KIND_HOST), ==, 0);
  g_assert_cmpuint (ds_scratchpad_get_n_blocks (kept, DS_MEMORY_KIND_HOST), ==, 0);
  g_assert_finalize_object (kept);

  g_assert_true (ds_kernel_context_run (context, export_and_alloc, &export, &error));
  g_assert_no_error (error);
  sp = ds_block_get_scratchpad (export);
  g_assert_cmpuint (ds_scratchpad_get_reserved (sp, DS_MEMORY_KIND_HOST), ==, 0);
  g_assert_cmpuint (ds_scratchpad_get_held_by_exports (sp, DS_MEMORY_KIND_HOST), >, 0);
  ds_block_unref (export);
}

static guint64
pool_in_use (DsMemoryResource *pool)
{
  DsPoolStats stats;

  ds_pool_resource_get_stats (DS_POOL_RESOURCE (pool), &stats);
  return stats.bytes_in_use;
}

static void
test_try_release_follows_exports (void)
{
  g_autoptr(DsMemoryResource) host = ds_host_memory_resource_new ();
  g_autoptr(DsMemoryResource) pool = ds_pool_resource_new (host);
  g_autoptr(GError) error = NULL;
  DsScratchpad *sp = g_object_new (DS_TYPE_SCRATCHPAD, "host-resource", pool, NULL);
  DsBlock *small, *big, *export, *again;
  guint64 first;

  g_test_summary ("ds_scratchpad_try_release () gives back every upstream block "
                  "but those live exports use, which go back when their last "
                  "export dies and are counted by get_held_by_exports ()");

  small = ds_scratchpad_alloc_block (sp, DS_MEMORY_KIND_HOST, 64, 0, &error);
  g_assert_no_error (error);
  first = ds_scratchpad_get_reserved (sp, DS_MEMORY_KIND_HOST);
  big = ds_scratchpad_alloc_block (sp, DS_MEMORY_KIND_HOST, 4 * first, 0, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (ds_scratchpad_get_n_blocks (sp, DS_MEMORY_KIND_HOST), ==, 2);
  export = ds_block_export (small, &error);
  g_assert_no_error (error);
  again = ds_block_export (small, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (ds_scratchpad_get_n_exports (sp), ==, 2);

  g_assert_true (ds_scratchpad_try_release (sp, &error));
  g_assert_no_error (error);
  g_assert_false (ds_block_is_valid (small));
  g_assert_false (ds_block_is_valid (big));
  g_assert_cmpuint (ds_scratchpad_get_n_exports (sp), ==, 0);
  g_assert_cmpuint (ds_scratchpad_get_reserved (sp, DS_MEMORY_KIND_HOST), ==, 0);
  g_assert_cmpuint (ds_scratchpad_get_held_by_exports (sp, DS_MEMORY_KIND_HOST), ==, first);
  g_assert_cmpuint (pool_in_use (pool), ==, first);
  /* An export made now would be of released memory. */
  g_assert_null (ds_block_export (small, &error));
  g_assert_error (error, DS_ERROR, DS_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);

  /* The memory is still the exports'; the scratchpad works on. */
  ds_block_unref (ds_scratchpad_alloc_block (sp, DS_MEMORY_KIND_HOST, 32, 0, &error));
  g_assert_no_error (error);
  ds_block_unref (export);
  g_assert_cmpuint (pool_in_use (pool), >=, first);
  ds_block_unref (again);
  g_assert_cmpuint (ds_scratchpad_get_held_by_exports (sp, DS_MEMORY_KIND_HOST), ==, 0);
  g_assert_true (ds_scratchpad_try_release (sp, &error));
  g_assert_cmpuint (pool_in_use (pool), ==, 0);

  ds_block_unref (small);
  ds_block_unref (big);
  g_assert_finalize_object (sp);
}

static void
test_empty_block (Fixture       *f,
                  gconstpointer  user_data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) bytes = NULL;
  DsBlock *block;

  g_test_summary ("Size 0 is an empty block of address 0 that reads, writes and "
                  "fills nothing; nothing is set up");

  block = block_ok (f, DS_MEMORY_KIND_HOST, 0, 0);
  g_assert_cmpuint (ds_block_get_size (block), ==, 0);
  g_assert_cmpuint (ds_block_get_address (block), ==, 0);
  g_assert_true (ds_block_is_valid (block));
  bytes = ds_block_read (block, 0, 0, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (g_bytes_get_size (bytes), ==, 0);
  g_assert_true (ds_block_write_data (block, 0, NULL, 0, &error));
  g_assert_true (ds_block_fill (block, 7, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (ds_scratchpad_get_n_blocks (f->sp, DS_MEMORY_KIND_HOST), ==, 0);
  ds_block_unref (block);
  g_assert_null (ds_scratchpad_alloc_block (f->sp, 42, 0, 0, &error));
  g_assert_error (error, DS_ERROR, DS_ERROR_INVALID_ARGUMENT);
}

int
main (int    argc,
      char **argv)
{
  ds_test_init (&argc, &argv);

#define ADD(path, func) ds_test_add_scratchpad ("/Ds/Block/" path, 0, func)

  ADD ("values", test_values);
  ADD ("boxed", test_boxed);
  ADD ("keeps-scratchpad-alive", test_keeps_scratchpad_alive);
  ADD ("read-write-fill", test_read_write_fill);
  ADD ("host-order-no-cuda", test_host_order_no_cuda);
  ADD ("invalid-after-release", test_invalid_after_release);
  ADD ("errors", test_errors);
  ADD ("no-device/device-kind", test_device_no_cuda);
  ADD ("preconditions", test_preconditions);
  ADD ("address-after-release", test_address_after_release);
  ADD ("write-data", test_write_data);
  ADD ("export", test_export);
  ADD ("export-keeps-memory", test_export_keeps_memory);
  ADD ("export-invalid", test_export_invalid);
  ADD ("to-device-block", test_to_device_block);
  ADD ("empty", test_empty_block);
  g_test_add_func ("/Ds/Block/kernel-context-releases", test_kernel_context_releases);
  g_test_add_func ("/Ds/Block/try-release-follows-exports", test_try_release_follows_exports);

#undef ADD

  return g_test_run ();
}
