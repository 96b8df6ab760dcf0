/* ds-scratchpad.c: the dynamic scratchpad
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "ds-scratchpad-private.h"
#include "ds-access-order-private.h"
#include "ds-arena-private.h"
#include "ds-default-resources-private.h"
#include "ds-error.h"
#include "ds-memory-resource-private.h"
#include "ds-pool-resource-private.h"

/**
 * DsScratchpad:
 *
 * Short-lived scratch memory of the four [enum@Ds.MemoryKind]s, returned
 * all at once, in CUDA stream order, when the scratchpad is released or
 * finalized.
 *
 * Each kind has a monotonic arena: allocation inside the current block is
 * a pointer bump; a full block is followed by one twice as large, up to
 * [property@Ds.Scratchpad:max-block-size] (64 MiB unless set), taken
 * from the kind's upstream [iface@Ds.MemoryResource] (by default the
 * process-wide pool of that kind for the device of
 * [property@Ds.Scratchpad:device-order]). Nothing is allocated, and no
 * CUDA call is made, before the first non-empty request of a kind.
 *
 * Device memory is allocated in the device order. On release, device blocks
 * go back in the device order, pinned and managed blocks in their
 * deallocation orders (the device order unless set): a stream-ordered
 * upstream is told the order, so it reuses the memory only once the work
 * queued before the release has finished; an upstream that is not
 * stream-ordered gets its blocks back only after that stream has drained.
 * So it is safe to drop a scratchpad while kernels that use its memory are
 * still queued.
 *
 * A scratchpad holds all its memory until it is released: either make it
 * short-lived (one per unit of work, as DALI's `DynamicScratchpad` on the
 * stack), or keep one and call [method@Ds.Scratchpad.release] after each
 * unit of work — which is the faster path, as no object is created.
 *
 * The settings (orders, initial sizes, resources) are properties that can
 * be set at construction or afterwards, until the first allocation; from
 * then on they are fixed, and setting one is a programmer error (a
 * critical; the value stays). Plain properties rather than construct-only
 * ones keep `g_object_new()` as cheap as for a GObject without properties.
 *
 * In C, [method@Ds.Scratchpad.alloc] is inlined where it can: an
 * allocation that fits in the current block of its kind costs a few
 * instructions, with no call.
 *
 * After `g_object_run_dispose()` (or a binding's explicit teardown) the
 * memory is given back and every allocation fails with
 * %DS_ERROR_DISPOSED; [method@Ds.Scratchpad.release] stays safe to call.
 *
 * A released scratchpad learns: after [method@Ds.Scratchpad.release],
 * the first block of a kind is its initial size, doubled (up to
 * [property@Ds.Scratchpad:max-block-size]) until it covers what this
 * scratchpad's recent units of work took of that kind. So a scratchpad
 * kept and released after each unit takes one block per kind per unit
 * once it has seen the sizes; a rare large unit raises the first block
 * to twice the running average at most.
 *
 * A new scratchpad starts where the last one released on the same thread
 * left off, for each kind it draws from a default resource: made for one
 * unit of work (as DALI's scratchpad is, or one per GStreamer buffer), it
 * takes one block per kind from its first unit once a scratchpad of the
 * thread has been released or dropped. A kind with a resource of its own (the `*-resource` properties)
 * starts at its initial size, as does the first scratchpad of a thread;
 * what a thread learned never makes a first block smaller than the
 * initial size.
 *
 * One scratchpad is used by one thread at a time. It may be finalized on
 * any thread: it switches to the device and driver context of its device
 * order by itself. The resources and pools behind it are thread-safe.
 */

static void ds_scratchpad_iface_iface_init (DsScratchpadIfaceInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (DsScratchpad, ds_scratchpad, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (DS_TYPE_SCRATCHPAD_IFACE,
                                                      ds_scratchpad_iface_iface_init))

static gboolean
ensure_device_order (DsScratchpad  *self,
                     GError       **error)
{
  if (G_LIKELY (self->device_order.type != DS_ACCESS_ORDER_TYPE_UNSET))
    return TRUE;

  if (!ds_cuda_ensure_available (error))
    return FALSE;

  ds_access_order_init_stream (&self->device_order, NULL, -1);
  return TRUE;
}

/* Whether the scratchpad may stop entering the device order's scope for
 * @kind (asked when a given upstream is set up, and after each block taken
 * in that scope until the answer is known).
 * It may where the scope is empty (a host order) or where the upstream
 * is a pool bound to the order's device and context (ds-gst's pools, once
 * they made their first upstream allocation in a scratchpad's scope, so
 * from the first block of every later scratchpad), which enters
 * them itself for its upstream calls, as the default pools do: then its
 * blocks take the short way (refill ()) and its releases enter nothing,
 * so a reused lifecycle makes no CUDA call to check the current context
 * (one per block and one per release before; bench-cuda-calls' own-pools
 * case). */
static void
note_self_scoped (DsScratchpad *self,
                  DsMemoryKind  kind)
{
  DsPoolBinding binding;

  switch (self->device_order.type)
    {
    case DS_ACCESS_ORDER_TYPE_HOST:
      binding = DS_POOL_BINDING_SAME;
      break;
    case DS_ACCESS_ORDER_TYPE_DEVICE:
      binding = ds_pool_resource_get_binding (self->upstream[kind], self->device_order.device,
                                              self->device_order.context);
      break;
    case DS_ACCESS_ORDER_TYPE_UNSET:
    default:
      /* Not resolved yet: ask again after the first block. */
      binding = DS_POOL_BINDING_NOT_YET;
      break;
    }
  if (binding == DS_POOL_BINDING_SAME)
    self->self_scoped |= 1u << kind;
  if (binding != DS_POOL_BINDING_NOT_YET)
    self->scope_checked |= 1u << kind;
}

static gboolean
ensure_upstream (DsScratchpad  *self,
                 DsMemoryKind   kind,
                 GError       **error)
{
  DsMemoryResource *resource;

  if (self->upstream[kind] != NULL)
    return TRUE;

  if (self->resources[kind] != NULL)
    {
      DsMemoryKind given = ds_memory_resource_get_kind (self->resources[kind]);

      if (G_UNLIKELY (given != kind))
        {
          g_set_error (error, DS_ERROR, DS_ERROR_INVALID_ARGUMENT,
                       "The %s-resource property holds a %s resource; "
                       "%s memory needs a %s resource",
                       ds_memory_kind_get_nick (kind), ds_memory_kind_get_nick (given),
                       ds_memory_kind_get_nick (kind), ds_memory_kind_get_nick (kind));
          return FALSE;
        }
      resource = self->resources[kind];
      self->upstream[kind] = resource;
      /* A pool bound already (by an earlier scratchpad: ds-gst makes one
       * per buffer over its context's pools) needs no scope from the
       * first block on. */
      if (kind != DS_MEMORY_KIND_HOST)
        note_self_scoped (self, kind);
      return TRUE;
    }
  else
    {
      gboolean self_scoped = FALSE;

      if (kind == DS_MEMORY_KIND_HOST)
        resource = ds_default_resource_get_cached (kind, 0, NULL, &self_scoped, error);
      else
        resource = ds_default_resource_get_cached (kind, self->device_order.device,
                                                   self->device_order.context,
                                                   &self_scoped, error);
      if (resource == NULL)
        return FALSE;
      if (self_scoped)
        self->self_scoped |= 1u << kind;
      /* Default resources live as long as the process. */
      ds_arena_share_demand (&self->arenas[kind], kind);
    }

  self->upstream[kind] = resource;
  return TRUE;
}

static gboolean
check_request (DsMemoryKind   kind,
               gsize          size,
               gsize         *alignment,
               GError       **error)
{
  if (!ds_memory_check_kind (kind, error))
    return FALSE;

  /* Blocks are taken aligned to DS_ARENA_BLOCK_ALIGNMENT: a size that
   * overflows once padded to that is refused here, in the caller's terms,
   * rather than by the upstream in terms of a block the caller never
   * asked for. */
  return ds_memory_check_size_alignment (size, alignment, DS_SCRATCHPAD_DEFAULT_ALIGNMENT,
                                         DS_ARENA_BLOCK_ALIGNMENT, error);
}

/* Sets up @kind if need be and takes a new block for the request. */
static gpointer
grow (DsScratchpad  *self,
      DsMemoryKind   kind,
      gsize          size,
      gsize          alignment,
      GError       **error)
{
  DsArena *arena = &self->arenas[kind];
  DsCudaScope scope;
  const DsAccessOrder *order = NULL;
  gpointer ptr;

  if (kind == DS_MEMORY_KIND_HOST)
    {
      if (!ensure_upstream (self, kind, error))
        return NULL;
      return ds_arena_grow (arena, self->upstream[kind], NULL, size, alignment, error);
    }

  /* GPU kinds. Device memory is allocated in the device order; pinned and
   * managed memory in host order, since the CPU fills them. */
  if (!ensure_device_order (self, error) || !ensure_upstream (self, kind, error))
    return NULL;
  if (kind == DS_MEMORY_KIND_DEVICE && ds_access_order_is_device (&self->device_order))
    order = &self->device_order;

  /* The default pools work in the device and driver context they belong
   * to by themselves; any other upstream is called in the device order's,
   * whatever the calling thread has current. */
  if (self->self_scoped & (1u << kind))
    return ds_arena_grow (arena, self->upstream[kind], order, size, alignment, error);

  if (!ds_access_order_enter (&self->device_order, &scope, error))
    return NULL;
  ptr = ds_arena_grow (arena, self->upstream[kind], order, size, alignment, error);
  ds_cuda_scope_leave (&scope);
  if (ptr != NULL && !(self->scope_checked & (1u << kind)))
    note_self_scoped (self, kind);

  return ptr;
}

/* Hands @local_error on to @error, named after the request as the caller
 * made it. */
G_GNUC_NO_INLINE static void
propagate_alloc_error (GError       **error,
                       GError        *local_error,
                       DsMemoryKind   kind,
                       gsize          size,
                       gsize          alignment)
{
  char text[64];

  g_propagate_prefixed_error (error, local_error,
                              "Cannot allocate %" G_GSIZE_FORMAT " bytes of %s memory with %s: ",
                              size, ds_memory_kind_get_nick (kind),
                              ds_memory_alignment_text (text, alignment,
                                                        DS_SCRATCHPAD_DEFAULT_ALIGNMENT));
}

/* A new block for a checked request (@a: the power-of-two alignment it
 * is placed with) that did not fit, setting @kind up first if need be. */
G_GNUC_NO_INLINE static gpointer
new_block (DsScratchpad  *self,
           DsMemoryKind   kind,
           gsize          size,
           gsize          alignment,
           gsize          a,
           GError       **error)
{
  GError *local_error = NULL;
  gpointer ptr;

  /* From here on, the settings are fixed. */
  self->in_use = TRUE;

  ptr = grow (self, kind, size, a, &local_error);
  if (G_UNLIKELY (ptr == NULL))
    propagate_alloc_error (error, local_error, kind, size, alignment);

  return ptr;
}

/* Everything but the bump: checks, lazy set-up, a new block. Every error
 * message names the request as the caller made it. */
G_GNUC_NO_INLINE static gpointer
alloc_slow (DsScratchpad  *self,
            DsMemoryKind   kind,
            gsize          size,
            gsize          alignment,
            GError       **error)
{
  gsize a = alignment;
  gpointer ptr;
  char text[64];

  g_return_val_if_fail (DS_IS_SCRATCHPAD (self), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!check_request (kind, size, &a, error))
    return NULL;

  if (G_UNLIKELY (self->disposed))
    {
      g_set_error (error, DS_ERROR, DS_ERROR_DISPOSED,
                   "Cannot allocate %" G_GSIZE_FORMAT " bytes of %s memory with %s: "
                   "scratchpad %p was disposed", size, ds_memory_kind_get_nick (kind),
                   ds_memory_alignment_text (text, alignment, DS_SCRATCHPAD_DEFAULT_ALIGNMENT),
                   (void *) self);
      return NULL;
    }

  if (size == 0)
    return NULL;

  ptr = ds_arena_try_bump (&self->arenas[kind], size, a);
  if (ptr != NULL)
    return ptr;

  return new_block (self, kind, size, alignment, a, error);
}

/* The class, for the type checks of the paths taken per unit of work:
 * one comparison where DS_IS_SCRATCHPAD () calls ds_scratchpad_get_type ()
 * (DsScratchpad is final: an instance is one exactly when its class is
 * this). Set by class_init, before any instance exists. */
static gpointer scratchpad_class;

static inline gboolean
is_scratchpad (gconstpointer instance)
{
  /* Relaxed: one value, stored before any instance exists; atomic so
   * that ThreadSanitizer, which does not see GLib's class lock, does not
   * take the read on another thread for a race. */
  return instance != NULL &&
         ((const GTypeInstance *) instance)->g_class ==
         __atomic_load_n (&scratchpad_class, __ATOMIC_RELAXED);
}

/* A bit per kind that holds blocks (spelt out: GCC keeps the loop). */
static inline guint
held_kinds (const DsScratchpad *self)
{
  G_STATIC_ASSERT (DS_N_MEMORY_KINDS == 4);

  return (guint) (self->arenas[0].n_blocks != 0) |
         (guint) (self->arenas[1].n_blocks != 0) << 1 |
         (guint) (self->arenas[2].n_blocks != 0) << 2 |
         (guint) (self->arenas[3].n_blocks != 0) << 3;
}

static inline gboolean
holds_blocks (const DsScratchpad *self)
{
  return (self->arenas[0].n_blocks | self->arenas[1].n_blocks |
          self->arenas[2].n_blocks | self->arenas[3].n_blocks) != 0;
}

/* Whether a request that the exported function checked (a valid kind, a
 * non-zero size, a power-of-two alignment @a, no error set) and that did
 * not fit needs no more checks before a new block: a scratchpad not
 * disposed, an alignment and a size no block padding can overflow. FALSE:
 * alloc_slow () takes it (a large alignment or size, a disposed
 * scratchpad, not a scratchpad at all) and names what is wrong. */
static inline gboolean
is_plain_request (DsScratchpad *self,
                  gsize         size,
                  gsize         a)
{
  return is_scratchpad (self) &&
         a <= DS_ARENA_BLOCK_ALIGNMENT && size <= G_MAXSIZE / 2 && !self->disposed;
}

/* Whether @kind is set up and its upstream needs no scope: then the new
 * block is refill ()'s, without grow ()'s look-ups again, which were half
 * of the instructions of a reused scratchpad's block taken (issue 9).
 * Otherwise new_block () sets the kind up (a new scratchpad's first block
 * of it) or enters the device order's scope. */
static inline gboolean
can_refill (DsScratchpad *self,
            DsMemoryKind  kind)
{
  return self->upstream[kind] != NULL &&
         (kind == DS_MEMORY_KIND_HOST || (self->self_scoped & (1u << kind)) != 0);
}

G_GNUC_NO_INLINE static gpointer
refill (DsScratchpad  *self,
        DsMemoryKind   kind,
        gsize          size,
        gsize          alignment,
        gsize          a,
        GError       **error)
{
  const DsAccessOrder *order = NULL;
  GError *local_error = NULL;
  gpointer ptr;

  /* upstream[kind] is set: the device order was resolved before it. */
  if (kind == DS_MEMORY_KIND_DEVICE && ds_access_order_is_device (&self->device_order))
    order = &self->device_order;

  self->in_use = TRUE;
  ptr = ds_arena_grow (&self->arenas[kind], self->upstream[kind], order, size, a, &local_error);
  if (G_UNLIKELY (ptr == NULL))
    propagate_alloc_error (error, local_error, kind, size, alignment);

  return ptr;
}

/**
 * ds_scratchpad_alloc: (skip)
 * @self: a #DsScratchpad
 * @kind: the kind of memory
 * @size: the number of bytes
 * @alignment: a power of two, or 0 for 16
 * @error: return location for a #GError
 *
 * Allocates @size bytes of @kind memory aligned to @alignment, valid until
 * the scratchpad is released or finalized.
 *
 * This is the C fast path: inside the current block it is a pointer bump
 * with no lock, no CUDA call and no type check. Bindings use
 * [method@Ds.Scratchpad.alloc_block].
 *
 * Every allocation starts on a multiple of 16 at least (an @alignment
 * below 16 is met by it) and takes @size rounded up to 16 of its block:
 * the next allocation of the kind starts there, or further on for a
 * larger alignment.
 *
 * In a loop of allocations, keep @self in a local variable: the compiler
 * then keeps the bump's cursor and counters in registers from one
 * allocation to the next. Read from a structure that the loop's stores
 * may alias (any pointer stored), @self is read again at every call and
 * every bump goes through memory.
 *
 * As everywhere in GLib, @error must be `NULL` or point to `NULL`: with
 * an error already set the call is refused with a critical and returns
 * `NULL`, even when the request would fit in the current block.
 *
 * Returns: (transfer none) (nullable): the memory; `NULL` without an error
 *   for size 0; `NULL` with @error set on failure: %DS_ERROR_INVALID_ARGUMENT
 *   for a bad alignment, an overflowing size or an unknown kind,
 *   %DS_ERROR_DISPOSED once the scratchpad was disposed (for any size),
 *   %DS_ERROR_NO_DEVICE without CUDA for the GPU kinds,
 *   %DS_ERROR_OUT_OF_MEMORY or %DS_ERROR_CUDA when the upstream fails (the
 *   scratchpad keeps what it had). Messages name the size and alignment
 *   as passed.
 */
/* In parentheses: the name is also a macro (the inline bump of
 * ds-scratchpad.h), and this is the function it falls back to. */
gpointer
(ds_scratchpad_alloc) (DsScratchpad  *self,
                       DsMemoryKind   kind,
                       gsize          size,
                       gsize          alignment,
                       GError       **error)
{
  /* With *error set, not even a bump succeeds: alloc_slow () refuses it
   * (a critical), whether the request fits or not. */
  if (G_LIKELY (self != NULL && DS_MEMORY_KIND_IS_VALID (kind) && size != 0 &&
                (error == NULL || *error == NULL)))
    {
      gsize a = alignment != 0 ? alignment : DS_SCRATCHPAD_DEFAULT_ALIGNMENT;

      if (G_LIKELY ((a & (a - 1)) == 0))
        {
          gpointer ptr = ds_arena_try_bump (&self->arenas[kind], size, a);

          if (G_LIKELY (ptr != NULL))
            return ptr;
          if (G_LIKELY (is_plain_request (self, size, a)))
            {
              if (G_LIKELY (can_refill (self, kind)))
                return refill (self, kind, size, alignment, a, error);
              /* The first block of the kind (or one in the device
               * order's scope): alloc_slow () without its checks. */
              return new_block (self, kind, size, alignment, a, error);
            }
        }
    }

  return alloc_slow (self, kind, size, alignment, error);
}

/**
 * ds_scratchpad_alloc_array: (skip)
 * @self: a #DsScratchpad
 * @kind: the kind of memory
 * @element_size: the size of one element
 * @n_elements: the number of elements
 * @alignment: a power of two, or 0 for 16
 * @error: return location for a #GError
 *
 * Allocates room for @n_elements of @element_size bytes, checking the
 * multiplication for overflow (%DS_ERROR_INVALID_ARGUMENT). Used by
 * [func@Ds.SCRATCHPAD_ALLOC_N].
 *
 * Returns: (transfer none) (nullable): the memory, as
 *   [method@Ds.Scratchpad.alloc]
 */
gpointer
(ds_scratchpad_alloc_array) (DsScratchpad  *self,
                             DsMemoryKind   kind,
                             gsize          element_size,
                             gsize          n_elements,
                             gsize          alignment,
                             GError       **error)
{
  gsize size;

  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (G_UNLIKELY (!g_size_checked_mul (&size, element_size, n_elements)))
    {
      g_return_val_if_fail (DS_IS_SCRATCHPAD (self), NULL);
      g_set_error (error, DS_ERROR, DS_ERROR_INVALID_ARGUMENT,
                   "%" G_GSIZE_FORMAT " elements of %" G_GSIZE_FORMAT
                   " bytes overflow", n_elements, element_size);
      return NULL;
    }

  return (ds_scratchpad_alloc) (self, kind, size, alignment, error);
}

static gpointer
ds_scratchpad_iface_alloc_impl (DsScratchpadIface  *iface,
                                DsMemoryKind        kind,
                                gsize               size,
                                gsize               alignment,
                                GError            **error)
{
  return ds_scratchpad_alloc ((DsScratchpad *) iface, kind, size, alignment, error);
}

static void
ds_scratchpad_iface_iface_init (DsScratchpadIfaceInterface *iface)
{
  iface->alloc = ds_scratchpad_iface_alloc_impl;
}

/* Whether a release may keep a block of @kind for the next unit of work:
 * only where the block is taken again in the order it is given back in,
 * so that stream order alone makes the reuse safe, as it does in a pool
 * (DESIGN §4: a block freed on stream S and taken again on S needs no
 * event and no query). Host memory: host order both ways. Device memory:
 * taken and given back in the device order. Pinned and managed memory are
 * taken in host order (the CPU fills them): only if they are also given
 * back in host order; given back on a stream, the host must not write
 * them again before that stream's work is done, which the pool checks. */
static gboolean
can_keep (DsScratchpad *self,
          DsMemoryKind  kind)
{
  switch (kind)
    {
    case DS_MEMORY_KIND_HOST:
    case DS_MEMORY_KIND_DEVICE:
      return TRUE;
    case DS_MEMORY_KIND_PINNED:
    case DS_MEMORY_KIND_MANAGED:
      return !ds_access_order_is_device (ds_scratchpad_dealloc_order (self, kind));
    default:
      return FALSE;
    }
}

/**
 * ds_scratchpad_release:
 * @self: a #DsScratchpad
 *
 * Gives all memory back now, in stream order, and leaves the scratchpad
 * empty and usable again.
 *
 * Kinds go back host → pinned → device → managed, each block newest first,
 * to the resource it came from, with its size and alignment, exactly once:
 * host memory at once; device memory in the device order; pinned and
 * managed memory in their deallocation orders. A long-lived scratchpad
 * must be released after each unit of work, or it holds its memory
 * forever. Every pointer and [struct@Ds.Block] handed out before is invalid
 * afterwards.
 *
 * With [property@Ds.Scratchpad:keep-blocks], the newest block of each
 * kind that is taken again in the order it is given back in (host and
 * device memory; pinned and managed memory only with a host deallocation
 * order) stays with the scratchpad instead, empty, for the next unit of
 * work: see there.
 *
 * While exports of its blocks are alive ([method@Ds.Block.export], made
 * for NumPy arrays, DLPack and the like), the release is refused with a
 * critical and the scratchpad keeps its memory.
 *
 * After the scratchpad was disposed, this gives back what exports kept
 * alive at the time, if they are gone, and otherwise does nothing.
 */
void
ds_scratchpad_release (DsScratchpad *self)
{
  DsFenceBatch batch;
  DsCudaScope scope;
  GError *scope_error = NULL;
  gboolean in_scope = FALSE;
  guint held, scoped_kinds;
  gboolean keep;

  if (G_UNLIKELY (!is_scratchpad (self)))
    g_return_if_fail (DS_IS_SCRATCHPAD (self));

  /* Bindings: memory that an export (a NumPy array, a DLPack capsule) may
   * still use is not given back; see ds_block_export (). */
  if (G_UNLIKELY (g_atomic_int_get (&self->n_exports) != 0))
    {
      g_critical ("ds_scratchpad_release: %d export(s) of the scratchpad's blocks "
                  "are alive (NumPy arrays, memoryviews, DLPack capsules, CUDA "
                  "array interface consumers); the memory is not given back while "
                  "they may use it", g_atomic_int_get (&self->n_exports));
      return;
    }

  held = held_kinds (self);
  if (held == 0)
    {
      self->generation++;
      return;
    }

  /* Blocks of GPU kinds from an upstream that does not enter its own
   * device and context are given back in those of the device order,
   * whichever thread this is: one scope for all of them. */
  scoped_kinds = held & ~self->self_scoped & ~(1u << DS_MEMORY_KIND_HOST);
  if (scoped_kinds != 0)
    in_scope = ds_access_order_enter (&self->device_order, &scope, &scope_error);

  ds_fence_batch_init (&batch);
  /* Dispose gives everything back, kept or not. */
  keep = self->keep_blocks && !self->disposed;

  /* Host, pinned, device, managed: the lowest bit first. */
  for (guint left = held; left != 0; left &= left - 1)
    {
      DsMemoryKind kind = (DsMemoryKind) __builtin_ctz (left);
      DsArena *arena = &self->arenas[kind];
      GError *error = NULL;

      if ((scoped_kinds & (1u << kind)) && !in_scope)
        {
          g_warning ("Scratchpad %p: %u %s block(s) leaked rather than given "
                     "back while work may still use them: %s", self,
                     arena->n_blocks, ds_memory_kind_get_nick (kind), scope_error->message);
          ds_arena_abandon (arena);
          continue;
        }

      if (!ds_arena_release (arena, self->upstream[kind], ds_scratchpad_dealloc_order (self, kind),
                             &batch, keep && can_keep (self, kind), &error))
        {
          g_warning ("Scratchpad %p: %s memory could not be given back in order "
                     "and was leaked rather than reused early: %s", self,
                     ds_memory_kind_get_nick (kind), error->message);
          g_error_free (error);
        }
    }

  ds_fence_batch_finish (&batch);
  if (in_scope)
    ds_cuda_scope_leave (&scope);
  if (G_UNLIKELY (scope_error != NULL))
    g_error_free (scope_error);

  self->generation++;
}

/**
 * ds_scratchpad_get_device_order:
 * @self: a #DsScratchpad
 *
 * The order device memory is allocated and released in. Before the first
 * allocation of a GPU kind, a scratchpad made without a device order
 * returns an unset order (neither host nor device); afterwards the legacy
 * default stream of the device that was current then.
 *
 * Returns: (transfer none): the device order
 */
const DsAccessOrder *
ds_scratchpad_get_device_order (DsScratchpad *self)
{
  g_return_val_if_fail (DS_IS_SCRATCHPAD (self), NULL);

  return &self->device_order;
}

/**
 * ds_scratchpad_get_dealloc_order:
 * @self: a #DsScratchpad
 * @kind: a memory kind
 *
 * The order @kind memory is given back in: host order for host memory,
 * the device order for device memory, the pinned or managed deallocation
 * order (the device order unless set) for those kinds.
 *
 * Returns: (transfer none) (nullable): the order; `NULL` for host memory
 *   (which needs none) and for an unknown kind
 */
const DsAccessOrder *
ds_scratchpad_get_dealloc_order (DsScratchpad *self,
                                 DsMemoryKind  kind)
{
  g_return_val_if_fail (DS_IS_SCRATCHPAD (self), NULL);
  g_return_val_if_fail (DS_MEMORY_KIND_IS_VALID (kind), NULL);

  return ds_scratchpad_dealloc_order (self, kind);
}

/**
 * ds_scratchpad_get_initial_size:
 * @self: a #DsScratchpad
 * @kind: a memory kind
 *
 * The size of the first block of @kind.
 *
 * Returns: the size of the first block of @kind
 */
gsize
ds_scratchpad_get_initial_size (DsScratchpad *self,
                                DsMemoryKind  kind)
{
  g_return_val_if_fail (DS_IS_SCRATCHPAD (self), 0);
  g_return_val_if_fail (DS_MEMORY_KIND_IS_VALID (kind), 0);

  return self->arenas[kind].initial_size;
}

/**
 * ds_scratchpad_get_max_block_size:
 * @self: a #DsScratchpad
 *
 * The size past which blocks stop doubling; see
 * [property@Ds.Scratchpad:max-block-size].
 *
 * Returns: the growth ceiling in bytes (the default resolved)
 */
guint64
ds_scratchpad_get_max_block_size (DsScratchpad *self)
{
  g_return_val_if_fail (DS_IS_SCRATCHPAD (self), 0);

  return self->arenas[DS_MEMORY_KIND_HOST].max_block_size;
}

/**
 * ds_scratchpad_set_max_block_size:
 * @self: a #DsScratchpad
 * @max_block_size: the growth ceiling in bytes; 0 for the default
 *   (%DS_SCRATCHPAD_DEFAULT_MAX_BLOCK_SIZE), %G_MAXUINT64 for none
 *
 * Sets [property@Ds.Scratchpad:max-block-size]. Like every setting, only
 * before the first allocation: afterwards it is refused with a critical.
 */
void
ds_scratchpad_set_max_block_size (DsScratchpad *self,
                                  guint64       max_block_size)
{
  g_return_if_fail (DS_IS_SCRATCHPAD (self));

  g_object_set (self, "max-block-size", max_block_size, NULL);
}

/**
 * ds_scratchpad_get_keep_blocks:
 * @self: a #DsScratchpad
 *
 * Whether [method@Ds.Scratchpad.release] keeps blocks for the next unit
 * of work ([property@Ds.Scratchpad:keep-blocks]).
 *
 * Returns: whether releases keep blocks
 */
gboolean
ds_scratchpad_get_keep_blocks (DsScratchpad *self)
{
  g_return_val_if_fail (DS_IS_SCRATCHPAD (self), FALSE);

  return self->keep_blocks;
}

/**
 * ds_scratchpad_set_keep_blocks:
 * @self: a #DsScratchpad
 * @keep_blocks: whether releases keep blocks
 *
 * Sets [property@Ds.Scratchpad:keep-blocks]. Unlike the other settings,
 * at any time before the scratchpad is disposed: the next release
 * follows it.
 */
void
ds_scratchpad_set_keep_blocks (DsScratchpad *self,
                               gboolean      keep_blocks)
{
  g_return_if_fail (DS_IS_SCRATCHPAD (self));

  g_object_set (self, "keep-blocks", keep_blocks, NULL);
}

/**
 * ds_scratchpad_get_reserved:
 * @self: a #DsScratchpad
 * @kind: a memory kind
 *
 * The bytes of @kind held from upstream (all blocks).
 *
 * Returns: the bytes of @kind held from upstream (all blocks)
 */
guint64
ds_scratchpad_get_reserved (DsScratchpad *self,
                            DsMemoryKind  kind)
{
  g_return_val_if_fail (DS_IS_SCRATCHPAD (self), 0);
  g_return_val_if_fail (DS_MEMORY_KIND_IS_VALID (kind), 0);

  return self->arenas[kind].reserved;
}

/**
 * ds_scratchpad_get_allocated:
 * @self: a #DsScratchpad
 * @kind: a memory kind
 *
 * The bytes of @kind's blocks that allocations took since the last
 * release: each allocation's size rounded up to 16 (see
 * ds_scratchpad_alloc()) and the padding a larger alignment put before
 * it. The tail of a block left for a new one is not counted. It is 0
 * exactly when nothing of @kind was allocated since the last release.
 *
 * (Before soversion 1 this was the sum of the requested sizes, and
 * ds_scratchpad_get_n_allocations() counted the allocations: counting
 * them in every bump cost 12-17% of a reused lifecycle of many small
 * allocations.)
 *
 * Returns: the bytes of @kind's blocks taken since the last release
 */
guint64
ds_scratchpad_get_allocated (DsScratchpad *self,
                             DsMemoryKind  kind)
{
  g_return_val_if_fail (DS_IS_SCRATCHPAD (self), 0);
  g_return_val_if_fail (DS_MEMORY_KIND_IS_VALID (kind), 0);

  return ds_arena_get_taken (&self->arenas[kind]);
}

/**
 * ds_scratchpad_get_n_blocks:
 * @self: a #DsScratchpad
 * @kind: a memory kind
 *
 * The number of blocks of @kind held from upstream.
 *
 * Returns: the number of blocks of @kind held from upstream
 */
guint
ds_scratchpad_get_n_blocks (DsScratchpad *self,
                            DsMemoryKind  kind)
{
  g_return_val_if_fail (DS_IS_SCRATCHPAD (self), 0);
  g_return_val_if_fail (DS_MEMORY_KIND_IS_VALID (kind), 0);

  return self->arenas[kind].n_blocks;
}

/**
 * ds_scratchpad_get_n_exports:
 * @self: a #DsScratchpad
 *
 * The number of exports ([method@Ds.Block.export]) of @self's blocks that
 * are alive. While it is not 0, [method@Ds.Scratchpad.release] refuses to
 * give the memory back.
 *
 * Returns: the number of exports alive
 */
guint
ds_scratchpad_get_n_exports (DsScratchpad *self)
{
  g_return_val_if_fail (DS_IS_SCRATCHPAD (self), 0);

  return (guint) g_atomic_int_get (&self->n_exports);
}

guint64
ds_scratchpad_get_generation (DsScratchpad *self)
{
  return self->generation;
}

const DsAccessOrder *
ds_scratchpad_get_work_order (DsScratchpad *self)
{
  return &self->device_order;
}

/* Whether the GLib running repeats GObject's dispose work in
 * g_object_unref () once the last reference's dispose returns (see
 * ds_scratchpad_dispose ()). Set once, at class init. */
static gboolean unref_finishes_dispose;

static void
ds_scratchpad_dispose (GObject *object)
{
  DsScratchpad *self = DS_SCRATCHPAD (object);

  /* From now on every allocation is refused with DS_ERROR_DISPOSED, rather
   * than going on with the default resources once the configured ones are
   * dropped below. */
  self->disposed = TRUE;

  /* A scratchpad that never allocated has nothing to give back. While
   * exports of its blocks are alive (g_object_run_dispose () with a NumPy
   * array around), their memory stays, with the resource it came from,
   * until the exports are gone: finalize () gives it back. */
  if (self->in_use && g_atomic_int_get (&self->n_exports) == 0)
    ds_scratchpad_release (self);

  if (G_LIKELY (!holds_blocks (self)))
    {
      memset (self->upstream, 0, sizeof self->upstream);
      for (guint kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
        if (G_UNLIKELY (self->resources[kind] != NULL))
          g_clear_object (&self->resources[kind]);
    }
  else
    for (guint kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
      {
        if (self->arenas[kind].n_blocks != 0)
          {
            /* Kept for the exports: close the bump window, so that not
             * even the inline bump of ds-scratchpad.h hands out more of
             * it. */
            self->windows[kind]._end = self->windows[kind]._cur;
            continue;
          }
        self->upstream[kind] = NULL;
        g_clear_object (&self->resources[kind]);
      }

  /* GObject's dispose destroys the signal handlers and closures and
   * notifies the weak references. When the last reference goes,
   * g_object_unref () calls dispose with the count at 1 (anyone else who
   * runs dispose holds a reference: g_object_run_dispose () takes one) and
   * does all of that itself right after dispose returns, before it
   * finalizes (GLib 2.74 to 2.89 alike, read in their gobject.c); chaining
   * up then only did it twice: the process-wide signal lock once more and
   * three more qdata locks per scratchpad, on the path every new
   * scratchpad takes. So GObject's dispose runs only when the object
   * outlives this dispose, with a GLib known to do that (the one running,
   * not the one built against; any other always chains up). DsScratchpad
   * is final: no subclass dispose chains through here.
   * (tests/test-scratchpad.c: dispose/gobject.) */
  if (!unref_finishes_dispose || g_atomic_int_get (&object->ref_count) != 1)
    G_OBJECT_CLASS (ds_scratchpad_parent_class)->dispose (object);
}

static void
ds_scratchpad_finalize (GObject *object)
{
  DsScratchpad *self = DS_SCRATCHPAD (object);

  /* Blocks kept at dispose for exports: each export held a reference, so
   * they are all gone now. */
  if (G_UNLIKELY (holds_blocks (self)))
    ds_scratchpad_release (self);

  /* Dispose dropped the resources; the arenas have heap room only past
   * two blocks of a kind. */
  for (guint kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
    {
      if (G_UNLIKELY (self->resources[kind] != NULL))
        g_clear_object (&self->resources[kind]);
      if (G_UNLIKELY (self->arenas[kind].blocks != self->arenas[kind].inline_blocks))
        ds_arena_clear (&self->arenas[kind]);
    }

  G_OBJECT_CLASS (ds_scratchpad_parent_class)->finalize (object);
}

static void
ds_scratchpad_class_init (DsScratchpadClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = ds_scratchpad_dispose;
  object_class->finalize = ds_scratchpad_finalize;
  __atomic_store_n (&scratchpad_class, klass, __ATOMIC_RELAXED);

  unref_finishes_dispose = glib_major_version == 2 &&
                           glib_minor_version >= 74 && glib_minor_version <= 89;

  ds_scratchpad_install_properties (object_class);
}

static void
ds_scratchpad_init (DsScratchpad *self)
{
  /* The instance comes zero-filled: the arenas only need their windows
   * and first block size. */
  for (guint kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
    {
      self->arenas[kind].window = &self->windows[kind];
      self->arenas[kind].blocks = self->arenas[kind].inline_blocks;
      self->arenas[kind].blocks_capacity = G_N_ELEMENTS (self->arenas[kind].inline_blocks);
      self->arenas[kind].initial_size = DS_SCRATCHPAD_DEFAULT_INITIAL_SIZE;
      self->arenas[kind].max_block_size = DS_SCRATCHPAD_DEFAULT_MAX_BLOCK_SIZE;
      self->arenas[kind].next_size = DS_SCRATCHPAD_DEFAULT_INITIAL_SIZE;
    }
}

/**
 * ds_scratchpad_new:
 * @device_order: (nullable): the order device memory is allocated and
 *   released in; `NULL` for the legacy default stream of the device that
 *   is current at the first GPU allocation
 *
 * Creates a scratchpad. Allocates nothing and makes no CUDA call.
 *
 * Returns: (transfer full): a new #DsScratchpad
 */
DsScratchpad *
ds_scratchpad_new (const DsAccessOrder *device_order)
{
  return ds_scratchpad_new_full (device_order, NULL, NULL, NULL);
}

/**
 * ds_scratchpad_new_full:
 * @device_order: (nullable): the order device memory is allocated and
 *   released in; `NULL` as in [ctor@Ds.Scratchpad.new]
 * @pinned_dealloc_order: (nullable): the order pinned memory is given back
 *   in; `NULL` for @device_order
 * @managed_dealloc_order: (nullable): the order managed memory is given
 *   back in; `NULL` for @device_order
 * @initial_sizes: (nullable) (array fixed-size=4): the first block size of
 *   each kind, indexed by [enum@Ds.MemoryKind]; 0 or `NULL` for 64 KiB
 *
 * Creates a scratchpad with every setting of DALI's `DynamicScratchpad`.
 * Equivalent to `g_object_new()` with the matching properties.
 *
 * Returns: (transfer full): a new #DsScratchpad
 */
DsScratchpad *
ds_scratchpad_new_full (const DsAccessOrder *device_order,
                        const DsAccessOrder *pinned_dealloc_order,
                        const DsAccessOrder *managed_dealloc_order,
                        const gsize         *initial_sizes)
{
  DsScratchpad *self;

  /* Set the fields directly: the same result as passing
   * properties, without the GValue round trips on a per-unit-of-work path.
   * The instance comes zero-filled, which is what a NULL order is. */
  self = g_object_new (DS_TYPE_SCRATCHPAD, NULL);
  if (device_order != NULL)
    self->device_order = *device_order;
  if (pinned_dealloc_order != NULL)
    self->pinned_dealloc_order = *pinned_dealloc_order;
  if (managed_dealloc_order != NULL)
    self->managed_dealloc_order = *managed_dealloc_order;
  if (initial_sizes != NULL)
    for (guint kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
      ds_scratchpad_set_initial_size (self, kind, initial_sizes[kind]);

  return self;
}
