/* ds-raw-memory-resource-private.h: what the four raw resources share
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The raw resources differ only in the kind they report and the two
 * functions that allocate and free. DS_DEFINE_RAW_MEMORY_RESOURCE writes
 * the GObject around those: a final type with a construct-only "device"
 * property that implements DsMemoryResource (not stream-ordered).
 */

#pragma once

#include "ds-memory-resource-private.h"

G_BEGIN_DECLS

typedef gpointer (*DsRawAllocFunc) (DsMemoryKind kind, gint device, gsize size,
                                    gsize alignment, GError **error);
typedef void     (*DsRawFreeFunc)  (DsMemoryKind kind, gint device, gpointer ptr,
                                    gsize size, gsize alignment);

#define DS_DEFINE_RAW_MEMORY_RESOURCE(TypeName, type_name, KIND, alloc_func, free_func) \
struct _##TypeName                                                              \
{                                                                               \
  GObject parent_instance;                                                      \
  gint    device;                                                               \
};                                                                              \
                                                                                \
static void type_name##_resource_iface_init (DsMemoryResourceInterface *iface); \
                                                                                \
G_DEFINE_FINAL_TYPE_WITH_CODE (TypeName, type_name, G_TYPE_OBJECT,              \
  G_IMPLEMENT_INTERFACE (DS_TYPE_MEMORY_RESOURCE, type_name##_resource_iface_init)) \
                                                                                \
enum { type_name##_PROP_0, type_name##_PROP_DEVICE, type_name##_N_PROPS };      \
                                                                                \
static DsMemoryKind                                                             \
type_name##_get_kind (DsMemoryResource *resource)                               \
{                                                                               \
  return KIND;                                                                  \
}                                                                               \
                                                                                \
static gpointer                                                                 \
type_name##_allocate (DsMemoryResource  *resource,                              \
                      gsize              size,                                  \
                      gsize              alignment,                             \
                      GError           **error)                                 \
{                                                                               \
  return alloc_func (KIND, ((TypeName *) resource)->device, size, alignment,    \
                     error);                                                    \
}                                                                               \
                                                                                \
static void                                                                     \
type_name##_deallocate (DsMemoryResource *resource,                             \
                        gpointer          ptr,                                  \
                        gsize             size,                                 \
                        gsize             alignment)                            \
{                                                                               \
  free_func (KIND, ((TypeName *) resource)->device, ptr, size, alignment);      \
}                                                                               \
                                                                                \
static void                                                                     \
type_name##_resource_iface_init (DsMemoryResourceInterface *iface)             \
{                                                                               \
  iface->get_kind = type_name##_get_kind;                                       \
  iface->allocate = type_name##_allocate;                                       \
  iface->deallocate = type_name##_deallocate;                                   \
}                                                                               \
                                                                                \
static void                                                                     \
type_name##_get_property (GObject    *object,                                   \
                          guint       prop_id,                                  \
                          GValue     *value,                                    \
                          GParamSpec *pspec)                                    \
{                                                                               \
  if (prop_id == type_name##_PROP_DEVICE)                                       \
    g_value_set_int (value, ((TypeName *) object)->device);                     \
  else                                                                          \
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);                 \
}                                                                               \
                                                                                \
static void                                                                     \
type_name##_set_property (GObject      *object,                                 \
                          guint         prop_id,                                \
                          const GValue *value,                                  \
                          GParamSpec   *pspec)                                  \
{                                                                               \
  if (prop_id == type_name##_PROP_DEVICE)                                       \
    ((TypeName *) object)->device = g_value_get_int (value);                    \
  else                                                                          \
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);                 \
}                                                                               \
                                                                                \
static void                                                                     \
type_name##_class_init (TypeName##Class *klass)                                 \
{                                                                               \
  GObjectClass *object_class = G_OBJECT_CLASS (klass);                          \
                                                                                \
  object_class->get_property = type_name##_get_property;                        \
  object_class->set_property = type_name##_set_property;                        \
  g_object_class_install_property (object_class, type_name##_PROP_DEVICE,       \
    g_param_spec_int ("device", NULL, NULL, -1, G_MAXINT, -1,                   \
                      G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY |              \
                      G_PARAM_STATIC_STRINGS));                                 \
}                                                                               \
                                                                                \
static void                                                                     \
type_name##_init (TypeName *self)                                               \
{                                                                               \
  self->device = -1;                                                            \
}

G_END_DECLS
