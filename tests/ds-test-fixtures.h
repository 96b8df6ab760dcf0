/* ds-test-fixtures.h: the GTest fixtures the test programs share
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Each fixture is set up and torn down by g_test_add (); its user_data is
 * DS_TEST_FIXTURE_DATA (kind, flags) (NULL: host kind, no flags).
 *
 * - DsTestScratchpadFixture: a recording upstream resource of every kind
 *   (ds-test-resource.h) and a scratchpad on them, in host order. Teardown
 *   finalizes the scratchpad (unless the case did), asserts that every
 *   upstream got every block back exactly once, and finalizes them.
 * - DsTestPoolFixture: a recording upstream of one kind and a pool on it;
 *   with DS_TEST_FIXTURE_STREAM and a usable CUDA device, also a new stream
 *   and its order. Teardown frees the stream, finalizes the pool (unless
 *   the case did) and asserts that the upstream got every block back.
 * - DsTestArenaFixture: an arena (ds-arena-private.h) and two recording
 *   device-kind upstreams for it, one plain and one stream-ordered; its
 *   user_data is the initial block size (0: 64 KiB).
 */

#pragma once

#include "ds-arena-private.h"
#include "ds-clock-private.h"
#include "ds-test-resource.h"
#include "ds-test-utils.h"

G_BEGIN_DECLS

typedef enum
{
  /* Stream-ordered recording upstreams (scratchpad and pool fixtures). */
  DS_TEST_FIXTURE_STREAM_ORDERED = 1 << 8,
  /* A new CUDA stream and its order, when a device is usable (pool). */
  DS_TEST_FIXTURE_STREAM         = 1 << 9,
} DsTestFixtureFlags;

#define DS_TEST_FIXTURE_DATA(kind, flags) \
  GUINT_TO_POINTER ((guint) (kind) | (guint) (flags))

/* The scratchpad fixture ---------------------------------------------------- */

typedef struct
{
  DsTestResource *res[DS_N_MEMORY_KINDS];
  DsAccessOrder  *host;
  DsScratchpad   *sp;
} DsTestScratchpadFixture;

void      ds_test_scratchpad_fixture_setup    (DsTestScratchpadFixture *f,
                                               gconstpointer            user_data);
void      ds_test_scratchpad_fixture_teardown (DsTestScratchpadFixture *f,
                                               gconstpointer            user_data);

/* Adds a case on the scratchpad fixture; @flags: DsTestFixtureFlags. */
#define ds_test_add_scratchpad(path, flags, func) \
  g_test_add ((path), DsTestScratchpadFixture, DS_TEST_FIXTURE_DATA (0, (flags)), \
              ds_test_scratchpad_fixture_setup, (func), \
              ds_test_scratchpad_fixture_teardown)

/* Calls made to the upstream resources of every kind. */
guint     ds_test_scratchpad_total_calls      (DsTestScratchpadFixture *f);
/* Allocates from the fixture's scratchpad and asserts that it worked: no
 * error, aligned (0 = 16) and inside a live block of the kind's upstream. */
gpointer  ds_test_scratchpad_alloc_ok         (DsTestScratchpadFixture *f,
                                               DsMemoryKind             kind,
                                               gsize                    size,
                                               gsize                    alignment);

/* What the scratchpad and the upstream report for a kind. */
typedef struct
{
  guint64 reserved, allocated;
  guint   n_blocks;
  guint   n_calls;
} DsTestKindState;

DsTestKindState ds_test_scratchpad_kind_state (DsTestScratchpadFixture *f,
                                               DsMemoryKind             kind);

#define ds_test_assert_kind_state_equal(a, b) \
  G_STMT_START { \
    g_assert_cmpuint ((a).reserved, ==, (b).reserved); \
    g_assert_cmpuint ((a).allocated, ==, (b).allocated); \
    g_assert_cmpuint ((a).n_blocks, ==, (b).n_blocks); \
  } G_STMT_END

/* The pool fixture ----------------------------------------------------------- */

typedef struct
{
  DsTestResource   *up;
  DsMemoryResource *pool;
  gpointer          stream;   /* a cudaStream_t, or NULL */
  DsAccessOrder     order;    /* the stream's; host order without one */
} DsTestPoolFixture;

void      ds_test_pool_fixture_setup          (DsTestPoolFixture *f,
                                               gconstpointer      user_data);
void      ds_test_pool_fixture_teardown       (DsTestPoolFixture *f,
                                               gconstpointer      user_data);

/* Adds a case on the pool fixture: an upstream of @kind, @flags. */
#define ds_test_add_pool(path, kind, flags, func) \
  g_test_add ((path), DsTestPoolFixture, DS_TEST_FIXTURE_DATA ((kind), (flags)), \
              ds_test_pool_fixture_setup, (func), ds_test_pool_fixture_teardown)

/* The same for a case that needs a CUDA device (see ds_test_add_gpu_func). */
#if HAVE_CUDA
# define ds_test_add_gpu_pool(path, kind, flags, func) \
  ds_test_add_pool ((path), (kind), (flags), (func))
#else
# define ds_test_add_gpu_pool(path, kind, flags, func) ds_test_add_gpu_func ((path), (func))
#endif

DsPoolStats ds_test_pool_stats                (DsMemoryResource *pool);
/* The pool's CUDA calls, as its statistics count them. */
guint64   ds_test_pool_cuda_calls             (const DsPoolStats *s);
/* The pool holds at most twice its peak demand, and caches what it holds. */
void      ds_test_pool_assert_within_bound    (DsMemoryResource *pool);
/* Back to the fence checks the stream cases assume unless they set
 * others: every release checked (ds_fence_set_check_every_for_testing ()). */
void      ds_test_pool_reset_policies         (void);

/* Gives a block back to @resource through @batch, as an arena does; FALSE
 * with @error set if it was held back. */
gboolean  ds_test_batch_give_back             (DsFenceBatch         *batch,
                                               DsMemoryResource     *resource,
                                               gpointer              ptr,
                                               gsize                 size,
                                               gsize                 alignment,
                                               const DsAccessOrder  *order,
                                               GError              **error);

/* The arena fixture ---------------------------------------------------------- */

typedef struct
{
  DsTestResource     *sync;
  DsTestResource     *async;
  DsArena             arena;
  DsBumpWindow       window;     /* the arena's bump window */
} DsTestArenaFixture;

void      ds_test_arena_fixture_setup         (DsTestArenaFixture *f,
                                               gconstpointer       user_data);
void      ds_test_arena_fixture_teardown      (DsTestArenaFixture *f,
                                               gconstpointer       user_data);

/* Adds a case on the arena fixture, whose first block is @initial bytes. */
#define ds_test_add_arena(path, initial, func) \
  g_test_add ((path), DsTestArenaFixture, GSIZE_TO_POINTER (initial), \
              ds_test_arena_fixture_setup, (func), ds_test_arena_fixture_teardown)

/* The same for a case that needs a CUDA device (see ds_test_add_gpu_func). */
#if HAVE_CUDA
# define ds_test_add_gpu_arena(path, initial, func) \
  ds_test_add_arena ((path), (initial), (func))
#else
# define ds_test_add_gpu_arena(path, initial, func) ds_test_add_gpu_func ((path), (func))
#endif

/* Binds the arena to @upstream if it is bound to another resource. */
void      ds_test_arena_bind                  (DsTestArenaFixture   *f,
                                               DsMemoryResource     *upstream);
/* Releases the arena the way the scratchpad does: through a release batch,
 * which a resource that is not a pool must not notice. */
gboolean  ds_test_arena_release               (DsTestArenaFixture   *f,
                                               DsMemoryResource     *upstream,
                                               const DsAccessOrder  *order,
                                               GError              **error);
/* Bumps, or grows the arena from @upstream in host order; asserts that it
 * worked and that the result is aligned. */
gpointer  ds_test_arena_grow_or_bump          (DsTestArenaFixture   *f,
                                               DsMemoryResource     *upstream,
                                               gsize                 size,
                                               gsize                 alignment);

G_END_DECLS
