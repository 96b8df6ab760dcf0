/* ds-default-resources.c: the process-wide default resource of each kind
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * How it works: one default per (kind, device, driver context), created on
 * first use as a DsPoolResource over the raw resource of that kind, so
 * that steady-state scratch memory makes no cudaMalloc* or cudaFree* call.
 * A GStreamer element runs with its own non-primary context current, and
 * memory for it must come from that context, hence the context in the key;
 * the primary context of a device (and "no context yet") share one entry.
 * Scratchpads find their defaults through a per-thread cache that costs no
 * lock and no CUDA call when the same default is wanted again;
 * set_default () bumps an epoch that invalidates every cache. Replaced
 * defaults stay alive until exit, because get_default () hands them out
 * without a reference.
 */

#include "config.h"

#include "ds-default-resources-private.h"
#include "ds-cuda-private.h"
#include "ds-device-memory-resource.h"
#include "ds-error.h"
#include "ds-fence-private.h"
#include "ds-host-memory-resource.h"
#include "ds-managed-memory-resource.h"
#include "ds-memory-resource-private.h"
#include "ds-pinned-memory-resource.h"
#include "ds-pool-resource-private.h"

typedef struct
{
  DsMemoryKind kind;
  gint         device;
  gpointer     context;
} RegistryKey;

typedef struct
{
  DsMemoryResource *resource;      /* one reference */
  gboolean          self_scoped;   /* created by ds: enters its own context */
  DsUpstream        upstream;      /* @resource bound, at its first lookup */
} RegistryEntry;

static void
registry_entry_free (gpointer data)
{
  RegistryEntry *entry = data;

  g_object_unref (entry->resource);
  g_free (entry);
}

static GMutex registry_lock;
static gint registry_epoch = 1;  /* bumped by set_default (); 0 = never */
static GHashTable *registry;   /* RegistryKey* -> RegistryEntry* (owned) */
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
                                        g_free, registry_entry_free);
      graveyard = g_ptr_array_new_with_free_func (g_object_unref);
    }
}

static gboolean
resolve_device (DsMemoryKind   kind,
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

  if (*device < 0 && (*device = ds_cuda_get_device ()) < 0)
    {
      g_set_error_literal (error, DS_ERROR, DS_ERROR_CUDA,
                           "cudaGetDevice failed: no current CUDA device");
      return FALSE;
    }

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
  gpointer ctx;

  if (kind == DS_MEMORY_KIND_HOST)
    return NULL;

  ctx = ds_cuda_get_current_context ();
  if (ctx == NULL || ds_cuda_get_device () != device ||
      ctx == ds_cuda_get_primary_context (device))
    return NULL;

  return ctx;
}

DsMemoryResource *
ds_default_resource_new (DsMemoryKind   kind,
                         gint           device,
                         gpointer       context,
                         GError       **error)
{
  g_autoptr(DsMemoryResource) upstream = NULL;
  DsMemoryResource *pool;

  g_return_val_if_fail (DS_MEMORY_KIND_IS_VALID (kind), NULL);

  if (kind != DS_MEMORY_KIND_HOST && !ds_cuda_ensure_available (error))
    return NULL;

  switch (kind)
    {
    case DS_MEMORY_KIND_HOST:
      upstream = ds_host_memory_resource_new ();
      pool = ds_pool_resource_new (upstream);
      ds_pool_resource_set_record_label (DS_POOL_RESOURCE (pool), g_intern_static_string ("default"));
      return pool;
    case DS_MEMORY_KIND_PINNED:
      upstream = ds_pinned_memory_resource_new ();
      break;
    case DS_MEMORY_KIND_DEVICE:
      upstream = ds_device_memory_resource_new (device);
      break;
    case DS_MEMORY_KIND_MANAGED:
    default:
      upstream = ds_managed_memory_resource_new (device);
      break;
    }

  pool = ds_pool_resource_new_for_device (upstream, device, context);
  ds_pool_resource_set_record_label (DS_POOL_RESOURCE (pool), g_intern_static_string ("default"));
  return pool;
}
/* A new entry of the registry for @resource; takes its reference. */
static RegistryEntry *
registry_entry_new (DsMemoryResource *resource,
                    gboolean          self_scoped)
{
  RegistryEntry *entry = g_new0 (RegistryEntry, 1);

  entry->resource = resource;
  entry->self_scoped = self_scoped;
  return entry;
}

/* The default of @kind for (@device, @context), created if there is none
 * yet, into *@upstream (bound: a resource set as the default that lacks
 * what it needs is refused here). *@self_scoped: it is one ds created. */
static gboolean
lookup (DsMemoryKind   kind,
        gint           device,
        gpointer       context,
        DsUpstream    *upstream,
        gboolean      *self_scoped,
        GError       **error)
{
  RegistryKey key = { kind, device, context };
  RegistryEntry *entry;
  gboolean ok = FALSE;

  g_mutex_lock (&registry_lock);
  registry_ensure ();
  entry = g_hash_table_lookup (registry, &key);
  if (entry == NULL)
    {
      DsMemoryResource *resource = ds_default_resource_new (kind, device, context, error);

      if (resource != NULL)
        {
          g_debug ("Created the default %s resource for device %d: %s",
                   ds_memory_kind_get_nick (kind), device,
                   G_OBJECT_TYPE_NAME (resource));
          entry = registry_entry_new (resource, TRUE);
          g_hash_table_insert (registry, g_memdup2 (&key, sizeof key), entry);
        }
    }
  if (entry != NULL &&
      (entry->upstream.resource != NULL ||
       ds_upstream_bind (&entry->upstream, entry->resource, error)))
    {
      *upstream = entry->upstream;
      *self_scoped = entry->self_scoped;
      ok = TRUE;
    }
  g_mutex_unlock (&registry_lock);

  return ok;
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
  DsUpstream upstream;
  gboolean self_scoped;

  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!ds_memory_check_kind (kind, error))
    return NULL;
  if (device < -1)
    {
      g_set_error (error, DS_ERROR, DS_ERROR_INVALID_ARGUMENT,
                   "Device %d does not exist", device);
      return NULL;
    }
  if (!resolve_device (kind, &device, error) ||
      !lookup (kind, device, registry_context_for (kind, device), &upstream, &self_scoped, error))
    return NULL;

  return upstream.resource;
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
  RegistryEntry *old;
  g_autoptr(GError) error = NULL;

  g_return_if_fail (DS_MEMORY_KIND_IS_VALID (kind));
  g_return_if_fail (device >= -1);
  g_return_if_fail (resource == NULL || DS_IS_MEMORY_RESOURCE (resource));
  g_return_if_fail (resource == NULL || ds_memory_resource_get_kind (resource) == kind);

  if (!resolve_device (kind, &device, &error))
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
      g_ptr_array_add (graveyard, g_object_ref (old->resource));
      g_hash_table_remove (registry, &key);
    }
  if (resource != NULL)
    g_hash_table_insert (registry, g_memdup2 (&key, sizeof key),
                         registry_entry_new (g_object_ref (resource), FALSE));
  g_atomic_int_inc (&registry_epoch);
  g_mutex_unlock (&registry_lock);
}

/**
 * ds_memory_resource_forget_context: (skip)
 * @context: (nullable): a `CUcontext` that is about to be destroyed, such
 *   as a `GstCudaContext`'s
 *
 * Lets go of everything ds keeps for a CUDA driver context that is about
 * to be destroyed: the default resources of every kind made for it leave
 * the registry (a later request in a context at the same address makes
 * new ones) after giving back the memory they cached, waiting for the work
 * queued on it; the fences of the context's streams are marked complete
 * and their CUDA events destroyed.
 *
 * Call it while the context still exists, when nothing of it is in use any
 * more (no scratchpad, block or resource of it alive elsewhere), e.g. in
 * the dispose of the object that owns the context, as libds-gst does for
 * a `GstCudaContext`. Without it, ds would later destroy those events in
 * whatever context then has the address of this one. `NULL` (the primary
 * contexts, which live as long as the process) does nothing.
 */
void
ds_memory_resource_forget_context (gpointer context)
{
  GPtrArray *forgotten;
  GHashTableIter iter;
  gpointer key, value;

  if (context == NULL)
    return;

  forgotten = g_ptr_array_new_with_free_func (registry_entry_free);
  g_mutex_lock (&registry_lock);
  if (registry != NULL)
    {
      g_hash_table_iter_init (&iter, registry);
      while (g_hash_table_iter_next (&iter, &key, &value))
        if (((RegistryKey *) key)->context == context)
          {
            g_ptr_array_add (forgotten, value);
            g_hash_table_iter_steal (&iter);
            g_free (key);
          }
      g_atomic_int_inc (&registry_epoch);
    }
  g_mutex_unlock (&registry_lock);

  /* Pools ds made are bound to the context: they enter it to give their
   * memory back. A resource set by the caller is the caller's to clean. */
  for (guint i = 0; i < forgotten->len; i++)
    {
      RegistryEntry *entry = forgotten->pdata[i];

      if (entry->self_scoped)
        (void) ds_pool_resource_drain (DS_POOL_RESOURCE (entry->resource));
      /* Scratchpads borrow defaults: keep the object, empty. */
      g_mutex_lock (&registry_lock);
      g_ptr_array_add (graveyard, g_object_ref (entry->resource));
      g_mutex_unlock (&registry_lock);
    }
  g_ptr_array_free (forgotten, TRUE);

  ds_stream_state_forget_context (context);
}

/**
 * ds_memory_resource_trim_defaults:
 *
 * Gives back to CUDA (and to the C library) everything the default
 * resources that ds made keep cached, on every device and driver context,
 * waiting for the stream work that may still use it. What scratchpads
 * hold is theirs until they are released.
 *
 * The default pools keep their cached memory for the life of the process,
 * so a leak checker run at exit (`compute-sanitizer --leak-check full`,
 * valgrind) reports it as unreleased. Call this once nothing uses ds any
 * more, before the program ends, for a clean report; ds-gst calls it for a
 * context's pools when the last element using them stops. ds stays usable
 * afterwards: the pools fill again on demand.
 *
 * Returns: the number of bytes given back
 */
guint64
ds_memory_resource_trim_defaults (void)
{
  g_autoptr(GPtrArray) pools = g_ptr_array_new_with_free_func (g_object_unref);
  GHashTableIter iter;
  gpointer value;
  guint64 freed = 0;

  g_mutex_lock (&registry_lock);
  if (registry != NULL)
    {
      g_hash_table_iter_init (&iter, registry);
      while (g_hash_table_iter_next (&iter, NULL, &value))
        if (((RegistryEntry *) value)->self_scoped)
          g_ptr_array_add (pools, g_object_ref (((RegistryEntry *) value)->resource));
    }
  g_mutex_unlock (&registry_lock);

  for (guint i = 0; i < pools->len; i++)
    freed += ds_pool_resource_drain (pools->pdata[i]);

  return freed;
}

typedef struct
{
  gint        epoch;
  gint        device;
  gpointer    context;
  DsUpstream  upstream;      /* the registry keeps its resource alive */
  gboolean    self_scoped;
} DefaultCacheEntry;

/* The compiler's TLS model, not initial-exec: libds carries the static
 * CUDA runtime, whose thread-local block (4 KiB, page-aligned) is more
 * than the static TLS that glibc keeps for dlopen()ed libraries, and
 * PyGObject, gjs and GStreamer's plugin loader dlopen() libds. One
 * initial-exec variable would make the whole block static. __thread, not
 * a GPrivate: read for every kind a new scratchpad sets up (see
 * thread_slot () in ds-pool-resource.c). */
static __thread DefaultCacheEntry default_cache[DS_N_MEMORY_KINDS];

const DsUpstream *
ds_default_resource_get_cached (DsMemoryKind   kind,
                                gint           device,
                                gpointer       context,
                                gboolean      *self_scoped,
                                GError       **error)
{
  DefaultCacheEntry *entry = &default_cache[kind];
  gint epoch = g_atomic_int_get (&registry_epoch);
  DsUpstream upstream;
  gboolean scoped = FALSE;
  gpointer key_context = NULL;

  if (G_LIKELY (entry->epoch == epoch && entry->device == device &&
                entry->context == context && device >= 0))
    {
      *self_scoped = entry->self_scoped;
      return &entry->upstream;
    }

  if (kind == DS_MEMORY_KIND_HOST)
    {
      device = 0;
    }
  else if (device < 0)
    {
      /* No device known: the current one, as get_default () takes it. */
      if (!resolve_device (kind, &device, error))
        return NULL;
      key_context = registry_context_for (kind, device);
    }
  else
    {
      if (!resolve_device (kind, &device, error))
        return NULL;
      /* The primary context of a device and "not known" share an entry. */
      if (context != ds_cuda_get_primary_context (device))
        key_context = context;
    }
  if (!lookup (kind, device, key_context, &upstream, &scoped, error))
    return NULL;

  entry->epoch = epoch;
  entry->device = device;
  entry->context = context;
  entry->upstream = upstream;
  entry->self_scoped = scoped;
  *self_scoped = scoped;

  return &entry->upstream;
}
