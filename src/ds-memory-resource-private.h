/* ds-memory-resource-private.h
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "ds-memory-resource.h"
#include "ds-error.h"

G_BEGIN_DECLS

/* How the alignment a caller passed reads in a message: "alignment 64",
 * or "alignment 0 (the default, 16)" — never a value the caller did not
 * pass without saying where it came from. */
static inline const char *
ds_memory_alignment_text (char   buf[64],
                          gsize  alignment,
                          gsize  default_alignment)
{
  if (alignment == 0)
    g_snprintf (buf, 64, "alignment 0 (the default, %" G_GSIZE_FORMAT ")",
                default_alignment);
  else
    g_snprintf (buf, 64, "alignment %" G_GSIZE_FORMAT, alignment);

  return buf;
}

/* Checks an alignment that a caller passed (0 means @default_alignment)
 * and a size: the alignment must be a power of two and the padded total
 * must not overflow, where the padding is the alignment or @min_padding,
 * whichever is larger (a scratchpad pads to the alignment of its blocks).
 * Sets DS_ERROR_INVALID_ARGUMENT otherwise, with a message that names the
 * size and alignment as passed. Inline: every allocation that takes a
 * block runs it. */
static inline gboolean
ds_memory_check_size_alignment (gsize    size,
                                gsize   *alignment,
                                gsize    default_alignment,
                                gsize    min_padding,
                                GError **error)
{
  gsize a = *alignment != 0 ? *alignment : default_alignment;
  char text[64];

  if (G_UNLIKELY ((a & (a - 1)) != 0))
    {
      g_set_error (error, DS_ERROR, DS_ERROR_INVALID_ARGUMENT,
                   "Alignment %" G_GSIZE_FORMAT " is not a power of two", a);
      return FALSE;
    }
  if (G_UNLIKELY (size > G_MAXSIZE - MAX (a, min_padding)))
    {
      g_set_error (error, DS_ERROR, DS_ERROR_INVALID_ARGUMENT,
                   "Size %" G_GSIZE_FORMAT " with %s overflows once padded",
                   size, ds_memory_alignment_text (text, *alignment, default_alignment));
      return FALSE;
    }

  *alignment = a;
  return TRUE;
}

/* DS_ERROR_INVALID_ARGUMENT for a kind that is not a DsMemoryKind. */
static inline gboolean
ds_memory_check_kind (DsMemoryKind   kind,
                      GError       **error)
{
  if (G_LIKELY (DS_MEMORY_KIND_IS_VALID (kind)))
    return TRUE;

  g_set_error (error, DS_ERROR, DS_ERROR_INVALID_ARGUMENT,
               "Unknown memory kind %d", (int) kind);
  return FALSE;
}

static inline const char *
ds_memory_kind_get_nick (DsMemoryKind kind)
{
  static const char * const nicks[] = { "host", "pinned", "device", "managed" };

  return DS_MEMORY_KIND_IS_VALID (kind) ? nicks[kind] : "invalid";
}

G_END_DECLS
