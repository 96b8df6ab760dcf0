/* bench-lifecycle-baselines.c: what bench-lifecycle measures ds against
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The same temporaries as the ds cases of bench-lifecycle.c, through the
 * default pools directly, cudaMallocAsync/cudaFreeAsync, CUB's caching
 * allocator, or malloc/cudaMallocHost/cudaMalloc/cudaMallocManaged.
 */

#include "bench-lifecycle.h"

#include <stdlib.h>

/* A unit of temporaries (c->temps) ------------------------------------ */

/* Each temporary through the default pool of its kind, in the same orders
 * a scratchpad uses (device memory in stream order; the others in host
 * order; all but host given back in stream order). */
void
temps_pool (gpointer data,
            guint    n)
{
  Ctx *c = data;
  gpointer ptrs[8];
  guint i, k;

  for (i = 0; i < n; i++)
    {
      for (k = 0; k < c->n_temps; k++)
        {
          DsMemoryResource *pool = c->pools[c->temps[k].kind];

          ptrs[k] = c->temps[k].kind == DS_MEMORY_KIND_DEVICE
            ? ds_memory_resource_allocate_async (pool, c->temps[k].size, 0, &c->order, NULL)
            : ds_memory_resource_allocate (pool, c->temps[k].size, 0, NULL);
        }
      for (k = c->n_temps; k-- > 0;)
        {
          DsMemoryResource *pool = c->pools[c->temps[k].kind];

          if (c->temps[k].kind == DS_MEMORY_KIND_HOST)
            ds_memory_resource_deallocate (pool, ptrs[k], c->temps[k].size, 0);
          else
            ds_memory_resource_deallocate_async (pool, ptrs[k], c->temps[k].size, 0, &c->order, NULL);
        }
    }
}

/* Every temporary with cudaMallocAsync/cudaFreeAsync on the stream (the
 * default mempool, release threshold UINT64_MAX). */
void
temps_async (gpointer data,
             guint    n)
{
  Ctx *c = data;
  void *ptrs[8];
  guint i, k;

  for (i = 0; i < n; i++)
    {
      for (k = 0; k < c->n_temps; k++)
        CHECK (cudaMallocAsync (&ptrs[k], c->temps[k].size, c->stream));
      for (k = c->n_temps; k-- > 0;)
        CHECK (cudaFreeAsync (ptrs[k], c->stream));
    }
}

void
temps_cub (gpointer data,
           guint    n)
{
  Ctx *c = data;
  void *ptrs[8];
  guint i, k;

  for (i = 0; i < n; i++)
    {
      for (k = 0; k < c->n_temps; k++)
        if (ds_bench_cub_alloc (c->cub, &ptrs[k], c->temps[k].size, c->stream) != 0)
          g_error ("CUB DeviceAllocate failed");
      for (k = c->n_temps; k-- > 0;)
        ds_bench_cub_dealloc (c->cub, ptrs[k]);
    }
}

static void *
raw_alloc (DsMemoryKind kind,
           gsize        size)
{
  void *p = NULL;

  switch (kind)
    {
    case DS_MEMORY_KIND_HOST:
      p = malloc (size);
      break;
    case DS_MEMORY_KIND_PINNED:
      CHECK (cudaMallocHost (&p, size));
      break;
    case DS_MEMORY_KIND_DEVICE:
      CHECK (cudaMalloc (&p, size));
      break;
    case DS_MEMORY_KIND_MANAGED:
    default:
      CHECK (cudaMallocManaged (&p, size, cudaMemAttachGlobal));
      break;
    }
  return p;
}

static void
raw_free (DsMemoryKind kind,
          void        *p)
{
  if (kind == DS_MEMORY_KIND_HOST)
    free (p);
  else if (kind == DS_MEMORY_KIND_PINNED)
    CHECK (cudaFreeHost (p));
  else
    CHECK (cudaFree (p));
}

/* malloc / cudaMallocHost / cudaMalloc / cudaMallocManaged, per kind. */
void
temps_raw (gpointer data,
           guint    n)
{
  Ctx *c = data;
  void *ptrs[8];
  guint i, k;

  for (i = 0; i < n; i++)
    {
      for (k = 0; k < c->n_temps; k++)
        ptrs[k] = raw_alloc (c->temps[k].kind, c->temps[k].size);
      for (k = c->n_temps; k-- > 0;)
        raw_free (c->temps[k].kind, ptrs[k]);
    }
}

/* Device-only (one 1 MiB block + a 4-byte memset using it) -------------- */

void
dev_pool (gpointer data,
          guint    n)
{
  Ctx *c = data;
  DsMemoryResource *pool = c->pools[DS_MEMORY_KIND_DEVICE];
  guint i;

  for (i = 0; i < n; i++)
    {
      gpointer p = ds_memory_resource_allocate_async (pool, c->device_size, 0, &c->order, NULL);

      CHECK (cudaMemsetAsync (p, 0, 4, c->stream));
      ds_memory_resource_deallocate_async (pool, p, c->device_size, 0, &c->order, NULL);
    }
}

void
dev_async (gpointer data,
           guint    n)
{
  Ctx *c = data;
  guint i;

  for (i = 0; i < n; i++)
    {
      void *p;

      CHECK (cudaMallocAsync (&p, c->device_size, c->stream));
      CHECK (cudaMemsetAsync (p, 0, 4, c->stream));
      CHECK (cudaFreeAsync (p, c->stream));
    }
}

void
dev_cub (gpointer data,
         guint    n)
{
  Ctx *c = data;
  guint i;

  for (i = 0; i < n; i++)
    {
      void *p;

      if (ds_bench_cub_alloc (c->cub, &p, c->device_size, c->stream) != 0)
        g_error ("CUB DeviceAllocate failed");
      CHECK (cudaMemsetAsync (p, 0, 4, c->stream));
      ds_bench_cub_dealloc (c->cub, p);
    }
}

void
dev_malloc (gpointer data,
            guint    n)
{
  Ctx *c = data;
  guint i;

  for (i = 0; i < n; i++)
    {
      void *p;

      CHECK (cudaMalloc (&p, c->device_size));
      CHECK (cudaMemsetAsync (p, 0, 4, c->stream));
      CHECK (cudaFree (p));
    }
}

/* The floor: the memset alone, into a buffer allocated once. */
void
dev_memset_only (gpointer data,
                 guint    n)
{
  Ctx *c = data;
  guint i;

  for (i = 0; i < n; i++)
    CHECK (cudaMemsetAsync (c->buffer, 0, 4, c->stream));
}

/* Pinned-only (one block, written by the host) --------------------------- */

void
pinned_raw (gpointer data,
            guint    n)
{
  Ctx *c = data;
  guint i;

  for (i = 0; i < n; i++)
    {
      guint8 *p;

      CHECK (cudaMallocHost ((void **) &p, c->device_size));
      p[0] = 1;
      CHECK (cudaFreeHost (p));
    }
}

/* Many small temporaries (1..100 Poisson(1 KiB) per kind) ---------------- */

typedef enum
{
  SMALL_POOL,
  SMALL_ASYNC,
  SMALL_CUB,
  SMALL_RAW,
} SmallMode;

static void
small_each (Ctx       *c,
            guint      n,
            SmallMode  mode)
{
  static void *ptrs[3][100];
  guint i, j, k;

  for (i = 0; i < n; i++)
    {
      Plan *plan = &c->plans[c->next_plan++ % N_PLANS];

      for (j = 0; j < 3; j++)
        for (k = 0; k < plan->n[j]; k++)
          {
            DsMemoryKind kind = small_kinds[j];
            gsize size = plan->sizes[j][k];

            if (mode == SMALL_POOL)
              ptrs[j][k] = kind == DS_MEMORY_KIND_DEVICE
                ? ds_memory_resource_allocate_async (c->pools[kind], size, 0, &c->order, NULL)
                : ds_memory_resource_allocate (c->pools[kind], size, 0, NULL);
            else if (mode == SMALL_RAW || kind == DS_MEMORY_KIND_HOST)
              ptrs[j][k] = raw_alloc (kind, size);
            else if (mode == SMALL_ASYNC)
              CHECK (cudaMallocAsync (&ptrs[j][k], size, c->stream));
            else if (ds_bench_cub_alloc (c->cub, &ptrs[j][k], size, c->stream) != 0)
              g_error ("CUB DeviceAllocate failed");
          }

      for (j = 3; j-- > 0;)
        for (k = plan->n[j]; k-- > 0;)
          {
            DsMemoryKind kind = small_kinds[j];
            gsize size = plan->sizes[j][k];

            if (mode == SMALL_POOL)
              {
                if (kind == DS_MEMORY_KIND_HOST)
                  ds_memory_resource_deallocate (c->pools[kind], ptrs[j][k], size, 0);
                else
                  ds_memory_resource_deallocate_async (c->pools[kind], ptrs[j][k], size, 0, &c->order, NULL);
              }
            else if (mode == SMALL_RAW || kind == DS_MEMORY_KIND_HOST)
              raw_free (kind, ptrs[j][k]);
            else if (mode == SMALL_ASYNC)
              CHECK (cudaFreeAsync (ptrs[j][k], c->stream));
            else
              ds_bench_cub_dealloc (c->cub, ptrs[j][k]);
          }
    }
}

void small_pool (gpointer data, guint n) { small_each (data, n, SMALL_POOL); }
void small_async (gpointer data, guint n) { small_each (data, n, SMALL_ASYNC); }
void small_cub (gpointer data, guint n) { small_each (data, n, SMALL_CUB); }
void small_raw (gpointer data, guint n) { small_each (data, n, SMALL_RAW); }
