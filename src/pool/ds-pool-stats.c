/* ds-pool-stats.c: what a pool did and holds
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "ds-pool-stats.h"

G_DEFINE_BOXED_TYPE (DsPoolStats, ds_pool_stats, ds_pool_stats_copy, ds_pool_stats_free)

/**
 * ds_pool_stats_copy:
 * @self: a #DsPoolStats
 *
 * Copies @self.
 *
 * Returns: (transfer full): a copy of @self
 */
DsPoolStats *
ds_pool_stats_copy (const DsPoolStats *self)
{
  g_return_val_if_fail (self != NULL, NULL);

  return g_memdup2 (self, sizeof *self);
}

/**
 * ds_pool_stats_free: (skip)
 * @self: (transfer full) (nullable): a #DsPoolStats
 *
 * Frees a copy made by [method@Ds.PoolStats.copy].
 */
void
ds_pool_stats_free (DsPoolStats *self)
{
  g_free (self);
}
