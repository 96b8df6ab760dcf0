/* ds-memory-resource.c: the upstream interface and the default registry
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "ds-memory-resource-private.h"
#include "ds-access-order-private.h"
#include "ds-cuda-private.h"
#include "ds-enum-types.h"
#include "ds-error.h"
#include "ds-pool-resource-private.h"

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

gboolean
ds_memory_check_size_alignment (gsize    size,
                                gsize   *alignment,
                                gsize    default_alignment,
                                GError **error)
{
  gsize a = *alignment != 0 ? *alignment : default_alignment;

  if (G_UNLIKELY ((a & (a - 1)) != 0))
    {
      g_set_error (error, DS_ERROR, DS_ERROR_INVALID_ARGUMENT,
                   "Alignment %" G_GSIZE_FORMAT " is not a power of two", a);
      return FALSE;
    }
  if (G_UNLIKELY (size > G_MAXSIZE - a))
    {
      g_set_error (error, DS_ERROR, DS_ERROR_INVALID_ARGUMENT,
                   "Size %" G_GSIZE_FORMAT " with alignment %" G_GSIZE_FORMAT
                   " overflows", size, a);
      return FALSE;
    }

  *alignment = a;
  return TRUE;
}

static gboolean
check_kind (DsMemoryKind   kind,
            GError       **error)
{
  if (G_LIKELY (DS_MEMORY_KIND_IS_VALID (kind)))
    return TRUE;

  g_set_error (error, DS_ERROR, DS_ERROR_INVALID_ARGUMENT,
               "Unknown memory kind %d", (int) kind);
  return FALSE;
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
 * Returns: (transfer none) (nullable) (type guintptr): the memory, `NULL`
 *   for size 0 (no error) or with @error set on failure
 */
gpointer
ds_memory_resource_allocate (DsMemoryResource  *self,
                             gsize              size,
                             gsize              alignment,
                             GError           **error)
{
  DsMemoryResourceInterface *iface;

  g_return_val_if_fail (DS_IS_MEMORY_RESOURCE (self), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  iface = DS_MEMORY_RESOURCE_GET_IFACE (self);
  g_return_val_if_fail (iface->allocate != NULL, NULL);

  if (!ds_memory_check_size_alignment (size, &alignment, 16, error))
    return NULL;
  if (size == 0)
    return NULL;

  return iface->allocate (self, size, alignment, error);
}

/**
 * ds_memory_resource_deallocate: (virtual deallocate)
 * @self: a #DsMemoryResource
 * @ptr: (nullable) (type guintptr): memory from @self
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
 * Returns: (transfer none) (nullable) (type guintptr): the memory, `NULL`
 *   for size 0 (no error) or with @error set on failure
 */
gpointer
ds_memory_resource_allocate_async (DsMemoryResource     *self,
                                   gsize                 size,
                                   gsize                 alignment,
                                   const DsAccessOrder  *order,
                                   GError              **error)
{
  DsMemoryResourceInterface *iface;

  g_return_val_if_fail (DS_IS_MEMORY_RESOURCE (self), NULL);
  g_return_val_if_fail (order != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  iface = DS_MEMORY_RESOURCE_GET_IFACE (self);
  if (iface->allocate_async == NULL)
    return ds_memory_resource_allocate (self, size, alignment, error);

  if (!ds_memory_check_size_alignment (size, &alignment, 16, error))
    return NULL;
  if (size == 0)
    return NULL;

  return iface->allocate_async (self, size, alignment, order, error);
}

/**
 * DsMemoryResourceInterface::deallocate_async:
 * @self: a #DsMemoryResource
 * @ptr: (nullable) (type guintptr): memory from @self
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
 * @ptr: (nullable) (type guintptr): memory from @self
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

  if (!ds_access_order_synchronize (order, error))
    return FALSE;

  iface->deallocate (self, ptr, size, alignment);
  return TRUE;
}

/* The default-resource registry.
 *
 * One default per (kind, device, driver context): a GStreamer element runs
 * with its own non-primary context current, and memory for it must come
 * from that context. The primary context of a device (and "no context yet")
 * share one entry. Replaced defaults are kept alive until exit, because
 * get_default () returns them without a reference. */

typedef struct
{
  DsMemoryKind kind;
  gint         device;
  gpointer     context;
} RegistryKey;

static GMutex registry_lock;
static gint registry_epoch = 1;  /* bumped by set_default (); 0 = never */
static GHashTable *registry;   /* RegistryKey* -> DsMemoryResource* (owned) */
static GPtrArray *graveyard;   /* replaced defaults, kept alive */

static guint
registry_key_hash (gconstpointer p)
{
  const RegistryKey *key = p;

  return (guint) key->kind * 31u + (guint) key->device * 7u + g_direct_hash (key->context);
}

static gboolean
registry_key_equal (gconstpointer a,
                    gconstpointer b)
{
  const RegistryKey *ka = a, *kb = b;

  return ka->kind == kb->kind && ka->device == kb->device && ka->context == kb->context;
}

static void
registry_ensure (void)
{
  if (registry == NULL)
    {
      registry = g_hash_table_new_full (registry_key_hash, registry_key_equal,
                                        g_free, g_object_unref);
      graveyard = g_ptr_array_new_with_free_func (g_object_unref);
    }
}

gboolean
ds_memory_resolve_device (DsMemoryKind   kind,
                          gint          *device,
                          GError       **error)
{
  gint count;

  if (kind == DS_MEMORY_KIND_HOST)
    {
      *device = 0;
      return TRUE;
    }

  if (!ds_cuda_ensure_available (error))
    return FALSE;

  count = ds_cuda_get_device_count ();

#if HAVE_CUDA
  if (*device < 0)
    {
      int current = 0;

      if (!DS_CUDA_CHECK (cudaGetDevice (&current), error))
        return FALSE;
      *device = current;
    }
#endif

  if (*device >= count)
    {
      g_set_error (error, DS_ERROR, DS_ERROR_INVALID_ARGUMENT,
                   "Device %d does not exist: this machine has %d CUDA device%s",
                   *device, count, count == 1 ? "" : "s");
      return FALSE;
    }

  return TRUE;
}

/* The context part of the key: the current driver context if it belongs
 * to @device and is not its primary context, else NULL. */
static gpointer
registry_context_for (DsMemoryKind kind,
                      gint         device)
{
#if HAVE_CUDA
  gpointer ctx;
  int current = -1;

  if (kind == DS_MEMORY_KIND_HOST)
    return NULL;

  ctx = ds_cuda_get_current_context ();
  if (ctx == NULL)
    return NULL;
  if (cudaGetDevice (&current) != cudaSuccess || current != device)
    {
      (void) cudaGetLastError ();
      return NULL;
    }
  if (ctx == ds_cuda_get_primary_context (device))
    return NULL;

  return ctx;
#else
  return NULL;
#endif
}

static DsMemoryResource *
create_default (DsMemoryKind   kind,
                gint           device,
                GError       **error)
{
  return ds_pool_resource_new_default (kind, device, error);
}

/**
 * ds_memory_resource_get_default:
 * @kind: a memory kind
 * @device: a CUDA device index, or -1 for the current device; ignored for
 *   host memory
 * @error: return location for a #GError
 *
 * The process-wide default resource of @kind for @device (and for the
 * CUDA driver context current on the calling thread, when that is not the
 * device's primary context, as with GStreamer's `GstCudaContext`).
 *
 * The default is created on first use. Unless replaced with
 * [func@Ds.MemoryResource.set_default] it is a [class@Ds.PoolResource] over
 * the raw resource of that kind. Host memory never touches CUDA.
 *
 * This function is thread-safe.
 *
 * Returns: (transfer none): the resource, or `NULL` with @error set:
 *   %DS_ERROR_INVALID_ARGUMENT for an unknown kind or a device that does
 *   not exist, %DS_ERROR_NO_DEVICE without a CUDA driver or device,
 *   %DS_ERROR_NOT_SUPPORTED when ds was built without CUDA
 */
DsMemoryResource *
ds_memory_resource_get_default (DsMemoryKind   kind,
                                gint           device,
                                GError       **error)
{
  RegistryKey key;
  DsMemoryResource *resource;

  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!check_kind (kind, error))
    return NULL;
  if (device < -1)
    {
      g_set_error (error, DS_ERROR, DS_ERROR_INVALID_ARGUMENT,
                   "Device %d does not exist", device);
      return NULL;
    }
  if (!ds_memory_resolve_device (kind, &device, error))
    return NULL;

  key.kind = kind;
  key.device = device;
  key.context = registry_context_for (kind, device);

  g_mutex_lock (&registry_lock);
  registry_ensure ();
  resource = g_hash_table_lookup (registry, &key);
  if (resource == NULL)
    {
      resource = create_default (kind, device, error);
      if (resource != NULL)
        {
          g_debug ("Created the default %s resource for device %d: %s",
                   ds_memory_kind_get_nick (kind), device,
                   G_OBJECT_TYPE_NAME (resource));
          g_hash_table_insert (registry, g_memdup2 (&key, sizeof key), resource);
        }
    }
  g_mutex_unlock (&registry_lock);

  return resource;
}

/**
 * ds_memory_resource_set_default:
 * @kind: a memory kind
 * @device: a CUDA device index, or -1 for the current device; ignored for
 *   host memory
 * @resource: (nullable): the new default, of kind @kind; `NULL` goes back
 *   to the built-in default
 *
 * Replaces the default resource of @kind for @device (and for the driver
 * context current on the calling thread, as in
 * [func@Ds.MemoryResource.get_default]).
 *
 * Scratchpads that already took memory keep using the resource they got it
 * from. The replaced default stays alive until the process exits, since
 * callers of get_default() hold no reference; set defaults at start-up, not
 * per unit of work.
 *
 * This function is thread-safe.
 */
void
ds_memory_resource_set_default (DsMemoryKind      kind,
                                gint              device,
                                DsMemoryResource *resource)
{
  RegistryKey key;
  DsMemoryResource *old;
  g_autoptr(GError) error = NULL;

  g_return_if_fail (DS_MEMORY_KIND_IS_VALID (kind));
  g_return_if_fail (device >= -1);
  g_return_if_fail (resource == NULL || DS_IS_MEMORY_RESOURCE (resource));
  g_return_if_fail (resource == NULL || ds_memory_resource_get_kind (resource) == kind);

  if (!ds_memory_resolve_device (kind, &device, &error))
    {
      g_critical ("%s: %s", G_STRFUNC, error->message);
      return;
    }

  key.kind = kind;
  key.device = device;
  key.context = registry_context_for (kind, device);

  g_mutex_lock (&registry_lock);
  registry_ensure ();
  old = g_hash_table_lookup (registry, &key);
  if (old != NULL)
    {
      g_ptr_array_add (graveyard, g_object_ref (old));
      g_hash_table_remove (registry, &key);
    }
  if (resource != NULL)
    g_hash_table_insert (registry, g_memdup2 (&key, sizeof key), g_object_ref (resource));
  g_atomic_int_inc (&registry_epoch);
  g_mutex_unlock (&registry_lock);
}

typedef struct
{
  gint              epoch;
  gint              device;
  gpointer          context;
  DsMemoryResource *resource;   /* no reference: the registry keeps it alive */
} DefaultCacheEntry;

/* initial-exec: libds is loaded at start-up (not dlopen()ed late), and
 * this spares a __tls_get_addr call per lookup. */
static __thread DefaultCacheEntry default_cache[DS_N_MEMORY_KINDS]
  __attribute__ ((tls_model ("initial-exec")));

DsMemoryResource *
ds_memory_resource_get_default_cached (DsMemoryKind   kind,
                                       gint           device,
                                       gpointer       context,
                                       GError       **error)
{
  DefaultCacheEntry *entry = &default_cache[kind];
  gint epoch = g_atomic_int_get (&registry_epoch);
  DsMemoryResource *resource;

  if (G_LIKELY (entry->epoch == epoch && entry->device == device &&
                entry->context == context && device >= 0))
    return entry->resource;

  resource = ds_memory_resource_get_default (kind, device, error);
  if (resource != NULL && device >= 0)
    {
      entry->epoch = epoch;
      entry->device = device;
      entry->context = context;
      entry->resource = resource;
    }

  return resource;
}
