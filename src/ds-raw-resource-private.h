/* ds-raw-resource-private.h: what the four raw resources share
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A DsRawResource is the part of a raw resource (host, pinned, device,
 * managed) that does the work: it takes memory from malloc or CUDA for
 * its kind and device, and remembers every block it handed out, so that
 * a pointer it did not hand out, a block given back twice or with another
 * size or alignment is refused with a critical instead of reaching free ()
 * or CUDA. Raw resources sit under pools, off the hot path: a lock and a
 * hash table per block is what this costs.
 */

#pragma once

#include "ds-memory-resource.h"

G_BEGIN_DECLS

typedef struct
{
  DsMemoryKind  kind;
  gint          device;       /* -1: the current one at each allocation */
  GMutex        lock;
  GHashTable   *live;         /* address -> DsRawBlock, handed out */
} DsRawResource;

void     ds_raw_resource_init       (DsRawResource  *self,
                                     DsMemoryKind    kind,
                                     gint            device);
/* Frees what @self keeps; blocks still handed out stay with their owner. */
void     ds_raw_resource_clear      (DsRawResource  *self);

gpointer ds_raw_resource_allocate   (DsRawResource  *self,
                                     gsize           size,
                                     gsize           alignment,
                                     GError        **error);
/* Gives back a block of @owner's (named in the critical that refuses a
 * block it did not hand out with @size and @alignment). */
void     ds_raw_resource_deallocate (DsRawResource  *self,
                                     gpointer        owner,
                                     gpointer        ptr,
                                     gsize           size,
                                     gsize           alignment);

/* A raw resource's instance: its GObject, then its DsRawResource. */
typedef struct
{
  GObject       parent_instance;
  DsRawResource raw;
} DsRawResourceInstance;

/* The DsMemoryResource functions of every raw resource. */
void     ds_raw_resource_iface_init (gpointer        g_iface,
                                     gpointer        iface_data);
/* finalize, and with @device the construct-only "device" property
 * (-1: the device current at each allocation). */
void     ds_raw_resource_class_init (GObjectClass   *object_class,
                                     gboolean        device);

G_END_DECLS
