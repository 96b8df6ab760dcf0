#!/usr/bin/env python3
# check-nocuda.py: ds builds and passes its suite with -Dcuda=disabled
#
# Copyright 2026 The ds authors
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Configure a second build of the same source tree with -Dcuda=disabled
(introspection, examples, benchmarks and docs off: they are checked
elsewhere and cost CI time), build it and run its test suite except the
'abi-slow' tests, which would recurse. That run includes abi-symbols (the
no-CUDA library exports exactly ds.symbols: the ABI does not depend on the
build options) and abi-header-c (pinned, device and managed memory fail with
DS_ERROR_NOT_SUPPORTED, host memory works). Also checked here: the build
says DS_HAVE_CUDA 0 and the library does not link the CUDA runtime.

Run by hand:
    python3 tests/abi/check-nocuda.py --srcroot . --workdir build-nocuda
"""

import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys
import time


def run(cmd, **kw):
    print("+ " + " ".join(shlex.quote(c) for c in cmd), flush=True)
    return subprocess.run(cmd, **kw)


def meson_cmd(path):
    if path.endswith(".py"):
        return [sys.executable, path]
    return [path]


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--meson", default="meson")
    ap.add_argument("--srcroot", required=True)
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--werror", action="store_true")
    args = ap.parse_args()

    meson = meson_cmd(args.meson)
    work = os.path.abspath(args.workdir)
    opts = ["-Dcuda=disabled", "-Dintrospection=disabled", "-Ddocumentation=disabled",
            "-Dexamples=false", "-Dbenchmarks=false", "-Dtests=true"]
    if args.werror:
        opts.append("--werror")

    t0 = time.monotonic()
    if os.path.exists(os.path.join(work, "meson-private", "coredata.dat")):
        r = run(meson + ["setup", "--reconfigure", work, args.srcroot] + opts)
        if r.returncode != 0:
            shutil.rmtree(work)
            r = run(meson + ["setup", work, args.srcroot] + opts)
    else:
        if os.path.exists(work):
            shutil.rmtree(work)
        r = run(meson + ["setup", work, args.srcroot] + opts)
    if r.returncode != 0:
        print("FAIL: meson setup -Dcuda=disabled failed")
        return 1

    r = run(meson + ["compile", "-C", work])
    if r.returncode != 0:
        print("FAIL: the -Dcuda=disabled build does not compile")
        return 1
    t_build = time.monotonic() - t0

    failures = []
    with open(os.path.join(work, "src", "ds-version.h")) as f:
        m = re.search(r"#define DS_HAVE_CUDA \((\d)\)", f.read())
    if not m or m.group(1) != "0":
        failures.append("ds-version.h does not say DS_HAVE_CUDA (0)")

    lib = os.path.join(work, "src", "libds-1.0.so")
    readelf = shutil.which("readelf")
    if readelf:
        dyn = subprocess.run([readelf, "-d", lib], capture_output=True,
                             text=True, check=True).stdout
        needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", dyn)
        print("libds-1.0.so NEEDED: " + ", ".join(needed))
        bad = [n for n in needed if "cuda" in n.lower()]
        if bad:
            failures.append("the no-CUDA library links " + ", ".join(bad))

    r = run(meson + ["test", "-C", work, "--no-rebuild", "--print-errorlogs",
                     "--no-suite", "abi-slow"],
            capture_output=True, text=True)
    sys.stdout.write(r.stdout)
    sys.stdout.write(r.stderr)
    if r.returncode != 0:
        failures.append("its test suite failed (rc %d)" % r.returncode)

    print("-Dcuda=disabled: configure+build %.0f s, total %.0f s"
          % (t_build, time.monotonic() - t0))
    for f in failures:
        print("FAIL: " + f)
    if not failures:
        print("OK: -Dcuda=disabled builds and passes its suite")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
