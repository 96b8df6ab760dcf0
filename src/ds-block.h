/* ds-block.h: one scratch allocation, as bindings see it
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined (DS_INSIDE) && !defined (DS_COMPILATION)
# error "Only <ds.h> can be included directly."
#endif

#include <glib-object.h>

#include "ds-types.h"
#include "ds-memory-kind.h"

G_BEGIN_DECLS

#define DS_TYPE_BLOCK (ds_block_get_type ())

DS_AVAILABLE_IN_ALL
GType         ds_block_get_type          (void) G_GNUC_CONST;
DS_AVAILABLE_IN_ALL
DsBlock      *ds_block_ref               (DsBlock      *self);
DS_AVAILABLE_IN_ALL
void          ds_block_unref             (DsBlock      *self);
DS_AVAILABLE_IN_ALL
guint64       ds_block_get_address       (DsBlock      *self);
DS_AVAILABLE_IN_ALL
gpointer      ds_block_get_pointer       (DsBlock      *self);
DS_AVAILABLE_IN_ALL
gsize         ds_block_get_size          (DsBlock      *self);
DS_AVAILABLE_IN_ALL
DsMemoryKind  ds_block_get_kind          (DsBlock      *self);
DS_AVAILABLE_IN_ALL
DsScratchpad *ds_block_get_scratchpad    (DsBlock      *self);
DS_AVAILABLE_IN_ALL
guint64       ds_block_get_generation    (DsBlock      *self);
DS_AVAILABLE_IN_ALL
gboolean      ds_block_is_valid          (DsBlock      *self);
DS_AVAILABLE_IN_ALL
GBytes       *ds_block_read              (DsBlock      *self,
                                          gsize         offset,
                                          gsize         length,
                                          GError      **error);
DS_AVAILABLE_IN_ALL
gboolean      ds_block_write             (DsBlock      *self,
                                          gsize         offset,
                                          GBytes       *data,
                                          GError      **error);
DS_AVAILABLE_IN_ALL
gboolean      ds_block_fill              (DsBlock      *self,
                                          guint8        value,
                                          GError      **error);
DS_AVAILABLE_IN_ALL
gboolean      ds_block_write_data        (DsBlock      *self,
                                          gsize         offset,
                                          const guint8 *data,
                                          gsize         length,
                                          GError      **error);

/* Exports: views of a block's memory that code outside ds uses directly. */
DS_AVAILABLE_IN_ALL
DsBlock      *ds_block_export            (DsBlock      *self,
                                          GError      **error) G_GNUC_WARN_UNUSED_RESULT;
DS_AVAILABLE_IN_ALL
gboolean      ds_block_is_export         (DsBlock      *self);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (DsBlock, ds_block_unref)

G_END_DECLS
