/* ds-fuzz.c: random sequences of ds's public calls, with their checks
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * LLVMFuzzerTestOneInput () reads its input as a program: one opcode byte,
 * then the operands it needs (missing bytes read as 0). It drives, over
 * the host kind only:
 *
 *   - up to four scratchpads (ds_scratchpad_new, _new_full, g_object_new
 *     with settings) on the default host pool, on a DsPoolResource over a
 *     recording upstream (DsTestResource) or on a second recording upstream
 *     directly; alloc, alloc_array, DS_SCRATCHPAD_ALLOC_HOST, the iface
 *     alloc; release; unref (finalize); the getters;
 *   - the pool directly: allocate, deallocate, allocate_async,
 *     deallocate_async in host order, trim, max-cached-size, statistics;
 *   - blocks (ds_block_*): alloc_block, write, read, fill, export, validity
 *     after release;
 *   - access orders in host order; the raw host resource; bad arguments.
 *
 * Checked after every step: alignment, no overlap between any two live
 * allocations, contents (each allocation is filled with a pattern, checked
 * before it is given back), the scratchpads' and the pool's statistics
 * against a model, and the error code of every call that must fail. At the
 * end of each input everything is given back and both recording upstreams
 * must have every block back exactly once (no mismatch, nothing live).
 *
 * Built twice: with clang and -fsanitize=fuzzer (-Dfuzzing=true, program
 * ds-fuzz) and, in every build, with ds-fuzz-replay.c, a main () that runs
 * the files of tests/fuzz/corpus as an ordinary test (fuzz-replay).
 *
 * To add an operation: a new OP_ value before OP_COUNT, a case in run_op (),
 * and a seed in the corpus that uses it (tests/fuzz/make-seeds.py). Assert
 * error codes, never messages. Never give a pool a block twice or one it
 * did not hand out: those are criticals (programmer errors), which abort.
 */

#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ds-test-resource.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);
int LLVMFuzzerInitialize (int *argc, char ***argv);

#define N_SLOTS    4
#define MAX_LIVE   512
#define MAX_BLOCKS 16

enum
{
  OP_SP_NEW,
  OP_SP_ALLOC,
  OP_SP_RELEASE,
  OP_SP_UNREF,
  OP_SP_GETTERS,
  OP_POOL_ALLOC,
  OP_POOL_FREE,
  OP_POOL_TRIM,
  OP_POOL_STATS,
  OP_POOL_MAX_CACHED,
  OP_BLOCK_NEW,
  OP_BLOCK_IO,
  OP_BLOCK_EXPORT,
  OP_BLOCK_UNREF,
  OP_ORDERS,
  OP_BAD_INPUT,
  OP_RAW_HOST,
  OP_COUNT
};

/* A live allocation: scratch memory of a slot (slot >= 0) or a pool block
 * (slot -1). */
typedef struct
{
  guint8 *ptr;
  gsize   size;
  gsize   alignment;
  gint    slot;
  guint8  pattern;
  gboolean async;
} Live;

typedef struct
{
  DsScratchpad *sp;
  gboolean      on_pool;      /* host-resource is the fuzz pool */
  gboolean      on_direct;    /* host-resource is the direct upstream */
  /* The model, since the last release: the sizes rounded up to 16 (what
   * the blocks gave at least: padding comes on top) and the count. */
  guint64       allocated;
  guint64       n_allocations;
} Slot;

typedef struct
{
  DsBlock *block;
  gint     slot;              /* -1 once the slot's reference was dropped */
  guint8   pattern;
  gboolean is_export;
} BlockRec;

typedef struct
{
  const guint8     *data;
  gsize             size;
  gsize             pos;

  DsTestResource   *pool_up;    /* upstream of the pool */
  DsTestResource   *direct_up;  /* upstream of "direct" scratchpads */
  DsMemoryResource *pool;
  DsMemoryResource *raw_host;
  DsAccessOrder    *host;

  Slot              slots[N_SLOTS];
  Live              live[MAX_LIVE];
  guint             n_live;
  BlockRec          blocks[MAX_BLOCKS];
  guint             n_blocks;
  guint64           pool_live_bytes;   /* sum of the pool blocks' sizes */
  guint8            next_pattern;
} Fuzz;

static guint8
byte (Fuzz *f)
{
  return f->pos < f->size ? f->data[f->pos++] : 0;
}

static guint16
u16 (Fuzz *f)
{
  guint16 lo = byte (f);

  return (guint16) (lo | (byte (f) << 8));
}

/* Sizes: mostly small, some a block or more, rarely large. */
static gsize
pick_size (Fuzz *f)
{
  guint8 shape = byte (f);
  gsize v = u16 (f);

  switch (shape % 8)
    {
    case 0: case 1: case 2: case 3:
      return 1 + v % 256;
    case 4: case 5:
      return 1 + v % 8192;
    case 6:
      return 1 + v * 4;                     /* up to 256 KiB */
    default:
      return 1 + (gsize) v * 32;            /* up to 2 MiB */
    }
}

/* 0 (the default, 16) or a power of two up to 4 KiB. */
static gsize
pick_alignment (Fuzz *f)
{
  guint8 b = byte (f);

  return b % 14 == 13 ? 0 : (gsize) 1 << (b % 13);
}

static void
assert_error_code (GError *error,
                   gint    code)
{
  g_assert_nonnull (error);
  g_assert_true (error->domain == DS_ERROR);
  g_assert_cmpint (error->code, ==, code);
}

/* --- the live set ---------------------------------------------------------- */

static void
check_contents (const Live *l)
{
  gsize step = l->size > 4096 ? 509 : 1;
  gsize i;

  for (i = 0; i < l->size; i += step)
    g_assert_cmpuint (l->ptr[i], ==, l->pattern);
  g_assert_cmpuint (l->ptr[l->size - 1], ==, l->pattern);
}

static void
add_live (Fuzz   *f,
          guint8 *ptr,
          gsize   size,
          gsize   alignment,
          gint    slot,
          gboolean async)
{
  gsize a = alignment != 0 ? alignment : 16;
  guint i;
  Live *l;

  g_assert_nonnull (ptr);
  g_assert_cmpuint ((guintptr) ptr % a, ==, 0);
  for (i = 0; i < f->n_live; i++)
    {
      const Live *o = &f->live[i];

      /* No two live allocations overlap. */
      g_assert_true (ptr + size <= o->ptr || o->ptr + o->size <= ptr);
    }
  g_assert_cmpuint (f->n_live, <, MAX_LIVE);

  l = &f->live[f->n_live++];
  l->ptr = ptr;
  l->size = size;
  l->alignment = alignment;
  l->slot = slot;
  l->async = async;
  l->pattern = f->next_pattern++;
  memset (ptr, l->pattern, size);
}

static void
remove_live (Fuzz  *f,
             guint  i)
{
  f->live[i] = f->live[--f->n_live];
}

/* Checks and forgets the live allocations of @slot. */
static void
drop_slot_live (Fuzz *f,
                gint  slot)
{
  guint i = 0;

  while (i < f->n_live)
    {
      if (f->live[i].slot == slot)
        {
          check_contents (&f->live[i]);
          remove_live (f, i);
        }
      else
        i++;
    }
}

/* --- scratchpads ------------------------------------------------------------ */

static void
check_slot (Fuzz *f,
            guint s)
{
  Slot *slot = &f->slots[s];

  guint64 taken = ds_scratchpad_get_allocated (slot->sp, DS_MEMORY_KIND_HOST);

  g_assert_cmpuint (taken, >=, slot->allocated);
  g_assert_cmpuint (taken == 0, ==, slot->n_allocations == 0);
  g_assert_cmpuint (ds_scratchpad_get_reserved (slot->sp, DS_MEMORY_KIND_HOST), >=, taken);
  if (slot->allocated > 0)
    g_assert_cmpuint (ds_scratchpad_get_n_blocks (slot->sp, DS_MEMORY_KIND_HOST), >, 0);
}

static void
op_sp_new (Fuzz *f)
{
  guint s = byte (f) % N_SLOTS;
  guint8 how = byte (f);
  guint8 resource = byte (f);
  gsize initial = (gsize) u16 (f) * 16;
  Slot *slot = &f->slots[s];
  DsMemoryResource *res = NULL;

  if (slot->sp != NULL)
    return;

  memset (slot, 0, sizeof *slot);
  switch (resource % 3)
    {
    case 0: break;                                   /* the default pool */
    case 1: res = f->pool; slot->on_pool = TRUE; break;
    default: res = DS_MEMORY_RESOURCE (f->direct_up); slot->on_direct = TRUE; break;
    }

  switch (how % 3)
    {
    case 0:
      slot->sp = ds_scratchpad_new (f->host);
      break;
    case 1:
      {
        gsize sizes[DS_N_MEMORY_KINDS] = { initial, 0, 0, 0 };

        slot->sp = ds_scratchpad_new_full (f->host, f->host, f->host, sizes);
        g_assert_cmpuint (ds_scratchpad_get_initial_size (slot->sp, DS_MEMORY_KIND_HOST), ==,
                          initial != 0 ? initial : DS_SCRATCHPAD_DEFAULT_INITIAL_SIZE);
      }
      break;
    default:
      slot->sp = g_object_new (DS_TYPE_SCRATCHPAD, "device-order", f->host,
                               "initial-size-host", (guint64) initial, NULL);
      break;
    }
  g_assert_nonnull (slot->sp);

  /* Settings are accepted until the first allocation. */
  if (res != NULL)
    {
      g_autoptr(GObject) back = NULL;

      g_object_set (slot->sp, "host-resource", res, NULL);
      g_object_get (slot->sp, "host-resource", &back, NULL);
      g_assert_true (back == G_OBJECT (res));
    }
  g_assert_true (ds_access_order_equal (ds_scratchpad_get_device_order (slot->sp), f->host));
  g_assert_cmpuint (ds_scratchpad_get_n_exports (slot->sp), ==, 0);
  check_slot (f, s);
}

static gint
pick_slot (Fuzz *f)
{
  guint s = byte (f) % N_SLOTS;

  return f->slots[s].sp != NULL ? (gint) s : -1;
}

static void
op_sp_alloc (Fuzz *f)
{
  gint s = pick_slot (f);
  guint8 how = byte (f);
  gsize size = pick_size (f);
  gsize alignment = pick_alignment (f);
  g_autoptr(GError) error = NULL;
  Slot *slot;
  gpointer p;

  if (s < 0)
    return;
  slot = &f->slots[s];

  switch (how % 4)
    {
    case 0:
      p = ds_scratchpad_alloc (slot->sp, DS_MEMORY_KIND_HOST, size, alignment, &error);
      break;
    case 1:
      p = ds_scratchpad_iface_alloc (DS_SCRATCHPAD_IFACE (slot->sp), DS_MEMORY_KIND_HOST,
                                     size, alignment, &error);
      break;
    case 2:
      {
        gsize n = 1 + size / 8;

        size = n * 8;
        p = ds_scratchpad_alloc_array (slot->sp, DS_MEMORY_KIND_HOST, 8, n, alignment, &error);
      }
      break;
    default:
      {
        gsize n = 1 + size / sizeof (guint64);

        size = n * sizeof (guint64);
        alignment = MAX (G_ALIGNOF (guint64), DS_SCRATCHPAD_DEFAULT_ALIGNMENT);
        p = DS_SCRATCHPAD_ALLOC_HOST (slot->sp, guint64, n, &error);
      }
      break;
    }

  g_assert_no_error (error);
  add_live (f, p, size, alignment, s, FALSE);
  slot->allocated += (size + 15) & ~(guint64) 15;
  slot->n_allocations++;
  check_slot (f, s);
}

/* Blocks of the slot become invalid at release; exports must be gone. */
static void
drop_exports_of (Fuzz *f,
                 gint  s)
{
  guint i = 0;

  while (i < f->n_blocks)
    {
      BlockRec *b = &f->blocks[i];

      if (b->is_export && ds_block_get_scratchpad (b->block) == f->slots[s].sp)
        {
          ds_block_unref (b->block);
          f->blocks[i] = f->blocks[--f->n_blocks];
        }
      else
        i++;
    }
  g_assert_cmpuint (ds_scratchpad_get_n_exports (f->slots[s].sp), ==, 0);
}

static void
op_sp_release (Fuzz *f)
{
  gint s = pick_slot (f);
  guint i;

  if (s < 0)
    return;

  drop_exports_of (f, s);
  drop_slot_live (f, s);
  ds_scratchpad_release (f->slots[s].sp);
  f->slots[s].allocated = 0;
  f->slots[s].n_allocations = 0;
  check_slot (f, s);

  for (i = 0; i < f->n_blocks; i++)
    if (ds_block_get_scratchpad (f->blocks[i].block) == f->slots[s].sp)
      {
        g_autoptr(GError) error = NULL;
        g_autoptr(GBytes) bytes = NULL;

        g_assert_false (ds_block_is_valid (f->blocks[i].block));
        g_assert_cmpuint (ds_block_get_address (f->blocks[i].block), ==, 0);
        bytes = ds_block_read (f->blocks[i].block, 0, 1, &error);
        g_assert_null (bytes);
        assert_error_code (error, DS_ERROR_INVALID_ARGUMENT);
      }
}

static void
unref_slot (Fuzz  *f,
            guint  s)
{
  guint i;

  drop_exports_of (f, s);
  drop_slot_live (f, s);
  for (i = 0; i < f->n_blocks; i++)
    if (f->blocks[i].slot == (gint) s)
      f->blocks[i].slot = -1;   /* the block keeps the scratchpad alive */
  g_clear_object (&f->slots[s].sp);
}

static void
op_sp_unref (Fuzz *f)
{
  gint s = pick_slot (f);

  if (s >= 0)
    unref_slot (f, s);
}

static void
op_sp_getters (Fuzz *f)
{
  gint s = pick_slot (f);
  guint kind;

  if (s < 0)
    return;
  check_slot (f, s);
  for (kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
    {
      /* Any order (or none for the host kind); it must not crash. */
      (void) ds_scratchpad_get_dealloc_order (f->slots[s].sp, kind);
      g_assert_cmpuint (ds_scratchpad_get_initial_size (f->slots[s].sp, kind), >, 0);
      if (kind != DS_MEMORY_KIND_HOST)
        {
          g_assert_cmpuint (ds_scratchpad_get_allocated (f->slots[s].sp, kind), ==, 0);
          g_assert_cmpuint (ds_scratchpad_get_n_blocks (f->slots[s].sp, kind), ==, 0);
        }
    }
}

/* --- the pool --------------------------------------------------------------- */

static void
check_pool_stats (Fuzz *f)
{
  DsPoolStats s;
  guint64 on_pool = 0;
  guint i;

  ds_pool_resource_get_stats (DS_POOL_RESOURCE (f->pool), &s);
  for (i = 0; i < N_SLOTS; i++)
    if (f->slots[i].sp != NULL && f->slots[i].on_pool)
      on_pool += ds_scratchpad_get_reserved (f->slots[i].sp, DS_MEMORY_KIND_HOST);

  g_assert_cmpuint (s.bytes_held, ==, ds_test_resource_get_live_bytes (f->pool_up));
  g_assert_cmpuint (s.upstream_allocations, ==, ds_test_resource_count_allocs (f->pool_up));
  g_assert_cmpuint (s.upstream_deallocations, ==, ds_test_resource_count_deallocs (f->pool_up));
  g_assert_cmpuint (s.bytes_cached, <=, s.bytes_held);
  g_assert_cmpuint (s.bytes_in_use, <=, s.bytes_held);
  g_assert_cmpuint (s.bytes_in_use, <=, s.peak_bytes_in_use);
  /* What the pool has out covers what its callers asked for (blocks whose
   * scratchpad was dropped while a DsBlock keeps it alive count too). */
  if (f->n_blocks == 0)
    g_assert_cmpuint (s.bytes_in_use, >=, f->pool_live_bytes + on_pool);
  g_assert_cmpuint (s.n_cached_blocks == 0, ==, s.bytes_cached == 0);
  g_assert_cmpuint (ds_test_resource_get_n_mismatches (f->pool_up), ==, 0);
}

static void
op_pool_alloc (Fuzz *f)
{
  gboolean async = byte (f) & 1;
  gsize size = pick_size (f);
  gsize alignment = pick_alignment (f);
  g_autoptr(GError) error = NULL;
  gpointer p;

  if (async)
    p = ds_memory_resource_allocate_async (f->pool, size, alignment, f->host, &error);
  else
    p = ds_memory_resource_allocate (f->pool, size, alignment, &error);
  g_assert_no_error (error);
  add_live (f, p, size, alignment, -1, async);
  f->pool_live_bytes += size;
  check_pool_stats (f);
}

static void
op_pool_free (Fuzz *f)
{
  guint pick = byte (f);
  gboolean async = byte (f) & 1;
  guint i, n = 0;

  for (i = 0; i < f->n_live; i++)
    if (f->live[i].slot == -1 && n++ == pick % MAX (f->n_live, 1))
      break;
  if (i == f->n_live)
    {
      /* Not found by index: the first pool block, if any. */
      for (i = 0; i < f->n_live && f->live[i].slot != -1; i++)
        ;
      if (i == f->n_live)
        return;
    }

  check_contents (&f->live[i]);
  if (async)
    {
      g_autoptr(GError) error = NULL;

      g_assert_true (ds_memory_resource_deallocate_async (f->pool, f->live[i].ptr,
                                                          f->live[i].size,
                                                          f->live[i].alignment,
                                                          f->host, &error));
      g_assert_no_error (error);
    }
  else
    ds_memory_resource_deallocate (f->pool, f->live[i].ptr, f->live[i].size,
                                   f->live[i].alignment);
  f->pool_live_bytes -= f->live[i].size;
  remove_live (f, i);
  check_pool_stats (f);
}

static void
op_pool_trim (Fuzz *f)
{
  DsPoolStats before, after;
  guint64 given;

  ds_pool_resource_get_stats (DS_POOL_RESOURCE (f->pool), &before);
  given = ds_pool_resource_trim (DS_POOL_RESOURCE (f->pool));
  ds_pool_resource_get_stats (DS_POOL_RESOURCE (f->pool), &after);
  g_assert_cmpuint (given, <=, before.bytes_cached);
  g_assert_cmpuint (after.bytes_held, ==, before.bytes_held - given);
  g_assert_cmpuint (after.bytes_in_use, ==, before.bytes_in_use);
  check_pool_stats (f);
}

static void
op_pool_stats (Fuzz *f)
{
  DsPoolStats s;
  g_autoptr(DsPoolStats) copy = NULL;

  check_pool_stats (f);
  ds_pool_resource_get_stats (DS_POOL_RESOURCE (f->pool), &s);
  copy = ds_pool_stats_copy (&s);
  g_assert_cmpmem (copy, sizeof *copy, &s, sizeof s);
  g_assert_true (ds_pool_resource_get_upstream (DS_POOL_RESOURCE (f->pool)) ==
                 DS_MEMORY_RESOURCE (f->pool_up));
  g_assert_cmpint (ds_memory_resource_get_kind (f->pool), ==, DS_MEMORY_KIND_HOST);
}

static void
op_pool_max_cached (Fuzz *f)
{
  guint8 b = byte (f);
  guint64 max = b == 0 ? 0 : (guint64) 1 << (b % 33);

  ds_pool_resource_set_max_cached_size (DS_POOL_RESOURCE (f->pool), max);
  g_assert_cmpuint (ds_pool_resource_get_max_cached_size (DS_POOL_RESOURCE (f->pool)), ==, max);
  check_pool_stats (f);
}

/* --- blocks ----------------------------------------------------------------- */

static void
op_block_new (Fuzz *f)
{
  gint s = pick_slot (f);
  gsize size = pick_size (f);
  gsize alignment = pick_alignment (f);
  g_autoptr(GError) error = NULL;
  BlockRec *b;
  DsBlock *block;

  if (s < 0 || f->n_blocks == MAX_BLOCKS)
    return;

  block = ds_scratchpad_alloc_block (f->slots[s].sp, DS_MEMORY_KIND_HOST, size, alignment, &error);
  g_assert_no_error (error);
  g_assert_nonnull (block);
  g_assert_true (ds_block_is_valid (block));
  g_assert_false (ds_block_is_export (block));
  g_assert_cmpuint (ds_block_get_size (block), ==, size);
  g_assert_cmpint (ds_block_get_kind (block), ==, DS_MEMORY_KIND_HOST);
  g_assert_true (ds_block_get_scratchpad (block) == f->slots[s].sp);
  g_assert_cmpuint (ds_block_get_address (block), ==, (guintptr) ds_block_get_pointer (block));

  /* Its memory is a live allocation of the slot like any other. */
  add_live (f, ds_block_get_pointer (block), size, alignment, s, FALSE);
  f->slots[s].allocated += (size + 15) & ~(guint64) 15;
  f->slots[s].n_allocations++;
  check_slot (f, s);

  b = &f->blocks[f->n_blocks++];
  b->block = block;
  b->slot = s;
  b->is_export = FALSE;
  b->pattern = f->live[f->n_live - 1].pattern;
}

/* The live record of a valid block's memory, or NULL. */
static Live *
block_live (Fuzz     *f,
            BlockRec *b)
{
  guint8 *p = ds_block_get_pointer (b->block);
  guint i;

  for (i = 0; i < f->n_live; i++)
    if (f->live[i].ptr == p && f->live[i].size == ds_block_get_size (b->block))
      return &f->live[i];
  return NULL;
}

static void
op_block_io (Fuzz *f)
{
  guint8 which = byte (f), how = byte (f);
  gsize offset = u16 (f), length = u16 (f);
  g_autoptr(GError) error = NULL;
  BlockRec *b;
  gsize size;
  Live *l;

  if (f->n_blocks == 0)
    return;
  b = &f->blocks[which % f->n_blocks];
  size = ds_block_get_size (b->block);

  if (!ds_block_is_valid (b->block))
    {
      g_assert_false (ds_block_fill (b->block, 1, &error));
      assert_error_code (error, DS_ERROR_INVALID_ARGUMENT);
      return;
    }
  l = block_live (f, b);

  switch (how % 3)
    {
    case 0:   /* read: in range, the pattern; out of range, an error */
      {
        g_autoptr(GBytes) bytes = ds_block_read (b->block, offset, length, &error);

        if (offset > size || length > size - offset)
          {
            g_assert_null (bytes);
            assert_error_code (error, DS_ERROR_INVALID_ARGUMENT);
          }
        else
          {
            gsize n, i;
            const guint8 *d = g_bytes_get_data (bytes, &n);

            g_assert_no_error (error);
            g_assert_cmpuint (n, ==, length);
            for (i = 0; l != NULL && i < n; i++)
              g_assert_cmpuint (d[i], ==, l->pattern);
          }
      }
      break;
    case 1:   /* write the pattern back: in range it works */
      {
        guint8 *buf = g_malloc (MAX (length, 1));
        gboolean ok;

        memset (buf, l != NULL ? l->pattern : 0, MAX (length, 1));
        ok = ds_block_write_data (b->block, offset, buf, length, &error);
        if (offset > size || length > size - offset)
          {
            g_assert_false (ok);
            assert_error_code (error, DS_ERROR_INVALID_ARGUMENT);
          }
        else
          {
            g_assert_true (ok);
            g_assert_no_error (error);
          }
        g_free (buf);
      }
      break;
    default:  /* fill with a new pattern */
      {
        guint8 v = (guint8) (offset & 0xff);

        g_assert_true (ds_block_fill (b->block, v, &error));
        g_assert_no_error (error);
        if (l != NULL)
          l->pattern = v;
        check_contents (l != NULL ? l : &(Live) { ds_block_get_pointer (b->block), size, 0, 0, v, FALSE });
      }
      break;
    }
  if (l != NULL)
    check_contents (l);
}

static void
op_block_export (Fuzz *f)
{
  guint8 which = byte (f);
  g_autoptr(GError) error = NULL;
  BlockRec *b;
  DsBlock *exp;

  if (f->n_blocks == 0 || f->n_blocks == MAX_BLOCKS)
    return;
  b = &f->blocks[which % f->n_blocks];

  exp = ds_block_export (b->block, &error);
  if (!ds_block_is_valid (b->block))
    {
      g_assert_null (exp);
      assert_error_code (error, DS_ERROR_INVALID_ARGUMENT);
      return;
    }
  g_assert_no_error (error);
  g_assert_true (ds_block_is_export (exp));
  g_assert_true (ds_block_get_pointer (exp) == ds_block_get_pointer (b->block));
  g_assert_cmpuint (ds_scratchpad_get_n_exports (ds_block_get_scratchpad (exp)), >, 0);
  f->blocks[f->n_blocks].block = exp;
  f->blocks[f->n_blocks].slot = b->slot;
  f->blocks[f->n_blocks].pattern = b->pattern;
  f->blocks[f->n_blocks].is_export = TRUE;
  f->n_blocks++;
}

static void
op_block_unref (Fuzz *f)
{
  guint8 which = byte (f);
  guint i;

  if (f->n_blocks == 0)
    return;
  i = which % f->n_blocks;
  /* A block whose slot was dropped may hold the last reference on its
   * scratchpad: its memory was taken off the live set with the slot. */
  ds_block_unref (f->blocks[i].block);
  f->blocks[i] = f->blocks[--f->n_blocks];
}

/* --- orders, bad input, the raw resource ------------------------------------ */

static void
op_orders (Fuzz *f)
{
  /* Only the handles valid in every process: the legacy default stream
   * (0), cudaStreamLegacy (1) and cudaStreamPerThread (2). Any other
   * value is a pointer that CUDA dereferences when there is a driver (on
   * a GPU machine a random one crashes inside libcuda, whatever ds does). */
  guint64 handle = (guint64) (u16 (f) % 3);
  g_autoptr(DsAccessOrder) host = ds_access_order_new_host ();
  g_autoptr(DsAccessOrder) copy = ds_access_order_copy (host);
  g_autoptr(DsAccessOrder) stream = ds_access_order_new_for_handle (handle, 0);
  g_autoptr(GError) error = NULL;
  DsAccessOrder on_stack;

  ds_access_order_init_host (&on_stack);
  g_assert_true (ds_access_order_is_host (host));
  g_assert_false (ds_access_order_is_device (host));
  g_assert_true (ds_access_order_equal (host, copy));
  g_assert_true (ds_access_order_equal (host, &on_stack));
  g_assert_true (ds_access_order_equal (host, f->host));
  g_assert_true (ds_access_order_wait (host, copy, &error));
  g_assert_no_error (error);
  g_assert_true (ds_access_order_synchronize (host, &error));
  g_assert_no_error (error);

  /* A stream order is only inspected: using it would call CUDA. */
  g_assert_true (ds_access_order_is_device (stream));
  g_assert_false (ds_access_order_equal (host, stream));
  g_assert_cmpuint (ds_access_order_get_stream_handle (stream), ==, handle);
  g_assert_cmpint (ds_access_order_get_device (stream), ==, 0);
}

static void
op_bad_input (Fuzz *f)
{
  guint8 which = byte (f);
  gint s = pick_slot (f);
  gsize odd = 3 + 2 * (gsize) byte (f);   /* not a power of two */
  g_autoptr(GError) error = NULL;
  DsScratchpad *sp;
  gpointer p;

  if (s < 0)
    return;
  sp = f->slots[s].sp;

  switch (which % 6)
    {
    case 0:   /* alignment not a power of two */
      p = ds_scratchpad_alloc (sp, DS_MEMORY_KIND_HOST, 8, odd, &error);
      g_assert_null (p);
      assert_error_code (error, DS_ERROR_INVALID_ARGUMENT);
      break;
    case 1:   /* an unknown kind */
      p = ds_scratchpad_alloc (sp, (DsMemoryKind) (DS_N_MEMORY_KINDS + byte (f) % 8), 8, 0, &error);
      g_assert_null (p);
      assert_error_code (error, DS_ERROR_INVALID_ARGUMENT);
      break;
    case 2:   /* element_size * n overflows */
      p = ds_scratchpad_alloc_array (sp, DS_MEMORY_KIND_HOST, G_MAXSIZE / 2 + 1 + byte (f), 2,
                                     0, &error);
      g_assert_null (p);
      assert_error_code (error, DS_ERROR_INVALID_ARGUMENT);
      break;
    case 3:   /* size 0: NULL without an error */
      p = ds_scratchpad_alloc (sp, DS_MEMORY_KIND_HOST, 0, 0, &error);
      g_assert_null (p);
      g_assert_no_error (error);
      break;
    case 4:   /* sizes that cannot be met: an error, the scratchpad unchanged */
      p = ds_scratchpad_alloc (sp, DS_MEMORY_KIND_HOST, G_MAXSIZE - byte (f), 0, &error);
      g_assert_null (p);
      g_assert_nonnull (error);
      g_assert_true (error->domain == DS_ERROR);
      g_assert_true (error->code == DS_ERROR_INVALID_ARGUMENT ||
                     error->code == DS_ERROR_OUT_OF_MEMORY);
      break;
    default:  /* a block out of range is refused (op_block_io); a bad
               * alignment on the pool too */
      p = ds_memory_resource_allocate (f->pool, 8, odd, &error);
      g_assert_null (p);
      assert_error_code (error, DS_ERROR_INVALID_ARGUMENT);
      break;
    }
  check_slot (f, s);
}

static void
op_raw_host (Fuzz *f)
{
  gsize size = pick_size (f);
  gsize alignment = pick_alignment (f);
  g_autoptr(GError) error = NULL;
  guint8 *p;

  g_assert_false (ds_memory_resource_is_stream_ordered (f->raw_host));
  p = ds_memory_resource_allocate (f->raw_host, size, alignment, &error);
  g_assert_no_error (error);
  add_live (f, p, size, alignment, -3, FALSE);
  check_contents (&f->live[f->n_live - 1]);
  remove_live (f, f->n_live - 1);
  ds_memory_resource_deallocate (f->raw_host, p, size, alignment);
}

/* --- the driver -------------------------------------------------------------- */

static void
run_op (Fuzz   *f,
        guint8  op)
{
  switch (op % OP_COUNT)
    {
    case OP_SP_NEW: op_sp_new (f); break;
    case OP_SP_ALLOC: op_sp_alloc (f); break;
    case OP_SP_RELEASE: op_sp_release (f); break;
    case OP_SP_UNREF: op_sp_unref (f); break;
    case OP_SP_GETTERS: op_sp_getters (f); break;
    case OP_POOL_ALLOC: op_pool_alloc (f); break;
    case OP_POOL_FREE: op_pool_free (f); break;
    case OP_POOL_TRIM: op_pool_trim (f); break;
    case OP_POOL_STATS: op_pool_stats (f); break;
    case OP_POOL_MAX_CACHED: op_pool_max_cached (f); break;
    case OP_BLOCK_NEW: op_block_new (f); break;
    case OP_BLOCK_IO: op_block_io (f); break;
    case OP_BLOCK_EXPORT: op_block_export (f); break;
    case OP_BLOCK_UNREF: op_block_unref (f); break;
    case OP_ORDERS: op_orders (f); break;
    case OP_BAD_INPUT: op_bad_input (f); break;
    case OP_RAW_HOST: op_raw_host (f); break;
    default: g_assert_not_reached ();
    }
}

static void
finish (Fuzz *f)
{
  guint s, i;

  /* Blocks first (exports keep releases from happening), then the
   * scratchpads, then what is left on the pool. */
  while (f->n_blocks > 0)
    ds_block_unref (f->blocks[--f->n_blocks].block);
  for (s = 0; s < N_SLOTS; s++)
    if (f->slots[s].sp != NULL)
      {
        drop_slot_live (f, s);
        g_assert_finalize_object (g_steal_pointer (&f->slots[s].sp));
      }
  for (i = 0; i < f->n_live; i++)
    {
      check_contents (&f->live[i]);
      if (f->live[i].slot == -1)
        ds_memory_resource_deallocate (f->pool, f->live[i].ptr, f->live[i].size,
                                       f->live[i].alignment);
    }
  f->n_live = 0;
  f->pool_live_bytes = 0;
  check_pool_stats (f);

  g_assert_finalize_object (g_steal_pointer (&f->pool));
  /* Every block came back exactly once. */
  for (i = 0; i < 2; i++)
    {
      DsTestResource *up = i == 0 ? f->pool_up : f->direct_up;

      g_assert_cmpstr (ds_test_resource_get_mismatch_text (up), ==, NULL);
      g_assert_cmpuint (ds_test_resource_get_n_mismatches (up), ==, 0);
      g_assert_cmpuint (ds_test_resource_get_n_live (up), ==, 0);
      g_assert_cmpuint (ds_test_resource_count_allocs (up), ==,
                        ds_test_resource_count_deallocs (up));
    }
  g_assert_finalize_object (g_steal_pointer (&f->pool_up));
  g_assert_finalize_object (g_steal_pointer (&f->direct_up));
  g_clear_object (&f->raw_host);
  ds_access_order_free (f->host);
}

int
LLVMFuzzerInitialize (int    *argc,
                      char ***argv)
{
  /* A critical or warning is a failure: the target never passes what the
   * API calls a programmer error. */
  g_log_set_always_fatal (G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING);
  g_log_set_fatal_mask ("Ds", G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING);
  return 0;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data,
                        size_t         size)
{
  Fuzz f = { 0 };
  guint8 flags;
  guint n_ops = 0;

  f.data = data;
  f.size = size;
  flags = byte (&f);

  f.pool_up = ds_test_resource_new (DS_MEMORY_KIND_HOST, flags & 1);
  f.direct_up = ds_test_resource_new (DS_MEMORY_KIND_HOST, (flags >> 1) & 1);
  ds_test_resource_set_max_size (f.pool_up, 64 << 20);
  ds_test_resource_set_max_size (f.direct_up, 64 << 20);
  f.pool = ds_pool_resource_new (DS_MEMORY_RESOURCE (f.pool_up));
  f.raw_host = ds_host_memory_resource_new ();
  f.host = ds_access_order_new_host ();

  /* At most 4096 steps an input, so that one input stays fast. */
  while (f.pos < f.size && n_ops++ < 4096)
    run_op (&f, byte (&f));

  finish (&f);
  return 0;
}
