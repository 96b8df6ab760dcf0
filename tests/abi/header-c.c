/* header-c.c: <ds.h> as a C consumer sees it
 *
 * Built with -Wall -Wextra -Werror under -std=gnu11 (abi-header-c) and
 * -std=c11 -Wpedantic (abi-header-c11). It includes nothing but <ds.h>,
 * touches every public type macro and the typed allocation macros, and
 * checks the behaviour a consumer relies on without a GPU: host scratch
 * works; the CUDA kinds work, or fail with DS_ERROR_NO_DEVICE (no driver or
 * device), or with DS_ERROR_NOT_SUPPORTED in a -Dcuda=disabled build.
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <ds.h>

#include <stdio.h>
#include <string.h>

#if !DS_CHECK_VERSION (0, 1, 0)
# error "DS_CHECK_VERSION (0, 1, 0) is false"
#endif

static int failures = 0;

#define CHECK(cond) \
  G_STMT_START { \
    if (!(cond)) \
      { \
        fprintf (stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
        failures++; \
      } \
  } G_STMT_END

static void
check_cuda_kind (DsScratchpad *pad,
                 DsMemoryKind  kind)
{
  GError *error = NULL;
  gpointer p = ds_scratchpad_alloc (pad, kind, 4096, 0, &error);

  if (p != NULL)
    {
      /* A GPU is there: the kind works. */
      CHECK (DS_HAVE_CUDA);
      CHECK (error == NULL);
      printf ("kind %d: allocated\n", (int) kind);
      return;
    }

  CHECK (error != NULL);
  if (error == NULL)
    return;
  printf ("kind %d: %s\n", (int) kind, error->message);
  CHECK (error->domain == DS_ERROR);
#if DS_HAVE_CUDA
  CHECK (error->code == DS_ERROR_NO_DEVICE);
#else
  CHECK (error->code == DS_ERROR_NOT_SUPPORTED);
#endif
  g_clear_error (&error);
}

int
main (void)
{
  GType types[] = {
    DS_TYPE_ACCESS_ORDER,
    DS_TYPE_BLOCK,
    DS_TYPE_KERNEL_CONTEXT,
    DS_TYPE_MEMORY_RESOURCE,
    DS_TYPE_HOST_MEMORY_RESOURCE,
    DS_TYPE_PINNED_MEMORY_RESOURCE,
    DS_TYPE_DEVICE_MEMORY_RESOURCE,
    DS_TYPE_MANAGED_MEMORY_RESOURCE,
    DS_TYPE_POOL_RESOURCE,
    DS_TYPE_SCRATCHPAD_IFACE,
    DS_TYPE_SCRATCHPAD,
    DS_TYPE_MEMORY_KIND,
    DS_TYPE_ERROR,
  };
  g_autoptr(DsAccessOrder) host_order = ds_access_order_new_host ();
  g_autoptr(DsScratchpad) pad = NULL;
  g_autoptr(DsBlock) block = NULL;
  g_autoptr(GError) error = NULL;
  guint8 *bytes;
  gdouble *doubles;
  gsize i;

  for (i = 0; i < G_N_ELEMENTS (types); i++)
    CHECK (types[i] != G_TYPE_INVALID);

  CHECK (DS_N_MEMORY_KINDS == 4);
  CHECK (DS_MEMORY_KIND_HOST == 0 && DS_MEMORY_KIND_MANAGED == 3);
  CHECK (strcmp (DS_VERSION_S, "") != 0);
  CHECK (ds_access_order_is_host (host_order));

  /* NULL device order: resolved lazily, so this touches no CUDA. */
  pad = ds_scratchpad_new (NULL);
  CHECK (DS_IS_SCRATCHPAD (pad));
  CHECK (DS_IS_SCRATCHPAD_IFACE (pad));

  bytes = ds_scratchpad_iface_alloc (DS_SCRATCHPAD_IFACE (pad),
                                     DS_MEMORY_KIND_HOST, 1000, 64, &error);
  CHECK (error == NULL);
  CHECK (bytes != NULL);
  CHECK (((guintptr) bytes % 64) == 0);
  if (bytes != NULL)
    memset (bytes, 0xab, 1000);

  doubles = DS_SCRATCHPAD_ALLOC_HOST (pad, gdouble, 100, &error);
  CHECK (error == NULL);
  CHECK (doubles != NULL);
  CHECK (((guintptr) doubles % G_ALIGNOF (gdouble)) == 0);
  if (doubles != NULL)
    doubles[99] = 1.5;

  block = ds_scratchpad_alloc_block (pad, DS_MEMORY_KIND_HOST, 256, 0, &error);
  CHECK (error == NULL);
  CHECK (block != NULL);
  if (block != NULL)
    {
      CHECK (ds_block_get_size (block) == 256);
      CHECK (ds_block_get_kind (block) == DS_MEMORY_KIND_HOST);
      CHECK (ds_block_get_address (block) != 0);
    }

  /* Zero size: NULL and no error. */
  CHECK (ds_scratchpad_alloc (pad, DS_MEMORY_KIND_HOST, 0, 0, &error) == NULL);
  CHECK (error == NULL);

  /* A bad alignment is an error, not a crash. */
  CHECK (ds_scratchpad_alloc (pad, DS_MEMORY_KIND_HOST, 8, 3, &error) == NULL);
  CHECK (g_error_matches (error, DS_ERROR, DS_ERROR_INVALID_ARGUMENT));
  g_clear_error (&error);

  check_cuda_kind (pad, DS_MEMORY_KIND_PINNED);
  check_cuda_kind (pad, DS_MEMORY_KIND_DEVICE);
  check_cuda_kind (pad, DS_MEMORY_KIND_MANAGED);

  g_clear_pointer (&block, ds_block_unref);
  ds_scratchpad_release (pad);
  CHECK (ds_scratchpad_get_allocated (pad, DS_MEMORY_KIND_HOST) == 0);

  printf ("ds %s (CUDA %s): %s\n", DS_VERSION_S, DS_HAVE_CUDA ? "yes" : "no",
          failures == 0 ? "ok" : "FAILED");
  return failures == 0 ? 0 : 1;
}
