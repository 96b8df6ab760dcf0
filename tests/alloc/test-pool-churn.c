/* test-pool-churn.c: what a ds pool holds under a framework's tensor churn
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The churn of tests/alloc/ds-alloc-gpu-check.py, as PyTorch asks libds-alloc
 * for it: per step, on two streams in turn, a tensor x of 4 to 8,000,000
 * bytes, a temporary and a result y of the same size (the temporary goes
 * first), an 8-byte sum kept to the end; x joins 48 kept tensors, one of
 * which, picked at random, goes once there are more (on the stream it was
 * made on); then y goes. Each allocation is followed by the kernel that
 * writes it.
 *
 * The sequence is replayed against a DsPoolResource over an upstream that
 * hands out addresses only, on a GPU modelled here: where the build has
 * CUDA, this program defines the CUDA runtime calls that ds makes for its
 * fences (streams, events, waits; the driver's entry points are refused),
 * so that the pool's own fence code runs against two streams whose kernels
 * take time. The host launches an operation every few microseconds; a
 * kernel runs once its stream and the device are free, for a time set by
 * the bytes it moves; a block given back while its kernel runs is fenced,
 * and another stream may take it only as ds's rules allow (found complete,
 * or behind a stream wait). Nothing in the churn may make the host wait
 * for the GPU. Without CUDA every fence is complete at once (host order).
 *
 * The same sequence is replayed against PyTorch's caching allocator as its
 * documented rules describe it (blocks rounded to 512 bytes; requests up to
 * 1 MiB carved out of 2 MiB segments, up to 10 MiB out of 20 MiB ones,
 * larger ones rounded to 2 MiB; best fit, blocks split and merged within a
 * segment; a free block reused only by its own stream; nothing given back).
 * What the pool holds at its peak must stay within 1.1 times what PyTorch
 * would reserve, and within 1.7 times the peak of the bytes in use.
 */

#include "config.h"

#include <ds.h>

#include "ds-clock-private.h"

#if HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

#define MiB ((gsize) 1 << 20)

/* An upstream of addresses only --------------------------------------------------- */

#define TEST_TYPE_ADDRESS_RESOURCE (test_address_resource_get_type ())
G_DECLARE_FINAL_TYPE (TestAddressResource, test_address_resource, TEST, ADDRESS_RESOURCE, GObject)

struct _TestAddressResource
{
  GObject     parent_instance;
  guintptr    next;
  GHashTable *live;       /* ptr -> size */
  gsize       held;
  gsize       peak;
  guint       n_allocs;
  guint       mismatches;
};

static void test_address_resource_iface_init (DsMemoryResourceInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (TestAddressResource, test_address_resource, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (DS_TYPE_MEMORY_RESOURCE,
                                                      test_address_resource_iface_init))

static DsMemoryKind
address_get_kind (DsMemoryResource *resource)
{
  return DS_MEMORY_KIND_DEVICE;
}

/* Never dereferenced: the pool does not touch device memory. */
static gpointer
address_allocate (DsMemoryResource  *resource,
                  gsize              size,
                  gsize              alignment,
                  GError           **error)
{
  TestAddressResource *self = TEST_ADDRESS_RESOURCE (resource);
  gsize align = MAX (alignment, 256);
  guintptr ptr = (self->next + align - 1) & ~(guintptr) (align - 1);

  self->next = ptr + size;
  g_hash_table_insert (self->live, GSIZE_TO_POINTER (ptr), GSIZE_TO_POINTER (size));
  self->held += size;
  self->peak = MAX (self->peak, self->held);
  self->n_allocs++;
  return GSIZE_TO_POINTER (ptr);
}

static void
address_deallocate (DsMemoryResource *resource,
                    gpointer          ptr,
                    gsize             size,
                    gsize             alignment)
{
  TestAddressResource *self = TEST_ADDRESS_RESOURCE (resource);
  gpointer got;

  if (!g_hash_table_lookup_extended (self->live, ptr, NULL, &got) ||
      GPOINTER_TO_SIZE (got) != size)
    {
      self->mismatches++;
      return;
    }
  g_hash_table_remove (self->live, ptr);
  self->held -= size;
}

static void
test_address_resource_iface_init (DsMemoryResourceInterface *iface)
{
  iface->get_kind = address_get_kind;
  iface->allocate = address_allocate;
  iface->deallocate = address_deallocate;
}

static void
test_address_resource_finalize (GObject *object)
{
  g_hash_table_unref (TEST_ADDRESS_RESOURCE (object)->live);
  G_OBJECT_CLASS (test_address_resource_parent_class)->finalize (object);
}

static void
test_address_resource_class_init (TestAddressResourceClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = test_address_resource_finalize;
}

static void
test_address_resource_init (TestAddressResource *self)
{
  self->next = (guintptr) 1 << 40;
  self->live = g_hash_table_new (g_direct_hash, g_direct_equal);
}

/* A GPU, modelled ---------------------------------------------------------------- */

/* Time in nanoseconds of the model's clock, which is also ds's clock. */
#define FREE_NS         1000        /* the host per tensor given back */
#define KERNEL_NS       2000        /* a kernel's fixed cost on the GPU */

/* How fast the host launches and the GPU runs. */
typedef struct
{
  const char *name;
  gint64      launch_ns;     /* the host per operation (PyTorch's eager launch) */
  gint64      bytes_per_ns;  /* what a kernel moves */
} GpuModel;

static const GpuModel models[] = {
  /* An H100 (2.5 TB/s) under PyTorch's eager launches: each kernel ends
   * soon after the next launch. */
  { "GPU ahead of the host", 15000, 2500 },
  /* Kernels longer than the launches: the host runs ahead, and most
   * blocks are given back while their kernels still run. */
  { "GPU behind the host", 5000, 1000 },
};

typedef struct
{
  gint64  tail;        /* when the work queued on it ends */
  guint64 id;
} FakeStream;

typedef struct
{
  gint64 at;           /* when the work it was recorded behind ends */
} FakeEvent;

static struct
{
  const GpuModel *model;
  gint64     now;          /* the host */
  gint64     engine;       /* when the device is free */
  FakeStream streams[2];
  gboolean   hot;          /* in the churn: the host must not wait */
  guint      host_waits;   /* while hot */
  guint      stream_waits;
  guint      events_recorded;
  guint      queries;
} gpu;

static gint64
gpu_clock (void)
{
  return gpu.now / 1000;
}

static void
gpu_reset (const GpuModel *model)
{
  memset (&gpu, 0, sizeof gpu);
  gpu.model = model;
  gpu.now = 1000 * G_TIME_SPAN_SECOND;
  for (guint i = 0; i < 2; i++)
    gpu.streams[i].id = 0x51 + i;
  ds_clock_set_for_testing (gpu_clock);
}

/* A kernel moving @bytes on stream @s, launched now. */
static void
gpu_launch (guint s,
            gsize bytes)
{
  FakeStream *stream = &gpu.streams[s];
  gint64 start;

  /* The host's work comes first; the kernel is queued at its end. */
  gpu.now += gpu.model->launch_ns;
  start = MAX (gpu.now, MAX (stream->tail, gpu.engine));
  stream->tail = start + KERNEL_NS + (gint64) bytes / gpu.model->bytes_per_ns;
  gpu.engine = stream->tail;
}

static void
gpu_host_waits_until (gint64 t)
{
  if (gpu.hot)
    gpu.host_waits++;
  gpu.now = MAX (gpu.now, t);
}

#if HAVE_CUDA
/* The CUDA runtime calls ds makes for its fences, on the model: they take
 * the place of the runtime's in this program. Nothing reaches a driver. */

static FakeStream *
fake_stream (cudaStream_t stream)
{
  for (guint i = 0; i < 2; i++)
    if ((gpointer) stream == (gpointer) &gpu.streams[i])
      return &gpu.streams[i];
  return NULL;
}

cudaError_t
cudaGetDeviceCount (int *count)
{
  *count = 1;
  return cudaSuccess;
}

cudaError_t
cudaGetDevice (int *device)
{
  *device = 0;
  return cudaSuccess;
}

cudaError_t
cudaSetDevice (int device)
{
  return device == 0 ? cudaSuccess : cudaErrorInvalidDevice;
}

cudaError_t
cudaGetLastError (void)
{
  return cudaSuccess;
}

const char *
cudaGetErrorName (cudaError_t error)
{
  return "cudaErrorModelled";
}

const char *
cudaGetErrorString (cudaError_t error)
{
  return "an error of the modelled GPU";
}

cudaError_t
cudaGetDriverEntryPointByVersion (const char                           *symbol,
                                  void                                **fn,
                                  unsigned int                          version,
                                  unsigned long long                    flags,
                                  enum cudaDriverEntryPointQueryResult *status)
{
  *fn = NULL;
  if (status != NULL)
    *status = cudaDriverEntryPointSymbolNotFound;
  return cudaErrorNotSupported;
}

cudaError_t
cudaStreamGetId (cudaStream_t        stream,
                 unsigned long long *id)
{
  FakeStream *s = fake_stream (stream);

  *id = s != NULL ? s->id : 0;
  return cudaSuccess;
}

cudaError_t
cudaStreamGetDevice (cudaStream_t stream,
                     int         *device)
{
  *device = 0;
  return cudaSuccess;
}

cudaError_t
cudaStreamQuery (cudaStream_t stream)
{
  FakeStream *s = fake_stream (stream);

  gpu.queries++;
  return s == NULL || s->tail <= gpu.now ? cudaSuccess : cudaErrorNotReady;
}

cudaError_t
cudaStreamSynchronize (cudaStream_t stream)
{
  FakeStream *s = fake_stream (stream);

  gpu_host_waits_until (s != NULL ? s->tail : gpu.engine);
  return cudaSuccess;
}

cudaError_t
cudaDeviceSynchronize (void)
{
  gpu_host_waits_until (gpu.engine);
  return cudaSuccess;
}

cudaError_t
cudaEventCreateWithFlags (cudaEvent_t  *event,
                          unsigned int  flags)
{
  *event = (cudaEvent_t) g_new0 (FakeEvent, 1);
  return cudaSuccess;
}

cudaError_t
cudaEventDestroy (cudaEvent_t event)
{
  g_free (event);
  return cudaSuccess;
}

cudaError_t
cudaEventRecord (cudaEvent_t  event,
                 cudaStream_t stream)
{
  FakeStream *s = fake_stream (stream);

  gpu.events_recorded++;
  ((FakeEvent *) event)->at = s != NULL ? s->tail : gpu.engine;
  return cudaSuccess;
}

cudaError_t
cudaEventQuery (cudaEvent_t event)
{
  gpu.queries++;
  return ((FakeEvent *) event)->at <= gpu.now ? cudaSuccess : cudaErrorNotReady;
}

cudaError_t
cudaEventSynchronize (cudaEvent_t event)
{
  gpu_host_waits_until (((FakeEvent *) event)->at);
  return cudaSuccess;
}

cudaError_t
cudaStreamWaitEvent (cudaStream_t stream,
                     cudaEvent_t  event,
                     unsigned int flags)
{
  FakeStream *s = fake_stream (stream);

  gpu.stream_waits++;
  if (s != NULL)
    s->tail = MAX (s->tail, ((FakeEvent *) event)->at);
  return cudaSuccess;
}
#endif

/* The churn ------------------------------------------------------------------------- */

typedef struct
{
  gboolean free;       /* else allocate */
  guint    id;         /* of the tensor */
  gsize    size;
  guint    stream;     /* 0 or 1 */
  gsize    moved;      /* by the kernel that writes it */
} Op;

#define N_STEPS 4000
#define N_KEPT  48
#define MAX_NUMEL 2000000

static GArray *
churn_ops (guint32 seed)
{
  GArray *ops = g_array_new (FALSE, FALSE, sizeof (Op));
  g_autoptr(GRand) rand = g_rand_new_with_seed (seed);
  Op kept[N_KEPT + 1];
  guint n_kept = 0, id = 0;

  for (guint i = 0; i < N_STEPS; i++)
    {
      gsize size = 4 * (gsize) g_rand_int_range (rand, 1, MAX_NUMEL + 1);
      guint s = i % 2;
      /* x = full (), t = x * 2, y = t + 1, y.sum () */
      Op x = { FALSE, id++, size, s, size }, t = { FALSE, id++, size, s, 2 * size };
      Op y = { FALSE, id++, size, s, 2 * size }, sum = { FALSE, id++, 8, s, size };

      g_array_append_val (ops, x);
      g_array_append_val (ops, t);
      g_array_append_val (ops, y);
      t.free = TRUE;
      g_array_append_val (ops, t);
      g_array_append_val (ops, sum);
      kept[n_kept++] = x;
      if (n_kept > N_KEPT)
        {
          guint k = (guint) g_rand_int_range (rand, 0, (gint32) n_kept);
          Op gone = kept[k];

          kept[k] = kept[--n_kept];
          gone.free = TRUE;
          g_array_append_val (ops, gone);
        }
      y.free = TRUE;
      g_array_append_val (ops, y);
    }

  return ops;
}

typedef struct
{
  gsize   held;          /* at the peak */
  gsize   in_use_peak;   /* of the bytes asked for and not given back */
  guint   host_waits;    /* in the churn */
  DsPoolStats stats;     /* at the end of the churn */
} PoolRun;

/* The pool's side, on the modelled GPU where there is CUDA. */
static void
replay_pool (GArray         *ops,
             const GpuModel *model,
             PoolRun        *run)
{
  g_autoptr(TestAddressResource) up = g_object_new (TEST_TYPE_ADDRESS_RESOURCE, NULL);
  g_autoptr(DsMemoryResource) pool = NULL;
  g_autoptr(GHashTable) live = g_hash_table_new (g_direct_hash, g_direct_equal);
  DsAccessOrder orders[2];
  gsize in_use = 0;

  memset (run, 0, sizeof *run);
  gpu_reset (model);
  for (guint s = 0; s < 2; s++)
    {
#if HAVE_CUDA
      ds_access_order_init_stream (&orders[s], &gpu.streams[s], 0);
#else
      ds_access_order_init_host (&orders[s]);
#endif
    }
  pool = ds_pool_resource_new (DS_MEMORY_RESOURCE (up));
  gpu.hot = TRUE;

  for (guint i = 0; i < ops->len; i++)
    {
      const Op *op = &g_array_index (ops, Op, i);

      if (!op->free)
        {
          g_autoptr(GError) error = NULL;
          gpointer p = ds_memory_resource_allocate_async (pool, op->size, 256,
                                                          &orders[op->stream], &error);

          g_assert_no_error (error);
          g_hash_table_insert (live, GUINT_TO_POINTER (op->id + 1), p);
          in_use += op->size;
          run->in_use_peak = MAX (run->in_use_peak, in_use);
          gpu_launch (op->stream, op->moved);
        }
      else
        {
          g_autoptr(GError) error = NULL;
          gpointer p = g_hash_table_lookup (live, GUINT_TO_POINTER (op->id + 1));

          g_assert_nonnull (p);
          g_hash_table_remove (live, GUINT_TO_POINTER (op->id + 1));
          g_assert_true (ds_memory_resource_deallocate_async (pool, p, op->size, 256,
                                                              &orders[op->stream], &error));
          g_assert_no_error (error);
          in_use -= op->size;
          gpu.now += FREE_NS;
        }
    }
  ds_pool_resource_get_stats (DS_POOL_RESOURCE (pool), &run->stats);
  run->host_waits = gpu.host_waits;
  gpu.hot = FALSE;

  /* The sums, kept to the end, after the work. */
  gpu_host_waits_until (gpu.engine);
  for (guint i = 0; i < ops->len; i++)
    {
      const Op *op = &g_array_index (ops, Op, i);
      gpointer p = g_hash_table_lookup (live, GUINT_TO_POINTER (op->id + 1));

      if (p != NULL && !op->free)
        {
          g_hash_table_remove (live, GUINT_TO_POINTER (op->id + 1));
          g_assert_true (ds_memory_resource_deallocate_async (pool, p, op->size, 256,
                                                              &orders[op->stream], NULL));
        }
    }
  g_assert_cmpuint (g_hash_table_size (live), ==, 0);

  run->held = up->peak;
  g_assert_finalize_object (g_steal_pointer (&pool));
  ds_clock_set_for_testing (NULL);
  g_assert_cmpuint (up->held, ==, 0);
  g_assert_cmpuint (up->mismatches, ==, 0);
}

/* PyTorch's rules ----------------------------------------------------------------- */

typedef struct _TBlock TBlock;
struct _TBlock
{
  gsize    size;
  guint    stream;
  gboolean small;
  gboolean is_free;
  TBlock  *prev;       /* neighbours in the segment */
  TBlock  *next;
};

#define T_SMALL       ((gsize) 1 << 20)
#define T_SMALL_SEG   (2 * MiB)
#define T_LARGE_SEG   (20 * MiB)
#define T_MIN_LARGE   (10 * MiB)
#define T_ROUND_LARGE (2 * MiB)

static gsize
torch_round (gsize size)
{
  return MAX (512, (size + 511) / 512 * 512);
}

static gsize
torch_segment (gsize size)
{
  if (size <= T_SMALL)
    return T_SMALL_SEG;
  if (size < T_MIN_LARGE)
    return T_LARGE_SEG;
  return (size + T_ROUND_LARGE - 1) / T_ROUND_LARGE * T_ROUND_LARGE;
}

/* What PyTorch's caching allocator would reserve at its peak for @ops,
 * with @n_streams streams (1: every op on one). */
static gsize
replay_torch (GArray *ops,
              guint   n_streams)
{
  g_autoptr(GPtrArray) free_blocks = g_ptr_array_new ();
  g_autoptr(GPtrArray) all = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GHashTable) live = g_hash_table_new (g_direct_hash, g_direct_equal);
  gsize reserved = 0;

  for (guint i = 0; i < ops->len; i++)
    {
      const Op *op = &g_array_index (ops, Op, i);
      guint stream = op->stream % n_streams;

      if (!op->free)
        {
          gsize size = torch_round (op->size), rest;
          gboolean small = size <= T_SMALL;
          TBlock *best = NULL;
          guint at = 0;

          for (guint j = 0; j < free_blocks->len; j++)
            {
              TBlock *b = free_blocks->pdata[j];

              if (b->stream == stream && b->small == small && b->size >= size &&
                  (best == NULL || b->size < best->size))
                {
                  best = b;
                  at = j;
                }
            }
          if (best != NULL)
            g_ptr_array_remove_index_fast (free_blocks, at);
          else
            {
              best = g_new0 (TBlock, 1);
              g_ptr_array_add (all, best);
              best->size = torch_segment (size);
              best->stream = stream;
              best->small = small;
              reserved += best->size;
            }
          rest = best->size - size;
          if (small ? rest >= 512 : rest > T_SMALL)
            {
              TBlock *split = g_new0 (TBlock, 1);

              g_ptr_array_add (all, split);
              *split = *best;
              split->size = rest;
              split->is_free = TRUE;
              split->prev = best;
              if (best->next != NULL)
                best->next->prev = split;
              best->next = split;
              best->size = size;
              g_ptr_array_add (free_blocks, split);
            }
          best->is_free = FALSE;
          g_hash_table_insert (live, GUINT_TO_POINTER (op->id + 1), best);
        }
      else
        {
          TBlock *b = g_hash_table_lookup (live, GUINT_TO_POINTER (op->id + 1));
          TBlock *n = b->next, *p = b->prev;

          g_hash_table_remove (live, GUINT_TO_POINTER (op->id + 1));
          b->is_free = TRUE;
          if (n != NULL && n->is_free)
            {
              g_ptr_array_remove_fast (free_blocks, n);
              b->size += n->size;
              b->next = n->next;
              if (n->next != NULL)
                n->next->prev = b;
            }
          if (p != NULL && p->is_free)
            {
              g_ptr_array_remove_fast (free_blocks, p);
              p->size += b->size;
              p->next = b->next;
              if (b->next != NULL)
                b->next->prev = p;
              b = p;
            }
          g_ptr_array_add (free_blocks, b);
        }
    }

  return reserved;
}

/* The test -------------------------------------------------------------------------- */

static void
test_churn_memory (void)
{
  g_test_summary ("Under the GPU check's tensor churn on a modelled GPU, a pool holds at "
                  "most 1.1 times what PyTorch's caching allocator would reserve on two "
                  "streams, without making the host wait for the GPU");

  for (guint32 seed = 1; seed <= 3; seed++)
    {
      g_autoptr(GArray) ops = churn_ops (seed);
      gsize torch2 = replay_torch (ops, 2), torch1 = replay_torch (ops, 1);

      for (guint m = 0; m < G_N_ELEMENTS (models); m++)
        {
          PoolRun run;

          replay_pool (ops, &models[m], &run);
          g_test_message ("seed %u, %s: held at the peak %" G_GSIZE_FORMAT " MiB (%.2f times "
                          "PyTorch's %" G_GSIZE_FORMAT " MiB on two streams, %" G_GSIZE_FORMAT
                          " MiB on one; %.2f times the %" G_GSIZE_FORMAT " MiB in use at the "
                          "peak); %" G_GUINT64_FORMAT " upstream allocations, %" G_GUINT64_FORMAT
                          " hits; pool demand peak %" G_GUINT64_FORMAT " MiB, %" G_GUINT64_FORMAT
                          " MiB pending at the end; events %" G_GUINT64_FORMAT ", queries %"
                          G_GUINT64_FORMAT ", stream waits %" G_GUINT64_FORMAT ", host waits %u",
                          seed, models[m].name, run.held / MiB, (double) run.held / torch2,
                          torch2 / MiB, torch1 / MiB, (double) run.held / run.in_use_peak,
                          run.in_use_peak / MiB, run.stats.upstream_allocations,
                          run.stats.cache_hits, run.stats.peak_bytes_in_use / MiB,
                          run.stats.bytes_pending / MiB, run.stats.events_recorded,
                          run.stats.event_queries, run.stats.stream_waits, run.host_waits);

          g_assert_cmpuint (run.host_waits, ==, 0);
          g_assert_cmpuint (run.held * 10, <=, torch2 * 11);
        }
    }
}

#if HAVE_CUDA
/* Takes @size bytes in @order's stream and queues a kernel of @ns on it. */
static gpointer
take_and_run (DsMemoryResource    *pool,
              gsize                size,
              const DsAccessOrder *order,
              guint                s,
              gint64               ns)
{
  g_autoptr(GError) error = NULL;
  gpointer p = ds_memory_resource_allocate_async (pool, size, 256, order, &error);

  g_assert_no_error (error);
  gpu_launch (s, (gsize) ns * (gsize) gpu.model->bytes_per_ns);
  return p;
}

static void
test_reuse_behind_wait (void)
{
  g_autoptr(TestAddressResource) up = g_object_new (TEST_TYPE_ADDRESS_RESOURCE, NULL);
  g_autoptr(DsMemoryResource) pool = NULL;
  DsAccessOrder a, b;
  DsPoolStats stats;
  gpointer first, again, unfenced, other, large, large_again;
  gint64 a_tail;

  g_test_summary ("A miss on one stream in a pool over its release threshold and 1.5 times "
                  "what is in use takes a block another stream gave back while its kernel "
                  "ran, behind a stream wait for its event (the host does not wait), and "
                  "leaves a block below 1 MiB given back without an event alone; a block "
                  "of 1 MiB or more has its stream checked at once");

  gpu_reset (&models[1]);
  ds_access_order_init_stream (&a, &gpu.streams[0], 0);
  ds_access_order_init_stream (&b, &gpu.streams[1], 0);
  pool = ds_pool_resource_new (DS_MEMORY_RESOURCE (up));
  ds_pool_resource_set_release_threshold (DS_POOL_RESOURCE (pool), 0);
  gpu.hot = TRUE;

  /* Stream A's first release is checked: its kernel runs, so an event. */
  first = take_and_run (pool, MiB, &a, 0, 1000000);
  g_assert_true (ds_memory_resource_deallocate_async (pool, first, MiB, 256, &a, NULL));
  a_tail = gpu.streams[0].tail;
  again = take_and_run (pool, MiB, &b, 1, 1000);
  ds_pool_resource_get_stats (DS_POOL_RESOURCE (pool), &stats);
  g_assert_true (again == first);
  g_assert_cmpuint (stats.stream_waits, ==, 1);
  g_assert_cmpuint (stats.upstream_allocations, ==, 1);
  /* B's kernel runs after A's. */
  g_assert_cmpint (gpu.streams[1].tail, >, a_tail);

  /* Its second release of a block below 1 MiB is not checked (no other
   * stream has asked for its blocks 8 times): no event, and B takes new
   * memory. */
  unfenced = take_and_run (pool, 512 * 1024, &a, 0, 1000000);
  g_assert_true (ds_memory_resource_deallocate_async (pool, unfenced, 512 * 1024, 256, &a, NULL));
  other = take_and_run (pool, 512 * 1024, &b, 1, 1000);
  ds_pool_resource_get_stats (DS_POOL_RESOURCE (pool), &stats);
  g_assert_true (other != unfenced);
  g_assert_cmpuint (stats.stream_waits, ==, 1);
  g_assert_cmpuint (stats.upstream_allocations, ==, 3);

  /* A block of 1 MiB or more has its stream checked at once, due or not:
   * its kernel runs, so an event, and B takes it behind a stream wait. */
  large = take_and_run (pool, 2 * MiB, &a, 0, 1000000);
  g_assert_true (ds_memory_resource_deallocate_async (pool, large, 2 * MiB, 256, &a, NULL));
  large_again = take_and_run (pool, 2 * MiB, &b, 1, 1000);
  ds_pool_resource_get_stats (DS_POOL_RESOURCE (pool), &stats);
  g_assert_true (large_again == large);
  g_assert_cmpuint (stats.stream_waits, ==, 2);
  g_assert_cmpuint (stats.upstream_allocations, ==, 4);
  g_assert_cmpuint (gpu.host_waits, ==, 0);

  gpu.hot = FALSE;
  g_assert_true (ds_memory_resource_deallocate_async (pool, again, MiB, 256, &b, NULL));
  g_assert_true (ds_memory_resource_deallocate_async (pool, other, 512 * 1024, 256, &b, NULL));
  g_assert_true (ds_memory_resource_deallocate_async (pool, large_again, 2 * MiB, 256, &b, NULL));
  g_assert_finalize_object (g_steal_pointer (&pool));
  ds_clock_set_for_testing (NULL);
  g_assert_cmpuint (up->held, ==, 0);
  g_assert_cmpuint (up->mismatches, ==, 0);
}
#endif

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/alloc/pool/churn-memory", test_churn_memory);
#if HAVE_CUDA
  g_test_add_func ("/alloc/pool/reuse-behind-wait", test_reuse_behind_wait);
#endif

  return g_test_run ();
}
