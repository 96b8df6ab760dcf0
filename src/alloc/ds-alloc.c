/* ds-alloc.c: ds memory for PyTorch, CuPy and other frameworks
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Every block handed out is recorded (address, size, resource, the order
 * it was taken in, the readers registered since) in one of 64 shards, each
 * a hash table under its own lock, so that a block goes back to the
 * resource it came from, in stream order, after its readers, whatever
 * thread frees it. Only the public API of libds is used.
 */

#include "config.h"

#include "ds-alloc.h"

/* libds-alloc hands a framework's temporaries out of a ds pool in stream
 * order and takes them back in stream order. ds_torch_alloc() and
 * ds_torch_free() have the signatures of
 * `torch.cuda.memory.CUDAPluggableAllocator`; ds_alloc_allocate() and
 * ds_alloc_deallocate() serve any other caller (CuPy's allocator hook).
 *
 * The resource a request is served from: the one given, else the
 * innermost one pushed on the calling thread (ds_alloc_push_resource()),
 * else the one set for the device (ds_alloc_set_resource()), else ds's
 * default device pool of the device
 * ([func@Ds.MemoryResource.get_default]).
 *
 * A block used by work on another stream than the one it was taken on
 * (PyTorch's `record_stream`) must not go back before that work has
 * finished: ds_alloc_add_reader() registers the consumer's stream, as
 * [method@DsGst.ScratchMeta.add_reader] does for a buffer's scratch.
 *
 * Every function is thread-safe.
 */

#define N_SHARDS_SHIFT 6
#define N_SHARDS       (1u << N_SHARDS_SHIFT)
#define MAX_DEVICES    64

/* Who gives a block back: ds_torch_free () the blocks of ds_torch_alloc (),
 * ds_alloc_deallocate () those of ds_alloc_allocate (), so that a Python
 * caller cannot give back a tensor's memory behind PyTorch's back. */
typedef enum
{
  OWNER_CALLER,
  OWNER_TORCH,
} Owner;

typedef struct
{
  gpointer          ptr;
  gsize             size;      /* as asked of the resource */
  Owner             owner;
  DsMemoryResource *resource;  /* owned */
  DsAccessOrder     order;     /* the order it was taken in */
  GPtrArray        *readers;   /* DsOrderMark, one per order; NULL if none */
} Block;

typedef struct
{
  GMutex      lock;
  GHashTable *blocks;          /* ptr -> Block; created on first use */
} Shard;

static Shard shards[N_SHARDS];
static gint n_blocks;
static guint64 n_bytes;
static guint64 peak_bytes;

/* Per device, set by ds_alloc_set_resource (); a replaced resource stays
 * alive (a request on another thread may be using it). */
static DsMemoryResource *device_resources[MAX_DEVICES];
static GMutex device_resources_lock;
static GPtrArray *retired_resources;   /* under device_resources_lock */

/* The calling thread's stack of pushed resources (NULL entries: the
 * default). */
static GPrivate thread_stack = G_PRIVATE_INIT ((GDestroyNotify) g_ptr_array_unref);

static void
unref_nullable (gpointer object)
{
  if (object != NULL)
    g_object_unref (object);
}

static Shard *
shard_for (gconstpointer ptr)
{
  guint64 h = ((guint64) (guintptr) ptr >> 8) * G_GUINT64_CONSTANT (0x9E3779B97F4A7C15);

  return &shards[h >> (64 - N_SHARDS_SHIFT)];
}

static void
block_free (Block *block)
{
  g_clear_pointer (&block->readers, g_ptr_array_unref);
  g_object_unref (block->resource);
  g_free (block);
}

/* Whether @resource can serve a framework: device or managed memory,
 * stream-ordered. */
static gboolean
check_resource (DsMemoryResource  *resource,
                GError           **error)
{
  DsMemoryKind kind = ds_memory_resource_get_kind (resource);

  if (kind != DS_MEMORY_KIND_DEVICE && kind != DS_MEMORY_KIND_MANAGED)
    {
      g_autofree gchar *name = g_enum_to_string (DS_TYPE_MEMORY_KIND, kind);

      g_set_error (error, DS_ERROR, DS_ERROR_INVALID_ARGUMENT,
                   "A resource of %s cannot serve a framework: device or managed memory only",
                   name);
      return FALSE;
    }
  if (!ds_memory_resource_is_stream_ordered (resource))
    {
      g_set_error (error, DS_ERROR, DS_ERROR_INVALID_ARGUMENT,
                   "A %s is not stream-ordered: wrap it in a DsPoolResource",
                   G_OBJECT_TYPE_NAME (resource));
      return FALSE;
    }
  return TRUE;
}

/* The resource a request without one is served from (transfer none). */
static DsMemoryResource *
resolve_resource (gint     device,
                  GError **error)
{
  GPtrArray *stack = g_private_get (&thread_stack);
  DsMemoryResource *resource = NULL;

  if (stack != NULL && stack->len > 0)
    resource = stack->pdata[stack->len - 1];
  if (resource == NULL && (stack == NULL || stack->len == 0) &&
      device >= 0 && device < MAX_DEVICES)
    resource = g_atomic_pointer_get (&device_resources[device]);
  if (resource == NULL)
    resource = ds_memory_resource_get_default (DS_MEMORY_KIND_DEVICE, device, error);
  return resource;
}

/**
 * ds_alloc_push_resource:
 * @resource: (nullable): a stream-ordered device or managed memory
 *   resource, or `NULL` for ds's default device pool
 * @error: return location for a #GError
 *
 * Makes @resource serve the requests of the calling thread that name no
 * resource (ds_torch_alloc(), and ds_alloc_allocate() with `NULL`) until
 * the matching ds_alloc_pop_resource(). Pushes nest.
 *
 * Returns: `TRUE`, or `FALSE` with %DS_ERROR_INVALID_ARGUMENT when
 *   @resource is not stream-ordered or not of device or managed memory
 */
gboolean
ds_alloc_push_resource (DsMemoryResource  *resource,
                        GError           **error)
{
  GPtrArray *stack;

  g_return_val_if_fail (resource == NULL || DS_IS_MEMORY_RESOURCE (resource), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (resource != NULL && !check_resource (resource, error))
    return FALSE;

  stack = g_private_get (&thread_stack);
  if (stack == NULL)
    {
      stack = g_ptr_array_new_with_free_func (unref_nullable);
      g_private_set (&thread_stack, stack);
    }
  g_ptr_array_add (stack, resource != NULL ? g_object_ref (resource) : NULL);
  return TRUE;
}

/**
 * ds_alloc_pop_resource:
 *
 * Ends the innermost ds_alloc_push_resource() of the calling thread.
 * Blocks taken meanwhile keep their resource alive until they go back.
 */
void
ds_alloc_pop_resource (void)
{
  GPtrArray *stack = g_private_get (&thread_stack);
  gpointer top;

  g_return_if_fail (stack != NULL && stack->len > 0);

  top = g_ptr_array_steal_index (stack, stack->len - 1);
  unref_nullable (top);
}

/**
 * ds_alloc_set_resource:
 * @device: a CUDA device index
 * @resource: (nullable): a stream-ordered device or managed memory
 *   resource, or `NULL` for ds's default device pool
 * @error: return location for a #GError
 *
 * Makes @resource serve the requests for @device that name no resource,
 * on threads that pushed none. Meant for start-up (the whole-process
 * form): a replaced resource stays alive until the process exits.
 *
 * Returns: `TRUE`, or `FALSE` with %DS_ERROR_INVALID_ARGUMENT
 */
gboolean
ds_alloc_set_resource (gint               device,
                       DsMemoryResource  *resource,
                       GError           **error)
{
  g_return_val_if_fail (resource == NULL || DS_IS_MEMORY_RESOURCE (resource), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (device < 0 || device >= MAX_DEVICES)
    {
      g_set_error (error, DS_ERROR, DS_ERROR_INVALID_ARGUMENT,
                   "Device %d is out of range (0 to %d)", device, MAX_DEVICES - 1);
      return FALSE;
    }
  if (resource != NULL && !check_resource (resource, error))
    return FALSE;

  /* The old one is kept for good: see above. */
  g_mutex_lock (&device_resources_lock);
  if (device_resources[device] != NULL)
    {
      if (retired_resources == NULL)
        retired_resources = g_ptr_array_new ();
      g_ptr_array_add (retired_resources, device_resources[device]);
    }
  g_atomic_pointer_set (&device_resources[device],
                        resource != NULL ? g_object_ref (resource) : NULL);
  g_mutex_unlock (&device_resources_lock);
  return TRUE;
}

/* Raises peak_bytes to @bytes if it is higher. */
static inline void
raise_peak (guint64 bytes)
{
  guint64 peak = __atomic_load_n (&peak_bytes, __ATOMIC_RELAXED);

  while (bytes > peak &&
         !__atomic_compare_exchange_n (&peak_bytes, &peak, bytes, TRUE,
                                       __ATOMIC_RELAXED, __ATOMIC_RELAXED))
    ;
}

/* Takes a block and records it. */
static gpointer
allocate (DsMemoryResource  *resource,
          gsize              size,
          gint               device,
          gpointer           stream,
          Owner              owner,
          GError           **error)
{
  DsAccessOrder order;
  Block *block;
  Shard *shard;
  gpointer ptr;

  if (resource != NULL && !check_resource (resource, error))
    return NULL;

  ds_access_order_init_stream (&order, stream, device);
  if (resource == NULL)
    {
      resource = resolve_resource (ds_access_order_get_device (&order), error);
      if (resource == NULL)
        return NULL;
    }

  size = MAX (size, 1);
  ptr = ds_memory_resource_allocate_async (resource, size, DS_ALLOC_ALIGNMENT, &order, error);
  if (ptr == NULL)
    return NULL;

  block = g_new (Block, 1);
  block->ptr = ptr;
  block->size = size;
  block->owner = owner;
  block->resource = g_object_ref (resource);
  block->order = order;
  block->readers = NULL;

  shard = shard_for (ptr);
  g_mutex_lock (&shard->lock);
  if (shard->blocks == NULL)
    shard->blocks = g_hash_table_new (g_direct_hash, g_direct_equal);
  g_hash_table_insert (shard->blocks, ptr, block);
  g_mutex_unlock (&shard->lock);

  g_atomic_int_inc (&n_blocks);
  raise_peak (__atomic_add_fetch (&n_bytes, size, __ATOMIC_RELAXED));
  return ptr;
}

/**
 * ds_alloc_allocate:
 * @resource: (nullable): the resource to take the block from, or `NULL`
 *   (see the section's introduction)
 * @size: bytes; 0 still gets a block of its own, so that every address
 *   handed out is distinct
 * @device: the device of @stream, or -1 for the stream's own
 * @stream: (nullable): a `cudaStream_t`; `NULL` is the legacy default
 *   stream. It must stay alive until the block is given back, in its order
 * @error: return location for a #GError
 *
 * Takes a block of at least @size bytes, aligned to
 * %DS_ALLOC_ALIGNMENT, usable at once by work queued on @stream. Give it
 * back with ds_alloc_deallocate().
 *
 * Returns: (transfer full) (nullable): the block, or `NULL` with @error
 *   set (%DS_ERROR_NO_DEVICE without a driver or device,
 *   %DS_ERROR_OUT_OF_MEMORY, %DS_ERROR_INVALID_ARGUMENT for a resource
 *   that cannot serve device memory in stream order)
 */
gpointer
ds_alloc_allocate (DsMemoryResource  *resource,
                   gsize              size,
                   gint               device,
                   gpointer           stream,
                   GError           **error)
{
  g_return_val_if_fail (resource == NULL || DS_IS_MEMORY_RESOURCE (resource), NULL);
  g_return_val_if_fail (device >= -1, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  return allocate (resource, size, device, stream, OWNER_CALLER, error);
}

/* Takes @ptr out of the record, if it is a block of @owner. */
static Block *
take_block (gpointer ptr,
            Owner    owner)
{
  Shard *shard = shard_for (ptr);
  Block *block = NULL;

  g_mutex_lock (&shard->lock);
  if (shard->blocks != NULL)
    block = g_hash_table_lookup (shard->blocks, ptr);
  if (block != NULL && block->owner == owner)
    {
      g_hash_table_remove (shard->blocks, ptr);
      g_atomic_int_add (&n_blocks, -1);
      __atomic_sub_fetch (&n_bytes, block->size, __ATOMIC_RELAXED);
    }
  else
    block = NULL;
  g_mutex_unlock (&shard->lock);

  return block;
}

/* Gives @block back in @order, after its readers; frees @block. */
static gboolean
give_back (Block               *block,
           const DsAccessOrder *order,
           GError             **error)
{
  gboolean ok;

  for (guint i = 0; block->readers != NULL && i < block->readers->len; i++)
    {
      DsOrderMark *reader = block->readers->pdata[i];
      g_autoptr(GError) wait_error = NULL;
      g_autoptr(DsAccessOrder) host = NULL;

      if (ds_order_mark_wait (reader, order, &wait_error))
        continue;
      /* Where the stream cannot wait, the host does. */
      g_clear_error (&wait_error);
      host = ds_access_order_new_host ();
      if (!ds_order_mark_wait (reader, host, &wait_error))
        g_warning ("Block %p goes back while a reader may still use it: %s",
                   block->ptr, wait_error->message);
    }

  ok = ds_memory_resource_deallocate_async (block->resource, block->ptr, block->size,
                                            DS_ALLOC_ALIGNMENT, order, error);
  block_free (block);
  return ok;
}

/**
 * ds_alloc_deallocate:
 * @ptr: (nullable): a block from ds_alloc_allocate()
 * @error: return location for a #GError
 *
 * Gives @ptr back to its resource in the order of the stream it was
 * taken on, after the work of its readers (ds_alloc_add_reader()): work
 * queued on that stream before this call may still use it. `NULL` does
 * nothing.
 *
 * Returns: `TRUE`, or `FALSE` with @error set:
 *   %DS_ERROR_INVALID_ARGUMENT for an address ds_alloc_allocate() did not
 *   hand out (one of ds_torch_alloc()'s is PyTorch's to give back), or
 *   one given back already; a CUDA error from the resource
 */
gboolean
ds_alloc_deallocate (gpointer   ptr,
                     GError   **error)
{
  Block *block;
  DsAccessOrder order;

  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (ptr == NULL)
    return TRUE;

  block = take_block (ptr, OWNER_CALLER);
  if (block == NULL)
    {
      g_set_error (error, DS_ERROR, DS_ERROR_INVALID_ARGUMENT,
                   "%p was not handed out by ds_alloc_allocate (), or was given back "
                   "already", ptr);
      return FALSE;
    }

  order = block->order;
  return give_back (block, &order, error);
}

/**
 * ds_torch_alloc:
 * @size: bytes
 * @device: the CUDA device
 * @stream: the `cudaStream_t` the memory is for
 *
 * The allocation entry point of `torch.cuda.memory.CUDAPluggableAllocator`:
 * ds_alloc_allocate() from the calling thread's resource.
 *
 * Returns: the block, or `NULL` (PyTorch then reports that it is out of
 *   memory; the reason is logged at debug level in the `DsAlloc` domain)
 */
void *
ds_torch_alloc (ssize_t  size,
                int      device,
                void    *stream)
{
  g_autoptr(GError) error = NULL;
  void *ptr;

  if (size < 0 || device < -1)
    return NULL;

  ptr = allocate (NULL, (gsize) size, device, stream, OWNER_TORCH, &error);
  if (ptr == NULL)
    g_debug ("ds_torch_alloc (%" G_GSSIZE_FORMAT ", %d, %p): %s",
             (gssize) size, device, stream, error->message);
  return ptr;
}

/**
 * ds_torch_free:
 * @ptr: a block from ds_torch_alloc()
 * @size: its size
 * @device: its device
 * @stream: the `cudaStream_t` to give it back in (PyTorch passes the
 *   one it was taken for)
 *
 * The free entry point of `torch.cuda.memory.CUDAPluggableAllocator`:
 * gives @ptr back to its resource in the order of @stream, after its
 * readers. An address ds_torch_alloc() did not hand out is refused with
 * a critical and left alone.
 */
void
ds_torch_free (void    *ptr,
               ssize_t  size,
               int      device,
               void    *stream)
{
  g_autoptr(GError) error = NULL;
  DsAccessOrder order;
  Block *block;

  if (ptr == NULL)
    return;

  block = take_block (ptr, OWNER_TORCH);
  if (block == NULL)
    {
      g_critical ("ds_torch_free: %p (%" G_GSSIZE_FORMAT " bytes) was not handed out by "
                  "ds_torch_alloc, or was freed already", ptr, (gssize) size);
      return;
    }

  if (stream == ds_access_order_get_stream (&block->order))
    order = block->order;
  else
    ds_access_order_init_stream (&order, stream, device);

  if (!give_back (block, &order, &error))
    g_warning ("ds_torch_free: %p: %s", ptr, error->message);
}

/* The block that holds @ptr, under its shard's lock (*@locked), or NULL
 * with no lock held. */
static Block *
find_block (gconstpointer   ptr,
            Shard         **locked)
{
  Shard *shard = shard_for (ptr);
  Block *block;
  guintptr p = (guintptr) ptr;

  g_mutex_lock (&shard->lock);
  block = shard->blocks != NULL ? g_hash_table_lookup (shard->blocks, ptr) : NULL;
  if (block != NULL)
    {
      *locked = shard;
      return block;
    }
  g_mutex_unlock (&shard->lock);

  /* An address inside a block (a view, or a framework's own block in a
   * segment it took from here): every block, shard by shard. */
  for (guint i = 0; i < N_SHARDS; i++)
    {
      GHashTableIter iter;
      gpointer value;

      shard = &shards[i];
      g_mutex_lock (&shard->lock);
      if (shard->blocks != NULL)
        {
          g_hash_table_iter_init (&iter, shard->blocks);
          while (g_hash_table_iter_next (&iter, NULL, &value))
            {
              block = value;
              if (p >= (guintptr) block->ptr && p - (guintptr) block->ptr < block->size)
                {
                  *locked = shard;
                  return block;
                }
            }
        }
      g_mutex_unlock (&shard->lock);
    }

  return NULL;
}

/**
 * ds_alloc_add_reader:
 * @ptr: an address inside a block from ds_alloc_allocate() or
 *   ds_torch_alloc()
 * @device: the device of @stream, or -1 for the stream's own
 * @stream: (nullable): the consumer's `cudaStream_t`
 * @error: return location for a #GError
 *
 * Registers @stream as a reader of the block that holds @ptr: when the
 * block goes back, the order it goes back in waits for the work queued
 * on @stream before this call, so nobody else gets the memory while that
 * work may still read it. Call it after queuing the reads. Registering
 * the same stream again covers the work queued since. The stream the
 * block was taken on needs no registration.
 *
 * An address at the start of a block is found at once; one inside a
 * block (a view, or a block of PyTorch's inside a segment it took from
 * here) costs a walk over every live block.
 *
 * Returns: `TRUE`, or `FALSE` with @error set:
 *   %DS_ERROR_INVALID_ARGUMENT when no live block holds @ptr, a CUDA
 *   error when the stream cannot be marked
 */
gboolean
ds_alloc_add_reader (gconstpointer   ptr,
                     gint            device,
                     gpointer        stream,
                     GError        **error)
{
  DsAccessOrder order;
  DsOrderMark *mark;
  Shard *shard = NULL;
  Block *block;
  gboolean replaced = FALSE;

  g_return_val_if_fail (device >= -1, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  block = ptr != NULL ? find_block (ptr, &shard) : NULL;
  if (block == NULL)
    {
      g_set_error (error, DS_ERROR, DS_ERROR_INVALID_ARGUMENT,
                   "%p is not inside a block handed out by libds-alloc", ptr);
      return FALSE;
    }

  ds_access_order_init_stream (&order, stream, device);
  if (ds_access_order_equal (&order, &block->order))
    {
      g_mutex_unlock (&shard->lock);
      return TRUE;
    }

  mark = ds_order_mark_new (&order, error);
  if (mark == NULL)
    {
      g_mutex_unlock (&shard->lock);
      return FALSE;
    }

  if (block->readers == NULL)
    block->readers = g_ptr_array_new_with_free_func ((GDestroyNotify) ds_order_mark_unref);
  for (guint i = 0; i < block->readers->len && !replaced; i++)
    if (ds_access_order_equal (ds_order_mark_get_order (block->readers->pdata[i]), &order))
      {
        /* The newer mark covers what the older one did. */
        ds_order_mark_unref (block->readers->pdata[i]);
        block->readers->pdata[i] = mark;
        replaced = TRUE;
      }
  if (!replaced)
    g_ptr_array_add (block->readers, mark);
  g_mutex_unlock (&shard->lock);

  return TRUE;
}

/**
 * ds_alloc_get_n_blocks:
 *
 * Returns: the blocks handed out and not given back yet
 */
guint
ds_alloc_get_n_blocks (void)
{
  return (guint) g_atomic_int_get (&n_blocks);
}

/**
 * ds_alloc_get_bytes:
 *
 * Returns: the bytes of the blocks handed out and not given back yet
 */
guint64
ds_alloc_get_bytes (void)
{
  return __atomic_load_n (&n_bytes, __ATOMIC_RELAXED);
}

/**
 * ds_alloc_get_peak_bytes:
 *
 * The highest ds_alloc_get_bytes() has been since the process started or
 * the last ds_alloc_reset_peak_bytes(): the peak of what a framework had
 * in use from ds (each block counted with the size asked for). A pool's
 * [struct@Ds.PoolStats]:peak_bytes_in_use counts blocks given back but
 * still pending on their stream as well.
 *
 * Returns: the peak, in bytes
 */
guint64
ds_alloc_get_peak_bytes (void)
{
  return __atomic_load_n (&peak_bytes, __ATOMIC_RELAXED);
}

/**
 * ds_alloc_reset_peak_bytes:
 *
 * Starts the peak of ds_alloc_get_peak_bytes() again from the bytes in
 * use now.
 */
void
ds_alloc_reset_peak_bytes (void)
{
  __atomic_store_n (&peak_bytes, __atomic_load_n (&n_bytes, __ATOMIC_RELAXED),
                    __ATOMIC_RELAXED);
}
