/* ds-test-resource.c: a recording upstream resource for the tests
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ds-test-resource.h"

typedef struct
{
  gpointer ptr;
  gsize    size;
  gsize    alignment;
} LiveBlock;

struct _DsTestResource
{
  GObject       parent_instance;

  DsMemoryKind  kind;
  gboolean      stream_ordered;

  GMutex        lock;
  GArray       *calls;     /* DsTestCall */
  GArray       *live;      /* LiveBlock */
  guint         fail_next;
  gsize         max_size;
  gint         *probe;
  void        (*hook) (gpointer data);
  gpointer      hook_data;
  guint         n_mismatches;
  char         *mismatch_text;
};

static void ds_test_resource_iface_init (DsMemoryResourceInterface *iface);

/* Not final: the stream-ordered flavour below derives from it. */
G_DEFINE_TYPE_WITH_CODE (DsTestResource, ds_test_resource, G_TYPE_OBJECT,
                         G_IMPLEMENT_INTERFACE (DS_TYPE_MEMORY_RESOURCE,
                                                ds_test_resource_iface_init))

static guint64 global_seq;

const char *
ds_test_op_to_string (DsTestOp op)
{
  switch (op)
    {
    case DS_TEST_OP_ALLOCATE:
      return "allocate";
    case DS_TEST_OP_DEALLOCATE:
      return "deallocate";
    case DS_TEST_OP_ALLOCATE_ASYNC:
      return "allocate_async";
    case DS_TEST_OP_DEALLOCATE_ASYNC:
      return "deallocate_async";
    default:
      return "?";
    }
}

/* Called with the lock held. */
static void
record (DsTestResource      *self,
        DsTestOp             op,
        gpointer             ptr,
        gsize                size,
        gsize                alignment,
        const DsAccessOrder *order,
        gboolean             failed)
{
  DsTestCall call;

  memset (&call, 0, sizeof call);
  call.op = op;
  call.ptr = ptr;
  call.size = size;
  call.alignment = alignment;
  if (order != NULL)
    {
      call.has_order = TRUE;
      call.order = *order;
    }
  call.seq = __atomic_add_fetch (&global_seq, 1, __ATOMIC_SEQ_CST);
  call.time = g_get_monotonic_time ();
  call.probe = self->probe != NULL ? g_atomic_int_get (self->probe) : 0;
  call.failed = failed;
  call.thread = g_thread_self ();
  g_array_append_val (self->calls, call);
}

static void
add_mismatch (DsTestResource *self,
              const char     *format,
              ...) G_GNUC_PRINTF (2, 3);

static void
add_mismatch (DsTestResource *self,
              const char     *format,
              ...)
{
  va_list args;

  self->n_mismatches++;
  if (self->mismatch_text != NULL)
    return;
  va_start (args, format);
  self->mismatch_text = g_strdup_vprintf (format, args);
  va_end (args);
}

static gpointer
do_allocate (DsTestResource       *self,
             DsTestOp              op,
             gsize                 size,
             gsize                 alignment,
             const DsAccessOrder  *order,
             GError              **error)
{
  gpointer ptr = NULL;
  gsize real_alignment;
  LiveBlock block;

  if (self->hook != NULL)
    self->hook (self->hook_data);

  g_mutex_lock (&self->lock);

  if (self->fail_next > 0)
    {
      self->fail_next--;
      record (self, op, NULL, size, alignment, order, TRUE);
      g_mutex_unlock (&self->lock);
      g_set_error (error, DS_ERROR, DS_ERROR_OUT_OF_MEMORY,
                   "test resource: allocation of %" G_GSIZE_FORMAT
                   " bytes made to fail", size);
      return NULL;
    }

  if (size > self->max_size)
    {
      record (self, op, NULL, size, alignment, order, TRUE);
      g_mutex_unlock (&self->lock);
      g_set_error (error, DS_ERROR, DS_ERROR_OUT_OF_MEMORY,
                   "test resource: %" G_GSIZE_FORMAT " bytes is more than "
                   "the test limit", size);
      return NULL;
    }

  if (alignment != 0 && (alignment & (alignment - 1)) != 0)
    {
      /* The scratchpad must never pass this on. */
      add_mismatch (self, "%s asked with alignment %" G_GSIZE_FORMAT
                    ", not a power of two", ds_test_op_to_string (op), alignment);
      record (self, op, NULL, size, alignment, order, TRUE);
      g_mutex_unlock (&self->lock);
      g_set_error (error, DS_ERROR, DS_ERROR_INVALID_ARGUMENT,
                   "test resource: bad alignment");
      return NULL;
    }

  real_alignment = MAX (alignment, sizeof (gpointer));
  if (posix_memalign (&ptr, real_alignment, MAX (size, 1)) != 0)
    {
      record (self, op, NULL, size, alignment, order, TRUE);
      g_mutex_unlock (&self->lock);
      g_set_error (error, DS_ERROR, DS_ERROR_OUT_OF_MEMORY,
                   "test resource: posix_memalign failed");
      return NULL;
    }

  block.ptr = ptr;
  block.size = size;
  block.alignment = alignment;
  g_array_append_val (self->live, block);
  record (self, op, ptr, size, alignment, order, FALSE);

  g_mutex_unlock (&self->lock);

  return ptr;
}

static void
do_deallocate (DsTestResource      *self,
               DsTestOp             op,
               gpointer             ptr,
               gsize                size,
               gsize                alignment,
               const DsAccessOrder *order)
{
  guint i;
  gboolean found = FALSE;

  g_mutex_lock (&self->lock);

  record (self, op, ptr, size, alignment, order, FALSE);

  for (i = 0; i < self->live->len; i++)
    {
      LiveBlock *block = &g_array_index (self->live, LiveBlock, i);

      if (block->ptr != ptr)
        continue;

      found = TRUE;
      if (block->size != size || block->alignment != alignment)
        add_mismatch (self, "%s(%p): size %" G_GSIZE_FORMAT " alignment %"
                      G_GSIZE_FORMAT ", allocated with size %" G_GSIZE_FORMAT
                      " alignment %" G_GSIZE_FORMAT, ds_test_op_to_string (op),
                      ptr, size, alignment, block->size, block->alignment);
      /* Poison it, so that a use after the return shows. */
      memset (block->ptr, 0xdd, block->size);
      free (block->ptr);
      g_array_remove_index_fast (self->live, i);
      break;
    }

  if (!found)
    add_mismatch (self, "%s(%p, %" G_GSIZE_FORMAT "): not a live block "
                  "(double free or foreign pointer)", ds_test_op_to_string (op),
                  ptr, size);

  g_mutex_unlock (&self->lock);
}

static DsMemoryKind
ds_test_resource_real_get_kind (DsMemoryResource *resource)
{
  return DS_TEST_RESOURCE (resource)->kind;
}

static gpointer
ds_test_resource_allocate (DsMemoryResource  *resource,
                           gsize              size,
                           gsize              alignment,
                           GError           **error)
{
  return do_allocate (DS_TEST_RESOURCE (resource), DS_TEST_OP_ALLOCATE,
                      size, alignment, NULL, error);
}

static void
ds_test_resource_deallocate (DsMemoryResource *resource,
                             gpointer          ptr,
                             gsize             size,
                             gsize             alignment)
{
  do_deallocate (DS_TEST_RESOURCE (resource), DS_TEST_OP_DEALLOCATE,
                 ptr, size, alignment, NULL);
}

static gpointer
ds_test_resource_allocate_async (DsMemoryResource     *resource,
                                 gsize                 size,
                                 gsize                 alignment,
                                 const DsAccessOrder  *order,
                                 GError              **error)
{
  g_assert_nonnull (order);
  return do_allocate (DS_TEST_RESOURCE (resource), DS_TEST_OP_ALLOCATE_ASYNC,
                      size, alignment, order, error);
}

static void
ds_test_resource_deallocate_async (DsMemoryResource    *resource,
                                   gpointer             ptr,
                                   gsize                size,
                                   gsize                alignment,
                                   const DsAccessOrder *order)
{
  g_assert_nonnull (order);
  do_deallocate (DS_TEST_RESOURCE (resource), DS_TEST_OP_DEALLOCATE_ASYNC,
                 ptr, size, alignment, order);
}

static void
ds_test_resource_iface_init (DsMemoryResourceInterface *iface)
{
  iface->get_kind = ds_test_resource_real_get_kind;
  iface->allocate = ds_test_resource_allocate;
  iface->deallocate = ds_test_resource_deallocate;
  /* allocate_async and deallocate_async stay NULL: not stream-ordered.
   * The stream-ordered flavour is the subclass below. */
}

/* A second type for the stream-ordered flavour: an interface vtable is per
 * type, and "not stream-ordered" means both async vfuncs are NULL. */
typedef struct
{
  DsTestResource parent_instance;
} DsTestAsyncResource;

typedef struct
{
  DsTestResourceClass parent_class;
} DsTestAsyncResourceClass;

GType ds_test_async_resource_get_type (void);

static void
ds_test_async_resource_iface_init (DsMemoryResourceInterface *iface)
{
  DsMemoryResourceInterface *parent = g_type_interface_peek_parent (iface);

  iface->get_kind = parent->get_kind;
  iface->allocate = parent->allocate;
  iface->deallocate = parent->deallocate;
  iface->allocate_async = ds_test_resource_allocate_async;
  iface->deallocate_async = ds_test_resource_deallocate_async;
}

static void
ds_test_async_resource_class_init (DsTestAsyncResourceClass *klass)
{
}

static void
ds_test_async_resource_init (DsTestAsyncResource *self)
{
}

G_DEFINE_TYPE_WITH_CODE (DsTestAsyncResource, ds_test_async_resource, DS_TYPE_TEST_RESOURCE,
                         G_IMPLEMENT_INTERFACE (DS_TYPE_MEMORY_RESOURCE,
                                                ds_test_async_resource_iface_init))

static void
ds_test_resource_finalize (GObject *object)
{
  DsTestResource *self = DS_TEST_RESOURCE (object);
  guint i;

  /* Free what was never given back, so that a scratchpad leak shows as a
   * failed assertion in the test, not as noise under valgrind. */
  for (i = 0; i < self->live->len; i++)
    free (g_array_index (self->live, LiveBlock, i).ptr);
  g_array_unref (self->live);
  g_array_unref (self->calls);
  g_free (self->mismatch_text);
  g_mutex_clear (&self->lock);

  G_OBJECT_CLASS (ds_test_resource_parent_class)->finalize (object);
}

static void
ds_test_resource_class_init (DsTestResourceClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = ds_test_resource_finalize;
}

static void
ds_test_resource_init (DsTestResource *self)
{
  g_mutex_init (&self->lock);
  self->calls = g_array_new (FALSE, TRUE, sizeof (DsTestCall));
  self->live = g_array_new (FALSE, TRUE, sizeof (LiveBlock));
  self->max_size = (gsize) 1 << 30;
}

/**
 * ds_test_resource_new:
 * @kind: the kind get_kind reports
 * @stream_ordered: whether allocate_async/deallocate_async are implemented
 *
 * Returns: (transfer full): a new recording resource
 */
DsTestResource *
ds_test_resource_new (DsMemoryKind kind,
                      gboolean     stream_ordered)
{
  DsTestResource *self;

  self = g_object_new (stream_ordered ? ds_test_async_resource_get_type ()
                                      : DS_TYPE_TEST_RESOURCE, NULL);
  self->kind = kind;
  self->stream_ordered = stream_ordered;

  return self;
}

DsMemoryKind
ds_test_resource_get_kind (DsTestResource *self)
{
  return self->kind;
}

void
ds_test_resource_fail_next (DsTestResource *self,
                            guint           n)
{
  g_mutex_lock (&self->lock);
  self->fail_next = n;
  g_mutex_unlock (&self->lock);
}

void
ds_test_resource_set_max_size (DsTestResource *self,
                               gsize           max_size)
{
  g_mutex_lock (&self->lock);
  self->max_size = max_size;
  g_mutex_unlock (&self->lock);
}

void
ds_test_resource_set_hook (DsTestResource *self,
                           void          (*hook) (gpointer data),
                           gpointer        data)
{
  self->hook = hook;
  self->hook_data = data;
}

void
ds_test_resource_set_probe (DsTestResource *self,
                            gint           *probe)
{
  g_mutex_lock (&self->lock);
  self->probe = probe;
  g_mutex_unlock (&self->lock);
}

guint
ds_test_resource_get_n_calls (DsTestResource *self)
{
  guint n;

  g_mutex_lock (&self->lock);
  n = self->calls->len;
  g_mutex_unlock (&self->lock);

  return n;
}

DsTestCall
ds_test_resource_get_call (DsTestResource *self,
                           guint           i)
{
  DsTestCall call;

  g_mutex_lock (&self->lock);
  g_assert_cmpuint (i, <, self->calls->len);
  call = g_array_index (self->calls, DsTestCall, i);
  g_mutex_unlock (&self->lock);

  return call;
}

guint
ds_test_resource_count (DsTestResource *self,
                        DsTestOp        op)
{
  guint i, n = 0;

  g_mutex_lock (&self->lock);
  for (i = 0; i < self->calls->len; i++)
    {
      DsTestCall *call = &g_array_index (self->calls, DsTestCall, i);

      if (call->op == op && !call->failed)
        n++;
    }
  g_mutex_unlock (&self->lock);

  return n;
}

guint
ds_test_resource_count_allocs (DsTestResource *self)
{
  return ds_test_resource_count (self, DS_TEST_OP_ALLOCATE) +
         ds_test_resource_count (self, DS_TEST_OP_ALLOCATE_ASYNC);
}

guint
ds_test_resource_count_deallocs (DsTestResource *self)
{
  return ds_test_resource_count (self, DS_TEST_OP_DEALLOCATE) +
         ds_test_resource_count (self, DS_TEST_OP_DEALLOCATE_ASYNC);
}

void
ds_test_resource_clear_calls (DsTestResource *self)
{
  g_mutex_lock (&self->lock);
  g_array_set_size (self->calls, 0);
  g_mutex_unlock (&self->lock);
}

guint
ds_test_resource_get_n_live (DsTestResource *self)
{
  guint n;

  g_mutex_lock (&self->lock);
  n = self->live->len;
  g_mutex_unlock (&self->lock);

  return n;
}

guint64
ds_test_resource_get_live_bytes (DsTestResource *self)
{
  guint64 total = 0;
  guint i;

  g_mutex_lock (&self->lock);
  for (i = 0; i < self->live->len; i++)
    total += g_array_index (self->live, LiveBlock, i).size;
  g_mutex_unlock (&self->lock);

  return total;
}

gboolean
ds_test_resource_owns (DsTestResource *self,
                       gconstpointer   ptr,
                       gsize           size)
{
  gboolean owns = FALSE;
  guintptr p = (guintptr) ptr;
  guint i;

  g_mutex_lock (&self->lock);
  for (i = 0; i < self->live->len && !owns; i++)
    {
      LiveBlock *block = &g_array_index (self->live, LiveBlock, i);
      guintptr start = (guintptr) block->ptr;

      owns = p >= start && p <= start + block->size &&
             size <= block->size - (p - start);
    }
  g_mutex_unlock (&self->lock);

  return owns;
}

guint
ds_test_resource_get_n_mismatches (DsTestResource *self)
{
  guint n;

  g_mutex_lock (&self->lock);
  n = self->n_mismatches;
  g_mutex_unlock (&self->lock);

  return n;
}

const char *
ds_test_resource_get_mismatch_text (DsTestResource *self)
{
  const char *text;

  g_mutex_lock (&self->lock);
  text = self->mismatch_text;
  g_mutex_unlock (&self->lock);

  return text;
}
