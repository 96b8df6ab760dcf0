/* ds-recorder-format.c: how a recording is written
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The recorder's CSV: samples as lines, the header that starts a
 * recording, and the file a running recorder appends to as it goes. The
 * recorder itself is in ds-recorder.c.
 */

#include "config.h"

#include <string.h>
#include <unistd.h>

#include "ds-recorder-format-private.h"
#include "ds-recorder-state-private.h"
#include "ds-enum-types.h"

/* The first line of every recording: the format's name and version. */
#define FORMAT_LINE "# ds memory recording, format 1\n"
#define HEADER_LINE "time,event,source,id,kind,device,count,bytes,held,in_use,pending,peak,pool,label\n"

static const char *
event_nick (DsRecorderEvent event)
{
  static const char *nicks[DS_RECORDER_EVENT_EXPORT_RETURN + 1];
  static gsize once;

  if (g_once_init_enter (&once))
    {
      GEnumClass *klass = g_type_class_ref (DS_TYPE_RECORDER_EVENT);

      for (guint i = 0; i < G_N_ELEMENTS (nicks); i++)
        nicks[i] = g_enum_get_value (klass, (gint) i)->value_nick;
      g_type_class_unref (klass);
      g_once_init_leave (&once, 1);
    }

  return (guint) event < G_N_ELEMENTS (nicks) ? nicks[event] : "unknown";
}

static const char *
source_nick (DsRecorderSource source)
{
  static const char * const nicks[] = { "pool", "scratchpad", "stream", "recorder" };

  return (guint) source < G_N_ELEMENTS (nicks) ? nicks[source] : "unknown";
}

static const char *
kind_nick (const DsRecorderSample *sample)
{
  static const char * const nicks[] = { "host", "pinned", "device", "managed" };

  if (sample->source != DS_RECORDER_SOURCE_POOL &&
      sample->source != DS_RECORDER_SOURCE_SCRATCHPAD)
    return "";
  return DS_MEMORY_KIND_IS_VALID (sample->kind) ? nicks[sample->kind] : "";
}

/* A CSV field: quoted when it holds a comma, a quote or a line break. */
static void
append_text (GString    *out,
             const char *text)
{
  if (text == NULL)
    return;
  if (strpbrk (text, ",\"\r\n") == NULL)
    {
      g_string_append (out, text);
      return;
    }

  g_string_append_c (out, '"');
  for (const char *c = text; *c != '\0'; c++)
    {
      if (*c == '"')
        g_string_append_c (out, '"');
      g_string_append_c (out, *c);
    }
  g_string_append_c (out, '"');
}

void
ds_recorder_format_sample (const DsRecorderSample *s,
                           gpointer                user_data)
{
  GString *out = user_data;

  g_string_append_printf (out,
                          "%" G_GUINT64_FORMAT ".%09" G_GUINT64_FORMAT ",%s,%s,%" G_GUINT64_FORMAT
                          ",%s,%d,%u,%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT
                          ",%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT ",",
                          s->time / 1000000000, s->time % 1000000000,
                          event_nick (s->event), source_nick (s->source), s->id,
                          kind_nick (s), s->device, s->count, s->bytes, s->held, s->in_use,
                          s->pending, s->peak, s->pool);
  append_text (out, s->label);
  g_string_append_c (out, '\n');
}

static void
append_lost (GString *out,
             guint64  time,
             guint64  lost)
{
  DsRecorderSample s = { 0, };

  s.time = time;
  s.event = DS_RECORDER_EVENT_LOST;
  s.source = DS_RECORDER_SOURCE_RECORDER;
  s.device = -1;
  s.count = (guint) MIN (lost, G_MAXUINT);
  ds_recorder_format_sample (&s, out);
}

void
ds_recorder_format_header (GString *out,
                           guint    interval,
                           guint    capacity,
                           guint64  overwritten)
{
  g_autoptr(GDateTime) now = g_date_time_new_now_utc ();
  g_autofree char *when = g_date_time_format_iso8601 (now);

  g_string_append (out, FORMAT_LINE);
  g_string_append_printf (out, "# written %s by process %d; interval %u ms, capacity %u samples\n",
                          when, (int) getpid (), interval, capacity);
  if (overwritten != 0)
    g_string_append_printf (out, "# %" G_GUINT64_FORMAT " earlier samples were overwritten\n",
                            overwritten);
  g_string_append (out, HEADER_LINE);
}

void
ds_recorder_format_flush (DsRecorder *self)
{
  g_autoptr(GString) out = g_string_new (NULL);
  guint64 lost = 0;

  if (self->out == NULL)
    return;

  ds_recorder_ring_read (self->ring, &self->out_cursor, &lost, ds_recorder_format_sample, out);
  if (lost != 0)
    {
      append_lost (out, (guint64) (ds_recorder_now_ns () - self->start_ns), lost);
      __atomic_add_fetch (&self->n_lost, lost, __ATOMIC_RELAXED);
    }
  if (out->len != 0)
    {
      fwrite (out->str, 1, out->len, self->out);
      fflush (self->out);
    }
}
