/* ds-test-utils.c: what the test programs share
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#define _GNU_SOURCE 1

#include "config.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "ds-test-utils.h"
#include "ds-pool-resource-private.h"

void
ds_test_init (int    *argc,
              char ***argv)
{
  g_test_init (argc, argv, NULL);
}

/* Availability ------------------------------------------------------------ */

#if HAVE_CUDA
/* The default pools live as long as the process and keep what they cached:
 * give it back at exit, so that compute-sanitizer's leak check reports only
 * what a test really leaked. Trim would keep the blocks given back in a
 * stream's order that no one had a reason to check (lazy fences); after
 * the device synchronize nothing uses them, so drain, which waits for
 * every fence (a device-wide wait where there is no event), gives back
 * everything. */
static void
trim_default_pools (void)
{
  int count = 0, device;
  guint kind;

  (void) cudaDeviceSynchronize ();
  if (cudaGetDeviceCount (&count) != cudaSuccess)
    count = 0;
  for (device = 0; device < count; device++)
    for (kind = DS_MEMORY_KIND_PINNED; kind < DS_N_MEMORY_KINDS; kind++)
      {
        DsMemoryResource *res = ds_memory_resource_get_default (kind, device, NULL);

        if (res != NULL && DS_IS_POOL_RESOURCE (res))
          ds_pool_resource_drain (DS_POOL_RESOURCE (res));
      }
  (void) cudaGetLastError ();
}
#endif

static char *unavailable_reason;

gboolean
ds_test_cuda_available (void)
{
  static gsize once;
  static gboolean available;

  if (g_once_init_enter (&once))
    {
#if HAVE_CUDA
      int count = 0;
      cudaError_t result = cudaGetDeviceCount (&count);

      (void) cudaGetLastError ();
      if (result != cudaSuccess)
        unavailable_reason = g_strdup_printf ("%s: %s (%s)",
                                              result == cudaErrorNoDevice ||
                                              result == cudaErrorInsufficientDriver
                                                ? "no GPU on this machine" : "no usable CUDA device",
                                              cudaGetErrorName (result),
                                              cudaGetErrorString (result));
      else if (count == 0)
        unavailable_reason = g_strdup ("no GPU on this machine: the driver sees 0 devices");
      else
        {
          available = TRUE;
          /* After the CUDA runtime's own exit handler was registered, so
           * that this one runs first. */
          atexit (trim_default_pools);
        }
#else
      unavailable_reason = g_strdup (DS_NO_CUDA_REASON);
#endif
      g_once_init_leave (&once, 1);
    }

  return available;
}

const char *
ds_test_cuda_unavailable_reason (void)
{
  if (ds_test_cuda_available ())
    return NULL;
  return unavailable_reason;
}

void
ds_test_skip_no_cuda (void)
{
  g_test_skip (ds_test_cuda_unavailable_reason ());
}

/* Memory ------------------------------------------------------------------ */

gboolean
ds_test_ranges_overlap (gconstpointer a,
                        gsize         a_size,
                        gconstpointer b,
                        gsize         b_size)
{
  guintptr pa = (guintptr) a, pb = (guintptr) b;

  if (a_size == 0 || b_size == 0)
    return FALSE;

  return pa < pb + b_size && pb < pa + a_size;
}

void
ds_test_fill_pattern (guint8 *p,
                      gsize   size,
                      guint   seed)
{
  gsize i;

  for (i = 0; i < size; i++)
    p[i] = (guint8) (i * 31 + seed);
}

void
ds_test_check_pattern (const guint8 *p,
                       gsize         size,
                       guint         seed)
{
  gsize i;

  for (i = 0; i < size; i++)
    if (p[i] != (guint8) (i * 31 + seed))
      g_error ("byte %" G_GSIZE_FORMAT " is 0x%02x, expected 0x%02x",
               i, p[i], (guint8) (i * 31 + seed));
}

static gint
compare_ranges (gconstpointer a,
                gconstpointer b)
{
  const DsTestRange *ra = a, *rb = b;

  return ra->start < rb->start ? -1 : ra->start > rb->start ? 1 : 0;
}

void
ds_test_assert_disjoint (GArray *ranges)
{
  guint i;

  g_array_sort (ranges, compare_ranges);
  for (i = 1; i < ranges->len; i++)
    {
      DsTestRange *prev = &g_array_index (ranges, DsTestRange, i - 1);
      DsTestRange *cur = &g_array_index (ranges, DsTestRange, i);

      g_assert_cmpuint (prev->start + prev->size, <=, cur->start);
    }
}

/* Objects and resources --------------------------------------------------- */

void
ds_test_count_notify (GObject    *object,
                      GParamSpec *pspec,
                      gpointer    user_data)
{
  (*(guint *) user_data)++;
}

DsMemoryResource *
ds_test_raw_resource_new (DsMemoryKind kind)
{
  switch (kind)
    {
    case DS_MEMORY_KIND_HOST:
      return ds_host_memory_resource_new ();
    case DS_MEMORY_KIND_PINNED:
      return ds_pinned_memory_resource_new ();
    case DS_MEMORY_KIND_DEVICE:
      return ds_device_memory_resource_new (-1);
    case DS_MEMORY_KIND_MANAGED:
      return ds_managed_memory_resource_new (-1);
    default:
      g_assert_not_reached ();
    }
}

/* Stream handles for comparisons --------------------------------------- */

gpointer
ds_test_stream_handle (guint index)
{
  g_assert_cmpuint (index, <, 8);

#if HAVE_CUDA
  if (ds_test_cuda_available ())
    {
      static gpointer streams[8];
      static GMutex lock;
      gpointer stream;

      g_mutex_lock (&lock);
      if (streams[index] == NULL)
        streams[index] = ds_test_stream_new ();
      stream = streams[index];
      g_mutex_unlock (&lock);

      return stream;
    }
#endif

  /* Without a GPU: distinct addresses of memory that is no stream, which
   * only the value semantics of orders see. */
  {
    static char fake_streams[8][64];

    return fake_streams[index];
  }
}

/* The CUDA call spy ------------------------------------------------------- */

static guint spy_count;
static const char *spy_last;

void
ds_test_cuda_spy_reset (void)
{
  g_atomic_int_set (&spy_count, 0);
  g_atomic_pointer_set (&spy_last, NULL);
}

guint
ds_test_cuda_spy_get_count (void)
{
  return g_atomic_int_get (&spy_count);
}

const char *
ds_test_cuda_spy_get_last (void)
{
  return g_atomic_pointer_get (&spy_last);
}

#if HAVE_CUDA

static void
spy_note (const char *name)
{
  g_atomic_int_inc (&spy_count);
  g_atomic_pointer_set (&spy_last, name);
}

static gpointer
spy_lookup (const char *name)
{
  gpointer fn = dlsym (RTLD_NEXT, name);

  if (fn == NULL)
    g_error ("CUDA spy: cannot find the real %s: %s", name, dlerror ());
  return fn;
}

/* Defines NAME so that it counts the call and forwards it to the CUDA
 * runtime's NAME. A definition in the executable takes precedence over the
 * one in libcudart.so, for the library's code (linked into the test
 * program) as for the test's own. */
#define SPY(name, params, args) \
  cudaError_t CUDARTAPI \
  name params \
  { \
    static cudaError_t (*real) params; \
    spy_note (#name); \
    if (g_atomic_pointer_get (&real) == NULL) \
      g_atomic_pointer_set (&real, spy_lookup (#name)); \
    return real args; \
  }

SPY (cudaGetDeviceCount, (int *count), (count))
SPY (cudaGetDevice, (int *device), (device))
SPY (cudaSetDevice, (int device), (device))
SPY (cudaInitDevice, (int device, unsigned int device_flags, unsigned int flags),
     (device, device_flags, flags))
SPY (cudaStreamGetDevice, (cudaStream_t stream, int *device), (stream, device))
SPY (cudaStreamGetId, (cudaStream_t stream, unsigned long long *id), (stream, id))
SPY (cudaGetDriverEntryPointByVersion,
     (const char *symbol, void **fn, unsigned int version, unsigned long long flags,
      enum cudaDriverEntryPointQueryResult *status),
     (symbol, fn, version, flags, status))
SPY (cudaStreamSynchronize, (cudaStream_t stream), (stream))
SPY (cudaStreamQuery, (cudaStream_t stream), (stream))
SPY (cudaStreamWaitEvent, (cudaStream_t stream, cudaEvent_t event, unsigned int flags),
     (stream, event, flags))
SPY (cudaEventCreate, (cudaEvent_t *event), (event))
SPY (cudaEventCreateWithFlags, (cudaEvent_t *event, unsigned int flags), (event, flags))
SPY (cudaEventRecord, (cudaEvent_t event, cudaStream_t stream), (event, stream))
SPY (cudaEventDestroy, (cudaEvent_t event), (event))
SPY (cudaEventQuery, (cudaEvent_t event), (event))
SPY (cudaEventSynchronize, (cudaEvent_t event), (event))
SPY (cudaDeviceSynchronize, (void), ())
SPY (cudaHostAlloc, (void **ptr, size_t size, unsigned int flags), (ptr, size, flags))
SPY (cudaMallocHost, (void **ptr, size_t size), (ptr, size))
SPY (cudaMalloc, (void **ptr, size_t size), (ptr, size))
SPY (cudaMallocManaged, (void **ptr, size_t size, unsigned int flags), (ptr, size, flags))
SPY (cudaMallocAsync, (void **ptr, size_t size, cudaStream_t stream), (ptr, size, stream))
SPY (cudaFree, (void *ptr), (ptr))
SPY (cudaFreeHost, (void *ptr), (ptr))
SPY (cudaFreeAsync, (void *ptr, cudaStream_t stream), (ptr, stream))
SPY (cudaMemcpy, (void *dst, const void *src, size_t count, enum cudaMemcpyKind kind),
     (dst, src, count, kind))
SPY (cudaMemcpyAsync, (void *dst, const void *src, size_t count, enum cudaMemcpyKind kind,
                       cudaStream_t stream),
     (dst, src, count, kind, stream))
SPY (cudaMemsetAsync, (void *ptr, int value, size_t count, cudaStream_t stream),
     (ptr, value, count, stream))
SPY (cudaLaunchHostFunc, (cudaStream_t stream, cudaHostFn_t fn, void *data),
     (stream, fn, data))
SPY (cudaGetLastError, (void), ())
SPY (cudaPeekAtLastError, (void), ())

gboolean
ds_test_cuda_spy_works (void)
{
  int count;

  /* Calling through the runtime must be seen by the spy. */
  ds_test_cuda_spy_reset ();
  (void) cudaGetDeviceCount (&count);
  (void) cudaGetLastError ();
  return ds_test_cuda_spy_get_count () == 2;
}

/* Streams ----------------------------------------------------------------- */

cudaStream_t
ds_test_stream_new (void)
{
  cudaStream_t stream = NULL;

  DS_TEST_CUDA_CHECK (cudaStreamCreateWithFlags (&stream, cudaStreamNonBlocking));
  return stream;
}

void
ds_test_stream_free (cudaStream_t stream)
{
  DS_TEST_CUDA_CHECK (cudaStreamSynchronize (stream));
  DS_TEST_CUDA_CHECK (cudaStreamDestroy (stream));
}

typedef struct
{
  guint  ms;
  gint  *flag;
} HostFuncData;

static void CUDART_CB
sleep_then_set (void *user_data)
{
  HostFuncData *data = user_data;

  if (data->ms > 0)
    g_usleep (data->ms * G_TIME_SPAN_MILLISECOND);
  if (data->flag != NULL)
    g_atomic_int_set (data->flag, 1);
  g_free (data);
}

void
ds_test_stream_sleep (cudaStream_t  stream,
                      guint         ms,
                      gint         *done)
{
  HostFuncData *data = g_new0 (HostFuncData, 1);

  data->ms = ms;
  data->flag = done;
  DS_TEST_CUDA_CHECK (cudaLaunchHostFunc (stream, sleep_then_set, data));
}

void
ds_test_stream_set_flag (cudaStream_t  stream,
                         gint         *flag)
{
  ds_test_stream_sleep (stream, 0, flag);
}

/* Gates ------------------------------------------------------------------- */

#define GATE_SELF_OPEN_S 20

struct _DsTestGate
{
  GMutex    lock;
  GCond     cond;
  gboolean  open;
  gboolean  passed;
  gboolean  timed_out;
  gboolean  excused;      /* the case reported the time-out as a SKIP */
  gint      ref_count;    /* the test's and the host function's */
  guint     open_after_ms;
  GThread  *opener;
};

static void
gate_unref (DsTestGate *gate)
{
  if (!g_atomic_int_dec_and_test (&gate->ref_count))
    return;
  g_mutex_clear (&gate->lock);
  g_cond_clear (&gate->cond);
  g_free (gate);
}

static void CUDART_CB
gate_wait (void *user_data)
{
  DsTestGate *gate = user_data;
  gint64 end = g_get_monotonic_time () + GATE_SELF_OPEN_S * G_TIME_SPAN_SECOND;

  g_mutex_lock (&gate->lock);
  while (!gate->open)
    if (!g_cond_wait_until (&gate->cond, &gate->lock, end))
      {
        gate->timed_out = TRUE;
        break;
      }
  gate->passed = TRUE;
  g_cond_broadcast (&gate->cond);
  g_mutex_unlock (&gate->lock);
  gate_unref (gate);
}

DsTestGate *
ds_test_gate_new (cudaStream_t stream)
{
  DsTestGate *gate = g_new0 (DsTestGate, 1);

  g_mutex_init (&gate->lock);
  g_cond_init (&gate->cond);
  gate->ref_count = 2;
  DS_TEST_CUDA_CHECK (cudaLaunchHostFunc (stream, gate_wait, gate));

  return gate;
}

void
ds_test_gate_open (DsTestGate *gate)
{
  g_mutex_lock (&gate->lock);
  gate->open = TRUE;
  g_cond_broadcast (&gate->cond);
  g_mutex_unlock (&gate->lock);
}

static gpointer
gate_opener (gpointer user_data)
{
  DsTestGate *gate = user_data;

  g_usleep (gate->open_after_ms * G_TIME_SPAN_MILLISECOND);
  ds_test_gate_open (gate);

  return NULL;
}

void
ds_test_gate_open_later (DsTestGate *gate,
                         guint       ms)
{
  g_assert_null (gate->opener);
  gate->open_after_ms = ms;
  gate->opener = g_thread_new ("ds-test-gate", gate_opener, gate);
}

gboolean
ds_test_gate_passed (DsTestGate *gate)
{
  gboolean passed;

  g_mutex_lock (&gate->lock);
  passed = gate->passed;
  g_mutex_unlock (&gate->lock);

  return passed;
}

gboolean
ds_test_gate_timed_out (DsTestGate *gate)
{
  gboolean timed_out;

  g_mutex_lock (&gate->lock);
  timed_out = gate->timed_out;
  g_mutex_unlock (&gate->lock);

  return timed_out;
}

void
ds_test_gate_excuse (DsTestGate *gate)
{
  g_mutex_lock (&gate->lock);
  gate->excused = TRUE;
  g_mutex_unlock (&gate->lock);
}

void
ds_test_gate_free (DsTestGate *gate)
{
  gboolean timed_out;

  if (gate->opener != NULL)
    g_thread_join (g_steal_pointer (&gate->opener));
  ds_test_gate_open (gate);
  g_mutex_lock (&gate->lock);
  timed_out = gate->timed_out && !gate->excused;
  g_mutex_unlock (&gate->lock);
  gate_unref (gate);
  if (timed_out)
    g_error ("a stream gate stayed closed for %d s and opened itself: the "
             "test waited for a stream it had not let go", GATE_SELF_OPEN_S);
}

typedef struct
{
  DsTestGate *gate;
  guint       ms;
  gboolean    done;
  gboolean    forced;
} GateWatch;

static gpointer
gate_watchdog (gpointer user_data)
{
  GateWatch *watch = user_data;
  DsTestGate *gate = watch->gate;
  gint64 end = g_get_monotonic_time () + watch->ms * G_TIME_SPAN_MILLISECOND;

  g_mutex_lock (&gate->lock);
  while (!watch->done)
    if (!g_cond_wait_until (&gate->cond, &gate->lock, end))
      break;
  if (!watch->done && !gate->open)
    {
      watch->forced = TRUE;
      gate->open = TRUE;
      g_cond_broadcast (&gate->cond);
    }
  g_mutex_unlock (&gate->lock);

  return NULL;
}

gboolean
ds_test_gate_call (DsTestGate  *gate,
                   guint        ms,
                   void       (*func) (gpointer data),
                   gpointer     data)
{
  GateWatch watch = { gate, ms, FALSE, FALSE };
  GThread *thread = g_thread_new ("ds-test-gate-watchdog", gate_watchdog, &watch);

  func (data);
  g_mutex_lock (&gate->lock);
  watch.done = TRUE;
  g_cond_broadcast (&gate->cond);
  g_mutex_unlock (&gate->lock);
  g_thread_join (thread);

  return watch.forced;
}

#else /* !HAVE_CUDA */

gboolean
ds_test_cuda_spy_works (void)
{
  return FALSE;
}

#endif
