/* ds-scratchpad-settings.c: DsScratchpad, continued: its settings
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The orders, first block sizes, resources, growth ceiling and
 * keep-blocks: plain read-write properties (which keeps g_object_new ()
 * as cheap as for a GObject without properties), accepted whenever the
 * scratchpad holds no allocation and refused with a critical otherwise;
 * what they read back (the values in effect, defaults resolved); and
 * their accessors.
 */

#include "config.h"

#include <string.h>

#include "ds-scratchpad-private.h"
#include "ds-default-resources-private.h"

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
gboolean
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
      changed = set_order (self, &self->pinned_dealloc_order, g_value_get_boxed (value));
      break;
    case PROP_MANAGED_DEALLOC_ORDER:
      changed = set_order (self, &self->managed_dealloc_order, g_value_get_boxed (value));
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

void
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
