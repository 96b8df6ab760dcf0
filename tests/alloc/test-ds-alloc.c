/* test-ds-alloc.c: libds-alloc's entry points, registry and resource choice
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The cases run anywhere: a fake stream-ordered "device" resource hands out
 * host memory (never given to CUDA) and checks every block given back.
 * Only the legacy default stream (NULL) is named, which needs no CUDA call.
 * The GPU paths (PyTorch, CuPy, readers on other streams) are checked by
 * tests/alloc/ds-alloc-gpu-check.py on a GPU machine.
 */

#include <ds-alloc.h>

/* --- a fake resource ------------------------------------------------------ */

#define FAKE_TYPE_RESOURCE (fake_resource_get_type ())
G_DECLARE_FINAL_TYPE (FakeResource, fake_resource, FAKE, RESOURCE, GObject)

struct _FakeResource
{
  GObject       parent_instance;
  DsMemoryKind  kind;
  GMutex        lock;
  GHashTable   *live;        /* ptr -> size */
  guint         n_allocs;
  guint         n_deallocs;
  guint         n_mismatches;
};

static DsMemoryKind
fake_get_kind (DsMemoryResource *resource)
{
  return FAKE_RESOURCE (resource)->kind;
}

static gpointer
fake_allocate_async (DsMemoryResource     *resource,
                     gsize                 size,
                     gsize                 alignment,
                     const DsAccessOrder  *order,
                     GError              **error)
{
  FakeResource *self = FAKE_RESOURCE (resource);
  gpointer ptr = g_aligned_alloc (1, size, alignment);

  g_mutex_lock (&self->lock);
  g_hash_table_insert (self->live, ptr, GSIZE_TO_POINTER (size));
  self->n_allocs++;
  if (alignment != DS_ALLOC_ALIGNMENT)
    self->n_mismatches++;
  g_mutex_unlock (&self->lock);
  return ptr;
}

static void
fake_deallocate_async (DsMemoryResource    *resource,
                       gpointer             ptr,
                       gsize                size,
                       gsize                alignment,
                       const DsAccessOrder *order)
{
  FakeResource *self = FAKE_RESOURCE (resource);
  gpointer live_size;

  g_mutex_lock (&self->lock);
  if (!g_hash_table_steal_extended (self->live, ptr, NULL, &live_size) ||
      GPOINTER_TO_SIZE (live_size) != size || alignment != DS_ALLOC_ALIGNMENT)
    self->n_mismatches++;
  else
    g_aligned_free (ptr);
  self->n_deallocs++;
  g_mutex_unlock (&self->lock);
}

static gpointer
fake_allocate (DsMemoryResource  *resource,
               gsize              size,
               gsize              alignment,
               GError           **error)
{
  return fake_allocate_async (resource, size, alignment, NULL, error);
}

static void
fake_deallocate (DsMemoryResource *resource,
                 gpointer          ptr,
                 gsize             size,
                 gsize             alignment)
{
  fake_deallocate_async (resource, ptr, size, alignment, NULL);
}

static void
fake_iface_init (DsMemoryResourceInterface *iface)
{
  iface->get_kind = fake_get_kind;
  iface->allocate = fake_allocate;
  iface->deallocate = fake_deallocate;
  iface->allocate_async = fake_allocate_async;
  iface->deallocate_async = fake_deallocate_async;
}

G_DEFINE_FINAL_TYPE_WITH_CODE (FakeResource, fake_resource, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (DS_TYPE_MEMORY_RESOURCE, fake_iface_init))

static void
fake_resource_finalize (GObject *object)
{
  FakeResource *self = FAKE_RESOURCE (object);

  g_hash_table_unref (self->live);
  g_mutex_clear (&self->lock);
  G_OBJECT_CLASS (fake_resource_parent_class)->finalize (object);
}

static void
fake_resource_class_init (FakeResourceClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = fake_resource_finalize;
}

static void
fake_resource_init (FakeResource *self)
{
  g_mutex_init (&self->lock);
  self->live = g_hash_table_new (g_direct_hash, g_direct_equal);
  self->kind = DS_MEMORY_KIND_DEVICE;
}

static DsMemoryResource *
fake_new (DsMemoryKind kind)
{
  FakeResource *self = g_object_new (FAKE_TYPE_RESOURCE, NULL);

  self->kind = kind;
  return DS_MEMORY_RESOURCE (self);
}

static guint
fake_n_live (DsMemoryResource *resource)
{
  FakeResource *self = FAKE_RESOURCE (resource);
  guint n;

  g_mutex_lock (&self->lock);
  n = g_hash_table_size (self->live);
  g_mutex_unlock (&self->lock);
  return n;
}

static void
assert_fake_clean (DsMemoryResource *resource)
{
  g_assert_cmpuint (FAKE_RESOURCE (resource)->n_mismatches, ==, 0);
  g_assert_cmpuint (fake_n_live (resource), ==, 0);
}

/* A resource of device kind that is not stream-ordered. */
#define PLAIN_TYPE_RESOURCE (plain_resource_get_type ())
G_DECLARE_FINAL_TYPE (PlainResource, plain_resource, PLAIN, RESOURCE, GObject)

struct _PlainResource
{
  GObject parent_instance;
};

static DsMemoryKind
plain_get_kind (DsMemoryResource *resource)
{
  return DS_MEMORY_KIND_DEVICE;
}

static gpointer
plain_allocate (DsMemoryResource  *resource,
                gsize              size,
                gsize              alignment,
                GError           **error)
{
  return g_aligned_alloc (1, size, alignment);
}

static void
plain_deallocate (DsMemoryResource *resource,
                  gpointer          ptr,
                  gsize             size,
                  gsize             alignment)
{
  g_aligned_free (ptr);
}

static void
plain_iface_init (DsMemoryResourceInterface *iface)
{
  iface->get_kind = plain_get_kind;
  iface->allocate = plain_allocate;
  iface->deallocate = plain_deallocate;
}

G_DEFINE_FINAL_TYPE_WITH_CODE (PlainResource, plain_resource, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (DS_TYPE_MEMORY_RESOURCE, plain_iface_init))

static void
plain_resource_class_init (PlainResourceClass *klass)
{
}

static void
plain_resource_init (PlainResource *self)
{
}

/* --- cases ---------------------------------------------------------------- */

/* Without a GPU the default resource refuses, and nothing is recorded. */
static void
test_no_device (void)
{
  g_autoptr(GError) error = NULL;
  gpointer ptr;

  ptr = ds_alloc_allocate (NULL, 1024, 0, NULL, &error);
  if (ptr != NULL)
    {
      g_assert_true (ds_alloc_deallocate (ptr, NULL));
      g_test_skip ("a CUDA device is usable here: the refusal without one is not seen");
      return;
    }
  g_assert_true (g_error_matches (error, DS_ERROR, DS_ERROR_NO_DEVICE) ||
                 g_error_matches (error, DS_ERROR, DS_ERROR_NOT_SUPPORTED));
  g_assert_null (ds_torch_alloc (1024, 0, NULL));
  g_assert_cmpuint (ds_alloc_get_n_blocks (), ==, 0);
  g_assert_cmpuint (ds_alloc_get_bytes (), ==, 0);
}

static void
test_round_trip (void)
{
  g_autoptr(DsMemoryResource) fake = fake_new (DS_MEMORY_KIND_DEVICE);
  g_autoptr(GError) error = NULL;
  gpointer a, b, c;

  ds_alloc_reset_peak_bytes ();
  g_assert_cmpuint (ds_alloc_get_peak_bytes (), ==, 0);
  a = ds_alloc_allocate (fake, 1000, 0, NULL, &error);
  g_assert_no_error (error);
  g_assert_nonnull (a);
  g_assert_cmpuint (GPOINTER_TO_SIZE (a) % DS_ALLOC_ALIGNMENT, ==, 0);
  g_assert_cmpuint (ds_alloc_get_n_blocks (), ==, 1);
  g_assert_cmpuint (ds_alloc_get_bytes (), ==, 1000);

  /* Size 0 still gets an address of its own. */
  b = ds_alloc_allocate (fake, 0, 0, NULL, &error);
  c = ds_alloc_allocate (fake, 0, 0, NULL, &error);
  g_assert_no_error (error);
  g_assert_nonnull (b);
  g_assert_nonnull (c);
  g_assert_true (b != c);
  g_assert_cmpuint (ds_alloc_get_n_blocks (), ==, 3);
  /* The peak counts each with its size asked for (0 as 1). */
  g_assert_cmpuint (ds_alloc_get_peak_bytes (), ==, 1002);

  g_assert_true (ds_alloc_deallocate (a, &error));
  g_assert_true (ds_alloc_deallocate (b, &error));
  g_assert_true (ds_alloc_deallocate (c, &error));
  g_assert_true (ds_alloc_deallocate (NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (ds_alloc_get_n_blocks (), ==, 0);
  g_assert_cmpuint (ds_alloc_get_bytes (), ==, 0);
  g_assert_cmpuint (ds_alloc_get_peak_bytes (), ==, 1002);
  ds_alloc_reset_peak_bytes ();
  g_assert_cmpuint (ds_alloc_get_peak_bytes (), ==, 0);
  g_assert_cmpuint (FAKE_RESOURCE (fake)->n_allocs, ==, 3);
  assert_fake_clean (fake);
}

static void
test_torch_entry_points (void)
{
  g_autoptr(DsMemoryResource) fake = fake_new (DS_MEMORY_KIND_DEVICE);
  g_autoptr(GError) error = NULL;
  void *ptr, *other;

  g_assert_true (ds_alloc_push_resource (fake, NULL));
  ptr = ds_torch_alloc (4096, 0, NULL);
  g_assert_nonnull (ptr);
  g_assert_cmpuint (fake_n_live (fake), ==, 1);
  g_assert_null (ds_torch_alloc (-1, 0, NULL));
  g_assert_null (ds_torch_alloc (16, -2, NULL));
  ds_alloc_pop_resource ();

  /* PyTorch's blocks are PyTorch's to give back, and the other way round. */
  g_assert_false (ds_alloc_deallocate (ptr, &error));
  g_assert_error (error, DS_ERROR, DS_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  other = ds_alloc_allocate (fake, 64, 0, NULL, &error);
  g_assert_no_error (error);
  g_test_expect_message ("DsAlloc", G_LOG_LEVEL_CRITICAL, "*was not handed out*");
  ds_torch_free (other, 64, 0, NULL);
  g_test_assert_expected_messages ();
  g_assert_cmpuint (fake_n_live (fake), ==, 2);
  g_assert_true (ds_alloc_deallocate (other, &error));

  /* Freed after the pop, on the resource it came from. */
  ds_torch_free (ptr, 4096, 0, NULL);
  ds_torch_free (NULL, 0, 0, NULL);
  g_assert_cmpuint (ds_alloc_get_n_blocks (), ==, 0);
  assert_fake_clean (fake);
}

static void
test_resolution (void)
{
  g_autoptr(DsMemoryResource) a = fake_new (DS_MEMORY_KIND_DEVICE);
  g_autoptr(DsMemoryResource) b = fake_new (DS_MEMORY_KIND_MANAGED);
  g_autoptr(DsMemoryResource) c = fake_new (DS_MEMORY_KIND_DEVICE);
  g_autoptr(DsMemoryResource) d = fake_new (DS_MEMORY_KIND_DEVICE);
  gpointer p[6];

  /* The device's resource, when nothing is pushed. */
  g_assert_true (ds_alloc_set_resource (0, c, NULL));
  p[0] = ds_torch_alloc (100, 0, NULL);
  g_assert_cmpuint (fake_n_live (c), ==, 1);

  /* The innermost push beats it; an explicit resource beats both. */
  g_assert_true (ds_alloc_push_resource (a, NULL));
  g_assert_true (ds_alloc_push_resource (b, NULL));
  p[1] = ds_torch_alloc (100, 0, NULL);
  g_assert_cmpuint (fake_n_live (b), ==, 1);
  p[2] = ds_alloc_allocate (d, 100, 0, NULL, NULL);
  g_assert_cmpuint (fake_n_live (d), ==, 1);
  ds_alloc_pop_resource ();
  p[3] = ds_torch_alloc (100, 0, NULL);
  g_assert_cmpuint (fake_n_live (a), ==, 1);

  /* A pushed NULL is ds's default, not the device's resource. */
  g_assert_true (ds_alloc_push_resource (NULL, NULL));
  p[4] = ds_torch_alloc (100, 0, NULL);
  g_assert_cmpuint (fake_n_live (c), ==, 1);
  ds_alloc_pop_resource ();
  ds_alloc_pop_resource ();

  g_assert_true (ds_alloc_set_resource (0, NULL, NULL));
  p[5] = ds_torch_alloc (100, 0, NULL);
  g_assert_cmpuint (fake_n_live (c), ==, 1);

  for (guint i = 0; i < G_N_ELEMENTS (p); i++)
    if (i == 2)
      g_assert_true (ds_alloc_deallocate (p[i], NULL));
    else
      ds_torch_free (p[i], 100, 0, NULL);
  assert_fake_clean (a);
  assert_fake_clean (b);
  assert_fake_clean (c);
  assert_fake_clean (d);
  g_assert_cmpuint (ds_alloc_get_n_blocks (), ==, 0);
}

static void
test_refused (void)
{
  g_autoptr(DsMemoryResource) host = fake_new (DS_MEMORY_KIND_HOST);
  g_autoptr(DsMemoryResource) plain = g_object_new (PLAIN_TYPE_RESOURCE, NULL);
  g_autoptr(DsMemoryResource) fake = fake_new (DS_MEMORY_KIND_DEVICE);
  g_autoptr(GError) error = NULL;
  int local;
  gpointer ptr;

  /* Host memory cannot serve a framework, nor a resource that is not
   * stream-ordered. */
  g_assert_false (ds_alloc_push_resource (host, &error));
  g_assert_error (error, DS_ERROR, DS_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  g_assert_false (ds_alloc_push_resource (plain, &error));
  g_assert_error (error, DS_ERROR, DS_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  g_assert_null (ds_alloc_allocate (host, 16, 0, NULL, &error));
  g_assert_error (error, DS_ERROR, DS_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  g_assert_false (ds_alloc_set_resource (64, fake, &error));
  g_assert_error (error, DS_ERROR, DS_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  g_assert_false (ds_alloc_set_resource (0, host, &error));
  g_assert_error (error, DS_ERROR, DS_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);

  /* Addresses it did not hand out, and blocks given back twice. */
  g_assert_false (ds_alloc_deallocate (&local, &error));
  g_assert_error (error, DS_ERROR, DS_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  g_assert_false (ds_alloc_add_reader (&local, 0, NULL, &error));
  g_assert_error (error, DS_ERROR, DS_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  ptr = ds_alloc_allocate (fake, 64, 0, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (ds_alloc_deallocate (ptr, &error));
  g_assert_false (ds_alloc_deallocate (ptr, &error));
  g_assert_error (error, DS_ERROR, DS_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);

  g_test_expect_message ("DsAlloc", G_LOG_LEVEL_CRITICAL, "*was not handed out*");
  ds_torch_free (&local, 16, 0, NULL);
  g_test_assert_expected_messages ();
  assert_fake_clean (fake);
}

/* A reader is found by any address inside its block; the block's own
 * stream needs no mark (and so no CUDA call). */
static void
test_reader_lookup (void)
{
  g_autoptr(DsMemoryResource) fake = fake_new (DS_MEMORY_KIND_DEVICE);
  g_autoptr(GError) error = NULL;
  guint8 *ptr;

  ptr = ds_alloc_allocate (fake, 4096, 0, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (ds_alloc_add_reader (ptr, 0, NULL, &error));
  g_assert_true (ds_alloc_add_reader (ptr + 100, 0, NULL, &error));
  /* The stream's own device (-1): the same order where a device is usable;
   * without one the block is still found, and only the mark fails. */
  if (!ds_alloc_add_reader (ptr + 4095, -1, NULL, &error))
    {
      g_assert_true (g_error_matches (error, DS_ERROR, DS_ERROR_NO_DEVICE) ||
                     g_error_matches (error, DS_ERROR, DS_ERROR_NOT_SUPPORTED));
      g_clear_error (&error);
    }
  g_assert_false (ds_alloc_add_reader (ptr + 4096, 0, NULL, &error));
  g_assert_error (error, DS_ERROR, DS_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  g_assert_true (ds_alloc_deallocate (ptr, &error));
  g_assert_false (ds_alloc_add_reader (ptr, 0, NULL, &error));
  g_assert_error (error, DS_ERROR, DS_ERROR_INVALID_ARGUMENT);
  assert_fake_clean (fake);
}

/* Many threads take and give back at once, and give back each other's
 * blocks. */
#define N_THREADS 4
#define N_ROUNDS  2000

typedef struct
{
  DsMemoryResource *resource;
  GMutex            lock;
  GCond             cond;
  GPtrArray        *handed;   /* blocks for the main thread to give back */
} ThreadData;

static void
hand (ThreadData *data,
      gpointer    ptr)
{
  g_mutex_lock (&data->lock);
  g_ptr_array_add (data->handed, ptr);
  g_cond_signal (&data->cond);
  g_mutex_unlock (&data->lock);
}

static gpointer
take (ThreadData *data)
{
  gpointer ptr;

  g_mutex_lock (&data->lock);
  while (data->handed->len == 0)
    g_cond_wait (&data->cond, &data->lock);
  ptr = g_ptr_array_steal_index (data->handed, data->handed->len - 1);
  g_mutex_unlock (&data->lock);
  return ptr;
}

static gpointer
churn_thread (gpointer user_data)
{
  ThreadData *data = user_data;
  gpointer mine[8] = { NULL, };

  g_assert_true (ds_alloc_push_resource (data->resource, NULL));
  for (guint i = 0; i < N_ROUNDS; i++)
    {
      guint slot = i % G_N_ELEMENTS (mine);

      ds_torch_free (mine[slot], 0, 0, NULL);
      mine[slot] = ds_torch_alloc (64 + (i * 37) % 5000, 0, NULL);
      g_assert_nonnull (mine[slot]);
      if (i % 16 == 0)
        hand (data, ds_torch_alloc (128, 0, NULL));
    }
  for (guint slot = 0; slot < G_N_ELEMENTS (mine); slot++)
    ds_torch_free (mine[slot], 0, 0, NULL);
  ds_alloc_pop_resource ();
  return NULL;
}

static void
test_threads (void)
{
  g_autoptr(DsMemoryResource) fake = fake_new (DS_MEMORY_KIND_DEVICE);
  GThread *threads[N_THREADS];
  ThreadData data = { fake, };
  guint n_handed = 0;
  gpointer ptr;

  g_mutex_init (&data.lock);
  g_cond_init (&data.cond);
  data.handed = g_ptr_array_new ();
  for (guint i = 0; i < N_THREADS; i++)
    threads[i] = g_thread_new ("churn", churn_thread, &data);
  while (n_handed < N_THREADS * (N_ROUNDS / 16))
    {
      ptr = take (&data);
      ds_torch_free (ptr, 128, 0, NULL);
      n_handed++;
    }
  for (guint i = 0; i < N_THREADS; i++)
    g_thread_join (threads[i]);
  g_ptr_array_unref (data.handed);
  g_cond_clear (&data.cond);
  g_mutex_clear (&data.lock);

  g_assert_cmpuint (ds_alloc_get_n_blocks (), ==, 0);
  g_assert_cmpuint (ds_alloc_get_bytes (), ==, 0);
  assert_fake_clean (fake);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/alloc/no-device", test_no_device);
  g_test_add_func ("/alloc/round-trip", test_round_trip);
  g_test_add_func ("/alloc/torch-entry-points", test_torch_entry_points);
  g_test_add_func ("/alloc/resolution", test_resolution);
  g_test_add_func ("/alloc/refused", test_refused);
  g_test_add_func ("/alloc/reader-lookup", test_reader_lookup);
  g_test_add_func ("/alloc/threads", test_threads);

  return g_test_run ();
}
