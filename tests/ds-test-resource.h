/* ds-test-resource.h: a recording upstream resource for the tests
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * DsTestResource is a DsMemoryResource of any kind that hands out plain
 * host memory and records every call made to it (operation, pointer, size,
 * alignment, a copy of the order, a global sequence number and a time).
 * It checks each deallocation against what it handed out: a block given
 * back twice, with another size or alignment, or one it never handed out is
 * counted as a mismatch, and the tests assert there is none.
 *
 * Because the memory is host memory whatever the configured kind, the
 * arena and release logic of the pinned, device and managed kinds can be
 * tested on a machine without a GPU. Never hand its "device" memory to CUDA.
 */

#pragma once

#include <ds.h>

G_BEGIN_DECLS

typedef enum
{
  DS_TEST_OP_ALLOCATE,
  DS_TEST_OP_DEALLOCATE,
  DS_TEST_OP_ALLOCATE_ASYNC,
  DS_TEST_OP_DEALLOCATE_ASYNC,
} DsTestOp;

/* One recorded call. @seq is global across all test resources of the
 * process, so that the order of calls made to different resources can be
 * compared. @order is a copy of the order given (zero-filled, i.e. the
 * unset order, for the synchronous calls). @probe is the value the probe
 * pointed to at the time of the call (see ds_test_resource_set_probe()).
 * @failed is TRUE for an allocation that was made to fail. */
typedef struct
{
  DsTestOp      op;
  gpointer      ptr;
  gsize         size;
  gsize         alignment;
  gboolean      has_order;
  DsAccessOrder order;
  guint64       seq;
  gint64        time;
  gint          probe;
  gboolean      failed;
  GThread      *thread;
} DsTestCall;

#define DS_TYPE_TEST_RESOURCE (ds_test_resource_get_type ())

G_DECLARE_FINAL_TYPE (DsTestResource, ds_test_resource, DS, TEST_RESOURCE, GObject)

DsTestResource   *ds_test_resource_new            (DsMemoryKind      kind,
                                                   gboolean          stream_ordered);
DsMemoryKind      ds_test_resource_get_kind       (DsTestResource   *self);

/* The next @n allocations (sync or async) fail with DS_ERROR_OUT_OF_MEMORY. */
void              ds_test_resource_fail_next      (DsTestResource   *self,
                                                   guint             n);
/* Allocations larger than @max_size fail with DS_ERROR_OUT_OF_MEMORY
 * (default 1 GiB), so that tests can ask for absurd sizes safely. */
void              ds_test_resource_set_max_size   (DsTestResource   *self,
                                                   gsize             max_size);
/* Every allocation calls @hook (@data) first, outside the resource's
 * lock (NULL: none); set it while no other thread uses the resource. */
void              ds_test_resource_set_hook       (DsTestResource   *self,
                                                   void            (*hook) (gpointer data),
                                                   gpointer          data);
/* Every call made from now on records the value of *@probe (read
 * atomically); NULL stops it. */
void              ds_test_resource_set_probe      (DsTestResource   *self,
                                                   gint             *probe);

guint             ds_test_resource_get_n_calls    (DsTestResource   *self);
/* A copy of call @i (valid until ds_test_resource_clear_calls()). */
DsTestCall        ds_test_resource_get_call       (DsTestResource   *self,
                                                   guint             i);
guint             ds_test_resource_count          (DsTestResource   *self,
                                                   DsTestOp          op);
/* Number of successful allocations (sync + async) and of deallocations
 * (sync + async). */
guint             ds_test_resource_count_allocs   (DsTestResource   *self);
guint             ds_test_resource_count_deallocs (DsTestResource   *self);
void              ds_test_resource_clear_calls    (DsTestResource   *self);

/* Blocks handed out and not given back. */
guint             ds_test_resource_get_n_live     (DsTestResource   *self);
guint64           ds_test_resource_get_live_bytes (DsTestResource   *self);
/* Whether [ptr, ptr + size) lies inside one live block. */
gboolean          ds_test_resource_owns           (DsTestResource   *self,
                                                   gconstpointer     ptr,
                                                   gsize             size);
/* Deallocations that did not match a live block exactly (double free,
 * wrong size or alignment, unknown pointer). */
guint             ds_test_resource_get_n_mismatches (DsTestResource *self);
/* The first mismatch, as text, or NULL. */
const char       *ds_test_resource_get_mismatch_text (DsTestResource *self);

/* Asserts that there was no mismatch and that nothing is live. */
#define ds_test_resource_assert_clean(res) \
  G_STMT_START { \
    g_assert_cmpstr (ds_test_resource_get_mismatch_text (res), ==, NULL); \
    g_assert_cmpuint (ds_test_resource_get_n_mismatches (res), ==, 0); \
    g_assert_cmpuint (ds_test_resource_get_n_live (res), ==, 0); \
  } G_STMT_END

const char       *ds_test_op_to_string            (DsTestOp          op);

G_END_DECLS
