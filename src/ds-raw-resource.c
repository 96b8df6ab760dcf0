/* ds-raw-resource.c: what the four raw resources share
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <errno.h>
#include <stdlib.h>

#include "ds-raw-resource-private.h"
#include "ds-cuda-private.h"
#include "ds-error.h"

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

static gpointer
host_alloc (gsize    size,
            gsize    alignment,
            GError **error)
{
  void *ptr = NULL;
  int result = posix_memalign (&ptr, MAX (alignment, sizeof (void *)), size);

  if (result == 0)
    return ptr;

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

  if (self->kind == DS_MEMORY_KIND_HOST)
    free (ptr);
  else
    ds_cuda_raw_free (self->kind, self->device, ptr, size, alignment);
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
