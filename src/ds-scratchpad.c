/* ds-scratchpad.c: the dynamic scratchpad
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
 * its deallocation order.
 *
 * In this file: the instance, the one-thread check, setting a kind up,
 * allocation, release, statistics, the uploads of host data to device
 * scratch (DALI's ToGPU and ToContiguousGPU), the settings (plain
 * read-write properties accepted whenever the scratchpad holds no
 * allocation) and the object's life.
 */

#include "config.h"

#include <string.h>

#include "ds-scratchpad.h"
#include "ds-access-order-private.h"
#include "ds-arena-private.h"
#include "ds-block-private.h"
#include "ds-default-resources-private.h"
#include "ds-error.h"
#include "ds-export-hold-private.h"
#include "ds-memory-resource-private.h"
#include "ds-observer-private.h"

/**
 * DsScratchpad:
 *
 * Short-lived scratch memory of the four [enum@Ds.MemoryKind]s, returned
 * all at once, in CUDA stream order, when the scratchpad is released or
 * finalized.
 *
 * Each kind has a monotonic arena: allocation inside the current block is
 * a pointer bump; a full block is followed by one twice as large, up to
 * [property@Ds.Scratchpad:max-block-size], taken from the kind's upstream
 * [iface@Ds.MemoryResource] (by default the process-wide pool of that kind
 * for the device of [property@Ds.Scratchpad:device-order]). Nothing is
 * allocated, and no CUDA call is made, before the first request of a kind.
 *
 * Device memory is allocated in the device order. On release, device
 * blocks go back in the device order, pinned and managed blocks in their
 * deallocation orders (the device order unless set): a stream-ordered
 * upstream reuses the memory only once the work queued before the release
 * has finished; any other gets it back once that stream has drained. So a
 * scratchpad may be dropped while kernels that use its memory are queued.
 *
 * Either make a scratchpad per unit of work (as DALI's `DynamicScratchpad`
 * on the stack), or keep one and call [method@Ds.Scratchpad.release] after
 * each unit, the faster path: no object is made. A released scratchpad
 * learns: its first block of a kind is its initial size doubled until it
 * covers what recent units took; a new one starts where the thread's last
 * one left off, for each kind it draws from a default resource.
 *
 * The settings (orders, initial sizes, resources, the growth ceiling) can
 * be set whenever the scratchpad holds no allocation: at construction, or
 * after a release (blocks kept by [property@Ds.Scratchpad:keep-blocks] go
 * back first), so one scratchpad can follow the stream of each unit of
 * work. Setting one while it holds allocations is a programmer error (a
 * critical; the value stays).
 *
 * After `g_object_run_dispose()` the memory is given back and every
 * allocation fails with %DS_ERROR_DISPOSED.
 *
 * One scratchpad is used by one thread at a time. It may be finalized on
 * any thread: it switches to the device and driver context of its device
 * order by itself. The resources and pools behind it are thread-safe.
 */

struct _DsScratchpad
{
  GObject             parent_instance;

  /* The arenas' bump windows, right after the GObject: C callers bump in
   * them inline (ds-scratchpad.h; their layout, and the rule that a
   * cursor with room after it is a multiple of 16, are ABI). */
  DsBumpWindow       windows[DS_N_MEMORY_KINDS];

  DsArena             arenas[DS_N_MEMORY_KINDS];

  /* Resources given as properties (a reference each); NULL: the default. */
  DsMemoryResource   *resources[DS_N_MEMORY_KINDS];
  /* Bit per kind: its upstream enters its own device and context for
   * every CUDA call (the default pools do, and a pool bound to the device
   * order's), so the scratchpad need not. */
  guint               self_scoped;
  /* Bit per kind: whether the upstream does is known (no more asking). */
  guint               scope_checked;
  /* Set by the first allocation: settings wait for the next release. */
  gboolean            in_use;
  /* Set by dispose: every allocation is refused (DS_ERROR_DISPOSED). */
  gboolean            disposed;
  gboolean            keep_blocks;

  /* UNSET device_order: the legacy default stream of the current device,
   * resolved at the first allocation that needs a device. The dealloc
   * orders, rarely set, live apart (owned; NULL: the device order), which
   * keeps the instance within what malloc's per-thread cache serves
   * (1,032 bytes with glibc; past it every new scratchpad costs more). */
  DsAccessOrder       device_order;
  DsAccessOrder      *pinned_dealloc_order;
  DsAccessOrder      *managed_dealloc_order;

  /* What its blocks read (generation, exports, their order). */
  DsBlockSource       source;

  /* The thread inside the scratchpad's release or binding entry points
   * (see ds_scratchpad_enter ()), or NULL (atomic). */
  gpointer            user;
  /* The thread in a resource's code for the scratchpad (taking a block,
   * giving blocks back), or NULL: every request meanwhile is refused
   * (DS_ERROR_BUSY), the resource's own re-entry included, and disposing
   * waits for finalize. Written by that thread, read by any (relaxed). */
  gpointer            in_resource;

};

/* The layout the inline bumps of C callers rely on: DsScratchpadHead
 * (ds-scratchpad.h). */
G_STATIC_ASSERT (G_STRUCT_OFFSET (DsScratchpad, windows[DS_MEMORY_KIND_HOST]) ==
                 G_STRUCT_OFFSET (DsScratchpadHead, host));
G_STATIC_ASSERT (G_STRUCT_OFFSET (DsScratchpad, windows[DS_MEMORY_KIND_PINNED]) ==
                 G_STRUCT_OFFSET (DsScratchpadHead, pinned));
G_STATIC_ASSERT (G_STRUCT_OFFSET (DsScratchpad, windows[DS_MEMORY_KIND_DEVICE]) ==
                 G_STRUCT_OFFSET (DsScratchpadHead, device));
G_STATIC_ASSERT (G_STRUCT_OFFSET (DsScratchpad, windows[DS_MEMORY_KIND_MANAGED]) ==
                 G_STRUCT_OFFSET (DsScratchpadHead, managed));
G_STATIC_ASSERT (sizeof (DsScratchpadHead) == sizeof (GObject) + DS_N_MEMORY_KINDS * sizeof (DsBumpWindow));
G_STATIC_ASSERT (sizeof (DsBumpWindow) == 2 * sizeof (guintptr));
/* Within glibc's per-thread cache of freed chunks (see device_order). */
G_STATIC_ASSERT (sizeof (DsScratchpad) <= 1032);

/* The order @kind memory goes back in (NULL for host memory). */
static inline const DsAccessOrder *
ds_scratchpad_dealloc_order (DsScratchpad *self,
                             DsMemoryKind  kind)
{
  switch (kind)
    {
    case DS_MEMORY_KIND_PINNED:
      if (self->pinned_dealloc_order != NULL)
        return self->pinned_dealloc_order;
      return &self->device_order;
    case DS_MEMORY_KIND_MANAGED:
      if (self->managed_dealloc_order != NULL)
        return self->managed_dealloc_order;
      return &self->device_order;
    case DS_MEMORY_KIND_DEVICE:
      return &self->device_order;
    case DS_MEMORY_KIND_HOST:
    default:
      return NULL;
    }
}

/* A bit per kind that holds blocks (spelt out: GCC keeps the loop). */
static inline guint
ds_scratchpad_held_kinds (const DsScratchpad *self)
{
  G_STATIC_ASSERT (DS_N_MEMORY_KINDS == 4);

  return (guint) (self->arenas[0].n_blocks != 0) |
         (guint) (self->arenas[1].n_blocks != 0) << 1 |
         (guint) (self->arenas[2].n_blocks != 0) << 2 |
         (guint) (self->arenas[3].n_blocks != 0) << 3;
}

/* One scratchpad is used by one thread at a time. The entry points that
 * bindings reach (ds_scratchpad_alloc_block (), the uploads, the release
 * Python makes: ds_scratchpad_try_release ()) and g_object_run_dispose ()
 * mark it in use by the calling thread for their duration: FALSE if
 * another thread is inside, which is a programmer's error in C but easily
 * made from Python, whose threads run while a call is in C. The C paths
 * of a unit of work (the allocation, ds_scratchpad_release (), the last
 * unref) do not: the mark is an atomic read-modify-write, ~5 ns per
 * lifecycle on an H100 host (bench-lifecycle's empty release), and their
 * races are the caller's, which ThreadSanitizer finds. They refuse what
 * they see without it: a resource's code running for the scratchpad (see
 * resource_caller ()), and, for the release, another thread inside.
 * *@nested: the calling thread was inside already (ds_scratchpad_leave ()
 * then leaves it so). */
/* What stands for the calling thread: its thread pointer (the address of
 * its control block, one instruction), else the address of a byte of its
 * own (a __thread variable, not a GPrivate: read at every entry). */
#if HAVE_BUILTIN_THREAD_POINTER
# define THREAD_TOKEN() ((gpointer) __builtin_thread_pointer ())
#else
static __thread gchar ds_scratchpad_thread_token;
# define THREAD_TOKEN() ((gpointer) &ds_scratchpad_thread_token)
#endif

/* The thread in a resource's code for @self, or NULL. Relaxed: it orders
 * nothing, it only tells; g_atomic_pointer_set () would be a full barrier
 * (an exchange on x86) twice per block taken and per release. */
static inline gpointer
resource_caller (const DsScratchpad *self)
{
  return __atomic_load_n (&self->in_resource, __ATOMIC_RELAXED);
}

static inline void
set_resource_caller (DsScratchpad *self,
                     gpointer      token)
{
  __atomic_store_n (&self->in_resource, token, __ATOMIC_RELAXED);
}

static inline gboolean
ds_scratchpad_enter (DsScratchpad *self,
                     gboolean     *nested)
{
  gpointer token = THREAD_TOKEN ();
  gpointer user = NULL;

  *nested = FALSE;
  if (G_LIKELY (g_atomic_pointer_compare_and_exchange_full (&self->user, NULL, token, &user)))
    {
      /* A C allocation on another thread is in a resource's code. */
      if (G_LIKELY (resource_caller (self) == NULL))
        return TRUE;
      __atomic_store_n (&self->user, NULL, __ATOMIC_RELEASE);
      return FALSE;
    }

  *nested = user == token;
  return *nested && resource_caller (self) == NULL;
}

static inline void
ds_scratchpad_leave (DsScratchpad *self,
                     gboolean      nested)
{
  if (!nested)
    __atomic_store_n (&self->user, NULL, __ATOMIC_RELEASE);
}

/* Whether another thread is inside (seen without taking the scratchpad:
 * only what ds_scratchpad_enter () of another thread stored before). */
static inline gboolean
inside_elsewhere (DsScratchpad *self)
{
  gpointer user = __atomic_load_n (&self->user, __ATOMIC_RELAXED);

  return user != NULL && user != THREAD_TOKEN ();
}

/* DS_ERROR_BUSY for a request of @self that another thread is inside, or
 * that its own resource made while the scratchpad called it. */
static void
set_busy_error (DsScratchpad  *self,
                GError       **error)
{
  if (resource_caller (self) == THREAD_TOKEN ())
    g_set_error (error, DS_ERROR, DS_ERROR_BUSY,
                 "Scratchpad %p was called from its own memory resource "
                 "while it allocated or gave memory back", (void *) self);
  else
    g_set_error (error, DS_ERROR, DS_ERROR_BUSY,
               "Scratchpad %p is in use by another thread (one scratchpad is used "
               "by one thread at a time)", (void *) self);
}

static void ds_scratchpad_iface_iface_init (DsScratchpadIfaceInterface *iface);

/* The class, set once by class_init. DsScratchpad is final, so an instance
 * is one when its class is this one: the check of the paths taken once per
 * block and per release, which DS_IS_SCRATCHPAD () (a call to the get_type
 * function, then the comparison) only backs up for anything else. Relaxed
 * atomics (one value, stored before any instance exists): so that
 * ThreadSanitizer, which does not see GLib's class lock, does not take a
 * read on another thread for a race. */
static gpointer scratchpad_class;

#define OF_SCRATCHPAD_CLASS(self) \
  ((self) != NULL && \
   (gpointer) ((GTypeInstance *) (self))->g_class == __atomic_load_n (&scratchpad_class, __ATOMIC_RELAXED))
#define RETURN_VAL_IF_NOT_SCRATCHPAD(self, val) \
  G_STMT_START { \
    if (!OF_SCRATCHPAD_CLASS (self)) \
      g_return_val_if_fail (DS_IS_SCRATCHPAD (self), (val)); \
  } G_STMT_END
#define RETURN_IF_NOT_SCRATCHPAD(self) \
  G_STMT_START { \
    if (!OF_SCRATCHPAD_CLASS (self)) \
      g_return_if_fail (DS_IS_SCRATCHPAD (self)); \
  } G_STMT_END

G_DEFINE_FINAL_TYPE_WITH_CODE (DsScratchpad, ds_scratchpad, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (DS_TYPE_SCRATCHPAD_IFACE,
                                                      ds_scratchpad_iface_iface_init))

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
static G_GNUC_NO_INLINE gboolean
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

/* @ptr, a block just taken for @kind (or NULL with *@error set), unless
 * the resource disposed the scratchpad meanwhile: then NULL with
 * DS_ERROR_DISPOSED, and the block stays in the arena until finalize (or
 * a release) gives it back. */
static G_GNUC_NO_INLINE gpointer
block_refused (DsScratchpad  *self,
               DsMemoryKind   kind,
               gpointer       ptr,
               GError       **error)
{
  if (G_UNLIKELY (self->disposed) && ptr != NULL)
    {
      self->windows[kind].end = self->windows[kind].cur;
      g_set_error (error, DS_ERROR, DS_ERROR_DISPOSED,
                   "The scratchpad was disposed by its %s resource while it allocated",
                   ds_memory_kind_get_nick (kind));
      return NULL;
    }
  return ptr;
}

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
  set_resource_caller (self, THREAD_TOKEN ());
  ptr = take_block_in_resource (self, kind, size, alignment, error);
  set_resource_caller (self, NULL);

  if (G_UNLIKELY (self->disposed))
    return block_refused (self, kind, ptr, error);
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

  if (kind == DS_MEMORY_KIND_DEVICE && self->device_order.type == DS_ACCESS_ORDER_TYPE_DEVICE)
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

/* A failed request's error, in the caller's terms (a cold path). */
static G_GNUC_NO_INLINE void
alloc_failed (GError       **error,
              GError        *local_error,
              DsMemoryKind   kind,
              gsize          size,
              gsize          alignment)
{
  char text[64];

  g_propagate_prefixed_error (error, local_error,
                              "Cannot allocate %" G_GSIZE_FORMAT " bytes of %s memory with %s: ",
                              size, ds_memory_kind_get_nick (kind),
                              ds_memory_alignment_text (text, alignment, DS_ARENA_MIN_ALIGNMENT));
}

/* A new block for a checked request, with the error in the caller's
 * terms. From here on the settings wait for the next release. */
static G_GNUC_NO_INLINE gpointer
new_block (DsScratchpad  *self,
           DsMemoryKind   kind,
           gsize          size,
           gsize          alignment,
           GError       **error)
{
  GError *local_error = NULL;
  gpointer ptr;

  self->in_use = TRUE;
  ptr = take_block (self, kind, size, alignment, &local_error);
  if (G_UNLIKELY (ptr == NULL))
    alloc_failed (error, local_error, kind, size, alignment);

  return ptr;
}

/* The end of a block taken without take_block (): @ptr, or NULL with
 * *@local_error set (or a block of a scratchpad its resource disposed
 * meanwhile, which stays until finalize): then NULL, with the error in
 * the caller's terms. */
static G_GNUC_NO_INLINE gpointer
block_failed (DsScratchpad  *self,
              DsMemoryKind   kind,
              gsize          size,
              gsize          alignment,
              gpointer       ptr,
              GError        *local_error,
              GError       **error)
{
  ptr = block_refused (self, kind, ptr, &local_error);
  if (ptr == NULL)
    alloc_failed (error, local_error, kind, size, alignment);

  return ptr;
}

/* ds_scratchpad_alloc () for a request that did not fit, checked in
 * full: the kind's set-up, its scope, every error. */
static G_GNUC_NO_INLINE gpointer
scratchpad_alloc_checked (DsScratchpad  *self,
                          DsMemoryKind   kind,
                          gsize          size,
                          gsize          alignment,
                          GError       **error)
{
  gsize a = alignment;
  char text[64];

  RETURN_VAL_IF_NOT_SCRATCHPAD (self, NULL);
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

  /* No ds_scratchpad_enter () here (see there): only a resource's code
   * running for the scratchpad refuses the request. */
  if (G_UNLIKELY (resource_caller (self) != NULL))
    {
      set_busy_error (self, error);
      return NULL;
    }
  return new_block (self, kind, size, alignment, error);
}

/* ds_scratchpad_alloc () for a request that did not fit the current
 * block of its kind, or any request of ds_scratchpad_alloc_array (). The
 * common case is answered here, as scratchpad_alloc_checked () would
 * answer it: a valid request (an alignment of at most a block's, a size
 * that cannot overflow once padded, no error set) is bumped if it fits,
 * else given a new block unless the scratchpad was disposed or a
 * resource's code runs for it. Everything else is checked in full. */
static G_GNUC_NO_INLINE gpointer
scratchpad_alloc_slow (DsScratchpad  *self,
                       DsMemoryKind   kind,
                       gsize          size,
                       gsize          alignment,
                       GError       **error)
{
  if (G_LIKELY (OF_SCRATCHPAD_CLASS (self) && DS_MEMORY_KIND_IS_VALID (kind) &&
                (alignment & (alignment - 1)) == 0 && alignment <= DS_ARENA_BLOCK_ALIGNMENT &&
                size - 1 < G_MAXSIZE - DS_ARENA_BLOCK_ALIGNMENT &&
                (error == NULL || *error == NULL)))
    {
      gpointer ptr = _ds_bump (&self->windows[kind], size, alignment);

      if (ptr != NULL)
        return ptr;

      if (G_LIKELY (!self->disposed && resource_caller (self) == NULL))
        {
          DsArena *arena = &self->arenas[kind];
          GError *local_error = NULL;

          /* Unobserved, a kind whose upstream needs no scope (set up
           * first if need be: a new scratchpad's first block): what
           * take_block () does then, without its frame. */
          if (!DS_OBSERVING () &&
              G_LIKELY (ds_arena_is_bound (arena) || set_up_kind (self, kind, &local_error)) &&
              ((self->self_scoped | 1u << DS_MEMORY_KIND_HOST) & (1u << kind)) != 0)
            {
              const DsAccessOrder *order =
                kind == DS_MEMORY_KIND_DEVICE && self->device_order.type == DS_ACCESS_ORDER_TYPE_DEVICE ?
                &self->device_order : NULL;

              self->in_use = TRUE;
              set_resource_caller (self, THREAD_TOKEN ());
              ptr = ds_arena_grow (arena, size, alignment, order, &local_error);
              set_resource_caller (self, NULL);
              if (G_LIKELY (ptr != NULL && !self->disposed))
                return ptr;
              return block_failed (self, kind, size, alignment, ptr, local_error, error);
            }
          if (G_UNLIKELY (local_error != NULL))
            {
              /* The set-up failed (no device, a resource of another kind). */
              self->in_use = TRUE;
              return block_failed (self, kind, size, alignment, NULL, local_error, error);
            }
          return new_block (self, kind, size, alignment, error);
        }
    }

  return scratchpad_alloc_checked (self, kind, size, alignment, error);
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

/* ds_scratchpad_alloc_array () of more bytes than there are (cold: out
 * of the way of the call that the inline bump falls back on). */
static G_GNUC_NO_INLINE gpointer
alloc_overflows (DsScratchpad  *self,
                 gsize          element_size,
                 gsize          n_elements,
                 GError       **error)
{
  g_return_val_if_fail (DS_IS_SCRATCHPAD (self), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);
  g_set_error (error, DS_ERROR, DS_ERROR_INVALID_ARGUMENT,
               "%" G_GSIZE_FORMAT " elements of %" G_GSIZE_FORMAT " bytes overflow",
               n_elements, element_size);
  return NULL;
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

  if (G_UNLIKELY (!g_size_checked_mul (&size, element_size, n_elements)))
    return alloc_overflows (self, element_size, n_elements, error);

  /* The inline ds_scratchpad_alloc () comes here when its bump failed:
   * straight to the slow path, which bumps first. */
  return scratchpad_alloc_slow (self, kind, size, alignment, error);
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

  RETURN_VAL_IF_NOT_SCRATCHPAD (self, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!ds_scratchpad_enter (self, &nested))
    {
      set_busy_error (self, error);
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

static gpointer
ds_scratchpad_iface_alloc_impl (DsScratchpadIface  *iface,
                                DsMemoryKind        kind,
                                gsize               size,
                                gsize               alignment,
                                GError            **error)
{
  return scratchpad_alloc ((DsScratchpad *) iface, kind, size, alignment, error);
}

static void
ds_scratchpad_iface_iface_init (DsScratchpadIfaceInterface *iface)
{
  iface->alloc = ds_scratchpad_iface_alloc_impl;
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
  set_resource_caller (self, THREAD_TOKEN ());
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
  set_resource_caller (self, NULL);
  if (in_scope)
    ds_cuda_scope_leave (&scope);
  if (G_UNLIKELY (scope_error != NULL))
    g_error_free (scope_error);
}

/* Gives back what the scratchpad holds and opens its next unit of work;
 * the caller is inside it, or owns it. */
static void
release_held (DsScratchpad *self)
{
  guint held = ds_scratchpad_held_kinds (self);

  if (held != 0)
    give_back (self, held, self->keep_blocks && !self->disposed);

  self->in_use = FALSE;
  self->source.generation++;
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
  RETURN_IF_NOT_SCRATCHPAD (self);

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

  /* The caller owns the scratchpad (one thread at a time): the release
   * does not mark it in use, as the C allocation path does not (see
   * ds_scratchpad_enter ()); what it can see at the cost of two loads is
   * refused. Python releases through ds_scratchpad_try_release (). */
  if (G_UNLIKELY (resource_caller (self) != NULL || inside_elsewhere (self)))
    {
      g_critical ("ds_scratchpad_release: scratchpad %p is in use by another thread "
                  "(one scratchpad is used by one thread at a time) or by its own "
                  "memory resource; nothing is given back", self);
      return;
    }

  release_held (self);
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
      set_busy_error (self, error);
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
    }
  release_held (self);
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
static void
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


enum {
  PROP_0,
  PROP_DEVICE_ORDER,
  PROP_PINNED_DEALLOC_ORDER,
  PROP_MANAGED_DEALLOC_ORDER,
  PROP_INITIAL_SIZE_HOST,
  PROP_INITIAL_SIZE_PINNED,
  PROP_INITIAL_SIZE_DEVICE,
  PROP_INITIAL_SIZE_MANAGED,
  PROP_HOST_RESOURCE,
  PROP_PINNED_RESOURCE,
  PROP_DEVICE_RESOURCE,
  PROP_MANAGED_RESOURCE,
  PROP_MAX_BLOCK_SIZE,
  PROP_KEEP_BLOCKS,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

/* Plain read-write properties, accepted while the scratchpad holds no
 * allocation and refused (with a critical) otherwise: construct
 * properties would make every g_object_new () set all twelve, which costs
 * more than the rest of making a scratchpad. */
#define SETTING_FLAGS \
  (G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS)

/* Sets *@dest to @src (NULL: unset); whether that changed it. Blocks
 * kept for the next unit go back in the order they were taken in first,
 * and every kind is set up again at its next block. */
static gboolean
set_order (DsScratchpad        *self,
           DsAccessOrder       *dest,
           const DsAccessOrder *src)
{
  DsAccessOrder value;

  if (src != NULL)
    value = *src;
  else
    memset (&value, 0, sizeof value);
  if (memcmp (dest, &value, sizeof value) == 0)
    return FALSE;

  ds_scratchpad_unsettle (self);
  *dest = value;
  return TRUE;
}

/* Sets *@dest, a dealloc order (NULL: the device order), to a copy of
 * @src (NULL or unset: none); whether that changed it (as set_order ()). */
static gboolean
set_dealloc_order (DsScratchpad         *self,
                   DsAccessOrder       **dest,
                   const DsAccessOrder  *src)
{
  if (src != NULL && src->type == DS_ACCESS_ORDER_TYPE_UNSET)
    src = NULL;
  if (src == NULL ? *dest == NULL : *dest != NULL && memcmp (*dest, src, sizeof *src) == 0)
    return FALSE;

  ds_scratchpad_unsettle (self);
  g_free (*dest);
  *dest = src != NULL ? g_memdup2 (src, sizeof *src) : NULL;
  return TRUE;
}

/* Sets the resource of @kind; whether that changed it (as set_order ()). */
static gboolean
set_resource (DsScratchpad     *self,
              DsMemoryKind      kind,
              DsMemoryResource *resource)
{
  if (self->resources[kind] == resource)
    return FALSE;

  ds_scratchpad_unsettle (self);
  /* A resource of the wrong kind, or one without the functions it needs,
   * is reported as an error at the first allocation of this kind, where
   * a caller from Python gets a GError rather than a critical. */
  return g_set_object (&self->resources[kind], resource);
}

/* Sets the first block size of @kind (0: the default); whether that
 * changed it. */
static gboolean
ds_scratchpad_set_initial_size (DsScratchpad *self,
                                DsMemoryKind  kind,
                                guint64       size)
{
  DsGrowth *growth = &self->arenas[kind].growth;
  gsize s = size != 0 ? (gsize) MIN (size, (guint64) G_MAXSIZE / 2) : DS_SCRATCHPAD_DEFAULT_INITIAL_SIZE;

  if (growth->initial_size == s)
    return FALSE;

  ds_growth_init (growth, s, growth->max_block_size);
  return TRUE;
}

/* Sets the growth ceiling of every kind (0: the default); whether that
 * changed it. */
static gboolean
set_max_block_size (DsScratchpad *self,
                    guint64       size)
{
  gsize s = size != 0 ? (gsize) MIN (size, (guint64) G_MAXSIZE) : DS_SCRATCHPAD_DEFAULT_MAX_BLOCK_SIZE;

  if (self->arenas[DS_MEMORY_KIND_HOST].growth.max_block_size == s)
    return FALSE;

  for (guint kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
    self->arenas[kind].growth.max_block_size = s;
  return TRUE;
}

/* Resolves the default device order, which needs a device. */
static const DsAccessOrder *
order_or_null (const DsAccessOrder *order)
{
  return order->type != DS_ACCESS_ORDER_TYPE_UNSET ? order : NULL;
}

/* What a *-resource property reads: the resource given, the one blocks
 * came from, or the default that the next allocation would use; NULL when
 * that needs a device that cannot be used (or is not known yet). Never
 * creates a CUDA context. */
static DsMemoryResource *
resource_in_effect (DsScratchpad *self,
                    DsMemoryKind  kind)
{
  const DsUpstream *upstream;
  gboolean self_scoped;

  if (self->resources[kind] != NULL)
    return self->resources[kind];
  if (ds_arena_is_bound (&self->arenas[kind]))
    return self->arenas[kind].upstream.resource;
  /* Disposed: no default would be used any more. */
  if (self->disposed)
    return NULL;
  if (kind == DS_MEMORY_KIND_HOST)
    upstream = ds_default_resource_get_cached (kind, 0, NULL, &self_scoped, NULL);
  else if (self->device_order.type == DS_ACCESS_ORDER_TYPE_UNSET || !ds_cuda_ensure_available (NULL))
    return NULL;
  else
    upstream = ds_default_resource_get_cached (kind, self->device_order.device,
                                               self->device_order.context, &self_scoped, NULL);

  return upstream != NULL ? upstream->resource : NULL;
}

static void
ds_scratchpad_get_property (GObject    *object,
                            guint       prop_id,
                            GValue     *value,
                            GParamSpec *pspec)
{
  DsScratchpad *self = DS_SCRATCHPAD (object);

  switch (prop_id)
    {
    case PROP_DEVICE_ORDER:
      g_value_set_boxed (value, order_or_null (&self->device_order));
      break;
    case PROP_PINNED_DEALLOC_ORDER:
      g_value_set_boxed (value, order_or_null (ds_scratchpad_dealloc_order (self, DS_MEMORY_KIND_PINNED)));
      break;
    case PROP_MANAGED_DEALLOC_ORDER:
      g_value_set_boxed (value, order_or_null (ds_scratchpad_dealloc_order (self, DS_MEMORY_KIND_MANAGED)));
      break;
    case PROP_INITIAL_SIZE_HOST:
    case PROP_INITIAL_SIZE_PINNED:
    case PROP_INITIAL_SIZE_DEVICE:
    case PROP_INITIAL_SIZE_MANAGED:
      g_value_set_uint64 (value, self->arenas[prop_id - PROP_INITIAL_SIZE_HOST].growth.initial_size);
      break;
    case PROP_HOST_RESOURCE:
    case PROP_PINNED_RESOURCE:
    case PROP_DEVICE_RESOURCE:
    case PROP_MANAGED_RESOURCE:
      {
        g_value_set_object (value, resource_in_effect (self, prop_id - PROP_HOST_RESOURCE));
      }
      break;
    case PROP_MAX_BLOCK_SIZE:
      g_value_set_uint64 (value, self->arenas[DS_MEMORY_KIND_HOST].growth.max_block_size);
      break;
    case PROP_KEEP_BLOCKS:
      g_value_set_boolean (value, self->keep_blocks);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

/* Whether the setting @pspec may change now (no allocation alive, not
 * disposed); a critical if not. */
static gboolean
setting_allowed (DsScratchpad *self,
                 GParamSpec   *pspec)
{
  if (G_LIKELY (!self->in_use && !self->disposed))
    return TRUE;

  if (self->disposed)
    g_critical ("The %s property of scratchpad %p cannot change: it was disposed",
                pspec->name, self);
  else
    g_critical ("The %s property of scratchpad %p cannot change while it holds "
                "allocations; set it before the first allocation or after a release",
                pspec->name, self);
  return FALSE;
}

static void
ds_scratchpad_set_property (GObject      *object,
                            guint         prop_id,
                            const GValue *value,
                            GParamSpec   *pspec)
{
  DsScratchpad *self = DS_SCRATCHPAD (object);
  gboolean changed;

  /* Not a setting of how memory is taken: the next release follows it. */
  if (prop_id == PROP_KEEP_BLOCKS && !self->disposed)
    {
      gboolean keep_blocks = g_value_get_boolean (value);

      if (self->keep_blocks != keep_blocks)
        {
          self->keep_blocks = keep_blocks;
          g_object_notify_by_pspec (object, pspec);
        }
      return;
    }

  if (!setting_allowed (self, pspec))
    return;

  switch (prop_id)
    {
    case PROP_DEVICE_ORDER:
      changed = set_order (self, &self->device_order, g_value_get_boxed (value));
      break;
    case PROP_PINNED_DEALLOC_ORDER:
      changed = set_dealloc_order (self, &self->pinned_dealloc_order, g_value_get_boxed (value));
      break;
    case PROP_MANAGED_DEALLOC_ORDER:
      changed = set_dealloc_order (self, &self->managed_dealloc_order, g_value_get_boxed (value));
      break;
    case PROP_INITIAL_SIZE_HOST:
    case PROP_INITIAL_SIZE_PINNED:
    case PROP_INITIAL_SIZE_DEVICE:
    case PROP_INITIAL_SIZE_MANAGED:
      changed = ds_scratchpad_set_initial_size (self, prop_id - PROP_INITIAL_SIZE_HOST, g_value_get_uint64 (value));
      break;
    case PROP_HOST_RESOURCE:
    case PROP_PINNED_RESOURCE:
    case PROP_DEVICE_RESOURCE:
    case PROP_MANAGED_RESOURCE:
      changed = set_resource (self, prop_id - PROP_HOST_RESOURCE, g_value_get_object (value));
      break;
    case PROP_MAX_BLOCK_SIZE:
      changed = set_max_block_size (self, g_value_get_uint64 (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      return;
    }

  if (changed)
    g_object_notify_by_pspec (object, pspec);
}

static void
ds_scratchpad_install_properties (GObjectClass *object_class)
{
  object_class->get_property = ds_scratchpad_get_property;
  object_class->set_property = ds_scratchpad_set_property;

  /**
   * DsScratchpad:device-order:
   *
   * The order device memory is allocated and released in, and the device
   * (and driver context) of the GPU kinds. `NULL`: the legacy default
   * stream of the device current at the first GPU allocation.
   */
  properties[PROP_DEVICE_ORDER] =
    g_param_spec_boxed ("device-order", NULL, NULL, DS_TYPE_ACCESS_ORDER,
                        SETTING_FLAGS);

  /**
   * DsScratchpad:pinned-dealloc-order:
   *
   * The order pinned memory is given back in. `NULL`: the device order,
   * which is also what the property reads back then.
   */
  properties[PROP_PINNED_DEALLOC_ORDER] =
    g_param_spec_boxed ("pinned-dealloc-order", NULL, NULL, DS_TYPE_ACCESS_ORDER,
                        SETTING_FLAGS);

  /**
   * DsScratchpad:managed-dealloc-order:
   *
   * The order managed memory is given back in. `NULL`: the device order,
   * which is also what the property reads back then.
   */
  properties[PROP_MANAGED_DEALLOC_ORDER] =
    g_param_spec_boxed ("managed-dealloc-order", NULL, NULL, DS_TYPE_ACCESS_ORDER,
                        SETTING_FLAGS);

  /**
   * DsScratchpad:initial-size-host:
   *
   * The size of the first host block; each next one doubles,
   * up to [property@Ds.Scratchpad:max-block-size]. 0: 64 KiB. After a
   * release (and on the default resource, from the start) the first
   * block is this size doubled until it covers what recent units of work
   * took (see [class@Ds.Scratchpad]).
   */

  /**
   * DsScratchpad:initial-size-pinned:
   *
   * The size of the first pinned block: see
   * [property@Ds.Scratchpad:initial-size-host].
   */

  /**
   * DsScratchpad:initial-size-device:
   *
   * The size of the first device block: see
   * [property@Ds.Scratchpad:initial-size-host].
   */

  /**
   * DsScratchpad:initial-size-managed:
   *
   * The size of the first managed block: see
   * [property@Ds.Scratchpad:initial-size-host].
   */

  /**
   * DsScratchpad:host-resource:
   *
   * Where host blocks come from. `NULL`: the default host resource. Reads
   * back the resource in effect: the one given, else the default. A
   * resource of another kind, or one that lacks what a resource needs,
   * makes the first host allocation fail with %DS_ERROR_INVALID_ARGUMENT.
   */

  /**
   * DsScratchpad:pinned-resource:
   *
   * Where pinned blocks come from. `NULL`: the default pinned resource of the
   * device order's device. Reads back as
   * [property@Ds.Scratchpad:host-resource] does (`NULL` while the device
   * order is not known, or without a CUDA device).
   */

  /**
   * DsScratchpad:device-resource:
   *
   * Where device blocks come from. `NULL`: the default device resource of the
   * device order's device. Reads back as
   * [property@Ds.Scratchpad:host-resource] does (`NULL` while the device
   * order is not known, or without a CUDA device).
   */

  /**
   * DsScratchpad:managed-resource:
   *
   * Where managed blocks come from. `NULL`: the default managed resource of the
   * device order's device. Reads back as
   * [property@Ds.Scratchpad:host-resource] does (`NULL` while the device
   * order is not known, or without a CUDA device).
   */

  /**
   * DsScratchpad:max-block-size:
   *
   * The growth ceiling of every kind, in bytes: blocks double until they
   * reach it (or the kind's initial size, if that is larger), and from
   * then on each new block has this size; a request larger than the
   * ceiling gets a block of its own size. It bounds what a scratchpad that
   * is never released asks its upstream for at once. 0: the default,
   * %DS_SCRATCHPAD_DEFAULT_MAX_BLOCK_SIZE (64 MiB); %G_MAXUINT64: no
   * ceiling (blocks always double). Reads back the value in effect.
   */
  properties[PROP_MAX_BLOCK_SIZE] =
    g_param_spec_uint64 ("max-block-size", NULL, NULL,
                         0, G_MAXUINT64, DS_SCRATCHPAD_DEFAULT_MAX_BLOCK_SIZE,
                         SETTING_FLAGS);

  /**
   * DsScratchpad:keep-blocks:
   *
   * Whether [method@Ds.Scratchpad.release] keeps, for the next unit of
   * work, the newest block of each kind that is taken again in the order
   * it is given back in: host memory, device memory (both ways in the
   * device order), and pinned and managed memory whose deallocation order
   * is the host. Pinned and managed memory given back on a stream always
   * go back, because the host must not write them again before that
   * stream's work is done.
   *
   * A long-lived scratchpad released after each unit of work (an
   * element's, per stream) then bumps in the kept blocks without a pool
   * round trip; stream order makes the reuse safe.
   *
   * Between units the scratchpad holds one block per kind it uses, which
   * no one else can take. A block is kept only if it covers the first
   * block the next unit would take and is at most twice that, so a kind
   * no longer used gives its block back after a few releases.
   *
   * Unlike the other settings, it may change at any time before the
   * scratchpad is disposed; the next release follows it. Off by default:
   * a release gives everything back at once.
   */
  properties[PROP_KEEP_BLOCKS] =
    g_param_spec_boolean ("keep-blocks", NULL, NULL, FALSE,
                          G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  for (guint kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
    {
      static const char * const initial_size[] = {
        "initial-size-host", "initial-size-pinned", "initial-size-device", "initial-size-managed",
      };
      static const char * const resource[] = {
        "host-resource", "pinned-resource", "device-resource", "managed-resource",
      };

      properties[PROP_INITIAL_SIZE_HOST + kind] =
        g_param_spec_uint64 (initial_size[kind], NULL, NULL, 0, G_MAXUINT64,
                             DS_SCRATCHPAD_DEFAULT_INITIAL_SIZE, SETTING_FLAGS);
      properties[PROP_HOST_RESOURCE + kind] =
        g_param_spec_object (resource[kind], NULL, NULL, DS_TYPE_MEMORY_RESOURCE, SETTING_FLAGS);
    }

  g_object_class_install_properties (object_class, N_PROPS, properties);
}

/**
 * ds_scratchpad_get_resource:
 * @self: a #DsScratchpad
 * @kind: a memory kind
 *
 * The resource @kind memory comes from, as the matching `*-resource`
 * property reads ([property@Ds.Scratchpad:host-resource] and the others):
 * the one given, else the default that the next allocation of @kind uses.
 *
 * Returns: (transfer none) (nullable): the resource; `NULL` when the
 *   default needs a device that cannot be used or is not known yet
 */
DsMemoryResource *
ds_scratchpad_get_resource (DsScratchpad *self,
                            DsMemoryKind  kind)
{
  g_return_val_if_fail (DS_IS_SCRATCHPAD (self), NULL);
  g_return_val_if_fail (DS_MEMORY_KIND_IS_VALID (kind), NULL);

  return resource_in_effect (self, kind);
}

/**
 * ds_scratchpad_set_resource:
 * @self: a #DsScratchpad
 * @kind: a memory kind
 * @resource: (nullable): the resource to take @kind memory from; `NULL`
 *   for the default
 *
 * Sets the matching `*-resource` property
 * ([property@Ds.Scratchpad:pinned-resource] and the others), without the
 * cost of setting a property by name (GLib looks each one up and collects
 * it into a value), for code that makes a scratchpad per unit of work.
 * Like every setting, only while the scratchpad holds no allocation. A
 * resource of another kind is reported as an error by the first
 * allocation of @kind.
 */
void
ds_scratchpad_set_resource (DsScratchpad     *self,
                            DsMemoryKind      kind,
                            DsMemoryResource *resource)
{
  GParamSpec *pspec;

  g_return_if_fail (DS_IS_SCRATCHPAD (self));
  g_return_if_fail (DS_MEMORY_KIND_IS_VALID (kind));
  g_return_if_fail (resource == NULL || DS_IS_MEMORY_RESOURCE (resource));

  pspec = properties[PROP_HOST_RESOURCE + kind];
  if (setting_allowed (self, pspec) && set_resource (self, kind, resource))
    g_object_notify_by_pspec (G_OBJECT (self), pspec);
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

  return self->arenas[kind].growth.initial_size;
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

  return self->arenas[DS_MEMORY_KIND_HOST].growth.max_block_size;
}

/**
 * ds_scratchpad_set_max_block_size:
 * @self: a #DsScratchpad
 * @max_block_size: the growth ceiling in bytes; 0 for the default
 *   (%DS_SCRATCHPAD_DEFAULT_MAX_BLOCK_SIZE), %G_MAXUINT64 for none
 *
 * Sets [property@Ds.Scratchpad:max-block-size]. Like every setting, only
 * while the scratchpad holds no allocation.
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


/* Uploads (DALI's ToGPU and ToContiguousGPU) ---------------------------------------- */

/* Sets @total to the packed size of @n_arrays arrays each at @alignment
 * (checked, and 0 raised to the minimum); FALSE with @error set if the
 * alignment is bad or the size overflows. */
static gboolean
packed_size (guint         n_arrays,
             const gsize  *sizes,
             gsize        *alignment,
             gsize        *total,
             GError      **error)
{
  gsize alignment_as_passed = *alignment;
  char text[64];

  *total = 0;
  if (!ds_arena_check_request (0, alignment, error))
    return FALSE;

  for (guint i = 0; i < n_arrays; i++)
    {
      gsize start = (*total + *alignment - 1) & ~(*alignment - 1);

      if (start < *total || sizes[i] > G_MAXSIZE - start - *alignment)
        {
          g_set_error (error, DS_ERROR, DS_ERROR_INVALID_ARGUMENT,
                       "The total size of the %u arrays with %s overflows at "
                       "array %u (%" G_GSIZE_FORMAT " bytes)", n_arrays,
                       ds_memory_alignment_text (text, alignment_as_passed,
                                                 DS_ARENA_MIN_ALIGNMENT),
                       i, sizes[i]);
          return FALSE;
        }
      *total = start + sizes[i];
    }

  return TRUE;
}

/* Copies the arrays into @staging at their packed offsets and tells where
 * each lands in @device (NULL for an empty one). */
static void
pack (guint                n_arrays,
      const gconstpointer *arrays,
      const gsize         *sizes,
      gsize                alignment,
      guint8              *staging,
      guint8              *device,
      gpointer            *device_ptrs)
{
  gsize total = 0;

  for (guint i = 0; i < n_arrays; i++)
    {
      gsize start = (total + alignment - 1) & ~(alignment - 1);

      if (sizes[i] > 0)
        memcpy (staging + start, arrays[i], sizes[i]);
      if (device_ptrs != NULL)
        device_ptrs[i] = sizes[i] > 0 ? device + start : NULL;
      total = start + sizes[i];
    }
}

/**
 * ds_scratchpad_to_contiguous_device: (skip)
 * @self: a #DsScratchpad
 * @n_arrays: the number of arrays
 * @arrays: (array length=n_arrays): the host arrays
 * @sizes: (array length=n_arrays): their sizes in bytes
 * @alignment: the alignment of each array in the device memory (a power
 *   of two, or 0 for 16)
 * @device_ptrs: (out caller-allocates) (array length=n_arrays) (optional):
 *   where each array lands (`NULL` for an empty one)
 * @error: return location for a #GError
 *
 * Packs @arrays into pinned scratch, then into one device allocation with
 * a single copy queued in the device order (DALI's `ToContiguousGPU`). The
 * pinned staging memory goes back in the pinned deallocation order, which
 * is made to wait for the copy if it is not the device order.
 *
 * Returns: (transfer none) (nullable): the device memory holding every
 *   array, `NULL` if all are empty, or `NULL` with @error set
 */
gpointer
ds_scratchpad_to_contiguous_device (DsScratchpad        *self,
                                    guint                n_arrays,
                                    const gconstpointer *arrays,
                                    const gsize         *sizes,
                                    gsize                alignment,
                                    gpointer            *device_ptrs,
                                    GError             **error)
{
  const DsAccessOrder *pinned_order;
  guint8 *staging, *device = NULL;
  gboolean nested;
  gsize total;

  g_return_val_if_fail (DS_IS_SCRATCHPAD (self), NULL);
  g_return_val_if_fail (n_arrays == 0 || (arrays != NULL && sizes != NULL), NULL);
  for (guint i = 0; i < n_arrays; i++)
    g_return_val_if_fail (arrays[i] != NULL || sizes[i] == 0, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!ds_scratchpad_enter (self, &nested))
    {
      set_busy_error (self, error);
      return NULL;
    }

  if (!packed_size (n_arrays, sizes, &alignment, &total, error))
    goto out;
  if (total == 0)
    {
      pack (n_arrays, arrays, sizes, alignment, NULL, NULL, device_ptrs);
      goto out;
    }

  staging = ds_scratchpad_alloc (self, DS_MEMORY_KIND_PINNED, total, alignment, error);
  if (staging != NULL)
    device = ds_scratchpad_alloc (self, DS_MEMORY_KIND_DEVICE, total, alignment, error);
  if (device == NULL)
    goto out;
  pack (n_arrays, arrays, sizes, alignment, staging, device, device_ptrs);

  /* In host order the copy is complete when this returns; otherwise the
   * pinned staging memory must not go back before the copy has read it. */
  pinned_order = ds_scratchpad_dealloc_order (self, DS_MEMORY_KIND_PINNED);
  if (!ds_access_order_memcpy (&self->device_order, device, staging, total, FALSE, error) ||
      (!ds_access_order_equal (pinned_order, &self->device_order) &&
       !ds_access_order_wait (pinned_order, &self->device_order, error)))
    device = NULL;

out:
  ds_scratchpad_leave (self, nested);
  return device;
}

/**
 * ds_scratchpad_to_device: (skip)
 * @self: a #DsScratchpad
 * @data: (array length=size) (element-type guint8): host data
 * @size: the number of bytes
 * @alignment: a power of two, or 0 for 16
 * @error: return location for a #GError
 *
 * Copies @data into device scratch (DALI's `ToGPU`): through pinned
 * staging, with the copy queued in the device order.
 *
 * Returns: (transfer none) (nullable): the device copy, `NULL` for size 0,
 *   or `NULL` with @error set
 */
gpointer
ds_scratchpad_to_device (DsScratchpad  *self,
                         gconstpointer  data,
                         gsize          size,
                         gsize          alignment,
                         GError       **error)
{
  g_return_val_if_fail (DS_IS_SCRATCHPAD (self), NULL);
  g_return_val_if_fail (data != NULL || size == 0, NULL);

  return ds_scratchpad_to_contiguous_device (self, 1, &data, &size, alignment, NULL, error);
}

/**
 * ds_scratchpad_to_device_block: (rename-to ds_scratchpad_to_device)
 * @self: a #DsScratchpad
 * @data: (array length=size) (element-type guint8) (nullable): host data
 *   to upload
 * @size: the number of bytes
 * @alignment: a power of two, or 0 for 16
 * @error: return location for a #GError
 *
 * [method@Ds.Scratchpad.to_device] returning a device [struct@Ds.Block];
 * in Python and JavaScript this is `sp.to_device(data, alignment)`.
 *
 * Returns: (transfer full) (nullable): a device block holding a copy of
 *   @data, `NULL` for size 0, or `NULL` with @error set
 */
DsBlock *
ds_scratchpad_to_device_block (DsScratchpad  *self,
                               const guint8  *data,
                               gsize          size,
                               gsize          alignment,
                               GError       **error)
{
  gpointer device;

  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  device = ds_scratchpad_to_device (self, data, size, alignment, error);
  if (device == NULL)
    return NULL;

  return ds_block_new (self, &self->source, device, size, DS_MEMORY_KIND_DEVICE);
}

static void
block_unref_nullable (gpointer block)
{
  if (block != NULL)
    ds_block_unref (block);
}

/**
 * ds_scratchpad_to_contiguous_device_block: (rename-to ds_scratchpad_to_contiguous_device)
 * @self: a #DsScratchpad
 * @arrays: (array length=n_arrays): the host arrays
 * @n_arrays: the number of arrays
 * @alignment: the alignment of each array in the device block (a power of
 *   two, or 0 for 16)
 * @blocks: (out) (optional) (transfer container) (element-type DsBlock):
 *   one device block per array, inside the returned one (`NULL` for an
 *   empty array); the array unrefs them when freed
 * @error: return location for a #GError
 *
 * [method@Ds.Scratchpad.to_contiguous_device] for bindings. In Python this
 * is `block, blocks = sp.to_contiguous_device(arrays, alignment)`.
 *
 * Returns: (transfer full) (nullable): the device block holding every
 *   array, `NULL` if all are empty, or `NULL` with @error set
 */
DsBlock *
ds_scratchpad_to_contiguous_device_block (DsScratchpad  *self,
                                          GBytes       **arrays,
                                          guint          n_arrays,
                                          gsize          alignment,
                                          GPtrArray    **blocks,
                                          GError       **error)
{
  g_autofree gconstpointer *data = g_new0 (gconstpointer, MAX (n_arrays, 1));
  g_autofree gsize *sizes = g_new0 (gsize, MAX (n_arrays, 1));
  g_autofree gpointer *device_ptrs = g_new0 (gpointer, MAX (n_arrays, 1));
  GError *local_error = NULL;
  guint8 *device;
  gsize total = 0;

  g_return_val_if_fail (DS_IS_SCRATCHPAD (self), NULL);
  g_return_val_if_fail (n_arrays == 0 || arrays != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (blocks != NULL)
    *blocks = NULL;
  for (guint i = 0; i < n_arrays; i++)
    {
      g_return_val_if_fail (arrays[i] != NULL, NULL);
      data[i] = g_bytes_get_data (arrays[i], &sizes[i]);
    }

  device = ds_scratchpad_to_contiguous_device (self, n_arrays, data, sizes, alignment,
                                               device_ptrs, &local_error);
  if (local_error != NULL)
    {
      g_propagate_error (error, local_error);
      return NULL;
    }

  for (guint i = 0; i < n_arrays; i++)
    if (sizes[i] > 0)
      total = MAX (total, (gsize) ((guint8 *) device_ptrs[i] - device) + sizes[i]);

  if (blocks != NULL)
    {
      *blocks = g_ptr_array_new_full (n_arrays, block_unref_nullable);
      for (guint i = 0; i < n_arrays; i++)
        g_ptr_array_add (*blocks, sizes[i] == 0 ? NULL :
                         ds_block_new (self, &self->source, device_ptrs[i], sizes[i],
                                       DS_MEMORY_KIND_DEVICE));
    }

  if (device == NULL)
    return NULL;
  return ds_block_new (self, &self->source, device, total, DS_MEMORY_KIND_DEVICE);
}

/* GObject ------------------------------------------------------------------------- */

static void
ds_scratchpad_dispose (GObject *object)
{
  DsScratchpad *self = (DsScratchpad *) object;

  /* From now on every allocation is refused with DS_ERROR_DISPOSED. */
  self->disposed = TRUE;

  /* Disposed by its own resource while the scratchpad called it: the
   * arenas are in the middle of a change; finalize gives back. */
  if (G_UNLIKELY (resource_caller (self) != NULL))
    {
      for (guint kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
        self->windows[kind].end = self->windows[kind].cur;
      G_OBJECT_CLASS (ds_scratchpad_parent_class)->dispose (object);
      return;
    }

  /* While exports of its blocks are alive (g_object_run_dispose () with a
   * NumPy array around), their memory stays, with the resource it came
   * from, until they are gone: finalize () gives it back. */
  if (g_atomic_int_get (&self->source.n_exports) == 0)
    {
      gboolean nested = TRUE;

      /* At the last reference nobody else can be inside (a caller inside
       * holds one); g_object_run_dispose () holds one more, and takes the
       * scratchpad as the bindings' entry points do. */
      if (g_atomic_int_get (&object->ref_count) > 1 && !ds_scratchpad_enter (self, &nested))
        {
          g_critical ("Scratchpad %p disposed while another thread is inside it; "
                      "its memory is given back at finalize", self);
          for (guint kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
            self->windows[kind].end = self->windows[kind].cur;
          G_OBJECT_CLASS (ds_scratchpad_parent_class)->dispose (object);
          return;
        }
      if (ds_scratchpad_held_kinds (self) != 0)
        release_held (self);
      ds_scratchpad_leave (self, nested);
      /* Now empty (a disposed scratchpad keeps no block). An arena bound
       * to a given resource forgets it, which goes; one bound to a
       * default resource (which stays for the process) stays bound. */
      for (guint kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
        if (self->resources[kind] != NULL)
          {
            memset (&self->arenas[kind].upstream, 0, sizeof self->arenas[kind].upstream);
            self->self_scoped &= ~(1u << kind);
            self->scope_checked &= ~(1u << kind);
            g_clear_object (&self->resources[kind]);
          }
    }
  else
    {
      /* Close the bump windows: not even an inline bump of an older
       * header hands out more of the memory kept for the exports. */
      for (guint kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
        self->windows[kind].end = self->windows[kind].cur;
    }

  G_OBJECT_CLASS (ds_scratchpad_parent_class)->dispose (object);
}

static void
ds_scratchpad_finalize (GObject *object)
{
  DsScratchpad *self = (DsScratchpad *) object;

  /* Blocks kept at dispose for exports: each export held a reference, so
   * they are all gone now. */
  if (G_UNLIKELY (ds_scratchpad_held_kinds (self) != 0))
    ds_scratchpad_release (self);

  /* A new scratchpad per unit of work ends here: the calls that most
   * scratchpads have nothing for (no export ever made, no dealloc order of
   * their own) are skipped. */
  if (G_UNLIKELY (g_atomic_pointer_get (&self->source.hold) != NULL))
    ds_export_hold_clear (&self->source);
  for (guint kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
    {
      g_clear_object (&self->resources[kind]);
      ds_arena_clear (&self->arenas[kind]);
    }
  if (G_UNLIKELY (self->pinned_dealloc_order != NULL || self->managed_dealloc_order != NULL))
    {
      g_free (self->pinned_dealloc_order);
      g_free (self->managed_dealloc_order);
    }

  G_OBJECT_CLASS (ds_scratchpad_parent_class)->finalize (object);
}

static void
ds_scratchpad_class_init (DsScratchpadClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  __atomic_store_n (&scratchpad_class, (gpointer) klass, __ATOMIC_RELAXED);
  object_class->dispose = ds_scratchpad_dispose;
  object_class->finalize = ds_scratchpad_finalize;

  ds_scratchpad_install_properties (object_class);
}

static void
ds_scratchpad_init (DsScratchpad *self)
{
  for (guint kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
    ds_arena_init (&self->arenas[kind], &self->windows[kind], DS_SCRATCHPAD_DEFAULT_INITIAL_SIZE,
                   DS_SCRATCHPAD_DEFAULT_MAX_BLOCK_SIZE);
  self->source.order = &self->device_order;
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
  DsScratchpad *self = g_object_new (DS_TYPE_SCRATCHPAD, NULL);

  /* The fields directly: the same result as the properties, without the
   * GValue round trips on a per-unit-of-work path. */
  if (device_order != NULL)
    self->device_order = *device_order;
  if (pinned_dealloc_order != NULL && pinned_dealloc_order->type != DS_ACCESS_ORDER_TYPE_UNSET)
    self->pinned_dealloc_order = g_memdup2 (pinned_dealloc_order, sizeof *pinned_dealloc_order);
  if (managed_dealloc_order != NULL && managed_dealloc_order->type != DS_ACCESS_ORDER_TYPE_UNSET)
    self->managed_dealloc_order = g_memdup2 (managed_dealloc_order, sizeof *managed_dealloc_order);
  if (initial_sizes != NULL)
    for (guint kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
      ds_scratchpad_set_initial_size (self, kind, initial_sizes[kind]);

  return self;
}
