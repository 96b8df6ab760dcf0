/* ds-test-utils.h: what the test programs share
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "config.h"

#include <ds.h>

#if HAVE_CUDA
# include <cuda_runtime_api.h>
#endif

G_BEGIN_DECLS

/* g_test_init () plus what every ds test wants. */
void         ds_test_init                    (int          *argc,
                                              char       ***argv);

/* Whether a CUDA device is usable. Checked once per process (one
 * cudaGetDeviceCount). */
gboolean     ds_test_cuda_available          (void);
/* Why not, e.g. "no CUDA device: cudaErrorInsufficientDriver (CUDA driver
 * version is insufficient for CUDA runtime version)". */
const char  *ds_test_cuda_unavailable_reason (void);

/* Skips the current test, with the reason, when there is no usable CUDA
 * device; returns from the calling (void) test function. */
#define DS_TEST_REQUIRE_CUDA() \
  G_STMT_START { \
    if (!ds_test_cuda_available ()) \
      { \
        g_test_skip (ds_test_cuda_unavailable_reason ()); \
        return; \
      } \
  } G_STMT_END

/* Skips when there IS a usable CUDA device (for the cases that check what
 * happens without one). */
#define DS_TEST_REQUIRE_NO_CUDA() \
  G_STMT_START { \
    if (ds_test_cuda_available ()) \
      { \
        g_test_skip ("a CUDA device is usable here; this case checks the " \
                     "behaviour without one"); \
        return; \
      } \
  } G_STMT_END

/* Registers a case that needs a CUDA device. Built without CUDA support,
 * @func is not compiled: the case is registered all the same and skips,
 * saying why. */
#if HAVE_CUDA
# define ds_test_add_gpu_func(path, func) g_test_add_func ((path), (func))
# define ds_test_add_gpu_data_func(path, data, func) \
  g_test_add_data_func ((path), (data), (func))
#else
# define ds_test_add_gpu_func(path, func) g_test_add_func ((path), ds_test_skip_no_cuda)
# define ds_test_add_gpu_data_func(path, data, func) \
  g_test_add_func ((path), ds_test_skip_no_cuda)
#endif

/* What those cases run without CUDA support. */
void         ds_test_skip_no_cuda            (void);

/* The error GPU kinds fail with on a machine without a usable device. */
#if HAVE_CUDA
# define DS_TEST_NO_DEVICE_ERROR DS_ERROR_NO_DEVICE
#else
# define DS_TEST_NO_DEVICE_ERROR DS_ERROR_NOT_SUPPORTED
#endif

/* The CUDA call spy: the test programs interpose the CUDA runtime
 * functions that ds uses (device, stream, event, allocation and copy
 * calls, cudaGetLastError, cudaGetDriverEntryPoint*), count every call
 * made through them and forward it to the real runtime. Used to show that
 * host-order operations never call CUDA. Always 0 without CUDA support. */
void         ds_test_cuda_spy_reset          (void);
guint        ds_test_cuda_spy_get_count      (void);
/* The name of the last intercepted call since the last reset, or NULL. */
const char  *ds_test_cuda_spy_get_last       (void);
/* Whether the spy is active (it is not when the CUDA runtime symbols could
 * not be interposed). */
gboolean     ds_test_cuda_spy_works          (void);

#define ds_test_assert_no_cuda_calls() \
  G_STMT_START { \
    g_assert_cmpstr (ds_test_cuda_spy_get_last (), ==, NULL); \
    g_assert_cmpuint (ds_test_cuda_spy_get_count (), ==, 0); \
  } G_STMT_END

/* A stream handle for the tests that only store and compare orders:
 * without CUDA a made-up handle (never dereferenced: ds makes no CUDA call
 * for it there); with CUDA a real non-blocking stream, created on first use
 * and kept for the life of the process, since ds looks a real handle up
 * (its context and id). Distinct for each @index < 8. */
gpointer     ds_test_stream_handle           (guint         index);

/* Whether [a, a + a_size) and [b, b + b_size) overlap. */
gboolean     ds_test_ranges_overlap          (gconstpointer a,
                                              gsize         a_size,
                                              gconstpointer b,
                                              gsize         b_size);

#define ds_test_assert_aligned(ptr, alignment) \
  g_assert_cmpuint (((guintptr) (ptr)) % (alignment), ==, 0)

/* Fills [p, p + size) with a pattern made from @seed. */
void         ds_test_fill_pattern            (guint8       *p,
                                              gsize         size,
                                              guint         seed);
/* Checks the pattern; g_error () at the first byte that differs. */
void         ds_test_check_pattern           (const guint8 *p,
                                              gsize         size,
                                              guint         seed);

/* An allocation, for ds_test_assert_disjoint (). */
typedef struct
{
  guintptr start;
  gsize    size;
} DsTestRange;

/* Sorts @ranges (a GArray of DsTestRange) by start and asserts that no two
 * of them overlap. */
void         ds_test_assert_disjoint         (GArray       *ranges);

/* A "notify" handler that counts the notifications in the guint that
 * @user_data points to. */
void         ds_test_count_notify            (GObject      *object,
                                              GParamSpec   *pspec,
                                              gpointer      user_data);

/* A new raw (unpooled) resource of @kind: host, pinned, or device and
 * managed on the current device. */
DsMemoryResource *ds_test_raw_resource_new   (DsMemoryKind  kind);

/* Polls @cond (an expression) every millisecond for at most @timeout_ms;
 * evaluates to its last value. */
#define ds_test_wait_until(cond, timeout_ms) \
  ({ gint64 _end = g_get_monotonic_time () + (timeout_ms) * (gint64) 1000; \
     gboolean _ok; \
     while (!(_ok = !!(cond)) && g_get_monotonic_time () < _end) \
       g_usleep (1000); \
     _ok; })

#if HAVE_CUDA

#define DS_TEST_CUDA_CHECK(call) \
  G_STMT_START { \
    cudaError_t _r = (call); \
    if (_r != cudaSuccess) \
      g_error ("%s:%d: %s failed: %s (%s)", __FILE__, __LINE__, #call, \
               cudaGetErrorName (_r), cudaGetErrorString (_r)); \
  } G_STMT_END

/* A new non-blocking stream on the current device. */
cudaStream_t ds_test_stream_new              (void);
void         ds_test_stream_free             (cudaStream_t  stream);

/* Queues on @stream a host function that sleeps @ms milliseconds and then
 * sets *@done (atomically) to 1. The stream cannot go on before that. */
void         ds_test_stream_sleep            (cudaStream_t  stream,
                                              guint         ms,
                                              gint         *done);
/* Queues on @stream a host function that sets *@flag to 1. */
void         ds_test_stream_set_flag         (cudaStream_t  stream,
                                              gint         *flag);

/* A gate on a stream: work queued on @stream after the gate does not start
 * until the test opens it, however fast or slow the machine (or
 * compute-sanitizer) runs. A test that checks what must hold while a
 * stream is busy closes a gate on it instead of assuming that a sleep is
 * still running, and opens it once it has checked.
 *
 * The gate is a host function (cudaLaunchHostFunc) that blocks on a
 * condition. CUDA may run the host functions of different streams on one
 * thread, so while a gate is closed other host functions (another gate,
 * ds_test_stream_set_flag) may not run either; and the test must not
 * synchronise with the stream, the device or a call that does (cudaFree)
 * before the gate is open. A gate left closed opens itself after 20 s and
 * ds_test_gate_free () then fails the test, rather than hanging. */
typedef struct _DsTestGate DsTestGate;

DsTestGate  *ds_test_gate_new                (cudaStream_t  stream);
/* Lets the stream go on past the gate. */
void         ds_test_gate_open               (DsTestGate   *gate);
/* Opens the gate from another thread after @ms milliseconds: for a check
 * that the host blocks until the stream got past the gate. */
void         ds_test_gate_open_later         (DsTestGate   *gate,
                                              guint         ms);
/* Whether the stream has reached the gate and gone past it. */
gboolean     ds_test_gate_passed             (DsTestGate   *gate);
/* Opens the gate if it is not, joins the thread of open_later, asserts
 * that the gate did not open itself for want of an open (unless
 * DS_TEST_ASSERT_GATE_HELD () already skipped the case for it), frees it. */
void         ds_test_gate_free               (DsTestGate   *gate);
/* Whether the gate opened itself: the host waited for the gated stream
 * for GATE_SELF_OPEN_S seconds. */
gboolean     ds_test_gate_timed_out          (DsTestGate   *gate);
/* Marks a self-opened gate as explained, so that ds_test_gate_free ()
 * does not fail the case. */
void         ds_test_gate_excuse             (DsTestGate   *gate);

/* Asserts that the stream is still held at @gate (the calls made since it
 * closed did not make the host wait for that stream). A runtime that makes
 * the host wait for every stream -- compute-sanitizer's initcheck does, on
 * some copies and allocations -- opens the gate only by its time-out; the
 * case then cannot tell a wait in ds from one in the runtime and reports
 * SKIP with that reason (plain runs check it). */
#define DS_TEST_ASSERT_GATE_HELD(gate) \
  G_STMT_START { \
    if (ds_test_gate_timed_out (gate)) \
      { \
        ds_test_gate_excuse (gate); \
        g_test_skip ("the host waited for a gated stream until the gate opened " \
                     "itself: this CUDA runtime serializes streams with the host " \
                     "(as compute-sanitizer initcheck does); checked in plain runs"); \
      } \
    else \
      g_assert_false (ds_test_gate_passed (gate)); \
  } G_STMT_END
/* Calls @func (@data) with a watchdog: if it has not returned after @ms
 * milliseconds while @gate is closed, the watchdog opens the gate, so that
 * a call that waits for the gated stream can return, and TRUE comes back.
 * compute-sanitizer makes cudaStreamDestroy wait for the stream's work:
 * a test that must keep a destroyed stream busy learns here that it cannot
 * (and skips) instead of deadlocking or failing on timing. */
gboolean     ds_test_gate_call               (DsTestGate   *gate,
                                              guint         ms,
                                              void        (*func) (gpointer data),
                                              gpointer      data);

#endif

G_END_DECLS
