/* ds-stream-state.c: the registry of stream identities
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * One DsStreamState per stream identity (cudaStreamGetId (); for the
 * legacy default stream, the handle, device and context), shared by every
 * pool: a hash table, plus a per-thread cache of the last few that makes
 * the lookup of a release's stream free of locks. States nobody but the
 * registry holds are dropped once there are many; a driver context about
 * to be destroyed takes its states with it (forget_context). Their fences
 * are ds-fence.c's.
 */

#include "config.h"

#include "ds-fence-private.h"

/* Thread-local cache of stream states. */
#define N_TLS_STREAMS 4

static GMutex streams_lock;
static GHashTable *streams;        /* DsStreamState * -> itself (one ref) */
static guint streams_reap_at = 64;

static guint
stream_state_hash (gconstpointer p)
{
  const DsStreamState *ss = p;

  if (ss->stream_id != 0)
    return (guint) (ss->stream_id ^ (ss->stream_id >> 32));

  return g_direct_hash (ss->stream) ^ (guint) ss->device ^ g_direct_hash (ss->context);
}

static gboolean
stream_state_equal (gconstpointer a,
                    gconstpointer b)
{
  const DsStreamState *sa = a, *sb = b;

  if (sa->stream_id != 0 || sb->stream_id != 0)
    return sa->stream_id == sb->stream_id;

  return sa->stream == sb->stream && sa->device == sb->device &&
         sa->context == sb->context;
}


static void
stream_state_free (DsStreamState *ss)
{
  ds_stream_state_clear_fences (ss, FALSE);
  g_free (ss->fences);
  g_free (ss->spares);
  g_mutex_clear (&ss->lock);
  g_free (ss);
}

DsStreamState *
ds_stream_state_ref (DsStreamState *self)
{
  g_atomic_int_inc (&self->ref_count);
  return self;
}

void
ds_stream_state_unref (DsStreamState *self)
{
  if (self != NULL && g_atomic_int_dec_and_test (&self->ref_count))
    stream_state_free (self);
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
      DsStreamState *ss = key;

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
        ds_stream_state_unref (dead->pdata[i]);
      g_ptr_array_free (dead, TRUE);
    }
}

guint
ds_stream_state_count (void)
{
  guint n;

  g_mutex_lock (&streams_lock);
  if (streams != NULL)
    streams_reap_locked ();
  n = streams != NULL ? g_hash_table_size (streams) : 0;
  g_mutex_unlock (&streams_lock);

  return n;
}

void
ds_stream_state_forget_context (gpointer context)
{
  GPtrArray *doomed;
  GHashTableIter iter;
  gpointer key;

  if (context == NULL)
    return;

  doomed = g_ptr_array_new ();
  g_mutex_lock (&streams_lock);
  if (streams != NULL)
    {
      g_hash_table_iter_init (&iter, streams);
      while (g_hash_table_iter_next (&iter, &key, NULL))
        if (((DsStreamState *) key)->context == context)
          {
            /* The registry's reference moves to the array. */
            g_ptr_array_add (doomed, key);
            g_hash_table_iter_remove (&iter);
          }
    }
  g_mutex_unlock (&streams_lock);

  /* Everything queued in the context finishes first: then every release
   * on its streams, fenced or not, is complete. */
  if (doomed->len > 0)
    {
      DsStreamState *first = doomed->pdata[0];
      DsCudaScope scope;

      if (ds_cuda_scope_enter (&scope, first->device, context, NULL))
        {
          (void) ds_cuda_device_synchronize (NULL);
          ds_cuda_scope_leave (&scope);
        }
    }

  for (guint i = 0; i < doomed->len; i++)
    {
      DsStreamState *ss = doomed->pdata[i];

      g_mutex_lock (&ss->lock);
      ds_stream_state_clear_fences (ss, FALSE);
      __atomic_store_n (&ss->completed, G_MAXUINT64 - 1, __ATOMIC_RELEASE);
      __atomic_store_n (&ss->fenced, G_MAXUINT64 - 1, __ATOMIC_RELEASE);
      /* No CUDA call may use the context through it again. */
      ss->context = NULL;
      ss->device = -1;
      g_mutex_unlock (&ss->lock);
      ds_stream_state_unref (ss);
    }
  g_ptr_array_free (doomed, TRUE);
}

typedef struct
{
  DsStreamState *entries[N_TLS_STREAMS];
  guint8         lent[N_TLS_STREAMS];   /* loans open on this thread */
  guint          next;
} TlsStreams;

/* The calling thread's cache, read at every fence (the first block of a
 * stream in a release): a __thread copy of the GPrivate's value, which
 * g_private_get () reaches through pthread_getspecific (): ~40
 * instructions per release with a fence, a sixth of the fence's own
 * (callgrind, bench-lifecycle's four-kind unit over the counting fake
 * runtime). The GPrivate stays for its destructor, which frees the cache
 * at thread exit and clears the copy (it runs on the exiting thread), so
 * that a later fence there (another key's destructor) makes a new one. */
static __thread TlsStreams *tls_streams_here;

static void
tls_streams_free (gpointer data)
{
  TlsStreams *tls = data;
  guint i;

  if (tls_streams_here == tls)
    tls_streams_here = NULL;
  for (i = 0; i < N_TLS_STREAMS; i++)
    ds_stream_state_unref (tls->entries[i]);
  g_free (tls);
}

static GPrivate tls_streams = G_PRIVATE_INIT (tls_streams_free);

/* Lends @tls's entry @slot. */
static inline DsStreamState *
lend (TlsStreams   *tls,
      guint         slot,
      DsStreamLoan *loan)
{
  loan->tls = tls;
  if (G_UNLIKELY (tls->lent[slot] == G_MAXUINT8))
    {
      loan->slot = -1;
      return ds_stream_state_ref (tls->entries[slot]);
    }
  tls->lent[slot]++;
  loan->slot = (gint) slot;
  return tls->entries[slot];
}

DsStreamState *
ds_stream_state_borrow (const DsAccessOrder *order,
                        DsStreamLoan        *loan)
{
  TlsStreams *tls = tls_streams_here;
  DsStreamState key, *ss;
  guint i, slot = N_TLS_STREAMS;

  if (G_LIKELY (tls != NULL))
    {
      for (i = 0; i < N_TLS_STREAMS; i++)
        if (tls->entries[i] != NULL && ds_stream_state_matches (tls->entries[i], order))
          return lend (tls, i, loan);
    }
  else
    {
      tls = g_new0 (TlsStreams, 1);
      g_private_set (&tls_streams, tls);
      tls_streams_here = tls;
    }

  memset (&key, 0, sizeof key);
  key.stream_id = ds_access_order_get_stream_id (order);
  key.stream = order->stream;
  key.device = order->device;
  key.context = ds_access_order_get_context (order);

  /* The entry to replace: the next one not lent. */
  for (i = 0; i < N_TLS_STREAMS && slot == N_TLS_STREAMS; i++)
    if (tls->lent[(tls->next + i) % N_TLS_STREAMS] == 0)
      slot = (tls->next + i) % N_TLS_STREAMS;

  g_mutex_lock (&streams_lock);
  if (streams == NULL)
    streams = g_hash_table_new (stream_state_hash, stream_state_equal);

  ss = g_hash_table_lookup (streams, &key);
  if (ss == NULL)
    {
      if (g_hash_table_size (streams) >= streams_reap_at)
        streams_reap_locked ();

      ss = g_new0 (DsStreamState, 1);
      ss->ref_count = 1;
      ss->stream_id = key.stream_id;
      ss->stream = key.stream;
      ss->device = key.device;
      ss->context = key.context;
      g_mutex_init (&ss->lock);
      g_hash_table_add (streams, ss);
    }
  /* One for the thread's cache, or for the caller when every entry of
   * the cache is lent. */
  g_atomic_int_inc (&ss->ref_count);
  g_mutex_unlock (&streams_lock);

  if (G_UNLIKELY (slot == N_TLS_STREAMS))
    {
      loan->tls = tls;
      loan->slot = -1;
      return ss;
    }

  ds_stream_state_unref (tls->entries[slot]);
  tls->entries[slot] = ss;
  tls->next = (slot + 1) % N_TLS_STREAMS;

  return lend (tls, slot, loan);
}

void
ds_stream_state_end_loan (DsStreamState *self,
                          DsStreamLoan  *loan)
{
  if (loan->slot < 0)
    {
      ds_stream_state_unref (self);
      return;
    }

  g_assert (((TlsStreams *) loan->tls)->entries[loan->slot] == self);
  ((TlsStreams *) loan->tls)->lent[loan->slot]--;
}
