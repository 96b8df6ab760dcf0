/* ds-size-class-private.h: the size and alignment classes of a pool
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A pool files the blocks it caches by (alignment class, size class).
 * Size classes are multiples of 256 bytes up to 2 KiB, then four per power
 * of two, so a block taken from upstream is at most 25% larger than asked
 * for; alignment classes are 256 bytes (and less), 512, ..., 64 KiB. A
 * request beyond every class is not cached. A request may be served by a
 * cached block of a larger class (DS_POOL_FIT_CLASSES).
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define DS_POOL_GRANULE_SHIFT   8
#define DS_POOL_GRANULE         ((gsize) 1 << DS_POOL_GRANULE_SHIFT)
/* Classes cover sizes up to 2^41 bytes. */
#define DS_POOL_N_SIZE_CLASSES  128
#define DS_POOL_N_ALIGN_CLASSES 9
#define DS_POOL_MAX_ALIGN       (DS_POOL_GRANULE << (DS_POOL_N_ALIGN_CLASSES - 1))
#define DS_POOL_NO_CLASS        G_MAXUINT
/* A request whose size class has no cached block it may use takes one of
 * the next classes up, at most this many (from 2 KiB on, at most four
 * times its class's size; below, at most 2 KiB more), before the pool
 * takes a new block from upstream: with sizes that vary, each class's
 * cache no longer grows toward its own peak. Eight rather than four: in
 * test-pool-churn's model of a framework's tensor churn on two streams
 * the pool's peak went from 381-427 MiB to 348-406 MiB (3 seeds, the GPU
 * ahead of the host and behind it). */
#define DS_POOL_FIT_CLASSES     8

/* The size class of @size; its size in *@class_bytes. DS_POOL_NO_CLASS
 * when too large for any. */
static inline guint
ds_pool_size_class (gsize  size,
                    gsize *class_bytes)
{
  guint64 g = ((guint64) size + DS_POOL_GRANULE - 1) >> DS_POOL_GRANULE_SHIFT;
  guint64 n;
  guint msb, shift, top, idx;

  if (g <= 8)
    {
      *class_bytes = (gsize) (g << DS_POOL_GRANULE_SHIFT);
      return (guint) g - 1;
    }

  n = g - 1;
  msb = 63 - (guint) __builtin_clzll (n);         /* >= 3 */
  shift = msb - 2;
  top = (guint) (n >> shift);                      /* 4 .. 7 */
  idx = 8 + (msb - 3) * 4 + (top - 4);
  if (idx >= DS_POOL_N_SIZE_CLASSES)
    return DS_POOL_NO_CLASS;

  *class_bytes = (gsize) (((guint64) (top + 1) << shift) << DS_POOL_GRANULE_SHIFT);
  return idx;
}

/* The size in bytes of class @cls (the inverse of ds_pool_size_class ()). */
static inline gsize
ds_pool_class_size (guint cls)
{
  guint msb, top;

  if (cls < 8)
    return ((gsize) cls + 1) << DS_POOL_GRANULE_SHIFT;

  msb = 3 + (cls - 8) / 4;
  top = 4 + (cls - 8) % 4;
  return (gsize) (((guint64) (top + 1) << (msb - 2)) << DS_POOL_GRANULE_SHIFT);
}

/* The alignment class of @alignment; DS_POOL_NO_CLASS above 64 KiB. */
static inline guint
ds_pool_align_class (gsize alignment)
{
  if (alignment <= DS_POOL_GRANULE)
    return 0;
  if (alignment > DS_POOL_MAX_ALIGN)
    return DS_POOL_NO_CLASS;

  return (guint) (63 - __builtin_clzll ((guint64) alignment)) - DS_POOL_GRANULE_SHIFT;
}

/* What a request of @size bytes adds to a pool's demand: its granules. */
static inline gsize
ds_pool_demand_of (gsize size)
{
  return size > G_MAXSIZE - (DS_POOL_GRANULE - 1) ?
         size : (size + DS_POOL_GRANULE - 1) & ~(DS_POOL_GRANULE - 1);
}

G_END_DECLS
