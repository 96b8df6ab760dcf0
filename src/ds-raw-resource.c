/* ds-raw-resource.c: what the four raw resources share
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "ds-raw-resource-private.h"

#include <errno.h>
#include <stdlib.h>
#ifdef G_OS_UNIX
# include <sys/mman.h>
# include <unistd.h>
#endif

#include "ds-cuda-private.h"
#include "ds-error.h"

/* Host blocks of this size or more are mapped rather than taken from
 * malloc (see host_alloc ()). Under AddressSanitizer every block comes
 * from malloc, so that it checks them all. */
#if defined (G_OS_UNIX) && !defined (__SANITIZE_ADDRESS__)
# if defined (__has_feature)
#  if !__has_feature (address_sanitizer)
#   define MAP_LARGE_BLOCKS 1
#  endif
# else
#  define MAP_LARGE_BLOCKS 1
# endif
#endif
#define MAP_FROM ((gsize) 128 << 10)

typedef struct
{
  gsize size;
  gsize alignment;
} DsRawBlock;

void
ds_raw_resource_init (DsRawResource *self,
                      DsMemoryKind   kind,
                      gint           device)
{
  self->kind = kind;
  self->device = device;
  g_mutex_init (&self->lock);
  self->live = g_hash_table_new_full (g_direct_hash, g_direct_equal, NULL, g_free);
}

void
ds_raw_resource_clear (DsRawResource *self)
{
  g_clear_pointer (&self->live, g_hash_table_unref);
  g_mutex_clear (&self->lock);
}

#ifdef MAP_LARGE_BLOCKS
static gsize
page_size (void)
{
  static gsize size;

  if (g_once_init_enter (&size))
    g_once_init_leave (&size, (gsize) sysconf (_SC_PAGESIZE));
  return size;
}

/* The mapping of a large block: @size rounded up to pages. */
static inline gsize
mapped_size (gsize size)
{
  return (size + page_size () - 1) & ~(page_size () - 1);
}

/* Maps @size bytes aligned to @alignment: pages of their own, an extra
 * @alignment mapped and its unused ends unmapped for an alignment larger
 * than a page. */
static gpointer
map_block (gsize size,
           gsize alignment,
           int  *result)
{
  gsize length = mapped_size (size);
  gsize extra = alignment > page_size () ? alignment : 0;
  guintptr start, aligned;
  void *p;

  if (length < size || length + extra < length)
    {
      *result = ENOMEM;
      return NULL;
    }
  p = mmap (NULL, length + extra, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED)
    {
      /* The arguments are valid by construction, so a failure means no
       * room: Linux says ENOMEM, valgrind says EINVAL for a length no
       * machine has. */
      *result = errno == EINVAL ? ENOMEM : errno;
      return NULL;
    }
  if (extra == 0)
    return p;

  start = (guintptr) p;
  aligned = (start + alignment - 1) & ~(guintptr) (alignment - 1);
  if (aligned > start)
    munmap (p, aligned - start);
  if (start + extra > aligned)
    munmap ((void *) (aligned + length), start + extra - aligned);
  return (gpointer) aligned;
}
#endif

/* Host memory: aligned malloc, except for blocks of MAP_FROM bytes or
 * more, which get pages of their own (mmap) and go back to the system
 * when they are given back (munmap). Pools take and give back such blocks
 * over a process's life (idle releases, trims, their memory bound), and
 * through malloc the memory they give back would mostly stay with malloc:
 * glibc raises its own mapping threshold to the size of the largest
 * mapped block freed, so later blocks of that size come from its arenas,
 * whose freed memory it keeps: a long run of threads and pools grew the
 * process's resident set steadily while its pools held no more. */
static gpointer
host_alloc (gsize    size,
            gsize    alignment,
            GError **error)
{
  void *ptr = NULL;
  int result;

#ifdef MAP_LARGE_BLOCKS
  if (size >= MAP_FROM)
    {
      ptr = map_block (size, alignment, &result);
      if (ptr != NULL)
        return ptr;
    }
  else
#endif
    {
      result = posix_memalign (&ptr, MAX (alignment, sizeof (void *)), size);
      if (result == 0)
        return ptr;
    }

  g_set_error (error, DS_ERROR,
               result == ENOMEM ? DS_ERROR_OUT_OF_MEMORY : DS_ERROR_INVALID_ARGUMENT,
               "Could not allocate %" G_GSIZE_FORMAT " bytes of host memory "
               "aligned to %" G_GSIZE_FORMAT ": %s", size, alignment, g_strerror (result));
  return NULL;
}

gpointer
ds_raw_resource_allocate (DsRawResource  *self,
                          gsize           size,
                          gsize           alignment,
                          GError        **error)
{
  DsRawBlock *b;
  gpointer ptr;

  if (self->kind == DS_MEMORY_KIND_HOST)
    ptr = host_alloc (size, alignment, error);
  else
    ptr = ds_cuda_raw_alloc (self->kind, self->device, size, alignment, error);
  if (ptr == NULL)
    return NULL;

  b = g_new (DsRawBlock, 1);
  b->size = size;
  b->alignment = alignment;
  g_mutex_lock (&self->lock);
  g_hash_table_insert (self->live, ptr, b);
  g_mutex_unlock (&self->lock);

  return ptr;
}

void
ds_raw_resource_deallocate (DsRawResource *self,
                            gpointer       owner,
                            gpointer       ptr,
                            gsize          size,
                            gsize          alignment)
{
  DsRawBlock *b;
  gboolean ok;

  g_mutex_lock (&self->lock);
  b = g_hash_table_lookup (self->live, ptr);
  ok = b != NULL && b->size == size && b->alignment == alignment;
  if (ok)
    g_hash_table_remove (self->live, ptr);
  g_mutex_unlock (&self->lock);

  if (G_UNLIKELY (!ok))
    {
      if (b == NULL)
        g_critical ("%s %p: refusing to take back %p (size %" G_GSIZE_FORMAT ", alignment %"
                    G_GSIZE_FORMAT "): it did not hand it out, or it was given back already",
                    G_OBJECT_TYPE_NAME (owner), owner, ptr, size, alignment);
      else
        g_critical ("%s %p: refusing to take back %p with size %" G_GSIZE_FORMAT ", alignment %"
                    G_GSIZE_FORMAT ": it was handed out with size %" G_GSIZE_FORMAT
                    ", alignment %" G_GSIZE_FORMAT, G_OBJECT_TYPE_NAME (owner), owner, ptr,
                    size, alignment, b->size, b->alignment);
      return;
    }

  if (self->kind != DS_MEMORY_KIND_HOST)
    ds_cuda_raw_free (self->kind, self->device, ptr, size, alignment);
#ifdef MAP_LARGE_BLOCKS
  else if (size >= MAP_FROM)
    munmap (ptr, mapped_size (size));
#endif
  else
    free (ptr);
}

#define RAW(object) (&((DsRawResourceInstance *) (object))->raw)

static DsMemoryKind
raw_get_kind (DsMemoryResource *resource)
{
  return RAW (resource)->kind;
}

static gpointer
raw_allocate (DsMemoryResource  *resource,
              gsize              size,
              gsize              alignment,
              GError           **error)
{
  return ds_raw_resource_allocate (RAW (resource), size, alignment, error);
}

static void
raw_deallocate (DsMemoryResource *resource,
                gpointer          ptr,
                gsize             size,
                gsize             alignment)
{
  ds_raw_resource_deallocate (RAW (resource), resource, ptr, size, alignment);
}

void
ds_raw_resource_iface_init (gpointer g_iface,
                            gpointer iface_data)
{
  DsMemoryResourceInterface *iface = g_iface;

  iface->get_kind = raw_get_kind;
  iface->allocate = raw_allocate;
  iface->deallocate = raw_deallocate;
}

enum
{
  PROP_0,
  PROP_DEVICE,
};

static void
raw_get_property (GObject    *object,
                  guint       prop_id,
                  GValue     *value,
                  GParamSpec *pspec)
{
  if (prop_id == PROP_DEVICE)
    g_value_set_int (value, RAW (object)->device);
  else
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
}

static void
raw_set_property (GObject      *object,
                  guint         prop_id,
                  const GValue *value,
                  GParamSpec   *pspec)
{
  if (prop_id == PROP_DEVICE)
    RAW (object)->device = g_value_get_int (value);
  else
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
}

static void
raw_finalize (GObject *object)
{
  ds_raw_resource_clear (RAW (object));

  G_OBJECT_CLASS (g_type_class_peek_parent (G_OBJECT_GET_CLASS (object)))->finalize (object);
}

void
ds_raw_resource_class_init (GObjectClass *object_class,
                            gboolean      device)
{
  object_class->finalize = raw_finalize;
  if (!device)
    return;

  object_class->get_property = raw_get_property;
  object_class->set_property = raw_set_property;
  g_object_class_install_property (object_class, PROP_DEVICE,
                                   g_param_spec_int ("device", NULL, NULL, -1, G_MAXINT, -1,
                                                     G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY |
                                                     G_PARAM_STATIC_STRINGS));
}
