/* ds-initial-sizes.c: a scratchpad with custom initial block sizes
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The second usage from DALI's DynamicScratchpad documentation:
 *
 *   DynamicScratchpad::scratch_sizes_t sizes = {
 *     1 << 20,  // 1 MiB host
 *     1 << 20,  // 1 MiB pinned
 *     4 << 20,  // 4 MiB device
 *     0         // managed (will default to 64 KiB)
 *   };
 *   DynamicScratchpad scratch (AccessOrder (stream), {}, {}, sizes);
 *   float *gpu_data = scratch.AllocateGPU<float> (256 * 1024);
 *
 * A scratchpad that knows how much a unit of work needs takes it in one
 * block; one that starts at the default 64 KiB grows block by block (each
 * twice the last) and abandons the tail of each. The example shows both,
 * from the statistics, for the host kind (always) and the device kind
 * (where there is a GPU; otherwise it says why not). Exits 0 without a GPU.
 */

#include <ds.h>

#define N_CHUNKS   12
#define CHUNK_SIZE (64 * 1024)

static const char *const kind_names[DS_N_MEMORY_KINDS] = {
  [DS_MEMORY_KIND_HOST] = "host",
  [DS_MEMORY_KIND_PINNED] = "pinned",
  [DS_MEMORY_KIND_DEVICE] = "device",
  [DS_MEMORY_KIND_MANAGED] = "managed",
};

/* Sizes in IEC units with a plain space (g_format_size uses a no-break
 * space, which a C locale prints as '?'). */
static char *
format_size (guint64 size)
{
  if (size < 1024)
    return g_strdup_printf ("%" G_GUINT64_FORMAT " B", size);
  if (size < 1024 * 1024)
    return g_strdup_printf ("%.1f KiB", size / 1024.0);
  if (size < G_GUINT64_CONSTANT (1024) * 1024 * 1024)
    return g_strdup_printf ("%.1f MiB", size / (1024.0 * 1024.0));
  return g_strdup_printf ("%.1f GiB", size / (1024.0 * 1024.0 * 1024.0));
}

static void
print_kind (const char   *label,
            DsScratchpad *scratch,
            DsMemoryKind  kind)
{
  g_autofree char *initial = format_size (ds_scratchpad_get_initial_size (scratch, kind));
  g_autofree char *allocated = format_size (ds_scratchpad_get_allocated (scratch, kind));
  g_autofree char *reserved = format_size (ds_scratchpad_get_reserved (scratch, kind));

  g_print ("  %-8s %-7s initial %-9s taken %-9s reserved %-9s in %u block(s)\n",
           label, kind_names[kind], initial, allocated, reserved,
           ds_scratchpad_get_n_blocks (scratch, kind));
}

/* Takes N_CHUNKS chunks of 64 KiB of host memory. */
static gboolean
fill_host (DsScratchpad  *scratch,
           GError       **error)
{
  for (guint i = 0; i < N_CHUNKS; i++)
    {
      guint8 *chunk = DS_SCRATCHPAD_ALLOC_HOST (scratch, guint8, CHUNK_SIZE, error);

      if (chunk == NULL)
        return FALSE;
      chunk[0] = chunk[CHUNK_SIZE - 1] = (guint8) i;
    }
  return TRUE;
}

int
main (int    argc,
      char **argv)
{
  const gsize sizes[DS_N_MEMORY_KINDS] = {
    [DS_MEMORY_KIND_HOST] = 1 << 20,     /* 1 MiB */
    [DS_MEMORY_KIND_PINNED] = 1 << 20,   /* 1 MiB */
    [DS_MEMORY_KIND_DEVICE] = 4 << 20,   /* 4 MiB */
    [DS_MEMORY_KIND_MANAGED] = 0,        /* 0: the default, 64 KiB */
  };
  g_autoptr(DsAccessOrder) order = NULL;
  g_autoptr(DsScratchpad) sized = NULL;
  g_autoptr(DsScratchpad) plain = NULL;
  g_autoptr(GError) error = NULL;
  float *gpu_data;
  int status = 0;

  /* The legacy default stream of the current device; a program with its
   * own stream passes it here. */
  order = ds_access_order_new_stream (NULL, -1);
  sized = ds_scratchpad_new_full (order, NULL, NULL, sizes);
  plain = ds_scratchpad_new (order);

  g_print ("Initial sizes of the sized scratchpad:");
  for (guint kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
    {
      g_autofree char *s = format_size (ds_scratchpad_get_initial_size (sized, kind));
      g_print (" %s %s%s", kind_names[kind], s, kind + 1 < DS_N_MEMORY_KINDS ? "," : "\n");
    }
  if (ds_scratchpad_get_initial_size (sized, DS_MEMORY_KIND_HOST) != sizes[DS_MEMORY_KIND_HOST] ||
      ds_scratchpad_get_initial_size (sized, DS_MEMORY_KIND_DEVICE) != sizes[DS_MEMORY_KIND_DEVICE] ||
      ds_scratchpad_get_initial_size (sized, DS_MEMORY_KIND_MANAGED) != DS_SCRATCHPAD_DEFAULT_INITIAL_SIZE)
    {
      g_printerr ("the initial sizes are not the ones asked for\n");
      status = 1;
    }

  g_print ("\n%d host chunks of 64 KiB from each scratchpad:\n", N_CHUNKS);
  if (!fill_host (sized, &error) || !fill_host (plain, &error))
    {
      g_printerr ("host allocation failed: %s\n", error->message);
      return 1;
    }
  print_kind ("sized", sized, DS_MEMORY_KIND_HOST);
  print_kind ("default", plain, DS_MEMORY_KIND_HOST);

  /* The sized one took all of it in its first block; the default one
   * needed several, growing from 64 KiB. */
  if (ds_scratchpad_get_n_blocks (sized, DS_MEMORY_KIND_HOST) != 1 ||
      ds_scratchpad_get_n_blocks (plain, DS_MEMORY_KIND_HOST) <= 1)
    {
      g_printerr ("unexpected block counts\n");
      status = 1;
    }

  g_print ("\n256 Ki floats (1 MiB) of device memory from the sized scratchpad:\n");
  gpu_data = DS_SCRATCHPAD_ALLOC_DEVICE (sized, float, 256 * 1024, &error);
  if (gpu_data != NULL)
    {
      print_kind ("sized", sized, DS_MEMORY_KIND_DEVICE);
      if (ds_scratchpad_get_reserved (sized, DS_MEMORY_KIND_DEVICE) != sizes[DS_MEMORY_KIND_DEVICE])
        {
          g_printerr ("expected one 4 MiB device block\n");
          status = 1;
        }
    }
  else if (g_error_matches (error, DS_ERROR, DS_ERROR_NO_DEVICE) ||
           g_error_matches (error, DS_ERROR, DS_ERROR_NOT_SUPPORTED))
    {
      g_print ("  the device kind is unavailable here: %s\n", error->message);
    }
  else
    {
      g_printerr ("device allocation failed: %s\n", error->message);
      status = 1;
    }

  /* Both scratchpads give everything back as they are unreffed. */
  return status;
}
