/* test-pool-churn.c: what a ds pool holds under a framework's tensor churn
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The churn of tests/alloc/ds-alloc-gpu-check.py, as PyTorch asks libds-alloc
 * for it: per step, on two streams in turn, a tensor x of 4 to 8,000,000
 * bytes, a temporary and a result y of the same size (the temporary goes
 * first), an 8-byte sum kept to the end; x joins 48 kept tensors, one of
 * which, picked at random, goes once there are more; then y goes. The
 * sequence is replayed against a DsPoolResource over an upstream that hands
 * out addresses only, in host order (every fence complete: what a GPU that
 * keeps up with the host gives), and against PyTorch's caching allocator as
 * its documented rules describe it (blocks rounded to 512 bytes; requests up
 * to 1 MiB carved out of 2 MiB segments, up to 10 MiB out of 20 MiB ones,
 * larger ones rounded to 2 MiB; best fit, blocks split and merged within a
 * segment; a free block reused only by its own stream; nothing given back).
 * What the pool holds at its peak must stay within 1.1 times what PyTorch
 * would reserve, and within 1.7 times the peak of the bytes in use.
 */

#include "config.h"

#include <ds.h>

#include "ds-test-utils.h"

#define MiB ((gsize) 1 << 20)

/* An upstream of addresses only --------------------------------------------------- */

#define TEST_TYPE_ADDRESS_RESOURCE (test_address_resource_get_type ())
G_DECLARE_FINAL_TYPE (TestAddressResource, test_address_resource, TEST, ADDRESS_RESOURCE, GObject)

struct _TestAddressResource
{
  GObject     parent_instance;
  guintptr    next;
  GHashTable *live;       /* ptr -> size */
  gsize       held;
  gsize       peak;
  guint       n_allocs;
  guint       mismatches;
};

static void test_address_resource_iface_init (DsMemoryResourceInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (TestAddressResource, test_address_resource, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (DS_TYPE_MEMORY_RESOURCE,
                                                      test_address_resource_iface_init))

static DsMemoryKind
address_get_kind (DsMemoryResource *resource)
{
  return DS_MEMORY_KIND_DEVICE;
}

/* Never dereferenced: the pool does not touch device memory. */
static gpointer
address_allocate (DsMemoryResource  *resource,
                  gsize              size,
                  gsize              alignment,
                  GError           **error)
{
  TestAddressResource *self = TEST_ADDRESS_RESOURCE (resource);
  gsize align = MAX (alignment, 256);
  guintptr ptr = (self->next + align - 1) & ~(guintptr) (align - 1);

  self->next = ptr + size;
  g_hash_table_insert (self->live, GSIZE_TO_POINTER (ptr), GSIZE_TO_POINTER (size));
  self->held += size;
  self->peak = MAX (self->peak, self->held);
  self->n_allocs++;
  return GSIZE_TO_POINTER (ptr);
}

static void
address_deallocate (DsMemoryResource *resource,
                    gpointer          ptr,
                    gsize             size,
                    gsize             alignment)
{
  TestAddressResource *self = TEST_ADDRESS_RESOURCE (resource);
  gpointer got;

  if (!g_hash_table_lookup_extended (self->live, ptr, NULL, &got) ||
      GPOINTER_TO_SIZE (got) != size)
    {
      self->mismatches++;
      return;
    }
  g_hash_table_remove (self->live, ptr);
  self->held -= size;
}

static void
test_address_resource_iface_init (DsMemoryResourceInterface *iface)
{
  iface->get_kind = address_get_kind;
  iface->allocate = address_allocate;
  iface->deallocate = address_deallocate;
}

static void
test_address_resource_finalize (GObject *object)
{
  g_hash_table_unref (TEST_ADDRESS_RESOURCE (object)->live);
  G_OBJECT_CLASS (test_address_resource_parent_class)->finalize (object);
}

static void
test_address_resource_class_init (TestAddressResourceClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = test_address_resource_finalize;
}

static void
test_address_resource_init (TestAddressResource *self)
{
  self->next = (guintptr) 1 << 40;
  self->live = g_hash_table_new (g_direct_hash, g_direct_equal);
}

/* The churn ------------------------------------------------------------------------- */

typedef struct
{
  gboolean free;       /* else allocate */
  guint    id;         /* of the tensor */
  gsize    size;
  guint    stream;     /* 0 or 1 */
} Op;

#define N_STEPS 4000
#define N_KEPT  48
#define MAX_NUMEL 2000000

static GArray *
churn_ops (guint32 seed)
{
  GArray *ops = g_array_new (FALSE, FALSE, sizeof (Op));
  g_autoptr(GRand) rand = g_rand_new_with_seed (seed);
  Op kept[N_KEPT + 1];
  guint n_kept = 0, id = 0;

  for (guint i = 0; i < N_STEPS; i++)
    {
      gsize size = 4 * (gsize) g_rand_int_range (rand, 1, MAX_NUMEL + 1);
      guint s = i % 2;
      Op x = { FALSE, id++, size, s }, t = { FALSE, id++, size, s };
      Op y = { FALSE, id++, size, s }, sum = { FALSE, id++, 8, s };

      g_array_append_val (ops, x);
      g_array_append_val (ops, t);
      g_array_append_val (ops, y);
      t.free = TRUE;
      g_array_append_val (ops, t);
      g_array_append_val (ops, sum);
      kept[n_kept++] = x;
      if (n_kept > N_KEPT)
        {
          guint k = (guint) g_rand_int_range (rand, 0, (gint32) n_kept);
          Op gone = kept[k];

          kept[k] = kept[--n_kept];
          gone.free = TRUE;
          g_array_append_val (ops, gone);
        }
      y.free = TRUE;
      g_array_append_val (ops, y);
    }

  return ops;
}

/* The pool's side: what it holds at the peak; *@in_use_peak: the peak of
 * the bytes asked for and not given back. */
static gsize
replay_pool (GArray *ops,
             gsize  *in_use_peak,
             guint  *upstream_allocations)
{
  g_autoptr(TestAddressResource) up = g_object_new (TEST_TYPE_ADDRESS_RESOURCE, NULL);
  g_autoptr(DsMemoryResource) pool = ds_pool_resource_new (DS_MEMORY_RESOURCE (up));
  g_autoptr(GHashTable) live = g_hash_table_new (g_direct_hash, g_direct_equal);
  gsize in_use = 0, peak;

  /* Nothing given back on a clock: the same figures on any machine. */
  ds_pool_resource_set_release_threshold (DS_POOL_RESOURCE (pool), G_MAXUINT64);
  *in_use_peak = 0;

  for (guint i = 0; i < ops->len; i++)
    {
      const Op *op = &g_array_index (ops, Op, i);

      if (!op->free)
        {
          g_autoptr(GError) error = NULL;
          gpointer p = ds_memory_resource_allocate (pool, op->size, 256, &error);

          g_assert_no_error (error);
          g_hash_table_insert (live, GUINT_TO_POINTER (op->id + 1), p);
          in_use += op->size;
          *in_use_peak = MAX (*in_use_peak, in_use);
        }
      else
        {
          gpointer p = g_hash_table_lookup (live, GUINT_TO_POINTER (op->id + 1));

          g_assert_nonnull (p);
          g_hash_table_remove (live, GUINT_TO_POINTER (op->id + 1));
          ds_memory_resource_deallocate (pool, p, op->size, 256);
          in_use -= op->size;
        }
    }

  /* The sums, kept to the end. */
  for (guint i = 0; i < ops->len; i++)
    {
      const Op *op = &g_array_index (ops, Op, i);
      gpointer p = g_hash_table_lookup (live, GUINT_TO_POINTER (op->id + 1));

      if (p != NULL && !op->free)
        {
          g_hash_table_remove (live, GUINT_TO_POINTER (op->id + 1));
          ds_memory_resource_deallocate (pool, p, op->size, 256);
        }
    }
  g_assert_cmpuint (g_hash_table_size (live), ==, 0);

  peak = up->peak;
  *upstream_allocations = up->n_allocs;
  g_assert_finalize_object (g_steal_pointer (&pool));
  g_assert_cmpuint (up->held, ==, 0);
  g_assert_cmpuint (up->mismatches, ==, 0);
  return peak;
}

/* PyTorch's rules ----------------------------------------------------------------- */

typedef struct _TBlock TBlock;
struct _TBlock
{
  gsize    size;
  guint    stream;
  gboolean small;
  gboolean is_free;
  TBlock  *prev;       /* neighbours in the segment */
  TBlock  *next;
};

#define T_SMALL       ((gsize) 1 << 20)
#define T_SMALL_SEG   (2 * MiB)
#define T_LARGE_SEG   (20 * MiB)
#define T_MIN_LARGE   (10 * MiB)
#define T_ROUND_LARGE (2 * MiB)

static gsize
torch_round (gsize size)
{
  return MAX (512, (size + 511) / 512 * 512);
}

static gsize
torch_segment (gsize size)
{
  if (size <= T_SMALL)
    return T_SMALL_SEG;
  if (size < T_MIN_LARGE)
    return T_LARGE_SEG;
  return (size + T_ROUND_LARGE - 1) / T_ROUND_LARGE * T_ROUND_LARGE;
}

/* What PyTorch's caching allocator would reserve at its peak for @ops,
 * with @n_streams streams (1: every op on one). */
static gsize
replay_torch (GArray *ops,
              guint   n_streams)
{
  g_autoptr(GPtrArray) free_blocks = g_ptr_array_new ();
  g_autoptr(GPtrArray) all = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GHashTable) live = g_hash_table_new (g_direct_hash, g_direct_equal);
  gsize reserved = 0;

  for (guint i = 0; i < ops->len; i++)
    {
      const Op *op = &g_array_index (ops, Op, i);
      guint stream = op->stream % n_streams;

      if (!op->free)
        {
          gsize size = torch_round (op->size), rest;
          gboolean small = size <= T_SMALL;
          TBlock *best = NULL;
          guint at = 0;

          for (guint j = 0; j < free_blocks->len; j++)
            {
              TBlock *b = free_blocks->pdata[j];

              if (b->stream == stream && b->small == small && b->size >= size &&
                  (best == NULL || b->size < best->size))
                {
                  best = b;
                  at = j;
                }
            }
          if (best != NULL)
            g_ptr_array_remove_index_fast (free_blocks, at);
          else
            {
              best = g_new0 (TBlock, 1);
              g_ptr_array_add (all, best);
              best->size = torch_segment (size);
              best->stream = stream;
              best->small = small;
              reserved += best->size;
            }
          rest = best->size - size;
          if (small ? rest >= 512 : rest > T_SMALL)
            {
              TBlock *split = g_new0 (TBlock, 1);

              g_ptr_array_add (all, split);
              *split = *best;
              split->size = rest;
              split->is_free = TRUE;
              split->prev = best;
              if (best->next != NULL)
                best->next->prev = split;
              best->next = split;
              best->size = size;
              g_ptr_array_add (free_blocks, split);
            }
          best->is_free = FALSE;
          g_hash_table_insert (live, GUINT_TO_POINTER (op->id + 1), best);
        }
      else
        {
          TBlock *b = g_hash_table_lookup (live, GUINT_TO_POINTER (op->id + 1));
          TBlock *n = b->next, *p = b->prev;

          g_hash_table_remove (live, GUINT_TO_POINTER (op->id + 1));
          b->is_free = TRUE;
          if (n != NULL && n->is_free)
            {
              g_ptr_array_remove_fast (free_blocks, n);
              b->size += n->size;
              b->next = n->next;
              if (n->next != NULL)
                n->next->prev = b;
            }
          if (p != NULL && p->is_free)
            {
              g_ptr_array_remove_fast (free_blocks, p);
              p->size += b->size;
              p->next = b->next;
              if (b->next != NULL)
                b->next->prev = p;
              b = p;
            }
          g_ptr_array_add (free_blocks, b);
        }
    }

  return reserved;
}

/* The test -------------------------------------------------------------------------- */

static void
test_churn_memory (void)
{
  g_test_summary ("Under the GPU check's tensor churn, a pool holds at most 1.1 times "
                  "what PyTorch's caching allocator would reserve on two streams, and "
                  "at most 1.7 times the peak of the bytes in use");

  for (guint32 seed = 1; seed <= 3; seed++)
    {
      g_autoptr(GArray) ops = churn_ops (seed);
      gsize in_use_peak, held, torch1, torch2;
      guint upstream;

      held = replay_pool (ops, &in_use_peak, &upstream);
      torch2 = replay_torch (ops, 2);
      torch1 = replay_torch (ops, 1);

      g_test_message ("seed %u: held at the peak %" G_GSIZE_FORMAT " MiB (%u upstream "
                      "allocations); in use at the peak %" G_GSIZE_FORMAT " MiB (held %.2f "
                      "times that); PyTorch's rules: %" G_GSIZE_FORMAT " MiB on two streams "
                      "(held %.2f times that), %" G_GSIZE_FORMAT " MiB on one",
                      seed, held / MiB, upstream, in_use_peak / MiB,
                      (double) held / in_use_peak, torch2 / MiB, (double) held / torch2,
                      torch1 / MiB);

      g_assert_cmpuint (held * 10, <=, torch2 * 11);
      g_assert_cmpuint (held * 10, <=, in_use_peak * 17);
    }
}

int
main (int    argc,
      char **argv)
{
  ds_test_init (&argc, &argv);

  g_test_add_func ("/alloc/pool/churn-memory", test_churn_memory);

  return g_test_run ();
}
