/* ds-managed-memory-resource.c
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "ds-managed-memory-resource.h"
#include "ds-cuda-private.h"

/**
 * DsManagedMemoryResource:
 *
 * The raw resource of unified memory from
 * `cudaMallocManaged (cudaMemAttachGlobal)`, attached to one device. Not
 * stream-ordered: use it under a [class@Ds.PoolResource].
 *
 * Without a CUDA device, allocation fails with %DS_ERROR_NO_DEVICE (or
 * %DS_ERROR_NOT_SUPPORTED when ds was built without CUDA).
 */

struct _DsManagedMemoryResource
{
  GObject parent_instance;

  gint    device;
};

enum
{
  PROP_0,
  PROP_DEVICE,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static void ds_managed_memory_resource_iface_init (DsMemoryResourceInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (DsManagedMemoryResource, ds_managed_memory_resource, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (DS_TYPE_MEMORY_RESOURCE,
                                                      ds_managed_memory_resource_iface_init))

static DsMemoryKind
ds_managed_memory_resource_get_kind (DsMemoryResource *resource)
{
  return DS_MEMORY_KIND_MANAGED;
}

static gpointer
ds_managed_memory_resource_allocate (DsMemoryResource  *resource,
                                  gsize              size,
                                  gsize              alignment,
                                  GError           **error)
{
  DsManagedMemoryResource *self = (DsManagedMemoryResource *) resource;

  return ds_cuda_raw_alloc (DS_MEMORY_KIND_MANAGED, self->device, size, alignment, error);
}

static void
ds_managed_memory_resource_deallocate (DsMemoryResource *resource,
                                    gpointer          ptr,
                                    gsize             size,
                                    gsize             alignment)
{
  DsManagedMemoryResource *self = (DsManagedMemoryResource *) resource;

  ds_cuda_raw_free (DS_MEMORY_KIND_MANAGED, self->device, ptr, size, alignment);
}

static void
ds_managed_memory_resource_iface_init (DsMemoryResourceInterface *iface)
{
  iface->get_kind = ds_managed_memory_resource_get_kind;
  iface->allocate = ds_managed_memory_resource_allocate;
  iface->deallocate = ds_managed_memory_resource_deallocate;
}

static void
ds_managed_memory_resource_get_property (GObject    *object,
                                      guint       prop_id,
                                      GValue     *value,
                                      GParamSpec *pspec)
{
  DsManagedMemoryResource *self = DS_MANAGED_MEMORY_RESOURCE (object);

  switch (prop_id)
    {
    case PROP_DEVICE:
      g_value_set_int (value, self->device);
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
ds_managed_memory_resource_set_property (GObject      *object,
                                      guint         prop_id,
                                      const GValue *value,
                                      GParamSpec   *pspec)
{
  DsManagedMemoryResource *self = DS_MANAGED_MEMORY_RESOURCE (object);

  switch (prop_id)
    {
    case PROP_DEVICE:
      self->device = g_value_get_int (value);
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
ds_managed_memory_resource_class_init (DsManagedMemoryResourceClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->get_property = ds_managed_memory_resource_get_property;
  object_class->set_property = ds_managed_memory_resource_set_property;

  /**
   * DsManagedMemoryResource:device:
   *
   * The CUDA device the memory is attached to; -1 for the device current
   * at each allocation.
   */
  properties[PROP_DEVICE] =
    g_param_spec_int ("device", NULL, NULL,
                      -1, G_MAXINT, -1,
                      G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY |
                      G_PARAM_STATIC_STRINGS);

  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
ds_managed_memory_resource_init (DsManagedMemoryResource *self)
{
  self->device = -1;
}

/**
 * ds_managed_memory_resource_new:
 * @device: a CUDA device index, or -1 for the device current at each allocation
 *
 * Creates a raw managed memory resource. Allocates nothing.
 *
 * Returns: (transfer full): a new #DsManagedMemoryResource
 */
DsMemoryResource *
ds_managed_memory_resource_new (gint device)
{
  return g_object_new (DS_TYPE_MANAGED_MEMORY_RESOURCE, "device", device, NULL);
}
