/* ds-test-fault.c: fault injection for the tests
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>

#include "ds-test-fault.h"

/* The wrapper ------------------------------------------------------------- */

typedef struct
{
  gsize size;
  gsize alignment;
} LiveBlock;

typedef struct
{
  DsMemoryResource *inner;

  GMutex      lock;
  GHashTable *live;       /* ptr -> LiveBlock */
  guint       fail_nth;   /* countdown; 0 = off */
  guint       n_injected;
  guint       n_allocs;
  guint       n_deallocs;
  guint64     outstanding;
  guint       n_mismatches;
  char       *mismatch_text;
} DsTestFaultResourcePrivate;

static void ds_test_fault_resource_iface_init (DsMemoryResourceInterface *iface);

G_DEFINE_TYPE_WITH_CODE (DsTestFaultResource, ds_test_fault_resource, G_TYPE_OBJECT,
                         G_ADD_PRIVATE (DsTestFaultResource)
                         G_IMPLEMENT_INTERFACE (DS_TYPE_MEMORY_RESOURCE,
                                                ds_test_fault_resource_iface_init))

#define PRIV(self) \
  ((DsTestFaultResourcePrivate *) ds_test_fault_resource_get_instance_private (DS_TEST_FAULT_RESOURCE (self)))

static void
add_mismatch (DsTestFaultResourcePrivate *priv,
              const char                 *format,
              ...) G_GNUC_PRINTF (2, 3);

/* Called with the lock held. */
static void
add_mismatch (DsTestFaultResourcePrivate *priv,
              const char                 *format,
              ...)
{
  va_list args;

  priv->n_mismatches++;
  if (priv->mismatch_text != NULL)
    return;
  va_start (args, format);
  priv->mismatch_text = g_strdup_vprintf (format, args);
  va_end (args);
}

/* Whether this allocation is the one to fail. */
static gboolean
take_fault (DsTestFaultResourcePrivate  *priv,
            gsize                        size,
            GError                     **error)
{
  gboolean fail = FALSE;

  g_mutex_lock (&priv->lock);
  if (priv->fail_nth > 0 && --priv->fail_nth == 0)
    {
      priv->n_injected++;
      fail = TRUE;
    }
  g_mutex_unlock (&priv->lock);

  if (fail)
    g_set_error (error, DS_ERROR, DS_ERROR_OUT_OF_MEMORY,
                 "fault injected: allocation of %" G_GSIZE_FORMAT " bytes", size);
  return fail;
}

static void
note_alloc (DsTestFaultResourcePrivate *priv,
            gpointer                    ptr,
            gsize                       size,
            gsize                       alignment)
{
  LiveBlock *block = g_new (LiveBlock, 1);

  block->size = size;
  block->alignment = alignment;
  g_mutex_lock (&priv->lock);
  if (g_hash_table_contains (priv->live, ptr))
    add_mismatch (priv, "%p handed out twice by the resource below", ptr);
  g_hash_table_replace (priv->live, ptr, block);
  priv->n_allocs++;
  priv->outstanding += size;
  g_mutex_unlock (&priv->lock);
}

static void
note_dealloc (DsTestFaultResourcePrivate *priv,
              gpointer                    ptr,
              gsize                       size,
              gsize                       alignment)
{
  LiveBlock *block;

  g_mutex_lock (&priv->lock);
  priv->n_deallocs++;
  block = g_hash_table_lookup (priv->live, ptr);
  if (block == NULL)
    add_mismatch (priv, "deallocate (%p, %" G_GSIZE_FORMAT "): not a live block "
                  "(double free or foreign pointer)", ptr, size);
  else
    {
      if (block->size != size || block->alignment != alignment)
        add_mismatch (priv, "deallocate (%p): size %" G_GSIZE_FORMAT " alignment %"
                      G_GSIZE_FORMAT ", handed out with size %" G_GSIZE_FORMAT
                      " alignment %" G_GSIZE_FORMAT, ptr, size, alignment,
                      block->size, block->alignment);
      priv->outstanding -= block->size;
      g_hash_table_remove (priv->live, ptr);
    }
  g_mutex_unlock (&priv->lock);
}

static DsMemoryKind
fault_get_kind (DsMemoryResource *resource)
{
  return ds_memory_resource_get_kind (PRIV (resource)->inner);
}

static gpointer
fault_allocate (DsMemoryResource  *resource,
                gsize              size,
                gsize              alignment,
                GError           **error)
{
  DsTestFaultResourcePrivate *priv = PRIV (resource);
  gpointer ptr;

  if (take_fault (priv, size, error))
    return NULL;
  ptr = ds_memory_resource_allocate (priv->inner, size, alignment, error);
  if (ptr != NULL)
    note_alloc (priv, ptr, size, alignment);
  return ptr;
}

static void
fault_deallocate (DsMemoryResource *resource,
                  gpointer          ptr,
                  gsize             size,
                  gsize             alignment)
{
  DsTestFaultResourcePrivate *priv = PRIV (resource);

  note_dealloc (priv, ptr, size, alignment);
  ds_memory_resource_deallocate (priv->inner, ptr, size, alignment);
}

static gpointer
fault_allocate_async (DsMemoryResource     *resource,
                      gsize                 size,
                      gsize                 alignment,
                      const DsAccessOrder  *order,
                      GError              **error)
{
  DsTestFaultResourcePrivate *priv = PRIV (resource);
  gpointer ptr;

  if (take_fault (priv, size, error))
    return NULL;
  ptr = ds_memory_resource_allocate_async (priv->inner, size, alignment, order, error);
  if (ptr != NULL)
    note_alloc (priv, ptr, size, alignment);
  return ptr;
}

static void
fault_deallocate_async (DsMemoryResource    *resource,
                        gpointer             ptr,
                        gsize                size,
                        gsize                alignment,
                        const DsAccessOrder *order)
{
  DsTestFaultResourcePrivate *priv = PRIV (resource);
  g_autoptr(GError) error = NULL;

  note_dealloc (priv, ptr, size, alignment);
  if (!ds_memory_resource_deallocate_async (priv->inner, ptr, size, alignment, order, &error))
    {
      g_mutex_lock (&priv->lock);
      add_mismatch (priv, "deallocate_async (%p) failed below: %s", ptr, error->message);
      g_mutex_unlock (&priv->lock);
    }
}

static void
ds_test_fault_resource_iface_init (DsMemoryResourceInterface *iface)
{
  iface->get_kind = fault_get_kind;
  iface->allocate = fault_allocate;
  iface->deallocate = fault_deallocate;
}

/* The stream-ordered flavour: an interface vtable is per type. */
typedef struct
{
  DsTestFaultResource parent_instance;
} DsTestFaultAsyncResource;

typedef struct
{
  DsTestFaultResourceClass parent_class;
} DsTestFaultAsyncResourceClass;

GType ds_test_fault_async_resource_get_type (void);

static void
ds_test_fault_async_resource_iface_init (DsMemoryResourceInterface *iface)
{
  iface->get_kind = fault_get_kind;
  iface->allocate = fault_allocate;
  iface->deallocate = fault_deallocate;
  iface->allocate_async = fault_allocate_async;
  iface->deallocate_async = fault_deallocate_async;
}

static void
ds_test_fault_async_resource_class_init (DsTestFaultAsyncResourceClass *klass)
{
}

static void
ds_test_fault_async_resource_init (DsTestFaultAsyncResource *self)
{
}

G_DEFINE_TYPE_WITH_CODE (DsTestFaultAsyncResource, ds_test_fault_async_resource,
                         DS_TYPE_TEST_FAULT_RESOURCE,
                         G_IMPLEMENT_INTERFACE (DS_TYPE_MEMORY_RESOURCE,
                                                ds_test_fault_async_resource_iface_init))

static void
ds_test_fault_resource_finalize (GObject *object)
{
  DsTestFaultResourcePrivate *priv = PRIV (object);

  g_clear_object (&priv->inner);
  g_hash_table_unref (priv->live);
  g_free (priv->mismatch_text);
  g_mutex_clear (&priv->lock);

  G_OBJECT_CLASS (ds_test_fault_resource_parent_class)->finalize (object);
}

static void
ds_test_fault_resource_class_init (DsTestFaultResourceClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = ds_test_fault_resource_finalize;
}

static void
ds_test_fault_resource_init (DsTestFaultResource *self)
{
  DsTestFaultResourcePrivate *priv = PRIV (self);

  g_mutex_init (&priv->lock);
  priv->live = g_hash_table_new_full (NULL, NULL, NULL, g_free);
}

DsTestFaultResource *
ds_test_fault_resource_new (DsMemoryResource *inner)
{
  DsTestFaultResource *self;

  g_return_val_if_fail (DS_IS_MEMORY_RESOURCE (inner), NULL);

  self = g_object_new (ds_memory_resource_is_stream_ordered (inner)
                       ? ds_test_fault_async_resource_get_type ()
                       : DS_TYPE_TEST_FAULT_RESOURCE, NULL);
  PRIV (self)->inner = g_object_ref (inner);

  return self;
}

#define GETTER(type, name, expr) \
  type \
  ds_test_fault_resource_get_##name (DsTestFaultResource *self) \
  { \
    DsTestFaultResourcePrivate *priv = PRIV (self); \
    type value; \
    g_mutex_lock (&priv->lock); \
    value = (expr); \
    g_mutex_unlock (&priv->lock); \
    return value; \
  }

GETTER (guint, n_injected, priv->n_injected)
GETTER (guint, n_allocs, priv->n_allocs)
GETTER (guint, n_deallocs, priv->n_deallocs)
GETTER (guint, n_live, g_hash_table_size (priv->live))
GETTER (guint64, outstanding, priv->outstanding)
GETTER (guint, n_mismatches, priv->n_mismatches)
GETTER (const char *, mismatch_text, priv->mismatch_text)

void
ds_test_fault_resource_fail_nth (DsTestFaultResource *self,
                                 guint                n)
{
  DsTestFaultResourcePrivate *priv = PRIV (self);

  g_mutex_lock (&priv->lock);
  priv->fail_nth = n;
  g_mutex_unlock (&priv->lock);
}

/* The workloads ------------------------------------------------------------ */

#define KiB ((gsize) 1024)
#define MiB (KiB * KiB)
#define S(op, size, alignment) { DS_TEST_STEP_##op, (size), (alignment) }
#define END { DS_TEST_STEP_END, 0, 0 }

/* Growth: blocks double, a big request gets a block of its own, an
 * aligned request pads; then a release and a second round in the kept
 * block. */
static const DsTestStep grow_steps[] = {
  S (ALLOC, 1000, 0), S (ALLOC, 60000, 0), S (ALLOC, 70000, 0),
  S (ALLOC, 300000, 64), S (ALLOC, 16, 4096), S (ALLOC, MiB, 256),
  S (RELEASE, 0, 0),
  S (ALLOC, 100, 0), S (ALLOC, 200000, 0), S (ALLOC, 3 * MiB, 0),
  S (RELEASE, 0, 0), END,
};

/* Reuse: the same unit of work three times, through every entry point,
 * with a release after each. */
static const DsTestStep reuse_steps[] = {
  S (ALLOC, 50000, 0), S (BLOCK, 100000, 0), S (IFACE, 30000, 128), S (ARRAY, 20000, 0),
  S (RELEASE, 0, 0),
  S (ALLOC, 50000, 0), S (BLOCK, 100000, 0), S (IFACE, 30000, 128), S (ARRAY, 20000, 0),
  S (RELEASE, 0, 0),
  S (ALLOC, 50000, 0), S (BLOCK, 100000, 0), S (IFACE, 300000, 128), S (ARRAY, 200000, 0),
  S (RELEASE, 0, 0), END,
};

/* Blocks and the interface: exact fits, tiny and large views, a double
 * release, and allocations left for finalize to give back. */
static const DsTestStep blocks_steps[] = {
  S (IFACE, 64 * KiB, 0), S (BLOCK, 1, 0), S (BLOCK, 200000, 256), S (IFACE, 3 * MiB, 0),
  S (ARRAY, 500000, 8), S (RELEASE, 0, 0), S (RELEASE, 0, 0),
  S (BLOCK, 10, 0), S (ALLOC, 5 * MiB, 4096), S (IFACE, 7, 1), END,
};

/* Uploads: pinned staging and device scratch together. */
static const DsTestStep upload_steps[] = {
  S (TO_DEVICE, 1000, 0), S (ALLOC, 200000, 0), S (TO_DEVICE, 300000, 256),
  S (RELEASE, 0, 0),
  S (TO_DEVICE, 50, 0), S (TO_DEVICE, 2 * MiB, 0), END,
};

const DsTestWorkload ds_test_fault_workloads[] = {
  { "grow", grow_steps, FALSE },
  { "reuse", reuse_steps, FALSE },
  { "blocks", blocks_steps, FALSE },
  { "upload", upload_steps, TRUE },
};
const guint ds_test_fault_n_workloads = G_N_ELEMENTS (ds_test_fault_workloads);

const char *
ds_test_fault_config_to_string (DsTestFaultConfig config)
{
  switch (config)
    {
    case DS_TEST_FAULT_OVER_TEST:
      return "fault>test";
    case DS_TEST_FAULT_POOL_OVER_TEST:
      return "pool>fault>test";
    case DS_TEST_FAULT_OVER_RAW:
      return "fault>raw";
    case DS_TEST_FAULT_POOL_OVER_RAW:
      return "pool>fault>raw";
    case DS_TEST_FAULT_OVER_DEFAULT:
      return "fault>default-pool";
    default:
      g_assert_not_reached ();
    }
}

const char *
ds_test_fault_kind_name (DsMemoryKind kind)
{
  static const char *const names[] = { "host", "pinned", "device", "managed" };

  g_assert_cmpuint (kind, <, G_N_ELEMENTS (names));
  return names[kind];
}

/* The runner --------------------------------------------------------------- */

typedef struct
{
  DsMemoryKind  kind;
  gpointer      ptr;
  gsize         size;
  guint         seed;
  DsBlock      *block;
} Live;

typedef struct
{
  const DsTestFaultMemOps *ops;
  DsScratchpad            *sp;
  GArray                  *live;   /* Live */
  guint64                  expected_allocated[DS_N_MEMORY_KINDS];
  guint                    seed;
  guint8                  *upload_src;
  gsize                    upload_src_size;
  DsTestFaultTotals       *totals;
} Run;

static void
clear_live (Run *run)
{
  guint i;

  for (i = 0; i < run->live->len; i++)
    g_clear_pointer (&g_array_index (run->live, Live, i).block, ds_block_unref);
  g_array_set_size (run->live, 0);
}

static void
check_live (Run *run)
{
  guint i;

  for (i = 0; i < run->live->len; i++)
    {
      Live *l = &g_array_index (run->live, Live, i);

      if (!run->ops->check (l->kind, l->ptr, l->size, l->seed, run->ops->data))
        g_error ("allocation %u (%s, %" G_GSIZE_FORMAT " bytes at %p) lost its "
                 "contents", i, ds_test_fault_kind_name (l->kind),
                 l->size, l->ptr);
      run->totals->checked++;
    }
}

static void
check_stats (Run *run)
{
  guint k;

  for (k = 0; k < DS_N_MEMORY_KINDS; k++)
    {
      g_assert_cmpuint (ds_scratchpad_get_allocated (run->sp, k), ==, run->expected_allocated[k]);
    }
}

/* Makes step @step; FALSE with @error set when it failed. */
static gboolean
do_step (Run               *run,
         DsMemoryKind       kind,
         const DsTestStep  *step,
         GError           **error)
{
  Live l = { kind, NULL, step->size, ++run->seed, NULL };

  switch (step->op)
    {
    case DS_TEST_STEP_ALLOC:
      l.ptr = ds_scratchpad_alloc (run->sp, kind, step->size, step->alignment, error);
      break;
    case DS_TEST_STEP_ARRAY:
      l.ptr = ds_scratchpad_alloc_array (run->sp, kind, 8, step->size / 8,
                                         step->alignment, error);
      l.size = step->size / 8 * 8;
      break;
    case DS_TEST_STEP_BLOCK:
      l.block = ds_scratchpad_alloc_block (run->sp, kind, step->size, step->alignment, error);
      if (l.block != NULL)
        {
          g_assert_cmpuint (ds_block_get_size (l.block), ==, step->size);
          g_assert_cmpint (ds_block_get_kind (l.block), ==, kind);
          l.ptr = ds_block_get_pointer (l.block);
        }
      break;
    case DS_TEST_STEP_IFACE:
      l.ptr = ds_scratchpad_iface_alloc (DS_SCRATCHPAD_IFACE (run->sp), kind, step->size,
                                         step->alignment, error);
      break;
    case DS_TEST_STEP_TO_DEVICE:
      {
        guint k;

        g_assert_cmpuint (step->size, <=, run->upload_src_size);
        ds_test_fill_pattern (run->upload_src, step->size, l.seed);
        l.kind = DS_MEMORY_KIND_DEVICE;
        l.ptr = ds_scratchpad_to_device (run->sp, run->upload_src, step->size,
                                         step->alignment, error);
        if (l.ptr == NULL)
          return FALSE;
        /* The copy is in the device order; checking reads it in order. */
        g_array_append_val (run->live, l);
        /* It takes pinned staging and device scratch: read what it took. */
        for (k = 0; k < DS_N_MEMORY_KINDS; k++)
          {
            run->expected_allocated[k] = ds_scratchpad_get_allocated (run->sp, k);
          }
        return TRUE;
      }
    case DS_TEST_STEP_RELEASE:
      clear_live (run);
      ds_scratchpad_release (run->sp);
      memset (run->expected_allocated, 0, sizeof run->expected_allocated);
      check_stats (run);
      return TRUE;
    default:
      g_assert_not_reached ();
    }

  if (l.ptr == NULL)
    {
      g_assert_null (l.block);
      return FALSE;
    }
  ds_test_assert_aligned (l.ptr, step->alignment != 0 ? step->alignment : 16);
  run->ops->fill (kind, l.ptr, l.size, l.seed, run->ops->data);
  {
    /* It took its size rounded up to 16, and the padding its alignment
     * needed, where it went: in the current block or at a new one's start. */
    guint64 now = ds_scratchpad_get_allocated (run->sp, kind);
    gsize rounded = (step->size + 15) & ~(gsize) 15;
    gsize padding = step->alignment > 16 ? step->alignment - 16 : 0;

    g_assert_cmpuint (now - run->expected_allocated[kind], >=, rounded);
    g_assert_cmpuint (now - run->expected_allocated[kind], <=, rounded + padding);
    run->expected_allocated[kind] = now;
  }
  g_array_append_val (run->live, l);
  return TRUE;
}

/* One run with the @n-th allocation below the scratchpad failing; returns
 * whether a fault was injected. */
static gboolean
run_once (const DsTestWorkload    *workload,
          DsMemoryKind             kind,
          DsTestFaultConfig        config,
          const DsAccessOrder     *device_order,
          const DsTestFaultMemOps *ops,
          guint                    n,
          DsTestFaultTotals       *totals)
{
  static const char *const props[] = {
    "host-resource", "pinned-resource", "device-resource", "managed-resource",
  };
  g_autoptr(GError) error = NULL;
  DsTestResource *test = NULL;
  DsMemoryResource *below = NULL, *pool = NULL, *upstream;
  DsTestFaultResource *fault;
  const DsTestStep *step;
  Run run = { 0, };
  guint injected;

  switch (config)
    {
    case DS_TEST_FAULT_OVER_TEST:
    case DS_TEST_FAULT_POOL_OVER_TEST:
      test = ds_test_resource_new (kind, FALSE);
      below = g_object_ref (DS_MEMORY_RESOURCE (test));
      break;
    case DS_TEST_FAULT_OVER_RAW:
    case DS_TEST_FAULT_POOL_OVER_RAW:
      below = ds_test_raw_resource_new (kind);
      break;
    case DS_TEST_FAULT_OVER_DEFAULT:
      below = ds_memory_resource_get_default (kind, -1, &error);
      g_assert_no_error (error);
      g_object_ref (below);
      break;
    default:
      g_assert_not_reached ();
    }
  fault = ds_test_fault_resource_new (below);
  if (config == DS_TEST_FAULT_POOL_OVER_TEST || config == DS_TEST_FAULT_POOL_OVER_RAW)
    pool = ds_pool_resource_new (DS_MEMORY_RESOURCE (fault));
  upstream = pool != NULL ? pool : DS_MEMORY_RESOURCE (fault);

  run.ops = ops;
  run.totals = totals;
  run.live = g_array_new (FALSE, TRUE, sizeof (Live));
  run.sp = g_object_new (DS_TYPE_SCRATCHPAD, "device-order", device_order,
                         props[kind], upstream, NULL);
  if (workload->needs_device)
    {
      run.upload_src_size = 2 * MiB;
      run.upload_src = g_malloc (run.upload_src_size);
    }

  ds_test_fault_resource_fail_nth (fault, n);

  for (step = workload->steps; step->op != DS_TEST_STEP_END; step++)
    {
      guint before = ds_test_fault_resource_get_n_injected (fault);
      guint64 reserved[DS_N_MEMORY_KINDS];
      guint n_blocks[DS_N_MEMORY_KINDS], k;

      for (k = 0; k < DS_N_MEMORY_KINDS; k++)
        {
          reserved[k] = ds_scratchpad_get_reserved (run.sp, k);
          n_blocks[k] = ds_scratchpad_get_n_blocks (run.sp, k);
        }

      if (do_step (&run, kind, step, &error))
        {
          g_assert_no_error (error);
          continue;
        }

      /* A failure: a GError, from the fault we injected, and nothing
       * changed. */
      g_assert_error (error, DS_ERROR, DS_ERROR_OUT_OF_MEMORY);
      g_assert_cmpuint (ds_test_fault_resource_get_n_injected (fault), ==, before + 1);
      totals->surfaced++;
      for (k = 0; k < DS_N_MEMORY_KINDS; k++)
        {
          /* An upload whose device allocation failed keeps the pinned
           * staging it took (scratch until the next release). */
          if (step->op == DS_TEST_STEP_TO_DEVICE && k != kind)
            {
              run.expected_allocated[k] = ds_scratchpad_get_allocated (run.sp, k);
              continue;
            }
          g_assert_cmpuint (ds_scratchpad_get_reserved (run.sp, k), ==, reserved[k]);
          g_assert_cmpuint (ds_scratchpad_get_n_blocks (run.sp, k), ==, n_blocks[k]);
        }
      check_stats (&run);
      check_live (&run);
      g_clear_error (&error);

      /* The fault is spent: the same step succeeds now. */
      g_assert_true (do_step (&run, kind, step, &error));
      g_assert_no_error (error);
      totals->retried++;
    }

  /* Everything still held is intact, then goes back with the scratchpad. */
  check_stats (&run);
  check_live (&run);
  clear_live (&run);
  g_assert_finalize_object (run.sp);
  g_array_unref (run.live);
  g_free (run.upload_src);

  injected = ds_test_fault_resource_get_n_injected (fault);
  g_assert_cmpuint (injected, <=, 1);

  if (pool != NULL)
    g_assert_finalize_object (pool);
  /* A resource that is not stream-ordered gets device-ordered blocks back
   * once the stream got past the release: wait for the stream, then for
   * the deferred deallocations. */
  if (device_order != NULL && ds_access_order_is_device (device_order))
    {
      g_autoptr(DsAccessOrder) host = ds_access_order_new_host ();

      g_assert_true (ds_access_order_wait (host, device_order, &error));
      g_assert_no_error (error);
    }
  if (!ds_test_wait_until (ds_test_fault_resource_get_n_live (fault) == 0, 10000))
    g_error ("%s/%s/%s N=%u: %u block(s), %" G_GUINT64_FORMAT " bytes never "
             "came back", workload->name, ds_test_fault_kind_name (kind),
             ds_test_fault_config_to_string (config), n,
             ds_test_fault_resource_get_n_live (fault),
             ds_test_fault_resource_get_outstanding (fault));
  g_assert_cmpuint (ds_test_fault_resource_get_outstanding (fault), ==, 0);
  g_assert_cmpstr (ds_test_fault_resource_get_mismatch_text (fault), ==, NULL);
  g_assert_cmpuint (ds_test_fault_resource_get_n_mismatches (fault), ==, 0);
  g_assert_cmpuint (ds_test_fault_resource_get_n_allocs (fault), ==,
                    ds_test_fault_resource_get_n_deallocs (fault));
  g_assert_finalize_object (fault);
  g_object_unref (below);
  if (test != NULL)
    {
      ds_test_resource_assert_clean (test);
      g_assert_finalize_object (test);
    }

  return injected > 0;
}

void
ds_test_fault_run (const DsTestWorkload    *workload,
                   DsMemoryKind             kind,
                   DsTestFaultConfig        config,
                   const DsAccessOrder     *device_order,
                   const DsTestFaultMemOps *ops,
                   DsTestFaultTotals       *totals)
{
  DsTestFaultTotals mine = { 0, };
  guint n;

  /* N = 1, 2, ...: the first run that injects nothing has run past the
   * last allocation; 1000 is a guard against a workload that never ends. */
  for (n = 1; n < 1000; n++)
    {
      mine.runs++;
      if (!run_once (workload, kind, config, device_order, ops, n, &mine))
        break;
      mine.injected++;
    }
  g_assert_cmpuint (n, <, 1000);
  /* The workloads all allocate: at least one fault went in. */
  g_assert_cmpuint (mine.injected, >, 0);

  g_test_message ("fault injection: workload %s, kind %s, %s: %u runs, %u faults "
                  "injected, %u surfaced as GError (%u absorbed below), %u failed "
                  "steps retried, %u contents checks",
                  workload->name, ds_test_fault_kind_name (kind),
                  ds_test_fault_config_to_string (config), mine.runs, mine.injected,
                  mine.surfaced, mine.injected - mine.surfaced, mine.retried, mine.checked);

  totals->runs += mine.runs;
  totals->injected += mine.injected;
  totals->surfaced += mine.surfaced;
  totals->retried += mine.retried;
  totals->checked += mine.checked;
}
