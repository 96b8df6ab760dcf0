/* ds-test-fault.h: fault injection for the tests
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * DsTestFaultResource wraps any DsMemoryResource (a DsTestResource, a raw
 * CUDA or host resource, a pool) and forwards every call to it, except
 * that the Nth allocation (sync or async) after ds_test_fault_resource_fail_nth
 * fails with DS_ERROR_OUT_OF_MEMORY. It keeps every block it handed out
 * and checks each deallocation against them: a block given back twice,
 * with another size or alignment, or never handed out is a mismatch. It is
 * stream-ordered exactly when what it wraps is.
 *
 * ds_test_fault_run () runs a scripted workload over a scratchpad once for
 * every N until no Nth allocation is left to fail, and checks after each
 * run that every failure was a GError, that the scratchpad stayed usable
 * (the failed step succeeds when retried, what was allocated before keeps
 * its contents, the statistics are right) and that nothing leaked.
 */

#pragma once

#include "ds-test-utils.h"
#include "ds-test-resource.h"

G_BEGIN_DECLS

#define DS_TYPE_TEST_FAULT_RESOURCE (ds_test_fault_resource_get_type ())

G_DECLARE_DERIVABLE_TYPE (DsTestFaultResource, ds_test_fault_resource, DS, TEST_FAULT_RESOURCE, GObject)

struct _DsTestFaultResourceClass
{
  GObjectClass parent_class;
};

/* Takes a reference to @inner. */
DsTestFaultResource *ds_test_fault_resource_new          (DsMemoryResource    *inner);
/* The @n-th allocation from now fails (1 = the next); 0 = none. */
void                 ds_test_fault_resource_fail_nth     (DsTestFaultResource *self,
                                                          guint                n);
/* Allocations that were made to fail. */
guint                ds_test_fault_resource_get_n_injected (DsTestFaultResource *self);
guint                ds_test_fault_resource_get_n_allocs (DsTestFaultResource *self);
guint                ds_test_fault_resource_get_n_deallocs (DsTestFaultResource *self);
/* Blocks and bytes handed out and not given back. */
guint                ds_test_fault_resource_get_n_live   (DsTestFaultResource *self);
guint64              ds_test_fault_resource_get_outstanding (DsTestFaultResource *self);
guint                ds_test_fault_resource_get_n_mismatches (DsTestFaultResource *self);
const char          *ds_test_fault_resource_get_mismatch_text (DsTestFaultResource *self);

/* How the memory of one kind is written and checked: directly for host
 * memory; the GPU test copies through a stream for device memory. */
typedef struct
{
  void (*fill)  (DsMemoryKind kind, gpointer ptr, gsize size, guint seed, gpointer data);
  /* Returns whether the pattern is there. */
  gboolean (*check) (DsMemoryKind kind, gconstpointer ptr, gsize size, guint seed, gpointer data);
  gpointer data;
} DsTestFaultMemOps;

/* Where the fault sits. */
typedef enum
{
  /* scratchpad -> fault -> DsTestResource */
  DS_TEST_FAULT_OVER_TEST,
  /* scratchpad -> pool -> fault -> DsTestResource */
  DS_TEST_FAULT_POOL_OVER_TEST,
  /* scratchpad -> fault -> raw resource of the kind */
  DS_TEST_FAULT_OVER_RAW,
  /* scratchpad -> pool -> fault -> raw resource of the kind */
  DS_TEST_FAULT_POOL_OVER_RAW,
  /* scratchpad -> fault -> the default (pooled) resource of the kind */
  DS_TEST_FAULT_OVER_DEFAULT,
} DsTestFaultConfig;

const char *ds_test_fault_config_to_string (DsTestFaultConfig config);
/* "host", "pinned", "device" or "managed" (static). */
const char *ds_test_fault_kind_name (DsMemoryKind kind);

typedef enum
{
  DS_TEST_STEP_END,
  DS_TEST_STEP_ALLOC,       /* ds_scratchpad_alloc */
  DS_TEST_STEP_ARRAY,       /* ds_scratchpad_alloc_array, 8-byte elements */
  DS_TEST_STEP_BLOCK,       /* ds_scratchpad_alloc_block */
  DS_TEST_STEP_IFACE,       /* ds_scratchpad_iface_alloc */
  DS_TEST_STEP_TO_DEVICE,   /* ds_scratchpad_to_device (needs a GPU) */
  DS_TEST_STEP_RELEASE,     /* ds_scratchpad_release */
} DsTestStepOp;

typedef struct
{
  DsTestStepOp op;
  gsize        size;
  gsize        alignment;
} DsTestStep;

typedef struct
{
  const char       *name;
  const DsTestStep *steps;   /* ends with DS_TEST_STEP_END */
  gboolean          needs_device;  /* has TO_DEVICE steps */
} DsTestWorkload;

/* The scripted workloads. */
extern const DsTestWorkload ds_test_fault_workloads[];
extern const guint ds_test_fault_n_workloads;

typedef struct
{
  guint runs;       /* one per N */
  guint injected;   /* faults injected */
  guint surfaced;   /* of those, came back as a GError */
  guint retried;    /* failed steps that succeeded when tried again */
  guint checked;    /* allocations whose contents were checked */
} DsTestFaultTotals;

/* Runs @workload on the fault resource configuration @config of @kind,
 * once for each N = 1, 2, ... until a run injects no fault, with a
 * scratchpad on @device_order (NULL for the host kind); adds to @totals
 * and prints a TAP comment with the figures. */
void ds_test_fault_run (const DsTestWorkload    *workload,
                        DsMemoryKind             kind,
                        DsTestFaultConfig        config,
                        const DsAccessOrder     *device_order,
                        const DsTestFaultMemOps *ops,
                        DsTestFaultTotals       *totals);

G_END_DECLS
