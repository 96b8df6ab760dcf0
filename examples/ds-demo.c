/* ds-demo.c: what a scratchpad hands out, kind by kind
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Takes a few allocations of every memory kind from one scratchpad, checks
 * that data written into one block of each kind comes back intact, and
 * prints what the scratchpad holds per kind (the ds_scratchpad_get_*
 * statistics). Then releases it and shows that it is empty and usable
 * again, and runs a piece of work through a DsKernelContext.
 *
 * On a machine without a CUDA driver or device the pinned, device and
 * managed kinds fail with DS_ERROR_NO_DEVICE (DS_ERROR_NOT_SUPPORTED when ds
 * was built without CUDA): the demo prints the reason and still
 * shows the host kind. It exits 0 in both cases, and 1 only when something
 * that should work did not.
 */

#include <string.h>

#include <ds.h>

static const char *const kind_names[DS_N_MEMORY_KINDS] = {
  [DS_MEMORY_KIND_HOST] = "host",
  [DS_MEMORY_KIND_PINNED] = "pinned",
  [DS_MEMORY_KIND_DEVICE] = "device",
  [DS_MEMORY_KIND_MANAGED] = "managed",
};

/* The requests each kind gets: small ones that share the first 64 KiB
 * block, then larger ones that make the scratchpad take bigger blocks. */
static const gsize request_sizes[] = { 100, 1000, 4096, 48 * 1024, 200 * 1024 };

typedef struct
{
  gboolean  available;
  GError   *error;   /* why the kind is unavailable, or what went wrong */
  gboolean  round_trip_ok;
} KindResult;

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

/* Writes a pattern into a fresh block of @kind and reads it back. For the
 * GPU kinds the copies run on the scratchpad's stream. */
static gboolean
block_round_trip (DsScratchpad  *scratch,
                  DsMemoryKind   kind,
                  GError       **error)
{
  g_autoptr(DsBlock) block = NULL;
  g_autoptr(GBytes) pattern = NULL;
  g_autoptr(GBytes) back = NULL;
  guint8 data[4096];

  for (gsize i = 0; i < sizeof data; i++)
    data[i] = (guint8) (i * 7 + kind);
  pattern = g_bytes_new (data, sizeof data);

  block = ds_scratchpad_alloc_block (scratch, kind, sizeof data, 0, error);
  if (block == NULL)
    return FALSE;
  if (!ds_block_write (block, 0, pattern, error))
    return FALSE;
  back = ds_block_read (block, 0, sizeof data, error);
  if (back == NULL)
    return FALSE;

  if (!g_bytes_equal (pattern, back))
    {
      g_set_error (error, DS_ERROR, DS_ERROR_CUDA,
                   "the data read back from a %s block differs from what was written",
                   kind_names[kind]);
      return FALSE;
    }
  return TRUE;
}

static void
try_kind (DsScratchpad *scratch,
          DsMemoryKind  kind,
          KindResult   *result)
{
  result->available = TRUE;

  for (gsize i = 0; i < G_N_ELEMENTS (request_sizes); i++)
    {
      gpointer ptr = ds_scratchpad_alloc (scratch, kind, request_sizes[i], 0,
                                          &result->error);
      if (ptr == NULL)
        {
          result->available = FALSE;
          return;
        }
      if (kind == DS_MEMORY_KIND_HOST)
        memset (ptr, 0xa5, request_sizes[i]);
    }

  result->round_trip_ok = block_round_trip (scratch, kind, &result->error);
}

static void
print_stats (DsScratchpad     *scratch,
             const KindResult *results)
{
  g_print ("  %-8s %12s %12s %7s  %s\n",
           "kind", "taken", "reserved", "blocks", "status");
  for (guint kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
    {
      g_autofree char *allocated = format_size (ds_scratchpad_get_allocated (scratch, kind));
      g_autofree char *reserved = format_size (ds_scratchpad_get_reserved (scratch, kind));
      const char *status;

      if (results == NULL)
        status = "";
      else if (!results[kind].available)
        status = "unavailable (see below)";
      else if (results[kind].round_trip_ok)
        status = "ok, write/read round trip intact";
      else
        status = "FAILED (see below)";

      g_print ("  %-8s %12s %12s %7u  %s\n",
               kind_names[kind],
               allocated, reserved,
               ds_scratchpad_get_n_blocks (scratch, kind),
               status);
    }
}

/* A piece of work run through a kernel context: takes its scratch from
 * the context's scratchpad, as a DALI kernel does from KernelContext. */
static gboolean
sum_in_scratch (DsKernelContext  *context,
                gpointer          user_data,
                GError          **error)
{
  DsScratchpad *scratch = ds_kernel_context_get_scratchpad (context);
  guint64 *total = user_data;
  guint32 *values;

  values = DS_SCRATCHPAD_ALLOC_HOST (scratch, guint32, 1000, error);
  if (values == NULL)
    return FALSE;

  *total = 0;
  for (guint i = 0; i < 1000; i++)
    {
      values[i] = i + 1;
      *total += values[i];
    }

  g_print ("  the work was given a scratchpad for the call: %s; "
           "it took %" G_GUINT64_FORMAT " B of host scratch from it\n",
           scratch != NULL ? "yes" : "no",
           ds_scratchpad_get_allocated (scratch, DS_MEMORY_KIND_HOST));
  return TRUE;
}

int
main (int    argc,
      char **argv)
{
  g_autoptr(DsAccessOrder) order = NULL;
  g_autoptr(DsScratchpad) scratch = NULL;
  g_autoptr(DsKernelContext) context = NULL;
  g_autoptr(GError) error = NULL;
  KindResult results[DS_N_MEMORY_KINDS] = { { 0, } };
  const GError *gpu_reason = NULL;
  gboolean gpu_reason_shared = TRUE;
  guint n_gpu_unavailable = 0;
  guint64 total = 0;
  int status = 0;

  g_print ("ds %s demo: scratch memory per kind (ds built %s CUDA)\n\n",
           DS_VERSION_S, DS_HAVE_CUDA ? "with" : "without");

  /* The legacy default stream of the current device. Creating the order
   * and the scratchpad touches no CUDA API: the device is resolved at the
   * first allocation that needs it. */
  order = ds_access_order_new_stream (NULL, -1);
  scratch = ds_scratchpad_new (order);

  g_print ("Requests per kind:");
  for (gsize i = 0; i < G_N_ELEMENTS (request_sizes); i++)
    {
      g_autofree char *s = format_size (request_sizes[i]);
      g_print (" %s", s);
    }
  g_print (", then one 4 KiB block written and read back.\n\n");

  for (guint kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
    try_kind (scratch, kind, &results[kind]);

  print_stats (scratch, results);
  g_print ("\n");

  /* The host kind never needs CUDA: any failure there is a real one. */
  if (!results[DS_MEMORY_KIND_HOST].available || !results[DS_MEMORY_KIND_HOST].round_trip_ok)
    {
      g_printerr ("host kind failed: %s\n", results[DS_MEMORY_KIND_HOST].error->message);
      status = 1;
    }

  for (guint kind = DS_MEMORY_KIND_PINNED; kind < DS_N_MEMORY_KINDS; kind++)
    {
      const GError *e = results[kind].error;

      if (e == NULL)
        continue;

      if (!results[kind].available &&
          (g_error_matches (e, DS_ERROR, DS_ERROR_NO_DEVICE) ||
           g_error_matches (e, DS_ERROR, DS_ERROR_NOT_SUPPORTED)))
        {
          n_gpu_unavailable++;
          if (gpu_reason == NULL)
            gpu_reason = e;
          else if (e->code != gpu_reason->code)
            gpu_reason_shared = FALSE;
        }
      else
        {
          /* A GPU is there but the kind failed: a real error. */
          g_printerr ("%s kind failed: %s\n", kind_names[kind], e->message);
          status = 1;
        }
    }

  if (n_gpu_unavailable == DS_N_MEMORY_KINDS - 1 && gpu_reason_shared)
    {
      /* One cause for all three: the device kind's default resource says
       * it without naming a request. */
      g_autoptr(GError) why = NULL;

      if (ds_memory_resource_get_default (DS_MEMORY_KIND_DEVICE, -1, &why) != NULL)
        why = g_error_copy (gpu_reason);
      g_print ("The GPU kinds (pinned, device, managed) are unavailable %s:\n"
               "  %s\n"
               "The host kind needs no CUDA and works, as shown above.\n\n",
               gpu_reason->code == DS_ERROR_NOT_SUPPORTED ? "in this build of ds" : "on this machine",
               why->message);
    }
  else if (n_gpu_unavailable > 0)
    {
      for (guint kind = DS_MEMORY_KIND_PINNED; kind < DS_N_MEMORY_KINDS; kind++)
        if (!results[kind].available && results[kind].error != NULL)
          g_print ("The %s kind is unavailable: %s\n", kind_names[kind],
                   results[kind].error->message);
      g_print ("\n");
    }
  else
    {
      g_print ("All four kinds work on this machine.\n\n");
    }

  /* Give everything back now. Device blocks go back in the device order;
   * the scratchpad stays usable, which is what a long-lived scratchpad
   * (one per stream in a GStreamer element, say) does after each buffer. */
  ds_scratchpad_release (scratch);
  g_print ("After ds_scratchpad_release:\n");
  print_stats (scratch, NULL);
  for (guint kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
    {
      if (ds_scratchpad_get_reserved (scratch, kind) != 0 ||
          ds_scratchpad_get_n_blocks (scratch, kind) != 0)
        {
          g_printerr ("the %s kind still holds memory after release\n", kind_names[kind]);
          status = 1;
        }
    }
  if (ds_scratchpad_alloc (scratch, DS_MEMORY_KIND_HOST, 256, 0, &error) == NULL)
    {
      g_printerr ("the released scratchpad is not usable again: %s\n", error->message);
      status = 1;
    }
  else
    {
      g_print ("  and it hands out memory again: %" G_GUINT64_FORMAT " B of host scratch in %u block\n\n",
               ds_scratchpad_get_allocated (scratch, DS_MEMORY_KIND_HOST),
               ds_scratchpad_get_n_blocks (scratch, DS_MEMORY_KIND_HOST));
    }

  /* A kernel context without a scratchpad: ds_kernel_context_run creates
   * one for the duration of the call and releases it afterwards, as
   * DALI's KernelManager::Run does. */
  g_print ("Running work through a DsKernelContext that has no scratchpad:\n");
  context = ds_kernel_context_new (order, NULL);
  g_clear_error (&error);
  if (!ds_kernel_context_run (context, sum_in_scratch, &total, &error))
    {
      g_printerr ("ds_kernel_context_run failed: %s\n", error->message);
      status = 1;
    }
  else
    {
      g_print ("  result %" G_GUINT64_FORMAT " (expected 500500); afterwards the context has %s scratchpad\n",
               total, ds_kernel_context_get_scratchpad (context) != NULL ? "a" : "no");
      if (total != 500500)
        status = 1;
    }

  for (guint kind = 0; kind < DS_N_MEMORY_KINDS; kind++)
    g_clear_error (&results[kind].error);

  g_print ("\n%s\n", status == 0 ? "demo finished" : "demo FAILED");
  return status;
}
