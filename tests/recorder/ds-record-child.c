/* ds-record-child.c: a program that knows nothing of the recorder (it
 * links libds only), for test-recorder's DS_RECORD case
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <ds.h>

int
main (void)
{
  DsScratchpad *sp = ds_scratchpad_new (NULL);

  if (ds_scratchpad_alloc (sp, DS_MEMORY_KIND_HOST, 100, 0, NULL) == NULL)
    return 1;
  g_object_unref (sp);
  return 0;
}
