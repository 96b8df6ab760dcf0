/* ds-scratchpad-alloc.c: DsScratchpad, continued: its memory
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * How it works: four arenas (ds-arena-private.h), one per memory kind,
 * each set up at its first block: its upstream resolved (the one given,
 * or the default of the device order's device and context) and bound.
 * An allocation is the arena's bump; what does not fit takes a new block,
 * in the device order's CUDA scope unless the upstream enters its own. A
 * release gives every kind's blocks back through one release batch
 * (ds-fence-batch-private.h), host -> pinned -> device -> managed, each in
 * its deallocation order. The object and its settings are in
 * ds-scratchpad.c and ds-scratchpad-settings.c.
 */

#include "config.h"

#include "ds-scratchpad-private.h"
#include "ds-default-resources-private.h"
#include "ds-error.h"
#include "ds-export-hold-private.h"
#include "ds-memory-resource-private.h"
#include "ds-observer-private.h"

/* Observing ----------------------------------------------------------------------- */

static void
fill_scratchpad (DsObservation *o)
{
  DsScratchpad *self = o->object;
  DsArena *arena = &self->arenas[o->kind];

  o->held = arena->reserved;
  o->in_use = ds_arena_get_taken (arena);
  o->upstream = arena->upstream.resource;
}

/* Tells the observer of a block taken (@bytes) or @kind's blocks given
 * back (@bytes): both frequent. */
static DS_OBSERVER_COLD void
observe_event (DsScratchpad    *self,
               DsObserverEvent  event,
               DsMemoryKind     kind,
               guint64          bytes)
{
  DsObservation o = { 0, };

  o.event = event;
  o.object = self;
  o.kind = kind;
  o.device = kind != DS_MEMORY_KIND_HOST && ds_access_order_is_device (&self->device_order) ?
             self->device_order.device : -1;
  o.bytes = bytes;
  ds_observer_tell (&o, TRUE, fill_scratchpad);
}

/* Setting a kind up --------------------------------------------------------------- */

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
 * @kind: where the scope is empty (a host order) or the upstream enters
 * the order's device and context itself (a fenced resource bound to
 * them, as the default pools and ds-gst's are). Asked when a given
 * upstream is bound, and after each block taken in the scope until the
 * answer is known (a pool binds itself at its first upstream call). */
static void
note_self_scoped (DsScratchpad *self,
                  DsMemoryKind  kind)
{
  DsScopeBinding binding;

  switch (self->device_order.type)
    {
    case DS_ACCESS_ORDER_TYPE_HOST:
      binding = DS_SCOPE_BINDING_SAME;
      break;
    case DS_ACCESS_ORDER_TYPE_DEVICE:
      binding = ds_fenced_resource_get_binding (self->arenas[kind].upstream.resource,
                                                self->device_order.device,
                                                self->device_order.context);
      break;
    case DS_ACCESS_ORDER_TYPE_UNSET:
    default:
      binding = DS_SCOPE_BINDING_NOT_YET;
      break;
    }
  if (binding == DS_SCOPE_BINDING_SAME)
    self->self_scoped |= 1u << kind;
  if (binding != DS_SCOPE_BINDING_NOT_YET)
    self->scope_checked |= 1u << kind;
}

/* Binds @kind's arena to its upstream: the resource given (of that kind),
 * else the default of the device order's device and context. */
static gboolean
set_up_kind (DsScratchpad  *self,
             DsMemoryKind   kind,
             GError       **error)
{
  DsMemoryResource *given = self->resources[kind];
  const DsUpstream *upstream;
  gboolean self_scoped = FALSE;

  if (kind != DS_MEMORY_KIND_HOST && !ensure_device_order (self, error))
    return FALSE;

  if (given != NULL)
    {
      DsMemoryKind given_kind = ds_memory_resource_get_kind (given);

      if (G_UNLIKELY (given_kind != kind))
        {
          g_set_error (error, DS_ERROR, DS_ERROR_INVALID_ARGUMENT,
                       "The %s-resource property holds a %s resource; "
                       "%s memory needs a %s resource",
                       ds_memory_kind_get_nick (kind), ds_memory_kind_get_nick (given_kind),
                       ds_memory_kind_get_nick (kind), ds_memory_kind_get_nick (kind));
          return FALSE;
        }
      if (!ds_arena_bind (&self->arenas[kind], given, error))
        return FALSE;
      if (kind != DS_MEMORY_KIND_HOST)
        note_self_scoped (self, kind);
      return TRUE;
    }

  if (kind == DS_MEMORY_KIND_HOST)
    upstream = ds_default_resource_get_cached (kind, 0, NULL, &self_scoped, error);
  else
    upstream = ds_default_resource_get_cached (kind, self->device_order.device,
                                               self->device_order.context,
                                               &self_scoped, error);
  if (upstream == NULL)
    return FALSE;

  ds_arena_bind_default (&self->arenas[kind], upstream, kind);
  if (self_scoped)
    self->self_scoped |= 1u << kind;
  self->scope_checked |= 1u << kind;
  return TRUE;
}

/* Allocation ---------------------------------------------------------------------- */

/* A new block for a checked request, setting @kind up first if need be.
 * Device memory is allocated in the device order; pinned and managed
 * memory in host order, since the CPU fills them. */
static gpointer take_block_in_resource (DsScratchpad  *self,
                                        DsMemoryKind   kind,
                                        gsize          size,
                                        gsize          alignment,
                                        GError       **error);

static gpointer
take_block (DsScratchpad  *self,
            DsMemoryKind   kind,
            gsize          size,
            gsize          alignment,
            GError       **error)
{
  gpointer ptr;

  /* What follows may call the resource: it may not re-enter (see
   * ds_scratchpad_enter ()). */
  self->in_resource = TRUE;
  ptr = take_block_in_resource (self, kind, size, alignment, error);
  self->in_resource = FALSE;

  /* The resource disposed the scratchpad: the block stays in the arena
   * until finalize (or a release) gives it back. */
  if (G_UNLIKELY (self->disposed) && ptr != NULL)
    {
      self->windows[kind]._end = self->windows[kind]._cur;
      g_set_error (error, DS_ERROR, DS_ERROR_DISPOSED,
                   "The scratchpad was disposed by its %s resource while it allocated",
                   ds_memory_kind_get_nick (kind));
      return NULL;
    }
  return ptr;
}

static gpointer
take_block_in_resource (DsScratchpad  *self,
                        DsMemoryKind   kind,
                        gsize          size,
                        gsize          alignment,
                        GError       **error)
{
  DsArena *arena = &self->arenas[kind];
  const DsAccessOrder *order = NULL;
  DsCudaScope scope;
  gpointer ptr;

  if (G_UNLIKELY (!ds_arena_is_bound (arena)) && !set_up_kind (self, kind, error))
    return NULL;

  if (kind == DS_MEMORY_KIND_DEVICE && ds_access_order_is_device (&self->device_order))
    order = &self->device_order;
  if (kind == DS_MEMORY_KIND_HOST || (self->self_scoped & (1u << kind)))
    {
      ptr = ds_arena_grow (arena, size, alignment, order, error);
    }
  else
    {
      /* Any other upstream is called in the device order's device and
       * context, whatever the calling thread has current. */
      if (!ds_access_order_enter (&self->device_order, &scope, error))
        return NULL;
      ptr = ds_arena_grow (arena, size, alignment, order, error);
      ds_cuda_scope_leave (&scope);
      if (ptr != NULL && !(self->scope_checked & (1u << kind)))
        note_self_scoped (self, kind);
    }

  /* The block is the newest one. */
  if (DS_OBSERVING () && ptr != NULL)
    observe_event (self, DS_OBSERVER_EVENT_BLOCK, kind, arena->blocks[arena->n_blocks - 1].size);
  return ptr;
}

__thread gchar ds_scratchpad_thread_token;

void
ds_scratchpad_set_busy_error (DsScratchpad  *self,
                              GError       **error)
{
  if (self->in_resource && self->user == &ds_scratchpad_thread_token)
    g_set_error (error, DS_ERROR, DS_ERROR_BUSY,
                 "Scratchpad %p was called from its own memory resource "
                 "while it allocated or gave memory back", (void *) self);
  else
    g_set_error (error, DS_ERROR, DS_ERROR_BUSY,
               "Scratchpad %p is in use by another thread (one scratchpad is used "
               "by one thread at a time)", (void *) self);
}

/* ds_scratchpad_alloc () for a request that did not fit the current
 * block of its kind: the checks, the kind's set-up, a new block. */
static G_GNUC_NO_INLINE gpointer
scratchpad_alloc_slow (DsScratchpad  *self,
                       DsMemoryKind   kind,
                       gsize          size,
                       gsize          alignment,
                       GError       **error)
{
  GError *local_error = NULL;
  gsize a = alignment;
  gboolean nested;
  gpointer ptr;
  char text[64];

  g_return_val_if_fail (DS_IS_SCRATCHPAD (self), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!ds_memory_check_kind (kind, error) || !ds_arena_check_request (size, &a, error))
    return NULL;

  if (G_UNLIKELY (self->disposed))
    {
      g_set_error (error, DS_ERROR, DS_ERROR_DISPOSED,
                   "Cannot allocate %" G_GSIZE_FORMAT " bytes of %s memory with %s: "
                   "scratchpad %p was disposed", size, ds_memory_kind_get_nick (kind),
                   ds_memory_alignment_text (text, alignment, DS_ARENA_MIN_ALIGNMENT),
                   (void *) self);
      return NULL;
    }
  if (size == 0)
    return NULL;

  if (G_UNLIKELY (!ds_scratchpad_enter (self, &nested)))
    {
      ds_scratchpad_set_busy_error (self, error);
      return NULL;
    }
  /* From here on the settings wait for the next release. */
  self->in_use = TRUE;
  ptr = take_block (self, kind, size, a, &local_error);
  ds_scratchpad_leave (self, nested);
  if (G_UNLIKELY (ptr == NULL))
    g_propagate_prefixed_error (error, local_error,
                                "Cannot allocate %" G_GSIZE_FORMAT " bytes of %s memory with %s: ",
                                size, ds_memory_kind_get_nick (kind),
                                ds_memory_alignment_text (text, alignment, DS_ARENA_MIN_ALIGNMENT));

  return ptr;
}

/* The bump in @kind's arena, or everything else. */
static inline gpointer
scratchpad_alloc (DsScratchpad  *self,
                  DsMemoryKind   kind,
                  gsize          size,
                  gsize          alignment,
                  GError       **error)
{
  if (G_LIKELY (self != NULL && DS_MEMORY_KIND_IS_VALID (kind) &&
                (error == NULL || *error == NULL)))
    {
      gpointer ptr = _ds_bump (&self->windows[kind], size, alignment);

      if (G_LIKELY (ptr != NULL))
        return ptr;
    }

  return scratchpad_alloc_slow (self, kind, size, alignment, error);
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
 * As everywhere in GLib, @error must be `NULL` or point to `NULL`: with
 * an error already set the call is refused with a critical and returns
 * `NULL`.
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
gpointer
ds_scratchpad_alloc (DsScratchpad  *self,
                     DsMemoryKind   kind,
                     gsize          size,
                     gsize          alignment,
                     GError       **error)
{
  return scratchpad_alloc (self, kind, size, alignment, error);
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
ds_scratchpad_alloc_array (DsScratchpad  *self,
                           DsMemoryKind   kind,
                           gsize          element_size,
                           gsize          n_elements,
                           gsize          alignment,
                           GError       **error)
{
  gsize size;

  if (G_LIKELY (g_size_checked_mul (&size, element_size, n_elements)))
    return scratchpad_alloc (self, kind, size, alignment, error);

  g_return_val_if_fail (DS_IS_SCRATCHPAD (self), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);
  g_set_error (error, DS_ERROR, DS_ERROR_INVALID_ARGUMENT,
               "%" G_GSIZE_FORMAT " elements of %" G_GSIZE_FORMAT " bytes overflow",
               n_elements, element_size);
  return NULL;
}

/**
 * ds_scratchpad_alloc_block: (rename-to ds_scratchpad_alloc)
 * @self: a #DsScratchpad
 * @kind: the kind of memory
 * @size: the number of bytes
 * @alignment: a power of two, or 0 for 16
 * @error: return location for a #GError
 *
 * Allocates like [method@Ds.Scratchpad.alloc] and wraps the memory in a
 * [struct@Ds.Block], which is how bindings allocate (`sp.alloc(kind, size,
 * alignment)` in Python and JavaScript).
 *
 * Returns: (transfer full) (nullable): a new #DsBlock (for size 0 an empty
 *   one, whose address is 0), or `NULL` with @error set
 */
DsBlock *
ds_scratchpad_alloc_block (DsScratchpad  *self,
                           DsMemoryKind   kind,
                           gsize          size,
                           gsize          alignment,
                           GError       **error)
{
  GError *local_error = NULL;
  gboolean nested;
  gpointer ptr;

  g_return_val_if_fail (DS_IS_SCRATCHPAD (self), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!ds_scratchpad_enter (self, &nested))
    {
      ds_scratchpad_set_busy_error (self, error);
      return NULL;
    }
  ptr = scratchpad_alloc (self, kind, size, alignment, &local_error);
  ds_scratchpad_leave (self, nested);
  /* Size 0 is an empty block (address 0), as an empty array is an array. */
  if (ptr == NULL && (local_error != NULL || size != 0))
    {
      g_propagate_error (error, local_error);
      return NULL;
    }

  return ds_block_new (self, &self->source, ptr, size, kind);
}

gpointer
ds_scratchpad_iface_alloc_impl (DsScratchpadIface  *iface,
                                DsMemoryKind        kind,
                                gsize               size,
                                gsize               alignment,
                                GError            **error)
{
  return scratchpad_alloc ((DsScratchpad *) iface, kind, size, alignment, error);
}

/* Release ------------------------------------------------------------------------- */

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

/* Gives the blocks of @held kinds back; @keep as keep-blocks says. */
static void
give_back (DsScratchpad *self,
           guint         held,
           gboolean      keep)
{
  GError *scope_error = NULL;
  gboolean in_scope = FALSE;
  gboolean observing = DS_OBSERVING ();
  guint64 reserved[DS_N_MEMORY_KINDS];
  DsFenceBatch batch;
  DsCudaScope scope;
  guint scoped_kinds;

  /* Blocks of GPU kinds from an upstream that does not enter its own
   * device and context go back in those of the device order, whichever
   * thread this is: one scope for all of them. */
  scoped_kinds = held & ~self->self_scoped & ~(1u << DS_MEMORY_KIND_HOST);
  if (scoped_kinds != 0)
    in_scope = ds_access_order_enter (&self->device_order, &scope, &scope_error);

  /* The resources' code may not re-enter (see ds_scratchpad_enter ()). */
  self->in_resource = TRUE;
  ds_fence_batch_init (&batch);
  if (observing)
    for (guint kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
      reserved[kind] = self->arenas[kind].reserved;

  /* Host, pinned, device, managed: the lowest bit first. */
  for (guint left = held; left != 0; left &= left - 1)
    {
      DsMemoryKind kind = (DsMemoryKind) __builtin_ctz (left);
      DsArena *arena = &self->arenas[kind];
      GError *error = NULL;

      if ((scoped_kinds & (1u << kind)) && !in_scope)
        {
          g_warning ("Scratchpad %p: %u %s block(s) held back rather than given "
                     "back while work may still use them: %s", self,
                     arena->n_blocks, ds_memory_kind_get_nick (kind), scope_error->message);
          ds_arena_abandon (arena);
          continue;
        }

      if (!ds_arena_release (arena, &batch, ds_scratchpad_dealloc_order (self, kind),
                             keep && can_keep (self, kind), &error))
        {
          g_warning ("Scratchpad %p: %s memory could not be given back in order "
                     "and is held back rather than reused early: %s", self,
                     ds_memory_kind_get_nick (kind), error->message);
          g_error_free (error);
        }
      if (G_UNLIKELY (observing) && reserved[kind] > arena->reserved)
        observe_event (self, DS_OBSERVER_EVENT_RELEASE, kind, reserved[kind] - arena->reserved);
    }

  ds_fence_batch_finish (&batch);
  self->in_resource = FALSE;
  if (in_scope)
    ds_cuda_scope_leave (&scope);
  if (G_UNLIKELY (scope_error != NULL))
    g_error_free (scope_error);
}

/**
 * ds_scratchpad_release:
 * @self: a #DsScratchpad
 *
 * Gives all memory back now, in stream order, and leaves the scratchpad
 * empty and usable again, with settings that may change until its next
 * allocation.
 *
 * Kinds go back host -> pinned -> device -> managed, each block newest
 * first, to the resource it came from, with its size and alignment,
 * exactly once: host memory at once; device memory in the device order;
 * pinned and managed memory in their deallocation orders. A long-lived
 * scratchpad must be released after each unit of work, or it holds its
 * memory forever. Every pointer and [struct@Ds.Block] handed out before
 * is invalid afterwards.
 *
 * With [property@Ds.Scratchpad:keep-blocks], the newest block of each
 * kind that is taken again in the order it is given back in (host and
 * device memory; pinned and managed memory only with a host deallocation
 * order) stays with the scratchpad instead, empty, for the next unit of
 * work.
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
  gboolean nested;
  guint held;

  g_return_if_fail (DS_IS_SCRATCHPAD (self));

  /* Memory that an export (a NumPy array, a DLPack capsule) may still
   * use is not given back. */
  if (G_UNLIKELY (g_atomic_int_get (&self->source.n_exports) != 0))
    {
      g_critical ("ds_scratchpad_release: %d export(s) of the scratchpad's blocks "
                  "are alive (NumPy arrays, memoryviews, DLPack capsules, CUDA "
                  "array interface consumers); the memory is not given back while "
                  "they may use it", g_atomic_int_get (&self->source.n_exports));
      return;
    }

  if (G_UNLIKELY (!ds_scratchpad_enter (self, &nested)))
    {
      g_critical ("ds_scratchpad_release: scratchpad %p is in use by another thread "
                  "(one scratchpad is used by one thread at a time); nothing is given back",
                  self);
      return;
    }

  held = ds_scratchpad_held_kinds (self);
  if (held != 0)
    give_back (self, held, self->keep_blocks && !self->disposed);

  self->in_use = FALSE;
  self->source.generation++;
  ds_scratchpad_leave (self, nested);
}

/**
 * ds_scratchpad_try_release:
 * @self: a #DsScratchpad
 * @error: return location for a #GError
 *
 * Gives all memory back now, in stream order, like
 * [method@Ds.Scratchpad.release], except that memory still in use by
 * exports of its blocks ([method@Ds.Block.export]: the NumPy arrays,
 * memoryviews and DLPack tensors of the Python override) follows them:
 * the upstream blocks holding exported memory stay out of use until the
 * last export of each is gone, then go back in the order they would have
 * gone back in now, whichever thread drops that export
 * ([method@Ds.Scratchpad.get_held_by_exports] counts their bytes). Every
 * other block goes back now, and the scratchpad is empty and usable
 * again, as after a release. This is how the end of a unit of work should
 * release when views of its memory may outlive it, as array libraries let
 * an array keep the memory it uses.
 *
 * Returns: `TRUE` if it released; `FALSE` with %DS_ERROR_BUSY if another
 *   thread is inside the scratchpad, or the scratchpad's own memory
 *   resource called this while the scratchpad called it (nothing is
 *   given back then)
 */
gboolean
ds_scratchpad_try_release (DsScratchpad  *self,
                           GError       **error)
{
  DsExportHold *hold;
  gboolean nested;
  guint held;

  g_return_val_if_fail (DS_IS_SCRATCHPAD (self), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (G_UNLIKELY (!ds_scratchpad_enter (self, &nested)))
    {
      ds_scratchpad_set_busy_error (self, error);
      return FALSE;
    }

  /* No export joins until the generation has moved on. */
  hold = ds_export_hold_detach (&self->source);
  held = ds_scratchpad_held_kinds (self);
  if (G_UNLIKELY (hold != NULL))
    {
      guint scoped = held & ~self->self_scoped & ~(1u << DS_MEMORY_KIND_HOST);

      for (guint left = held; left != 0; left &= left - 1)
        {
          DsMemoryKind kind = (DsMemoryKind) __builtin_ctz (left);

          ds_export_hold_take (hold, &self->source, kind, &self->arenas[kind],
                               ds_scratchpad_dealloc_order (self, kind),
                               (scoped & (1u << kind)) ? &self->device_order : NULL,
                               DS_OBSERVING () ? self : NULL);
        }
      held = ds_scratchpad_held_kinds (self);
    }
  if (held != 0)
    give_back (self, held, self->keep_blocks && !self->disposed);

  self->in_use = FALSE;
  self->source.generation++;
  ds_export_hold_reopen (&self->source);
  ds_scratchpad_leave (self, nested);

  if (hold != NULL)
    ds_export_hold_unref (hold, &self->source);
  return TRUE;
}

/**
 * ds_scratchpad_get_held_by_exports:
 * @self: a #DsScratchpad
 * @kind: a memory kind
 *
 * The bytes of @kind that releases ([method@Ds.Scratchpad.try_release])
 * left out of use for exports of their blocks that are still alive: the
 * upstream blocks they pin, given back when the last export in each is
 * gone. They are not counted in [method@Ds.Scratchpad.get_reserved].
 *
 * Returns: the bytes of @kind that live exports keep from going back
 */
guint64
ds_scratchpad_get_held_by_exports (DsScratchpad *self,
                                   DsMemoryKind  kind)
{
  g_return_val_if_fail (DS_IS_SCRATCHPAD (self), 0);
  g_return_val_if_fail (DS_MEMORY_KIND_IS_VALID (kind), 0);

  return ds_export_hold_get_held (&self->source, kind);
}

/* Before a setting changes (no allocation is alive): gives back the
 * blocks kept for the next unit and forgets what each kind was bound
 * to, so that the next allocation sets it up as the settings now say. */
void
ds_scratchpad_unsettle (DsScratchpad *self)
{
  guint held = ds_scratchpad_held_kinds (self);

  if (held != 0)
    give_back (self, held, FALSE);

  for (guint kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
    memset (&self->arenas[kind].upstream, 0, sizeof self->arenas[kind].upstream);
  self->self_scoped = 0;
  self->scope_checked = 0;
}

/* Statistics ---------------------------------------------------------------------- */

/**
 * ds_scratchpad_get_reserved:
 * @self: a #DsScratchpad
 * @kind: a memory kind
 *
 * The bytes of @kind held from upstream (all blocks).
 *
 * Returns: the bytes of @kind held from upstream
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
 * release: each allocation's size rounded up to 16 and the padding a
 * larger alignment put before it. The tail of a block left for a new one
 * is not counted. It is 0 exactly when nothing of @kind was allocated
 * since the last release.
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
 * The number of exports ([method@Ds.Block.export]) of blocks that @self
 * handed out since its last release that are alive. While it is not 0,
 * [method@Ds.Scratchpad.release] refuses to give the memory back, and
 * [method@Ds.Scratchpad.try_release] keeps what they use.
 *
 * Returns: the number of exports alive
 */
guint
ds_scratchpad_get_n_exports (DsScratchpad *self)
{
  g_return_val_if_fail (DS_IS_SCRATCHPAD (self), 0);

  return (guint) g_atomic_int_get (&self->source.n_exports);
}
