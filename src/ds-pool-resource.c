/* ds-pool-resource.c: a stream-aware caching pool over any resource
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "ds-pool-resource-private.h"
#include "ds-access-order-private.h"
#include "ds-cuda-private.h"
#include "ds-device-memory-resource.h"
#include "ds-enum-types.h"
#include "ds-error.h"
#include "ds-host-memory-resource.h"
#include "ds-managed-memory-resource.h"
#include "ds-memory-resource-private.h"
#include "ds-pinned-memory-resource.h"

/**
 * DsPoolResource:
 *
 * A thread-safe, stream-aware caching pool over any
 * [iface@Ds.MemoryResource]; the default resource of every kind.
 *
 * A block given back is kept and handed out again instead of going back
 * upstream, so that steady-state scratch memory costs no `cudaMalloc*`,
 * `cudaMallocHost` or `cudaFree*` call.
 *
 * Blocks given back in a stream's order
 * ([method@Ds.MemoryResource.deallocate_async]) may still be used by work
 * queued on that stream. Such a block is handed out again at once to the
 * next request in the *same* stream's order (stream order makes that safe),
 * but to a request in another stream's order or in host order only once a
 * CUDA event recorded at the release has completed. Streams are told apart
 * by their identity (`cudaStreamGetId`), not by their handle, so a stream
 * destroyed with blocks pending and a new stream that gets the same handle
 * are never confused; events outlive streams, so the pending blocks of a
 * destroyed stream become reusable once its work has finished.
 *
 * Sizes are rounded up to size classes: multiples of 256 bytes up to
 * 2 KiB, then four classes per power of two (at most 25% more than asked).
 * Requests larger than [property@Ds.PoolResource:max-cached-size] or
 * aligned to more than 64 KiB go straight to the upstream resource.
 *
 * The pool never holds more than twice the peak concurrent demand it has
 * seen: before it takes more from upstream, it gives cached blocks back
 * until that bound holds. [method@Ds.PoolResource.trim] gives back all the
 * cached memory no stream work uses any more; finalization gives back
 * everything, waiting for pending stream work.
 *
 * Each thread works on its own shard of the pool (its own lock and free
 * lists), and takes from the other shards only when its own has nothing
 * that fits, so threads that each use their own stream do not contend.
 * A pool whose upstream is of host kind never calls CUDA unless blocks are
 * given back to it in a stream's order.
 */

/* Size classes. Request sizes are counted in granules of 256 bytes; up to
 * 8 granules each count is a class, above that four classes per power of
 * two. N_SIZE_CLASSES covers sizes up to 2^41 bytes. */
#define GRANULE_SHIFT     8
#define GRANULE           ((gsize) 1 << GRANULE_SHIFT)
#define N_SIZE_CLASSES    128
/* Alignment classes: 256 B (and less), 512 B, ..., 64 KiB. */
#define N_ALIGN_CLASSES   9
#define MAX_POOL_ALIGN    (GRANULE << (N_ALIGN_CLASSES - 1))
/* How many blocks of a size class a request looks at before it gives up
 * on the cache of one shard. */
#define SCAN_LIMIT        16
/* A stream's fences are checked for completion (to reuse their events)
 * once this many are outstanding. */
#define RECYCLE_FENCES_AT 4
/* Thread-local cache of stream states. */
#define N_TLS_STREAMS     4
#define NO_CLASS          G_MAXUINT
/* The sequence of a release whose event could not be recorded: it never
 * completes, so its blocks are never reused (leaked rather than reused
 * while work may still use them). */
#define SEQ_LOST          G_MAXUINT64

#define atomic_load64(p)     __atomic_load_n ((p), __ATOMIC_ACQUIRE)
#define atomic_store64(p, v) __atomic_store_n ((p), (v), __ATOMIC_RELEASE)
#define atomic_add64(p, v)   ((void) __atomic_fetch_add ((p), (v), __ATOMIC_RELAXED))

/* ------------------------------------------------------------------ */
/* Stream states: one per stream identity, shared by all pools.        */
/* ------------------------------------------------------------------ */

typedef struct
{
  gpointer event;        /* cudaEvent_t */
  guint64  seq;
} Fence;

typedef struct _StreamState StreamState;

struct _StreamState
{
  gint      ref_count;     /* atomic */

  /* Identity, immutable. */
  guint64   stream_id;     /* cudaStreamGetId (); 0 for the legacy stream */
  gpointer  stream;
  gint      device;
  gpointer  context;

  GMutex    lock;
  guint64   recorded;      /* the last fence recorded (under lock) */
  guint64   completed;     /* every fence <= this has completed (atomic) */
  Fence    *fences;        /* ring of outstanding fences, oldest first */
  guint     fence_head;
  guint     n_fences;
  guint     fence_cap;
  gpointer *spares;        /* events ready to be recorded again */
  guint     n_spares;
  guint     spare_cap;
  gboolean  warned;
  gint      skip_queries;  /* adaptive release policy (atomic) */
};

/* Counters the stream-state functions update; they point into the shard of
 * the pool that made the call. */
typedef struct
{
  guint64 events_recorded;
  guint64 events_created;
  guint64 event_queries;
  guint64 stream_waits;
  guint64 event_waits;
} CudaCounters;

/* ADAPTIVE by measurement (bench-pool on the H200, two runs): against
 * RECORD it took the four-kind lifecycle on an idle stream from 2 CUDA
 * calls to 1 and 0.93-0.94x the time, and stayed within 0.99-1.04x on
 * device-only lifecycles on nearly idle and busy streams. */
static DsPoolReleasePolicy release_policy = DS_POOL_RELEASE_ADAPTIVE;
static DsPoolCrossStreamPolicy cross_stream_policy = DS_POOL_CROSS_STREAM_QUERY;
static gsize policies_initialized;

static GMutex streams_lock;
static GHashTable *streams;        /* StreamState * -> itself (one ref) */
static guint streams_reap_at = 64;

static void
policies_init (void)
{
  if (g_once_init_enter (&policies_initialized))
    {
      const char *release = g_getenv ("DS_POOL_RELEASE");
      const char *cross = g_getenv ("DS_POOL_CROSS_STREAM");

      if (g_strcmp0 (release, "query-idle") == 0)
        release_policy = DS_POOL_RELEASE_QUERY_IDLE;
      else if (g_strcmp0 (release, "record") == 0)
        release_policy = DS_POOL_RELEASE_RECORD;
      else if (release != NULL && g_strcmp0 (release, "adaptive") != 0)
        g_warning ("DS_POOL_RELEASE=%s is not one of record, query-idle, adaptive", release);

      if (g_strcmp0 (cross, "wait") == 0)
        cross_stream_policy = DS_POOL_CROSS_STREAM_WAIT;
      else if (cross != NULL && g_strcmp0 (cross, "query") != 0)
        g_warning ("DS_POOL_CROSS_STREAM=%s is not one of query, wait", cross);

      g_once_init_leave (&policies_initialized, 1);
    }
}

void
ds_pool_set_policies (DsPoolReleasePolicy     release,
                      DsPoolCrossStreamPolicy cross_stream)
{
  policies_init ();
  release_policy = release;
  cross_stream_policy = cross_stream;
}

void
ds_pool_get_policies (DsPoolReleasePolicy     *release,
                      DsPoolCrossStreamPolicy *cross_stream)
{
  policies_init ();
  if (release != NULL)
    *release = release_policy;
  if (cross_stream != NULL)
    *cross_stream = cross_stream_policy;
}

static inline guint64
stream_state_completed (StreamState *ss)
{
  return atomic_load64 (&ss->completed);
}

static inline gboolean
stream_state_matches (const StreamState   *ss,
                      const DsAccessOrder *order)
{
  guint64 id = ds_access_order_get_stream_id (order);

  if (id != 0 || ss->stream_id != 0)
    return id == ss->stream_id;

  /* The legacy default stream (or no CUDA to ask for an identity): the
   * handle, the device and the context together. */
  return ss->stream == order->stream &&
         ss->device == order->device &&
         ss->context == ds_access_order_get_context (order);
}

static guint
stream_state_hash (gconstpointer p)
{
  const StreamState *ss = p;

  if (ss->stream_id != 0)
    return (guint) (ss->stream_id ^ (ss->stream_id >> 32));

  return g_direct_hash (ss->stream) ^ (guint) ss->device ^ g_direct_hash (ss->context);
}

static gboolean
stream_state_equal (gconstpointer a,
                    gconstpointer b)
{
  const StreamState *sa = a, *sb = b;

  if (sa->stream_id != 0 || sb->stream_id != 0)
    return sa->stream_id == sb->stream_id;

  return sa->stream == sb->stream && sa->device == sb->device &&
         sa->context == sb->context;
}

static inline StreamState *
stream_state_ref (StreamState *ss)
{
  g_atomic_int_inc (&ss->ref_count);
  return ss;
}

#if HAVE_CUDA
static void
destroy_event (gpointer event)
{
  cudaError_t result = cudaEventDestroy ((cudaEvent_t) event);

  if (result != cudaSuccess)
    ds_cuda_log_failure (result, "cudaEventDestroy");
}
#endif

static void
stream_state_free (StreamState *ss)
{
#if HAVE_CUDA
  if (ss->n_fences > 0 || ss->n_spares > 0)
    {
      DsCudaScope scope;

      /* Destroying an event that has not completed is allowed. If the
       * context is gone, so are its events. */
      if (ds_cuda_scope_enter (&scope, ss->device, ss->context, NULL))
        {
          guint i;

          for (i = 0; i < ss->n_fences; i++)
            destroy_event (ss->fences[(ss->fence_head + i) % ss->fence_cap].event);
          for (i = 0; i < ss->n_spares; i++)
            destroy_event (ss->spares[i]);
          ds_cuda_scope_leave (&scope);
        }
    }
#endif

  g_free (ss->fences);
  g_free (ss->spares);
  g_mutex_clear (&ss->lock);
  g_free (ss);
}

static inline void
stream_state_unref (StreamState *ss)
{
  if (ss != NULL && g_atomic_int_dec_and_test (&ss->ref_count))
    stream_state_free (ss);
}

/* Drops the stream states nobody but the registry holds: their streams
 * have no pending blocks any more. Called with streams_lock held. */
static void
streams_reap_locked (void)
{
  GHashTableIter iter;
  gpointer key;
  GPtrArray *dead = NULL;

  g_hash_table_iter_init (&iter, streams);
  while (g_hash_table_iter_next (&iter, &key, NULL))
    {
      StreamState *ss = key;

      if (g_atomic_int_get (&ss->ref_count) == 1)
        {
          if (dead == NULL)
            dead = g_ptr_array_new ();
          g_ptr_array_add (dead, ss);
          g_hash_table_iter_remove (&iter);
        }
    }

  streams_reap_at = MAX (64, 2 * g_hash_table_size (streams));

  if (dead != NULL)
    {
      guint i;

      for (i = 0; i < dead->len; i++)
        stream_state_unref (dead->pdata[i]);
      g_ptr_array_free (dead, TRUE);
    }
}

guint
ds_pool_get_n_stream_states (void)
{
  guint n;

  g_mutex_lock (&streams_lock);
  if (streams != NULL)
    streams_reap_locked ();
  n = streams != NULL ? g_hash_table_size (streams) : 0;
  g_mutex_unlock (&streams_lock);

  return n;
}

typedef struct
{
  StreamState *entries[N_TLS_STREAMS];
  guint        next;
} TlsStreams;

static void
tls_streams_free (gpointer data)
{
  TlsStreams *tls = data;
  guint i;

  for (i = 0; i < N_TLS_STREAMS; i++)
    stream_state_unref (tls->entries[i]);
  g_free (tls);
}

static GPrivate tls_streams = G_PRIVATE_INIT (tls_streams_free);

/* The stream state of @order's stream, with a new reference. */
static StreamState *
stream_state_get (const DsAccessOrder *order)
{
  TlsStreams *tls = g_private_get (&tls_streams);
  StreamState key, *ss;
  StreamState *evicted;
  guint i;

  if (tls != NULL)
    {
      for (i = 0; i < N_TLS_STREAMS; i++)
        if (tls->entries[i] != NULL && stream_state_matches (tls->entries[i], order))
          return stream_state_ref (tls->entries[i]);
    }
  else
    {
      tls = g_new0 (TlsStreams, 1);
      g_private_set (&tls_streams, tls);
    }

  memset (&key, 0, sizeof key);
  key.stream_id = ds_access_order_get_stream_id (order);
  key.stream = order->stream;
  key.device = order->device;
  key.context = ds_access_order_get_context (order);

  g_mutex_lock (&streams_lock);
  if (streams == NULL)
    streams = g_hash_table_new (stream_state_hash, stream_state_equal);

  ss = g_hash_table_lookup (streams, &key);
  if (ss == NULL)
    {
      if (g_hash_table_size (streams) >= streams_reap_at)
        streams_reap_locked ();

      ss = g_new0 (StreamState, 1);
      ss->ref_count = 1;
      ss->stream_id = key.stream_id;
      ss->stream = key.stream;
      ss->device = key.device;
      ss->context = key.context;
      g_mutex_init (&ss->lock);
      g_hash_table_add (streams, ss);
    }
  /* One for the thread's cache, one for the caller. */
  g_atomic_int_add (&ss->ref_count, 2);
  g_mutex_unlock (&streams_lock);

  evicted = tls->entries[tls->next];
  tls->entries[tls->next] = ss;
  tls->next = (tls->next + 1) % N_TLS_STREAMS;
  stream_state_unref (evicted);

  return ss;
}

#if HAVE_CUDA

static void
stream_state_warn (StreamState *ss,
                   cudaError_t  result,
                   const char  *call)
{
  (void) cudaGetLastError ();

  if (result == cudaErrorCudartUnloading)
    return;
  if (!ss->warned)
    {
      ss->warned = TRUE;
      g_warning ("%s failed: %s (%s); blocks released on this stream are "
                 "held back", call, cudaGetErrorName (result),
                 cudaGetErrorString (result));
    }
}

static inline Fence *
fence_at (StreamState *ss,
          guint        i)
{
  return &ss->fences[(ss->fence_head + i) % ss->fence_cap];
}

static void
spare_push (StreamState *ss,
            gpointer     event)
{
  if (ss->n_spares == ss->spare_cap)
    {
      ss->spare_cap = MAX (4, ss->spare_cap * 2);
      ss->spares = g_renew (gpointer, ss->spares, ss->spare_cap);
    }
  ss->spares[ss->n_spares++] = event;
}

static void
fence_push (StreamState *ss,
            gpointer     event,
            guint64      seq)
{
  if (ss->n_fences == ss->fence_cap)
    {
      guint cap = MAX (8, ss->fence_cap * 2);
      Fence *fences = g_new (Fence, cap);
      guint i;

      for (i = 0; i < ss->n_fences; i++)
        fences[i] = *fence_at (ss, i);
      g_free (ss->fences);
      ss->fences = fences;
      ss->fence_cap = cap;
      ss->fence_head = 0;
    }

  fence_at (ss, ss->n_fences)->event = event;
  fence_at (ss, ss->n_fences)->seq = seq;
  ss->n_fences++;
}

/* Marks the @n oldest fences completed and keeps their events. */
static void
fences_retire_locked (StreamState *ss,
                      guint        n)
{
  guint64 last = 0;

  while (n-- > 0)
    {
      Fence *f = fence_at (ss, 0);

      last = f->seq;
      spare_push (ss, f->event);
      ss->fence_head = (ss->fence_head + 1) % ss->fence_cap;
      ss->n_fences--;
    }

  if (last > ss->completed)
    atomic_store64 (&ss->completed, last);
}

/* Checks the outstanding fences without waiting, newest first: when the
 * newest has completed, so have all the others (one stream). */
static void
stream_state_poll_locked (StreamState  *ss,
                          guint64       wanted,
                          CudaCounters *counters)
{
  cudaError_t result;

  if (ss->n_fences == 0)
    return;

  result = cudaEventQuery ((cudaEvent_t) fence_at (ss, ss->n_fences - 1)->event);
  counters->event_queries++;
  if (result == cudaSuccess)
    {
      fences_retire_locked (ss, ss->n_fences);
      return;
    }
  if (result != cudaErrorNotReady)
    {
      stream_state_warn (ss, result, "cudaEventQuery");
      return;
    }

  /* The newest is still running; older ones may be done. */
  while (ss->n_fences > 1 && fence_at (ss, 0)->seq <= wanted)
    {
      result = cudaEventQuery ((cudaEvent_t) fence_at (ss, 0)->event);
      counters->event_queries++;
      if (result != cudaSuccess)
        {
          if (result != cudaErrorNotReady)
            stream_state_warn (ss, result, "cudaEventQuery");
          break;
        }
      fences_retire_locked (ss, 1);
    }
}

/* Whether the release @seq of @ss has completed; checks without waiting. */
static gboolean
stream_state_poll (StreamState  *ss,
                   guint64       seq,
                   CudaCounters *counters)
{
  gboolean done;

  if (seq <= stream_state_completed (ss))
    return TRUE;
  if (seq == SEQ_LOST)
    return FALSE;

  g_mutex_lock (&ss->lock);
  if (seq > ss->completed)
    stream_state_poll_locked (ss, seq, counters);
  done = seq <= ss->completed;
  g_mutex_unlock (&ss->lock);

  return done;
}

/* Blocks until the release @seq of @ss has completed. FALSE if it never
 * will (the event could not be recorded, or the device failed). */
static gboolean
stream_state_wait (StreamState  *ss,
                   guint64       seq,
                   CudaCounters *counters)
{
  gboolean done;

  if (seq <= stream_state_completed (ss))
    return TRUE;
  if (seq == SEQ_LOST)
    return FALSE;

  g_mutex_lock (&ss->lock);
  while (seq > ss->completed && ss->n_fences > 0)
    {
      guint i;

      /* The oldest fence at or after @seq covers it. */
      for (i = 0; i < ss->n_fences - 1 && fence_at (ss, i)->seq < seq; i++)
        ;
      {
        cudaError_t result = cudaEventSynchronize ((cudaEvent_t) fence_at (ss, i)->event);

        counters->event_waits++;
        if (result != cudaSuccess)
          {
            stream_state_warn (ss, result, "cudaEventSynchronize");
            break;
          }
      }
      fences_retire_locked (ss, i + 1);
    }
  done = seq <= ss->completed;
  g_mutex_unlock (&ss->lock);

  return done;
}

/* Makes @order's stream wait for the release @seq of @ss. */
static gboolean
stream_state_make_wait (StreamState         *ss,
                        guint64              seq,
                        const DsAccessOrder *order,
                        CudaCounters        *counters)
{
  gboolean ok = TRUE;
  guint i;

  if (seq <= stream_state_completed (ss))
    return TRUE;
  if (seq == SEQ_LOST)
    return FALSE;

  g_mutex_lock (&ss->lock);
  if (seq > ss->completed && ss->n_fences > 0)
    {
      cudaError_t result;

      for (i = 0; i < ss->n_fences - 1 && fence_at (ss, i)->seq < seq; i++)
        ;
      result = cudaStreamWaitEvent ((cudaStream_t) order->stream,
                                    (cudaEvent_t) fence_at (ss, i)->event, 0);
      counters->stream_waits++;
      if (result != cudaSuccess)
        {
          stream_state_warn (ss, result, "cudaStreamWaitEvent");
          ok = FALSE;
        }
    }
  else
    {
      ok = seq <= ss->completed;
    }
  g_mutex_unlock (&ss->lock);

  return ok;
}

/* An event to record on @ss: a spare one, one of a completed fence, or a
 * new one (created in the current context, which is the stream's). */
static gpointer
stream_state_take_event_locked (StreamState  *ss,
                                CudaCounters *counters)
{
  cudaEvent_t event = NULL;
  cudaError_t result;

  if (ss->n_spares == 0 && ss->n_fences >= RECYCLE_FENCES_AT)
    stream_state_poll_locked (ss, fence_at (ss, ss->n_fences - 1)->seq, counters);
  if (ss->n_spares > 0)
    return ss->spares[--ss->n_spares];

  result = cudaEventCreateWithFlags (&event, cudaEventDisableTiming);
  counters->events_created++;
  if (result != cudaSuccess)
    {
      stream_state_warn (ss, result, "cudaEventCreateWithFlags");
      return NULL;
    }

  return event;
}

#endif /* HAVE_CUDA */

/* Marks the end, in @order's stream, of the work that may use the blocks
 * released now: returns the fence sequence their reuse by others must wait
 * for, 0 when there is nothing to wait for, or SEQ_LOST. */
static guint64
stream_state_record (StreamState         *ss,
                     const DsAccessOrder *order,
                     CudaCounters        *counters)
{
#if HAVE_CUDA
  DsCudaScope scope;
  cudaStream_t stream = (cudaStream_t) order->stream;
  cudaError_t result;
  gpointer event;
  guint64 seq;

  /* Without a device nothing can have been queued. */
  if (!ds_cuda_ensure_available (NULL))
    return 0;
  if (!ds_cuda_scope_enter_order (&scope, order, NULL))
    {
      g_warning ("Cannot enter the device of a stream that blocks were "
                 "released on; they are held back");
      return SEQ_LOST;
    }

  if (release_policy == DS_POOL_RELEASE_QUERY_IDLE ||
      (release_policy == DS_POOL_RELEASE_ADAPTIVE &&
       (g_atomic_int_get (&ss->skip_queries) <= 0 ||
        g_atomic_int_add (&ss->skip_queries, -1) <= 0)))
    {
      result = cudaStreamQuery (stream);
      counters->event_queries++;
      if (result == cudaSuccess)
        {
          ds_cuda_scope_leave (&scope);
          return 0;
        }
      if (result != cudaErrorNotReady)
        (void) cudaGetLastError ();
      else if (release_policy == DS_POOL_RELEASE_ADAPTIVE)
        g_atomic_int_set (&ss->skip_queries, 7);
    }

  g_mutex_lock (&ss->lock);
  event = stream_state_take_event_locked (ss, counters);
  result = event != NULL ? cudaEventRecord ((cudaEvent_t) event, stream) : cudaErrorUnknown;
  if (result == cudaSuccess)
    {
      counters->events_recorded++;
      seq = ++ss->recorded;
      fence_push (ss, event, seq);
    }
  else
    {
      if (event != NULL)
        {
          stream_state_warn (ss, result, "cudaEventRecord");
          spare_push (ss, event);
        }
      seq = SEQ_LOST;
    }
  g_mutex_unlock (&ss->lock);

  if (seq == SEQ_LOST)
    {
      /* Last resort: wait for the stream here. */
      result = cudaStreamSynchronize (stream);
      counters->event_waits++;
      if (result == cudaSuccess)
        seq = 0;
      else
        (void) cudaGetLastError ();
    }

  ds_cuda_scope_leave (&scope);
  return seq;
#else
  return 0;
#endif
}

#if !HAVE_CUDA
static gboolean
stream_state_poll (StreamState  *ss,
                   guint64       seq,
                   CudaCounters *counters)
{
  return seq != SEQ_LOST;
}

static gboolean
stream_state_wait (StreamState  *ss,
                   guint64       seq,
                   CudaCounters *counters)
{
  return seq != SEQ_LOST;
}

static gboolean
stream_state_make_wait (StreamState         *ss,
                        guint64              seq,
                        const DsAccessOrder *order,
                        CudaCounters        *counters)
{
  return seq != SEQ_LOST;
}
#endif

/* ------------------------------------------------------------------ */
/* The pool.                                                           */
/* ------------------------------------------------------------------ */

typedef struct _Block Block;

/* A cached block. */
struct _Block
{
  Block       *prev;
  Block       *next;
  gpointer     ptr;
  StreamState *ss;        /* NULL: reusable by anyone */
  guint64      seq;       /* with @ss: the release's fence */
};

typedef struct
{
  Block *head;            /* newest */
  Block *tail;            /* oldest */
} BinList;

typedef struct
{
  GMutex       lock;
  BinList     *bins[N_ALIGN_CLASSES];   /* N_SIZE_CLASSES each, lazily */
  Block       *spare;                   /* unused nodes */
  guint64      n_cached;                /* atomic reads */
  guint64      bytes_cached;
  gint64       demand;                  /* may go below 0 (atomic reads) */
  gint64       demand_mark;             /* see observe_demand () */
  guint64      hits;
  guint64      misses;
  CudaCounters cuda;
} Shard;

struct _DsPoolResource
{
  GObject           parent_instance;

  DsMemoryResource *upstream;
  DsMemoryKind      kind;
  gboolean          upstream_async;
  guint64           max_cached_size;   /* atomic */

  Shard           **shards;
  guint             shard_mask;

  /* Growth and shrinking: held bytes, the peak and the upstream calls. */
  GMutex            grow_lock;
  guint64           held;
  guint64           upstream_allocations;
  guint64           upstream_deallocations;
  gint64            peak;              /* atomic */
  CudaCounters      grow_cuda;

  /* Where upstream calls made from any thread must run. */
  gint              device;
  gpointer          context;
  gboolean          have_context;
};

enum
{
  PROP_0,
  PROP_UPSTREAM,
  PROP_KIND,
  PROP_MAX_CACHED_SIZE,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static void ds_pool_resource_iface_init (DsMemoryResourceInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (DsPoolResource, ds_pool_resource, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (DS_TYPE_MEMORY_RESOURCE,
                                                      ds_pool_resource_iface_init))

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
 * ds_pool_stats_free:
 * @self: (transfer full) (nullable): a #DsPoolStats
 *
 * Frees a copy made by [method@Ds.PoolStats.copy].
 */
void
ds_pool_stats_free (DsPoolStats *self)
{
  g_free (self);
}

/* The size class of @size; its size in *@class_bytes. NO_CLASS when too
 * large for any. */
static inline guint
size_class (gsize  size,
            gsize *class_bytes)
{
  guint64 g = ((guint64) size + GRANULE - 1) >> GRANULE_SHIFT;
  guint64 n;
  guint msb, shift, top, idx;

  if (g <= 8)
    {
      *class_bytes = (gsize) (g << GRANULE_SHIFT);
      return (guint) g - 1;
    }

  n = g - 1;
  msb = 63 - (guint) __builtin_clzll (n);         /* >= 3 */
  shift = msb - 2;
  top = (guint) (n >> shift);                      /* 4 .. 7 */
  idx = 8 + (msb - 3) * 4 + (top - 4);
  if (idx >= N_SIZE_CLASSES)
    return NO_CLASS;

  *class_bytes = (gsize) (((guint64) (top + 1) << shift) << GRANULE_SHIFT);
  return idx;
}

/* The size in bytes of class @cls (the inverse of size_class ()). */
static inline gsize
class_size_of (guint cls)
{
  guint msb, top;

  if (cls < 8)
    return ((gsize) cls + 1) << GRANULE_SHIFT;

  msb = 3 + (cls - 8) / 4;
  top = 4 + (cls - 8) % 4;
  return (gsize) (((guint64) (top + 1) << (msb - 2)) << GRANULE_SHIFT);
}

static inline guint
align_class (gsize alignment)
{
  if (alignment <= GRANULE)
    return 0;
  if (alignment > MAX_POOL_ALIGN)
    return NO_CLASS;

  return (guint) (63 - __builtin_clzll ((guint64) alignment)) - GRANULE_SHIFT;
}

static inline gsize
demand_of (gsize size)
{
  return size > G_MAXSIZE - (GRANULE - 1) ? size : (size + GRANULE - 1) & ~(GRANULE - 1);
}

/* The calling thread's slot, which picks its shard. initial-exec: one
 * %fs-relative load, no __tls_get_addr call; a 4-byte variable fits the
 * static TLS surplus that glibc keeps for dlopen()ed libraries. */
static __thread guint slot_plus_one __attribute__ ((tls_model ("initial-exec")));

static inline guint
thread_slot (void)
{
  static gint next_slot;

  if (G_UNLIKELY (slot_plus_one == 0))
    slot_plus_one = (guint) g_atomic_int_add (&next_slot, 1) + 1;

  return slot_plus_one - 1;
}

static inline Shard *
current_shard (DsPoolResource *self,
               guint          *index)
{
  guint i = thread_slot () & self->shard_mask;

  if (index != NULL)
    *index = i;
  return self->shards[i];
}

/* Raises the recorded peak to @demand if it is higher. */
static void
update_peak (DsPoolResource *self,
             gint64          demand)
{
  gint64 peak = __atomic_load_n (&self->peak, __ATOMIC_RELAXED);

  while (demand > peak &&
         !__atomic_compare_exchange_n (&self->peak, &peak, demand, TRUE,
                                       __ATOMIC_RELAXED, __ATOMIC_RELAXED))
    ;
}

static gint64
total_demand (DsPoolResource *self)
{
  gint64 total = 0;
  guint i;

  for (i = 0; i <= self->shard_mask; i++)
    total += __atomic_load_n (&self->shards[i]->demand, __ATOMIC_RELAXED);

  return total;
}

/* Called with @shard locked after its demand grew past its mark: adds up
 * all shards and raises the peak. With one thread (or threads that free
 * what they allocate) this sees every new peak; when blocks are freed by
 * other threads than the ones that took them, marks move geometrically so
 * that a producer thread does not add up all shards on every request. */
static void
observe_demand (DsPoolResource *self,
                Shard          *shard)
{
  gint64 total = total_demand (self);

  update_peak (self, total);
  if (total >= shard->demand)
    shard->demand_mark = shard->demand;
  else
    shard->demand_mark = shard->demand + shard->demand / 8;
}

static inline void
shard_add_demand (DsPoolResource *self,
                  Shard          *shard,
                  gint64          delta)
{
  gint64 demand = shard->demand + delta;

  __atomic_store_n (&shard->demand, demand, __ATOMIC_RELAXED);
  if (G_UNLIKELY (delta > 0 && demand > shard->demand_mark))
    observe_demand (self, shard);
}

static inline BinList *
shard_bin (Shard   *shard,
           guint    ac,
           guint    cls,
           gboolean create)
{
  if (G_UNLIKELY (shard->bins[ac] == NULL))
    {
      if (!create)
        return NULL;
      shard->bins[ac] = g_new0 (BinList, N_SIZE_CLASSES);
    }

  return &shard->bins[ac][cls];
}

static inline void
bin_unlink (BinList *bin,
            Block   *b)
{
  if (b->prev != NULL)
    b->prev->next = b->next;
  else
    bin->head = b->next;
  if (b->next != NULL)
    b->next->prev = b->prev;
  else
    bin->tail = b->prev;
}

static inline void
bin_push_head (BinList *bin,
               Block   *b)
{
  b->prev = NULL;
  b->next = bin->head;
  if (bin->head != NULL)
    bin->head->prev = b;
  else
    bin->tail = b;
  bin->head = b;
}

/* Takes @b out of @shard's cache; returns its pointer and hands its stream
 * reference to *@ss_out. */
static inline gpointer
shard_take_block_locked (Shard         *shard,
                         BinList       *bin,
                         Block         *b,
                         gsize          class_bytes,
                         StreamState  **ss_out)
{
  gpointer ptr = b->ptr;

  bin_unlink (bin, b);
  *ss_out = b->ss;
  b->ss = NULL;
  b->next = shard->spare;
  shard->spare = b;
  __atomic_store_n (&shard->n_cached, shard->n_cached - 1, __ATOMIC_RELAXED);
  shard->bytes_cached -= class_bytes;

  return ptr;
}

/* Finds a block of class (@ac, @cls) in @shard that a request in @order
 * (NULL: host order) may use now. Called with @shard locked. */
static gpointer
shard_take_locked (Shard                *shard,
                   guint                 ac,
                   guint                 cls,
                   gsize                 class_bytes,
                   const DsAccessOrder  *order,
                   StreamState         **ss_out)
{
  BinList *bin = shard_bin (shard, ac, cls, FALSE);
  Block *b, *candidate = NULL;
  guint n = 0;

  if (bin == NULL || bin->head == NULL)
    return NULL;

  for (b = bin->head; b != NULL && n < SCAN_LIMIT; b = b->next, n++)
    {
      StreamState *ss = b->ss;

      if (ss == NULL)
        return shard_take_block_locked (shard, bin, b, class_bytes, ss_out);
      /* Stream order makes reuse on the releasing stream safe at once. */
      if (order != NULL && stream_state_matches (ss, order))
        return shard_take_block_locked (shard, bin, b, class_bytes, ss_out);
      if (b->seq <= stream_state_completed (ss))
        return shard_take_block_locked (shard, bin, b, class_bytes, ss_out);
      if (b->seq != SEQ_LOST)
        candidate = b;   /* the oldest one seen is the most likely done */
    }

  if (candidate == NULL)
    return NULL;

  if (order != NULL && cross_stream_policy == DS_POOL_CROSS_STREAM_WAIT)
    {
      if (stream_state_make_wait (candidate->ss, candidate->seq, order, &shard->cuda))
        return shard_take_block_locked (shard, bin, candidate, class_bytes, ss_out);
    }
  else if (stream_state_poll (candidate->ss, candidate->seq, &shard->cuda))
    {
      return shard_take_block_locked (shard, bin, candidate, class_bytes, ss_out);
    }

  return NULL;
}

static gboolean
pool_enter_scope (DsPoolResource *self,
                  DsCudaScope    *scope)
{
  if (self->kind == DS_MEMORY_KIND_HOST || !self->have_context)
    {
      memset (scope, 0, sizeof *scope);
      return TRUE;
    }

  return ds_cuda_scope_enter (scope, self->device, self->context, NULL);
}

/* Remembers the device and context upstream calls run in, from the first
 * upstream allocation (made by a caller that has them current). Called
 * with grow_lock held. */
static void
pool_capture_context (DsPoolResource *self)
{
#if HAVE_CUDA
  int current = -1;

  if (self->have_context || self->kind == DS_MEMORY_KIND_HOST)
    return;
  if (cudaGetDevice (&current) != cudaSuccess)
    {
      (void) cudaGetLastError ();
      return;
    }
  if (self->device >= 0 && current != self->device)
    return;

  self->device = current;
  self->context = ds_cuda_get_current_context ();
  self->have_context = TRUE;
#endif
}

typedef struct
{
  gpointer     ptr;
  gsize        class_bytes;
  gsize        alignment;
  StreamState *ss;
  guint64      seq;
} Victim;

typedef enum
{
  EVICT_READY,      /* only blocks known to be reusable */
  EVICT_POLL,       /* also blocks whose release has completed by now */
  EVICT_ALL,        /* everything, waiting for pending releases */
} EvictMode;

/* Gives cached blocks back upstream until @need bytes are freed (largest
 * classes, oldest blocks first). Called with grow_lock held. Returns the
 * bytes freed. */
static guint64
evict_locked (DsPoolResource *self,
              guint64         need,
              EvictMode       mode)
{
  GArray *victims = NULL;
  guint64 freed = 0;
  EvictMode pass;
  guint i;

  for (pass = EVICT_READY; pass <= mode && freed < need; pass++)
    {
      for (i = 0; i <= self->shard_mask && freed < need; i++)
        {
          Shard *shard = self->shards[i];
          gint ac, cls;

          if (__atomic_load_n (&shard->n_cached, __ATOMIC_RELAXED) == 0)
            continue;

          g_mutex_lock (&shard->lock);
          for (ac = N_ALIGN_CLASSES - 1; ac >= 0 && freed < need; ac--)
            {
              if (shard->bins[ac] == NULL)
                continue;

              for (cls = N_SIZE_CLASSES - 1; cls >= 0 && freed < need; cls--)
                {
                  BinList *bin = &shard->bins[ac][cls];
                  Block *b, *prev;
                  gsize class_bytes;

                  if (bin->tail == NULL)
                    continue;

                  class_bytes = class_size_of ((guint) cls);

                  for (b = bin->tail; b != NULL && freed < need; b = prev)
                    {
                      gboolean take;

                      prev = b->prev;
                      if (b->ss == NULL)
                        take = TRUE;
                      else if (b->seq == SEQ_LOST)
                        take = FALSE;
                      else if (pass == EVICT_READY)
                        take = b->seq <= stream_state_completed (b->ss);
                      else if (pass == EVICT_POLL)
                        take = stream_state_poll (b->ss, b->seq, &self->grow_cuda);
                      else
                        take = TRUE;

                      if (take)
                        {
                          Victim v;

                          v.class_bytes = class_bytes;
                          v.alignment = GRANULE << ac;
                          v.seq = b->seq;
                          v.ptr = shard_take_block_locked (shard, bin, b, class_bytes, &v.ss);
                          if (victims == NULL)
                            victims = g_array_new (FALSE, FALSE, sizeof (Victim));
                          g_array_append_val (victims, v);
                          freed += class_bytes;
                        }
                    }
                }
            }
          g_mutex_unlock (&shard->lock);
        }
    }

  if (victims != NULL)
    {
      DsCudaScope scope;
      gboolean scoped = pool_enter_scope (self, &scope);

      for (i = 0; i < victims->len; i++)
        {
          Victim *v = &g_array_index (victims, Victim, i);

          if (v->ss != NULL && !stream_state_wait (v->ss, v->seq, &self->grow_cuda))
            {
              /* Its work may never finish: hold it back for good. */
              freed -= v->class_bytes;
              stream_state_unref (v->ss);
              continue;
            }
          stream_state_unref (v->ss);

          ds_memory_resource_deallocate (self->upstream, v->ptr, v->class_bytes, v->alignment);
          self->held -= v->class_bytes;
          self->upstream_deallocations++;
        }

      if (scoped)
        ds_cuda_scope_leave (&scope);
      g_array_free (victims, TRUE);
    }

  return freed;
}

static gpointer
upstream_alloc (DsPoolResource       *self,
                gsize                 size,
                gsize                 alignment,
                const DsAccessOrder  *order,
                GError              **error)
{
  if (self->upstream_async && order != NULL)
    return ds_memory_resource_allocate_async (self->upstream, size, alignment, order, error);

  return ds_memory_resource_allocate (self->upstream, size, alignment, error);
}

static void
shard_add_counters (Shard              *shard,
                    const CudaCounters *c)
{
  if (c->events_recorded + c->events_created + c->event_queries +
      c->stream_waits + c->event_waits == 0)
    return;

  g_mutex_lock (&shard->lock);
  shard->cuda.events_recorded += c->events_recorded;
  shard->cuda.events_created += c->events_created;
  shard->cuda.event_queries += c->event_queries;
  shard->cuda.stream_waits += c->stream_waits;
  shard->cuda.event_waits += c->event_waits;
  g_mutex_unlock (&shard->lock);
}

/* A cache miss: takes a new block of @up_size bytes aligned to @up_align
 * from upstream, first giving cached blocks back so that what the pool
 * holds stays within twice the peak demand. */
/* At the memory bound: rather than wait for a pending block, give it back
 * and take a new one from upstream, wait for one of the class asked for
 * (host order) or make the requesting stream wait for it, and reuse it.
 * Called with grow_lock held. */
static gpointer
take_pending_locked (DsPoolResource      *self,
                     guint                ac,
                     guint                cls,
                     gsize                class_bytes,
                     const DsAccessOrder *order)
{
  guint i;

  for (i = 0; i <= self->shard_mask; i++)
    {
      Shard *shard = self->shards[i];
      StreamState *ss = NULL;
      gpointer ptr = NULL;
      guint64 seq = 0;
      BinList *bin;
      Block *b;

      if (__atomic_load_n (&shard->n_cached, __ATOMIC_RELAXED) == 0)
        continue;

      g_mutex_lock (&shard->lock);
      bin = shard_bin (shard, ac, cls, FALSE);
      for (b = bin != NULL ? bin->tail : NULL; b != NULL; b = b->prev)
        if (b->ss == NULL || b->seq != SEQ_LOST)
          {
            seq = b->seq;
            ptr = shard_take_block_locked (shard, bin, b, class_bytes, &ss);
            break;
          }
      g_mutex_unlock (&shard->lock);

      if (ptr == NULL)
        continue;
      /* Whatever the cross-stream policy: here the alternative is a
       * blocking wait and a device-wide cudaFree. */
      if (ss == NULL ||
          (order != NULL && stream_state_matches (ss, order)) ||
          (order != NULL ? stream_state_make_wait (ss, seq, order, &self->grow_cuda)
                         : stream_state_wait (ss, seq, &self->grow_cuda)))
        {
          stream_state_unref (ss);
          return ptr;
        }

      /* Its work will never finish (a failed device): hold it back. */
      stream_state_unref (ss);
    }

  return NULL;
}

static gpointer
pool_grow (DsPoolResource       *self,
           guint                 ac,
           guint                 cls,
           gsize                 up_size,
           gsize                 up_align,
           gsize                 demand,
           const DsAccessOrder  *order,
           gboolean             *reused,
           GError              **error)
{
  GError *local_error = NULL;
  gpointer ptr;
  gint64 wanted, peak;

  *reused = FALSE;

  g_mutex_lock (&self->grow_lock);
  pool_capture_context (self);
  /* The peak this request makes, if it succeeds. */
  wanted = total_demand (self) + (gint64) demand;
  peak = MAX (__atomic_load_n (&self->peak, __ATOMIC_RELAXED), wanted);
  if (self->held + up_size > 2 * (guint64) peak)
    {
      /* For CUDA kinds, giving a block back (cudaFree, cudaFreeHost) waits
       * for the whole device anyway; for host memory it is cheap. */
      if (cls != NO_CLASS && self->kind != DS_MEMORY_KIND_HOST &&
          (ptr = take_pending_locked (self, ac, cls, up_size, order)) != NULL)
        {
          g_mutex_unlock (&self->grow_lock);
          *reused = TRUE;
          return ptr;
        }
      evict_locked (self, self->held + up_size - 2 * (guint64) peak, EVICT_ALL);
    }
  self->held += up_size;
  self->upstream_allocations++;
  g_mutex_unlock (&self->grow_lock);

  ptr = upstream_alloc (self, up_size, up_align, order, &local_error);
  if (ptr == NULL && local_error != NULL &&
      g_error_matches (local_error, DS_ERROR, DS_ERROR_OUT_OF_MEMORY))
    {
      guint64 freed;

      /* Out of memory: give back everything cached and try once more. */
      g_mutex_lock (&self->grow_lock);
      freed = evict_locked (self, G_MAXUINT64, EVICT_ALL);
      g_mutex_unlock (&self->grow_lock);

      if (freed > 0)
        {
          g_clear_error (&local_error);
          ptr = upstream_alloc (self, up_size, up_align, order, &local_error);
        }
    }

  if (ptr == NULL)
    {
      g_mutex_lock (&self->grow_lock);
      self->held -= up_size;
      self->upstream_allocations--;
      g_mutex_unlock (&self->grow_lock);
      g_propagate_error (error, local_error);
      return NULL;
    }

  update_peak (self, wanted);
  return ptr;
}

/* Gives a block that is not to be cached straight back upstream, once the
 * stream work that may use it has finished. */
static void
pool_give_back (DsPoolResource      *self,
                gpointer             ptr,
                gsize                up_size,
                gsize                up_align,
                gsize                demand,
                StreamState         *ss,
                guint64              seq,
                const DsAccessOrder *order)
{
  Shard *shard = current_shard (self, NULL);
  CudaCounters counters = { 0, };
  DsCudaScope scope;
  gboolean scoped, freed = TRUE;

  scoped = pool_enter_scope (self, &scope);
  if (ss != NULL)
    {
      if (self->upstream_async)
        ds_memory_resource_deallocate_async (self->upstream, ptr, up_size, up_align, order, NULL);
      else if (stream_state_wait (ss, seq, &counters))
        ds_memory_resource_deallocate (self->upstream, ptr, up_size, up_align);
      else
        freed = FALSE;   /* held back for good */
    }
  else
    {
      ds_memory_resource_deallocate (self->upstream, ptr, up_size, up_align);
    }
  if (scoped)
    ds_cuda_scope_leave (&scope);

  shard_add_counters (shard, &counters);
  g_mutex_lock (&shard->lock);
  shard_add_demand (self, shard, -(gint64) demand);
  g_mutex_unlock (&shard->lock);

  if (freed)
    {
      g_mutex_lock (&self->grow_lock);
      self->held -= up_size;
      self->upstream_deallocations++;
      g_mutex_unlock (&self->grow_lock);
    }
}

gpointer
ds_pool_resource_alloc (DsPoolResource       *self,
                        gsize                 size,
                        gsize                 alignment,
                        const DsAccessOrder  *order,
                        GError              **error)
{
  Shard *shard;
  StreamState *ss = NULL;
  gpointer ptr = NULL;
  gsize class_bytes = 0, up_size, up_align;
  gsize demand = demand_of (size);
  gboolean hit = FALSE, cacheable;
  guint ac, cls, index, i;

  if (G_UNLIKELY (size == 0))
    return NULL;
  if (order != NULL && order->type != DS_ACCESS_ORDER_TYPE_DEVICE)
    order = NULL;

  ac = align_class (alignment);
  cls = size_class (size, &class_bytes);
  cacheable = ac != NO_CLASS && cls != NO_CLASS;
  if (G_UNLIKELY (!cacheable))
    {
      /* Beyond every class: the exact request, never cached. */
      up_size = size;
      up_align = alignment;
    }
  else
    {
      up_size = class_bytes;
      up_align = GRANULE << ac;
    }

  shard = current_shard (self, &index);

  if (G_LIKELY (cacheable &&
                class_bytes <= __atomic_load_n (&self->max_cached_size, __ATOMIC_RELAXED)))
    {
      g_mutex_lock (&shard->lock);
      ptr = shard_take_locked (shard, ac, cls, class_bytes, order, &ss);
      if (G_LIKELY (ptr != NULL))
        {
          shard->hits++;
          shard_add_demand (self, shard, (gint64) demand);
          g_mutex_unlock (&shard->lock);
          stream_state_unref (ss);
          return ptr;
        }
      g_mutex_unlock (&shard->lock);

      /* Another thread's shard may have what this one lacks. */
      for (i = 1; i <= self->shard_mask && ptr == NULL; i++)
        {
          Shard *other = self->shards[(index + i) & self->shard_mask];

          if (__atomic_load_n (&other->n_cached, __ATOMIC_RELAXED) == 0)
            continue;

          g_mutex_lock (&other->lock);
          ptr = shard_take_locked (other, ac, cls, class_bytes, order, &ss);
          g_mutex_unlock (&other->lock);
        }
      hit = ptr != NULL;
      stream_state_unref (ss);
    }

  if (ptr == NULL)
    ptr = pool_grow (self, cacheable ? ac : NO_CLASS, cacheable ? cls : NO_CLASS,
                     up_size, up_align, demand, order, &hit, error);

  if (ptr != NULL)
    {
      g_mutex_lock (&shard->lock);
      if (hit)
        shard->hits++;
      else
        shard->misses++;
      shard_add_demand (self, shard, (gint64) demand);
      g_mutex_unlock (&shard->lock);
    }

  return ptr;
}

/* Puts a block given back into the calling thread's shard. @ss (borrowed)
 * and @seq: the release's fence, or NULL/0 when the block is reusable by
 * anyone at once. */
static void
pool_free (DsPoolResource      *self,
           gpointer             ptr,
           gsize                size,
           gsize                alignment,
           StreamState         *ss,
           guint64              seq,
           const DsAccessOrder *order)
{
  Shard *shard;
  BinList *bin;
  Block *b;
  gsize class_bytes = 0;
  guint ac, cls;

  if (seq == 0)
    ss = NULL;

  ac = align_class (alignment);
  cls = size_class (size, &class_bytes);
  if (G_UNLIKELY (ac == NO_CLASS || cls == NO_CLASS))
    {
      pool_give_back (self, ptr, size, alignment, demand_of (size), ss, seq, order);
      return;
    }
  if (G_UNLIKELY (class_bytes > __atomic_load_n (&self->max_cached_size, __ATOMIC_RELAXED)))
    {
      pool_give_back (self, ptr, class_bytes, GRANULE << ac, demand_of (size), ss, seq, order);
      return;
    }

  if (ss != NULL)
    stream_state_ref (ss);

  shard = current_shard (self, NULL);
  g_mutex_lock (&shard->lock);
  b = shard->spare;
  if (G_LIKELY (b != NULL))
    shard->spare = b->next;
  else
    b = g_new (Block, 1);
  b->ptr = ptr;
  b->ss = ss;
  b->seq = seq;
  bin = shard_bin (shard, ac, cls, TRUE);
  bin_push_head (bin, b);
  __atomic_store_n (&shard->n_cached, shard->n_cached + 1, __ATOMIC_RELAXED);
  shard->bytes_cached += class_bytes;
  shard_add_demand (self, shard, -(gint64) demand_of (size));
  g_mutex_unlock (&shard->lock);
}

/* ------------------------------------------------------------------ */
/* Releases.                                                           */
/* ------------------------------------------------------------------ */

void
ds_pool_release_init (DsPoolRelease *release)
{
  g_return_if_fail (release != NULL);

  release->n_entries = 0;
}

gboolean
ds_pool_release_add (DsPoolRelease       *release,
                     DsMemoryResource    *resource,
                     gpointer             ptr,
                     gsize                size,
                     gsize                alignment,
                     const DsAccessOrder *order)
{
  DsPoolResource *self;
  StreamState *ss;
  guint64 seq;
  guint i;

  if (!DS_IS_POOL_RESOURCE (resource))
    return FALSE;
  if (ptr == NULL)
    return TRUE;

  self = (DsPoolResource *) resource;
  if (alignment == 0)
    alignment = 16;

  if (order == NULL || order->type != DS_ACCESS_ORDER_TYPE_DEVICE)
    {
      pool_free (self, ptr, size, alignment, NULL, 0, NULL);
      return TRUE;
    }

  for (i = 0; i < release->n_entries; i++)
    {
      ss = release->entries[i].stream;
      if (stream_state_matches (ss, order))
        {
          pool_free (self, ptr, size, alignment, ss, release->entries[i].seq, order);
          return TRUE;
        }
    }

  /* The first block of this stream in this release: one event. */
  policies_init ();
  ss = stream_state_get (order);
  {
    CudaCounters counters = { 0, };

    seq = stream_state_record (ss, order, &counters);
    shard_add_counters (current_shard (self, NULL), &counters);
  }

  pool_free (self, ptr, size, alignment, ss, seq, order);

  if (release->n_entries < G_N_ELEMENTS (release->entries))
    {
      release->entries[release->n_entries].stream = ss;
      release->entries[release->n_entries].seq = seq;
      release->n_entries++;
    }
  else
    {
      stream_state_unref (ss);
    }

  return TRUE;
}

void
ds_pool_release_finish (DsPoolRelease *release)
{
  guint i;

  g_return_if_fail (release != NULL);

  for (i = 0; i < release->n_entries; i++)
    stream_state_unref (release->entries[i].stream);
  release->n_entries = 0;
}

/* ------------------------------------------------------------------ */
/* DsMemoryResource.                                                   */
/* ------------------------------------------------------------------ */

static DsMemoryKind
ds_pool_resource_get_kind (DsMemoryResource *resource)
{
  return DS_POOL_RESOURCE (resource)->kind;
}

static gpointer
ds_pool_resource_allocate (DsMemoryResource  *resource,
                           gsize              size,
                           gsize              alignment,
                           GError           **error)
{
  return ds_pool_resource_alloc (DS_POOL_RESOURCE (resource), size, alignment, NULL, error);
}

static void
ds_pool_resource_deallocate (DsMemoryResource *resource,
                             gpointer          ptr,
                             gsize             size,
                             gsize             alignment)
{
  if (ptr != NULL)
    pool_free (DS_POOL_RESOURCE (resource), ptr, size, alignment, NULL, 0, NULL);
}

static gpointer
ds_pool_resource_allocate_async (DsMemoryResource     *resource,
                                 gsize                 size,
                                 gsize                 alignment,
                                 const DsAccessOrder  *order,
                                 GError              **error)
{
  return ds_pool_resource_alloc (DS_POOL_RESOURCE (resource), size, alignment, order, error);
}

static void
ds_pool_resource_deallocate_async (DsMemoryResource    *resource,
                                   gpointer             ptr,
                                   gsize                size,
                                   gsize                alignment,
                                   const DsAccessOrder *order)
{
  DsPoolRelease release;

  ds_pool_release_init (&release);
  ds_pool_release_add (&release, resource, ptr, size, alignment, order);
  ds_pool_release_finish (&release);
}

static void
ds_pool_resource_iface_init (DsMemoryResourceInterface *iface)
{
  iface->get_kind = ds_pool_resource_get_kind;
  iface->allocate = ds_pool_resource_allocate;
  iface->deallocate = ds_pool_resource_deallocate;
  iface->allocate_async = ds_pool_resource_allocate_async;
  iface->deallocate_async = ds_pool_resource_deallocate_async;
}

/* ------------------------------------------------------------------ */
/* GObject.                                                            */
/* ------------------------------------------------------------------ */

static void
ds_pool_resource_constructed (GObject *object)
{
  DsPoolResource *self = DS_POOL_RESOURCE (object);

  G_OBJECT_CLASS (ds_pool_resource_parent_class)->constructed (object);

  if (self->upstream == NULL)
    self->upstream = ds_host_memory_resource_new ();

  self->kind = ds_memory_resource_get_kind (self->upstream);
  self->upstream_async = ds_memory_resource_is_stream_ordered (self->upstream);
}

static void
ds_pool_resource_dispose (GObject *object)
{
  DsPoolResource *self = DS_POOL_RESOURCE (object);

  if (self->upstream != NULL)
    {
      g_mutex_lock (&self->grow_lock);
      evict_locked (self, G_MAXUINT64, EVICT_ALL);
      g_mutex_unlock (&self->grow_lock);
    }

  g_clear_object (&self->upstream);

  G_OBJECT_CLASS (ds_pool_resource_parent_class)->dispose (object);
}

static void
ds_pool_resource_finalize (GObject *object)
{
  DsPoolResource *self = DS_POOL_RESOURCE (object);
  guint i, ac;

  for (i = 0; i <= self->shard_mask; i++)
    {
      Shard *shard = self->shards[i];
      Block *b;

      for (ac = 0; ac < N_ALIGN_CLASSES; ac++)
        {
          guint cls;

          if (shard->bins[ac] == NULL)
            continue;
          /* Blocks held back for good (their release never completed). */
          for (cls = 0; cls < N_SIZE_CLASSES; cls++)
            while ((b = shard->bins[ac][cls].head) != NULL)
              {
                shard->bins[ac][cls].head = b->next;
                stream_state_unref (b->ss);
                g_free (b);
              }
          g_free (shard->bins[ac]);
        }
      while ((b = shard->spare) != NULL)
        {
          shard->spare = b->next;
          g_free (b);
        }
      g_mutex_clear (&shard->lock);
      g_aligned_free (shard);
    }
  g_free (self->shards);
  g_mutex_clear (&self->grow_lock);

  G_OBJECT_CLASS (ds_pool_resource_parent_class)->finalize (object);
}

static void
ds_pool_resource_get_property (GObject    *object,
                               guint       prop_id,
                               GValue     *value,
                               GParamSpec *pspec)
{
  DsPoolResource *self = DS_POOL_RESOURCE (object);

  switch (prop_id)
    {
    case PROP_UPSTREAM:
      g_value_set_object (value, self->upstream);
      break;

    case PROP_KIND:
      g_value_set_enum (value, self->kind);
      break;

    case PROP_MAX_CACHED_SIZE:
      g_value_set_uint64 (value, ds_pool_resource_get_max_cached_size (self));
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
ds_pool_resource_set_property (GObject      *object,
                               guint         prop_id,
                               const GValue *value,
                               GParamSpec   *pspec)
{
  DsPoolResource *self = DS_POOL_RESOURCE (object);

  switch (prop_id)
    {
    case PROP_UPSTREAM:
      self->upstream = g_value_dup_object (value);
      break;

    case PROP_MAX_CACHED_SIZE:
      ds_pool_resource_set_max_cached_size (self, g_value_get_uint64 (value));
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
ds_pool_resource_class_init (DsPoolResourceClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->constructed = ds_pool_resource_constructed;
  object_class->dispose = ds_pool_resource_dispose;
  object_class->finalize = ds_pool_resource_finalize;
  object_class->get_property = ds_pool_resource_get_property;
  object_class->set_property = ds_pool_resource_set_property;

  /**
   * DsPoolResource:upstream:
   *
   * The resource the pool takes memory from and gives it back to. `NULL`
   * at construction means a new [class@Ds.HostMemoryResource].
   */
  properties[PROP_UPSTREAM] =
    g_param_spec_object ("upstream", NULL, NULL,
                         DS_TYPE_MEMORY_RESOURCE,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY |
                         G_PARAM_STATIC_STRINGS);

  /**
   * DsPoolResource:kind:
   *
   * The kind of memory the pool hands out: that of its upstream.
   */
  properties[PROP_KIND] =
    g_param_spec_enum ("kind", NULL, NULL,
                       DS_TYPE_MEMORY_KIND, DS_MEMORY_KIND_HOST,
                       G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

  /**
   * DsPoolResource:max-cached-size:
   *
   * The largest block the pool caches, in bytes; larger requests go to
   * the upstream resource and back each time.
   */
  properties[PROP_MAX_CACHED_SIZE] =
    g_param_spec_uint64 ("max-cached-size", NULL, NULL,
                         0, G_MAXUINT64, DS_POOL_RESOURCE_DEFAULT_MAX_CACHED_SIZE,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT |
                         G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
ds_pool_resource_init (DsPoolResource *self)
{
  guint n = 1, i;
  guint cpus = g_get_num_processors ();

  /* One shard per CPU (a power of two, at most 64), so that threads on
   * their own streams rarely share a lock. */
  while (n < cpus && n < 64)
    n *= 2;

  self->shard_mask = n - 1;
  self->shards = g_new (Shard *, n);
  for (i = 0; i < n; i++)
    {
      Shard *shard = g_aligned_alloc0 (1, sizeof (Shard), 128);

      g_mutex_init (&shard->lock);
      self->shards[i] = shard;
    }

  g_mutex_init (&self->grow_lock);
  self->max_cached_size = DS_POOL_RESOURCE_DEFAULT_MAX_CACHED_SIZE;
  self->device = -1;
}

/**
 * ds_pool_resource_new:
 * @upstream: the resource to take memory from
 *
 * Creates a pool that caches the memory of @upstream.
 *
 * Returns: (transfer full): a new #DsPoolResource
 */
DsMemoryResource *
ds_pool_resource_new (DsMemoryResource *upstream)
{
  g_return_val_if_fail (DS_IS_MEMORY_RESOURCE (upstream), NULL);

  return g_object_new (DS_TYPE_POOL_RESOURCE, "upstream", upstream, NULL);
}

DsMemoryResource *
ds_pool_resource_new_default (DsMemoryKind   kind,
                              gint           device,
                              GError       **error)
{
  g_autoptr(DsMemoryResource) upstream = NULL;
  DsPoolResource *self;

  g_return_val_if_fail (DS_MEMORY_KIND_IS_VALID (kind), NULL);

  if (kind != DS_MEMORY_KIND_HOST && !ds_cuda_ensure_available (error))
    return NULL;

  switch (kind)
    {
    case DS_MEMORY_KIND_HOST:
      upstream = ds_host_memory_resource_new ();
      break;
    case DS_MEMORY_KIND_PINNED:
      upstream = ds_pinned_memory_resource_new ();
      break;
    case DS_MEMORY_KIND_DEVICE:
      upstream = ds_device_memory_resource_new (device);
      break;
    case DS_MEMORY_KIND_MANAGED:
    default:
      upstream = ds_managed_memory_resource_new (device);
      break;
    }

  self = g_object_new (DS_TYPE_POOL_RESOURCE, "upstream", upstream, NULL);
  if (kind != DS_MEMORY_KIND_HOST)
    self->device = device;

  return DS_MEMORY_RESOURCE (self);
}

/**
 * ds_pool_resource_get_upstream:
 * @self: a #DsPoolResource
 *
 * The resource @self takes memory from.
 *
 * Returns: (transfer none): the resource @self takes memory from
 */
DsMemoryResource *
ds_pool_resource_get_upstream (DsPoolResource *self)
{
  g_return_val_if_fail (DS_IS_POOL_RESOURCE (self), NULL);

  return self->upstream;
}

/**
 * ds_pool_resource_get_max_cached_size:
 * @self: a #DsPoolResource
 *
 * The value of [property@Ds.PoolResource:max-cached-size].
 *
 * Returns: the value of [property@Ds.PoolResource:max-cached-size]
 */
guint64
ds_pool_resource_get_max_cached_size (DsPoolResource *self)
{
  g_return_val_if_fail (DS_IS_POOL_RESOURCE (self), 0);

  return __atomic_load_n (&self->max_cached_size, __ATOMIC_RELAXED);
}

/**
 * ds_pool_resource_set_max_cached_size:
 * @self: a #DsPoolResource
 * @max_cached_size: the largest block to cache, in bytes
 *
 * Sets [property@Ds.PoolResource:max-cached-size]. Cached blocks larger
 * than the new value are given back at the next
 * [method@Ds.PoolResource.trim].
 */
void
ds_pool_resource_set_max_cached_size (DsPoolResource *self,
                                      guint64         max_cached_size)
{
  g_return_if_fail (DS_IS_POOL_RESOURCE (self));

  if (__atomic_exchange_n (&self->max_cached_size, max_cached_size,
                           __ATOMIC_RELAXED) != max_cached_size)
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_MAX_CACHED_SIZE]);
}

/**
 * ds_pool_resource_get_stats:
 * @self: a #DsPoolResource
 * @stats: (out caller-allocates): where to store the statistics
 *
 * Fills @stats with the pool's statistics since it was created. The
 * counters of each thread's shard are read under its lock, so with other
 * threads at work the totals are a consistent-enough snapshot, not an
 * atomic one.
 */
void
ds_pool_resource_get_stats (DsPoolResource *self,
                            DsPoolStats    *stats)
{
  gint64 demand = 0;
  guint i;

  g_return_if_fail (DS_IS_POOL_RESOURCE (self));
  g_return_if_fail (stats != NULL);

  memset (stats, 0, sizeof *stats);

  g_mutex_lock (&self->grow_lock);
  stats->upstream_allocations = self->upstream_allocations;
  stats->upstream_deallocations = self->upstream_deallocations;
  stats->bytes_held = self->held;
  stats->events_recorded = self->grow_cuda.events_recorded;
  stats->events_created = self->grow_cuda.events_created;
  stats->event_queries = self->grow_cuda.event_queries;
  stats->stream_waits = self->grow_cuda.stream_waits;
  stats->event_waits = self->grow_cuda.event_waits;

  for (i = 0; i <= self->shard_mask; i++)
    {
      Shard *shard = self->shards[i];

      g_mutex_lock (&shard->lock);
      stats->cache_hits += shard->hits;
      stats->cache_misses += shard->misses;
      stats->events_recorded += shard->cuda.events_recorded;
      stats->events_created += shard->cuda.events_created;
      stats->event_queries += shard->cuda.event_queries;
      stats->stream_waits += shard->cuda.stream_waits;
      stats->event_waits += shard->cuda.event_waits;
      stats->bytes_cached += shard->bytes_cached;
      stats->n_cached_blocks += shard->n_cached;
      demand += shard->demand;
      g_mutex_unlock (&shard->lock);
    }
  g_mutex_unlock (&self->grow_lock);

  update_peak (self, demand);
  stats->bytes_in_use = demand > 0 ? (guint64) demand : 0;
  stats->peak_bytes_in_use = (guint64) __atomic_load_n (&self->peak, __ATOMIC_RELAXED);
}

/**
 * ds_pool_resource_trim:
 * @self: a #DsPoolResource
 *
 * Gives every cached block that no stream work uses any more back to the
 * upstream resource. Blocks whose release is still pending on a stream
 * stay; nothing waits.
 *
 * Returns: the number of bytes given back
 */
guint64
ds_pool_resource_trim (DsPoolResource *self)
{
  guint64 freed;

  g_return_val_if_fail (DS_IS_POOL_RESOURCE (self), 0);

  g_mutex_lock (&self->grow_lock);
  freed = evict_locked (self, G_MAXUINT64, EVICT_POLL);
  g_mutex_unlock (&self->grow_lock);

  return freed;
}
