/* ds-memory-resource.c: the upstream-resource interface
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "ds-memory-resource-private.h"
#include "ds-access-order.h"
#include "ds-enum-types.h"
#include "ds-error.h"

/**
 * DsMemoryResource:
 *
 * An upstream allocator of one [enum@Ds.MemoryKind].
 *
 * A #DsScratchpad takes its blocks from one resource per kind and gives
 * each block back to the resource it came from, with the same size and
 * alignment, exactly once. A resource may be *stream-ordered* (it
 * implements `allocate_async` and `deallocate_async`): it is then told the
 * [struct@Ds.AccessOrder] in which a block is given back, and must not hand
 * the block to anyone else until the work queued in that order has
 * finished.
 *
 * ds ships the raw resources ([class@Ds.HostMemoryResource],
 * [class@Ds.PinnedMemoryResource], [class@Ds.DeviceMemoryResource],
 * [class@Ds.ManagedMemoryResource]) and the caching
 * [class@Ds.PoolResource]; [func@Ds.MemoryResource.get_default] gives the
 * process-wide default of each kind. Bindings can implement the interface
 * (`do_get_kind`, `do_allocate`, `do_deallocate`).
 */

G_DEFINE_INTERFACE (DsMemoryResource, ds_memory_resource, G_TYPE_OBJECT)

static void
ds_memory_resource_default_init (DsMemoryResourceInterface *iface)
{
}

/* A resource's own message speaks of what it did (a pool: the size class
 * and alignment of its block); the caller is told about its own request
 * first. */
static void
propagate_with_request (GError           **dest,
                        GError            *src,
                        DsMemoryResource  *self,
                        gsize              size,
                        gsize              alignment)
{
  char text[64];

  g_propagate_prefixed_error (dest, src, "%s could not allocate %" G_GSIZE_FORMAT
                              " bytes with %s: ", G_OBJECT_TYPE_NAME (self), size,
                              ds_memory_alignment_text (text, alignment, 16));
}

/* Checks a request (alignment 0 counts as 16) and allocates it: in
 * @order with allocate_async () where the resource has it and @order is
 * not NULL, else with allocate (). A resource without the function is an
 * error, not a crash: a script's subclass may lack it. */
static gpointer
allocate_checked (DsMemoryResource     *self,
                  gsize                 size,
                  gsize                 alignment,
                  const DsAccessOrder  *order,
                  GError              **error)
{
  DsMemoryResourceInterface *iface = DS_MEMORY_RESOURCE_GET_IFACE (self);
  GError *local_error = NULL;
  gsize alignment_as_passed = alignment;
  gpointer ptr;

  if (!ds_memory_check_size_alignment (size, &alignment, 16, 0, error))
    return NULL;
  if (size == 0)
    return NULL;
  if (G_UNLIKELY (iface->allocate == NULL))
    {
      g_set_error (error, DS_ERROR, DS_ERROR_INVALID_ARGUMENT,
                   "%s implements DsMemoryResource without allocate",
                   G_OBJECT_TYPE_NAME (self));
      return NULL;
    }

  if (order != NULL && iface->allocate_async != NULL)
    ptr = iface->allocate_async (self, size, alignment, order, &local_error);
  else
    ptr = iface->allocate (self, size, alignment, &local_error);
  if (G_UNLIKELY (local_error != NULL))
    propagate_with_request (error, local_error, self, size, alignment_as_passed);

  return ptr;
}

/**
 * ds_memory_resource_get_kind: (virtual get_kind)
 * @self: a #DsMemoryResource
 *
 * The kind of memory @self hands out.
 *
 * Returns: the kind of memory @self hands out
 */
DsMemoryKind
ds_memory_resource_get_kind (DsMemoryResource *self)
{
  DsMemoryResourceInterface *iface;

  g_return_val_if_fail (DS_IS_MEMORY_RESOURCE (self), DS_MEMORY_KIND_HOST);

  iface = DS_MEMORY_RESOURCE_GET_IFACE (self);
  g_return_val_if_fail (iface->get_kind != NULL, DS_MEMORY_KIND_HOST);

  return iface->get_kind (self);
}

/**
 * ds_memory_resource_allocate: (virtual allocate)
 * @self: a #DsMemoryResource
 * @size: the number of bytes
 * @alignment: a power of two, or 0 for 16
 * @error: return location for a #GError
 *
 * Allocates @size bytes aligned to @alignment, usable at once by the host
 * (for host-visible kinds) and by any stream.
 *
 * Returns: (type guint64): the memory (an integer address in bindings),
 *   `NULL` (0) for size 0 (no error) or with @error set on failure
 */
gpointer
ds_memory_resource_allocate (DsMemoryResource  *self,
                             gsize              size,
                             gsize              alignment,
                             GError           **error)
{
  g_return_val_if_fail (DS_IS_MEMORY_RESOURCE (self), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  return allocate_checked (self, size, alignment, NULL, error);
}

/**
 * ds_memory_resource_deallocate: (virtual deallocate)
 * @self: a #DsMemoryResource
 * @ptr: (type guint64): memory from @self (an integer address in bindings)
 * @size: the size it was allocated with
 * @alignment: the alignment it was allocated with
 *
 * Gives back memory at once. The caller promises that nothing uses it any
 * more, on the host or on any stream.
 */
void
ds_memory_resource_deallocate (DsMemoryResource *self,
                               gpointer          ptr,
                               gsize             size,
                               gsize             alignment)
{
  DsMemoryResourceInterface *iface;

  g_return_if_fail (DS_IS_MEMORY_RESOURCE (self));

  if (ptr == NULL)
    return;

  iface = DS_MEMORY_RESOURCE_GET_IFACE (self);
  g_return_if_fail (iface->deallocate != NULL);

  iface->deallocate (self, ptr, size, alignment != 0 ? alignment : 16);
}

/**
 * ds_memory_resource_is_stream_ordered:
 * @self: a #DsMemoryResource
 *
 * Whether @self implements stream-ordered allocation and deallocation.
 *
 * Returns: whether @self implements stream-ordered allocation and
 *   deallocation
 */
gboolean
ds_memory_resource_is_stream_ordered (DsMemoryResource *self)
{
  DsMemoryResourceInterface *iface;

  g_return_val_if_fail (DS_IS_MEMORY_RESOURCE (self), FALSE);

  iface = DS_MEMORY_RESOURCE_GET_IFACE (self);
  return iface->allocate_async != NULL && iface->deallocate_async != NULL;
}

/**
 * ds_memory_resource_allocate_async: (virtual allocate_async)
 * @self: a #DsMemoryResource
 * @size: the number of bytes
 * @alignment: a power of two, or 0 for 16
 * @order: the order in which the memory will be used
 * @error: return location for a #GError
 *
 * Allocates memory that is safe to use in @order. A resource that is not
 * stream-ordered allocates with [method@Ds.MemoryResource.allocate], which
 * is safe in any order.
 *
 * Returns: (type guint64): the memory (an integer address in bindings),
 *   `NULL` (0) for size 0 (no error) or with @error set on failure
 */
gpointer
ds_memory_resource_allocate_async (DsMemoryResource     *self,
                                   gsize                 size,
                                   gsize                 alignment,
                                   const DsAccessOrder  *order,
                                   GError              **error)
{
  g_return_val_if_fail (DS_IS_MEMORY_RESOURCE (self), NULL);
  g_return_val_if_fail (order != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  return allocate_checked (self, size, alignment, order, error);
}

/**
 * DsMemoryResourceInterface::deallocate_async:
 * @self: a #DsMemoryResource
 * @ptr: (type guint64): memory from @self (an integer address in bindings)
 * @size: the size it was allocated with
 * @alignment: the alignment it was allocated with
 * @order: the order in which the memory was last used
 *
 * Takes back a block that work queued in @order may still use; the
 * resource must not hand it to anyone else before that work has finished.
 * (The invoker, [method@Ds.MemoryResource.deallocate_async], has another
 * signature, so the pointer's annotation lives here.)
 */

/**
 * ds_memory_resource_deallocate_async:
 * @self: a #DsMemoryResource
 * @ptr: (type guint64): memory from @self (an integer address in bindings)
 * @size: the size it was allocated with
 * @alignment: the alignment it was allocated with
 * @order: the order in which the memory was last used
 * @error: return location for a #GError
 *
 * Gives back memory that work queued in @order may still use.
 *
 * A stream-ordered resource takes it at once and reuses it only once that
 * work has finished. For a resource that is not stream-ordered, this
 * function first waits until @order's stream has drained and then calls
 * [method@Ds.MemoryResource.deallocate]: the memory is never handed back
 * while queued work may still touch it. If waiting fails (a broken
 * device), the memory is not given back (it leaks rather than being
 * reused too early) and @error is set.
 *
 * Returns: `TRUE` on success
 */
gboolean
ds_memory_resource_deallocate_async (DsMemoryResource     *self,
                                     gpointer              ptr,
                                     gsize                 size,
                                     gsize                 alignment,
                                     const DsAccessOrder  *order,
                                     GError              **error)
{
  DsMemoryResourceInterface *iface;

  g_return_val_if_fail (DS_IS_MEMORY_RESOURCE (self), FALSE);
  g_return_val_if_fail (order != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (ptr == NULL)
    return TRUE;

  iface = DS_MEMORY_RESOURCE_GET_IFACE (self);
  if (alignment == 0)
    alignment = 16;

  if (iface->deallocate_async != NULL)
    {
      iface->deallocate_async (self, ptr, size, alignment, order);
      return TRUE;
    }

  if (G_UNLIKELY (iface->deallocate == NULL))
    {
      g_set_error (error, DS_ERROR, DS_ERROR_INVALID_ARGUMENT,
                   "%s implements DsMemoryResource without deallocate",
                   G_OBJECT_TYPE_NAME (self));
      return FALSE;
    }
  if (!ds_access_order_synchronize (order, error))
    return FALSE;

  iface->deallocate (self, ptr, size, alignment);
  return TRUE;
}
