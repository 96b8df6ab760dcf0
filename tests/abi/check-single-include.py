#!/usr/bin/env python3
# check-single-include.py: only <ds.h> may be included directly
#
# Copyright 2026 The ds authors
# SPDX-License-Identifier: LGPL-2.1-or-later
"""For every public header (the list comes from src/meson.build), compile a
file that includes only that header, as a consumer would, and expect it to
stop with the "Only <ds.h> can be included directly." #error. <ds.h> itself
must compile on its own. Private headers (-private.h) must not be in the
list at all: they are not installed."""

import argparse
import os
import shlex
import subprocess
import sys
import tempfile

MESSAGE = "Only <ds.h> can be included directly."


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--cc", required=True, help="the C compiler command")
    ap.add_argument("-I", dest="includes", action="append", default=[])
    ap.add_argument("headers", nargs="+")
    args = ap.parse_args()

    cc = shlex.split(args.cc)
    glib = subprocess.run(["pkg-config", "--cflags", "gobject-2.0"],
                          check=True, capture_output=True, text=True).stdout.split()
    flags = ["-std=gnu11", "-Wall", "-Wextra", "-Werror", "-fsyntax-only"]
    flags += ["-I" + d for d in args.includes] + glib

    names = sorted({os.path.basename(h) for h in args.headers})
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            if name.endswith("-private.h"):
                failures.append("%s: a private header is in the public list" % name)
                continue
            src = os.path.join(tmp, "t.c")
            with open(src, "w") as f:
                f.write("#include <%s>\nint main (void) { return 0; }\n" % name)
            r = subprocess.run(cc + flags + [src], capture_output=True, text=True)
            if name == "ds.h":
                ok = r.returncode == 0
                what = "compiles on its own" if ok else "FAILS on its own"
            else:
                ok = r.returncode != 0 and MESSAGE in r.stderr
                what = ("stops with the #error" if ok else
                        "does NOT stop with \"%s\" (rc %d)" % (MESSAGE, r.returncode))
            print("%-40s %s" % ("<%s>" % name, what))
            if not ok:
                failures.append(name)
                sys.stdout.write(r.stderr[:2000])
    print("%d headers checked, %d failed" % (len(names), len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
