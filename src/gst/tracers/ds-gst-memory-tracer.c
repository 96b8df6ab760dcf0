/* ds-gst-memory-tracer.c: the dsmemory GStreamer tracer
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * GST_TRACERS="dsmemory" GST_DEBUG="GST_TRACER:7" gst-launch-1.0 ...
 *
 * Which element took the ds scratch memory of a pipeline, and what the
 * pools do, in GStreamer's tracer log. The tracer watches the running
 * DsRecorder (DS_RECORD's, or one it starts itself) and keeps, for every
 * thread, the element (and pad) whose code runs on it: the element whose
 * pad a buffer, buffer list or event was pushed to (pad-push-pre,
 * pad-push-list-pre, pad-push-event-pre), whose pad is pulled from
 * (pad-pull-range-pre) or queried (pad-query-pre), the element changing
 * state (element-change-state-pre), until the matching -post hook; on a
 * thread outside all of those (a source's loop between two pushes), the
 * element that pushed last from it. A scratchpad's block is attributed to
 * that element when it is taken; the scratchpad's releases, on whatever
 * thread (a buffer's meta may die downstream), go to the same element.
 *
 * It logs three records:
 *
 *   dsmemory-scratch  a block taken or blocks given back by a scratchpad:
 *                     the element and pad, the scratchpad, the kind, the
 *                     event (block, release), its bytes and what the
 *                     element's scratchpads hold of that kind after it
 *   dsmemory-pool     a pool sample of the recorder (hits and frees
 *                     coalesced at its interval): the pool, kind, device,
 *                     event, count, bytes, held, in-use, pending, peak
 *   dsmemory-mark     a mark made with ds_recorder_mark ()
 *
 * The timestamps (ts) are GStreamer's (gst_util_get_timestamp ()), so
 * the records line up with those of the other tracers.
 */

#include "config.h"

#include <ds-recorder.h>

#include "ds-gst-memory-tracer.h"

GST_DEBUG_CATEGORY_STATIC (ds_gst_memory_tracer_debug);
#define GST_CAT_DEFAULT ds_gst_memory_tracer_debug

/* The recorder the tracer starts when none runs: it only needs to run. */
#define OWN_RECORDER_CAPACITY 1024

/* Whose code runs: the element of @from's peer, or @element. The hooks
 * only take a reference to @from: GStreamer may call them with @from's
 * lock held (1.26 does for sticky events), so its peer and that peer's
 * element are looked up when a scratchpad takes a block, once. */
typedef struct
{
  GstPad     *from;        /* NULL: @element is known */
  GstElement *element;     /* NULL: none, or not looked up yet */
  GstPad     *pad;         /* NULL: none, or not looked up yet */
  gboolean    looked_up;
} Context;

typedef struct
{
  GArray     *stack;          /* of Context */
  GstPad     *origin;         /* the pad this thread pushed from last */
  GstElement *origin_element; /* its element, once looked up */
} ThreadContext;

/* What one scratchpad holds, and the element it is attributed to. */
typedef struct
{
  char    *element_id;
  char    *element;
  char    *pad;
  guint64  held[DS_N_MEMORY_KINDS];
} Scratch;

typedef struct
{
  guint64 held[DS_N_MEMORY_KINDS];
} ElementHeld;

struct _DsGstMemoryTracer
{
  GstTracer   parent_instance;

  DsRecorder *recorder;
  gboolean    own_recorder;
  guint       watch;

  GMutex      lock;
  GHashTable *scratchpads;   /* guint64 * id -> Scratch * */
  GHashTable *elements;      /* element id -> ElementHeld * */
};

G_DEFINE_FINAL_TYPE_WITH_CODE (DsGstMemoryTracer, ds_gst_memory_tracer, GST_TYPE_TRACER,
                               GST_DEBUG_CATEGORY_INIT (ds_gst_memory_tracer_debug, "dsmemory", 0,
                                                        "dsmemory tracer"))

static GstTracerRecord *tr_scratch;
static GstTracerRecord *tr_pool;
static GstTracerRecord *tr_mark;

static const char * const kind_names[DS_N_MEMORY_KINDS] = { "host", "pinned", "device", "managed" };

/* Thread contexts ----------------------------------------------------------------- */

static void
context_clear (Context *c)
{
  gst_clear_object (&c->from);
  gst_clear_object (&c->element);
  gst_clear_object (&c->pad);
}

static void
thread_context_free (gpointer data)
{
  ThreadContext *tc = data;

  g_array_free (tc->stack, TRUE);
  gst_clear_object (&tc->origin);
  gst_clear_object (&tc->origin_element);
  g_free (tc);
}

static GPrivate thread_context = G_PRIVATE_INIT (thread_context_free);

static ThreadContext *
get_thread_context (void)
{
  ThreadContext *tc = g_private_get (&thread_context);

  if (tc == NULL)
    {
      tc = g_new0 (ThreadContext, 1);
      tc->stack = g_array_new (FALSE, FALSE, sizeof (Context));
      g_array_set_clear_func (tc->stack, (GDestroyNotify) context_clear);
      g_private_set (&thread_context, tc);
    }

  return tc;
}

/* The element that @pad belongs to (through a ghost pad's proxy, the
 * bin); a reference, or NULL. */
static GstElement *
pad_element (GstPad *pad)
{
  GstObject *parent;

  if (pad == NULL)
    return NULL;

  parent = gst_object_get_parent (GST_OBJECT (pad));
  if (parent != NULL && GST_IS_PAD (parent))
    {
      GstObject *grand = gst_object_get_parent (parent);

      gst_object_unref (parent);
      parent = grand;
    }
  if (parent != NULL && !GST_IS_ELEMENT (parent))
    gst_clear_object (&parent);

  return (GstElement *) parent;
}

/* The element of @pad's peer runs on this thread now. */
static void
enter_peer_of (GstPad *pad)
{
  ThreadContext *tc = get_thread_context ();
  Context c = { gst_object_ref (pad), NULL, NULL, FALSE };

  g_array_append_val (tc->stack, c);
}

static void
enter_element (GstElement *element)
{
  ThreadContext *tc = get_thread_context ();
  Context c = { NULL, gst_object_ref (element), NULL, TRUE };

  g_array_append_val (tc->stack, c);
}

static void
leave (void)
{
  ThreadContext *tc = get_thread_context ();

  if (tc->stack->len > 0)
    g_array_remove_index (tc->stack, tc->stack->len - 1);
}

/* @pad pushes: its peer's element runs; remember the pusher for the
 * thread's code outside any push. */
static void
enter_push (GstPad *pad)
{
  ThreadContext *tc = get_thread_context ();

  if (tc->stack->len == 0 && tc->origin != pad)
    {
      gst_object_replace ((GstObject **) &tc->origin, GST_OBJECT (pad));
      gst_clear_object (&tc->origin_element);
    }
  enter_peer_of (pad);
}

/* Looks up whose code runs on this thread, where the hooks left it to
 * later; called outside the tracer's lock, when a scratchpad takes a
 * block, on a thread that runs that element's code and so holds no lock
 * of the pad it was pushed from. */
static void
look_up_here (void)
{
  ThreadContext *tc = get_thread_context ();
  Context *top = NULL;

  if (tc->stack->len > 0)
    {
      top = &g_array_index (tc->stack, Context, tc->stack->len - 1);
      if (!top->looked_up)
        {
          top->pad = gst_pad_get_peer (top->from);
          top->element = pad_element (top->pad);
          top->looked_up = TRUE;
        }
    }
  if ((top == NULL || top->element == NULL) && tc->origin != NULL && tc->origin_element == NULL)
    tc->origin_element = pad_element (tc->origin);
}

static void
do_push_pre (GObject      *self,
             GstClockTime  ts,
             GstPad       *pad,
             gpointer      buffer)
{
  enter_push (pad);
}

static void
do_push_post (GObject       *self,
              GstClockTime   ts,
              GstPad        *pad,
              GstFlowReturn  res)
{
  leave ();
}

static void
do_push_event_pre (GObject      *self,
                   GstClockTime  ts,
                   GstPad       *pad,
                   GstEvent     *event)
{
  enter_push (pad);
}

static void
do_push_event_post (GObject      *self,
                    GstClockTime  ts,
                    GstPad       *pad,
                    gboolean      res)
{
  leave ();
}

static void
do_pull_range_pre (GObject      *self,
                   GstClockTime  ts,
                   GstPad       *pad,
                   guint64       offset,
                   guint         size)
{
  enter_peer_of (pad);
}

static void
do_pull_range_post (GObject       *self,
                    GstClockTime   ts,
                    GstPad        *pad,
                    GstBuffer     *buffer,
                    GstFlowReturn  res)
{
  leave ();
}

static void
do_query_pre (GObject      *self,
              GstClockTime  ts,
              GstPad       *pad,
              GstQuery     *query)
{
  enter_peer_of (pad);
}

static void
do_query_post (GObject      *self,
               GstClockTime  ts,
               GstPad       *pad,
               GstQuery     *query,
               gboolean      res)
{
  leave ();
}

static void
do_change_state_pre (GObject        *self,
                     GstClockTime    ts,
                     GstElement     *element,
                     GstStateChange  transition)
{
  enter_element (element);
}

static void
do_change_state_post (GObject              *self,
                      GstClockTime          ts,
                      GstElement           *element,
                      GstStateChange        transition,
                      GstStateChangeReturn  result)
{
  leave ();
}

/* Attribution and logging --------------------------------------------------------- */

static void
scratch_free (gpointer data)
{
  Scratch *sc = data;

  g_free (sc->element_id);
  g_free (sc->element);
  g_free (sc->pad);
  g_free (sc);
}

/* A scratchpad taking its first block here: whose code runs now, as
 * look_up_here () found it. The names are read as GStreamer's debug log
 * reads them, without the objects' locks, which the running code may
 * hold. */
static Scratch *
scratch_new_here (void)
{
  ThreadContext *tc = get_thread_context ();
  Scratch *sc = g_new0 (Scratch, 1);
  GstElement *element = NULL;
  GstPad *pad = NULL;

  if (tc->stack->len > 0)
    {
      Context *top = &g_array_index (tc->stack, Context, tc->stack->len - 1);

      element = top->element;
      pad = top->pad;
    }
  if (element == NULL)
    element = tc->origin_element;

  sc->element_id = element != NULL ? g_strdup_printf ("%p", (void *) element) : g_strdup ("none");
  sc->element = g_strdup (element != NULL ? GST_STR_NULL (GST_OBJECT_NAME (element)) : "none");
  sc->pad = g_strdup (pad != NULL ? GST_STR_NULL (GST_OBJECT_NAME (pad)) : "none");

  return sc;
}

static gboolean
all_zero (const guint64 *held)
{
  for (guint k = 0; k < DS_N_MEMORY_KINDS; k++)
    if (held[k] != 0)
      return FALSE;
  return TRUE;
}

static void
on_scratchpad (DsGstMemoryTracer      *self,
               const DsRecorderSample *s)
{
  gboolean block = s->event == DS_RECORDER_EVENT_BLOCK;
  guint kind = (guint) s->kind % DS_N_MEMORY_KINDS;
  ElementHeld *element;
  Scratch *sc;
  guint64 bytes = s->bytes;

  if (!block && s->event != DS_RECORDER_EVENT_RELEASE)
    return;

  if (block)
    look_up_here ();
  g_mutex_lock (&self->lock);
  sc = g_hash_table_lookup (self->scratchpads, &s->id);
  if (sc == NULL)
    {
      /* Released blocks taken before the tracer watched: not ours. */
      if (!block)
        {
          g_mutex_unlock (&self->lock);
          return;
        }
      sc = scratch_new_here ();
      g_hash_table_insert (self->scratchpads, g_memdup2 (&s->id, sizeof s->id), sc);
    }
  element = g_hash_table_lookup (self->elements, sc->element_id);
  if (element == NULL)
    {
      element = g_new0 (ElementHeld, 1);
      g_hash_table_insert (self->elements, g_strdup (sc->element_id), element);
    }

  if (block)
    {
      sc->held[kind] += bytes;
      element->held[kind] += bytes;
    }
  else
    {
      bytes = MIN (bytes, sc->held[kind]);
      sc->held[kind] -= bytes;
      element->held[kind] -= bytes;
    }

  gst_tracer_record_log (tr_scratch, gst_util_get_timestamp (),
                         GPOINTER_TO_UINT (g_thread_self ()),
                         sc->element_id, sc->element, sc->pad, s->id, kind_names[kind],
                         block ? "block" : "release", bytes, element->held[kind], s->pool);

  /* What holds nothing is forgotten: a scratchpad per buffer leaves no
   * trace, and a scratchpad that takes blocks again is attributed again. */
  if (all_zero (element->held))
    g_hash_table_remove (self->elements, sc->element_id);
  if (all_zero (sc->held))
    g_hash_table_remove (self->scratchpads, &s->id);
  g_mutex_unlock (&self->lock);
}

static const char *
event_nick (DsRecorderEvent event)
{
  GEnumValue *value = g_enum_get_value (g_type_class_peek (DS_TYPE_RECORDER_EVENT), (gint) event);

  return value != NULL ? value->value_nick : "unknown";
}

/* A mark's label as one word of a GstStructure field (the tracer log's
 * strings are not quoted). */
static char *
label_word (const char *label)
{
  char *word = g_strdup (label != NULL && *label != '\0' ? label : "mark");

  for (char *c = word; *c != '\0'; c++)
    if (!g_ascii_isalnum (*c) && *c != '-' && *c != '_' && *c != '.' && *c != ':')
      *c = '_';
  return word;
}

static void
watch_cb (DsRecorder             *recorder,
          const DsRecorderSample *s,
          gpointer                user_data)
{
  DsGstMemoryTracer *self = user_data;

  switch (s->source)
    {
    case DS_RECORDER_SOURCE_SCRATCHPAD:
      on_scratchpad (self, s);
      break;

    case DS_RECORDER_SOURCE_POOL:
      gst_tracer_record_log (tr_pool, gst_util_get_timestamp (), s->id,
                             kind_names[(guint) s->kind % DS_N_MEMORY_KINDS], s->device,
                             event_nick (s->event), s->count, s->bytes, s->held, s->in_use,
                             s->pending, s->peak, s->label != NULL ? s->label : "none");
      break;

    case DS_RECORDER_SOURCE_RECORDER:
      if (s->event == DS_RECORDER_EVENT_MARK)
        {
          g_autofree char *word = label_word (s->label);

          gst_tracer_record_log (tr_mark, gst_util_get_timestamp (), word);
        }
      break;

    case DS_RECORDER_SOURCE_STREAM:
    default:
      break;
    }
}

/* GObject ------------------------------------------------------------------------- */

static void
ds_gst_memory_tracer_constructed (GObject *object)
{
  DsGstMemoryTracer *self = DS_GST_MEMORY_TRACER (object);
  GstTracer *tracer = GST_TRACER (object);

  G_OBJECT_CLASS (ds_gst_memory_tracer_parent_class)->constructed (object);

  /* The enum class stays for event_nick (). */
  g_type_class_ref (DS_TYPE_RECORDER_EVENT);

  self->recorder = ds_recorder_dup_running ();
  if (self->recorder == NULL)
    {
      g_autoptr(GError) error = NULL;

      self->recorder = ds_recorder_new (OWN_RECORDER_CAPACITY);
      if (ds_recorder_start (self->recorder, &error))
        {
          self->own_recorder = TRUE;
        }
      else
        {
          GST_WARNING_OBJECT (self, "no ds recorder: %s", error->message);
          g_clear_object (&self->recorder);
        }
    }
  if (self->recorder == NULL)
    return;

  self->watch = ds_recorder_add_watch (self->recorder, watch_cb, self, NULL);

  gst_tracing_register_hook (tracer, "pad-push-pre", G_CALLBACK (do_push_pre));
  gst_tracing_register_hook (tracer, "pad-push-post", G_CALLBACK (do_push_post));
  gst_tracing_register_hook (tracer, "pad-push-list-pre", G_CALLBACK (do_push_pre));
  gst_tracing_register_hook (tracer, "pad-push-list-post", G_CALLBACK (do_push_post));
  gst_tracing_register_hook (tracer, "pad-push-event-pre", G_CALLBACK (do_push_event_pre));
  gst_tracing_register_hook (tracer, "pad-push-event-post", G_CALLBACK (do_push_event_post));
  gst_tracing_register_hook (tracer, "pad-pull-range-pre", G_CALLBACK (do_pull_range_pre));
  gst_tracing_register_hook (tracer, "pad-pull-range-post", G_CALLBACK (do_pull_range_post));
  gst_tracing_register_hook (tracer, "pad-query-pre", G_CALLBACK (do_query_pre));
  gst_tracing_register_hook (tracer, "pad-query-post", G_CALLBACK (do_query_post));
  gst_tracing_register_hook (tracer, "element-change-state-pre", G_CALLBACK (do_change_state_pre));
  gst_tracing_register_hook (tracer, "element-change-state-post", G_CALLBACK (do_change_state_post));
}

static void
ds_gst_memory_tracer_finalize (GObject *object)
{
  DsGstMemoryTracer *self = DS_GST_MEMORY_TRACER (object);

  if (self->recorder != NULL)
    {
      ds_recorder_remove_watch (self->recorder, self->watch);
      if (self->own_recorder)
        ds_recorder_stop (self->recorder);
      g_clear_object (&self->recorder);
    }
  g_hash_table_destroy (self->scratchpads);
  g_hash_table_destroy (self->elements);
  g_mutex_clear (&self->lock);

  G_OBJECT_CLASS (ds_gst_memory_tracer_parent_class)->finalize (object);
}

static GstStructure *
scope (GType               type,
       GstTracerValueScope related_to)
{
  return gst_structure_new ("scope",
                            "type", G_TYPE_GTYPE, type,
                            "related-to", GST_TYPE_TRACER_VALUE_SCOPE, related_to,
                            NULL);
}

static GstStructure *
value (GType       type,
       const char *description)
{
  return gst_structure_new ("value",
                            "type", G_TYPE_GTYPE, type,
                            "description", G_TYPE_STRING, description,
                            NULL);
}

static void
ds_gst_memory_tracer_class_init (DsGstMemoryTracerClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->constructed = ds_gst_memory_tracer_constructed;
  object_class->finalize = ds_gst_memory_tracer_finalize;

  tr_scratch = gst_tracer_record_new ("dsmemory-scratch.class",
      "ts", GST_TYPE_STRUCTURE, value (G_TYPE_UINT64, "when it happened (ns)"),
      "thread-id", GST_TYPE_STRUCTURE, scope (G_TYPE_UINT, GST_TRACER_VALUE_SCOPE_THREAD),
      "element-id", GST_TYPE_STRUCTURE, scope (G_TYPE_STRING, GST_TRACER_VALUE_SCOPE_ELEMENT),
      "element", GST_TYPE_STRUCTURE, scope (G_TYPE_STRING, GST_TRACER_VALUE_SCOPE_ELEMENT),
      "pad", GST_TYPE_STRUCTURE, scope (G_TYPE_STRING, GST_TRACER_VALUE_SCOPE_PAD),
      "scratchpad", GST_TYPE_STRUCTURE, value (G_TYPE_UINT64, "the scratchpad's number in the recording"),
      "kind", GST_TYPE_STRUCTURE, value (G_TYPE_STRING, "the memory kind"),
      "event", GST_TYPE_STRUCTURE, value (G_TYPE_STRING, "block (taken) or release (given back)"),
      "bytes", GST_TYPE_STRUCTURE, value (G_TYPE_UINT64, "the bytes taken or given back"),
      "held", GST_TYPE_STRUCTURE, value (G_TYPE_UINT64,
                                         "the bytes of this kind the element's scratchpads hold after it"),
      "pool", GST_TYPE_STRUCTURE, value (G_TYPE_UINT64, "the number of the pool the blocks come from (0: none)"),
      NULL);
  tr_pool = gst_tracer_record_new ("dsmemory-pool.class",
      "ts", GST_TYPE_STRUCTURE, value (G_TYPE_UINT64, "when it happened (ns)"),
      "pool", GST_TYPE_STRUCTURE, value (G_TYPE_UINT64, "the pool's number in the recording"),
      "kind", GST_TYPE_STRUCTURE, value (G_TYPE_STRING, "the memory kind"),
      "device", GST_TYPE_STRUCTURE, value (G_TYPE_INT, "the CUDA device, -1 for none"),
      "event", GST_TYPE_STRUCTURE, value (G_TYPE_STRING, "what happened (DsRecorderEvent's nick)"),
      "count", GST_TYPE_STRUCTURE, value (G_TYPE_UINT, "the events this record stands for"),
      "bytes", GST_TYPE_STRUCTURE, value (G_TYPE_UINT64, "the bytes they moved"),
      "held", GST_TYPE_STRUCTURE, value (G_TYPE_UINT64, "bytes held from upstream after it"),
      "in-use", GST_TYPE_STRUCTURE, value (G_TYPE_UINT64, "bytes handed out after it"),
      "pending", GST_TYPE_STRUCTURE, value (G_TYPE_UINT64, "bytes waiting for stream work after it"),
      "peak", GST_TYPE_STRUCTURE, value (G_TYPE_UINT64, "the pool's peak demand"),
      "label", GST_TYPE_STRUCTURE, value (G_TYPE_STRING, "default for a default pool, else none"),
      NULL);
  tr_mark = gst_tracer_record_new ("dsmemory-mark.class",
      "ts", GST_TYPE_STRUCTURE, value (G_TYPE_UINT64, "when it happened (ns)"),
      "label", GST_TYPE_STRUCTURE, value (G_TYPE_STRING, "the mark's label"),
      NULL);
  GST_OBJECT_FLAG_SET (tr_scratch, GST_OBJECT_FLAG_MAY_BE_LEAKED);
  GST_OBJECT_FLAG_SET (tr_pool, GST_OBJECT_FLAG_MAY_BE_LEAKED);
  GST_OBJECT_FLAG_SET (tr_mark, GST_OBJECT_FLAG_MAY_BE_LEAKED);
}

static void
ds_gst_memory_tracer_init (DsGstMemoryTracer *self)
{
  g_mutex_init (&self->lock);
  self->scratchpads = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, scratch_free);
  self->elements = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
}
