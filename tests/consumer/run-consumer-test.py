#!/usr/bin/env python3
# run-consumer-test.py: ds as a Meson subproject of tests/consumer
#
# Copyright 2026 The ds authors
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Copy tests/consumer to WORKDIR/src, make WORKDIR/src/subprojects/ds a
symlink to the ds source tree (the offline stand-in for a [wrap-git]),
configure it with --wrap-mode=forcefallback, build it and run its tests.

Checks:
  - dependency('ds-1.0') is satisfied through the wrap's [provide] section
    by ds's meson.override_dependency() (log: "(overridden)");
  - ds configured as a subproject defines no test, example or benchmark
    target and no test, although the consumer sets ds:tests=true etc. in
    its default_options (the consumer's own tests=false etc. yield, and
    meson.is_subproject() guards them);
  - nothing private (-private.h) and no program is in the install plan;
  - the consumer's C program takes scratch and runs (consumer-c), and the
    Ds-1.0 typelib from the subproject build works from Python (consumer-gi,
    when introspection is on).

By hand:
    python3 tests/consumer/run-consumer-test.py --srcroot . \\
        --consumer tests/consumer --workdir /tmp/ds-consumer
"""

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import time

CONSUMER_FILES = ["meson.build", "meson_options.txt", "consumer.c",
                  "gi-consumer.py", os.path.join("subprojects", "ds.wrap")]


def run(cmd, capture=False):
    print("+ " + " ".join(shlex.quote(c) for c in cmd), flush=True)
    r = subprocess.run(cmd, capture_output=capture, text=True)
    if capture:
        sys.stdout.write(r.stdout)
        sys.stdout.write(r.stderr)
        sys.stdout.flush()
    return r


def meson_cmd(path):
    if path.endswith(".py"):
        return [sys.executable, path]
    return [path]


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--meson", default="meson")
    ap.add_argument("--srcroot", required=True, help="the ds source tree")
    ap.add_argument("--consumer", required=True, help="tests/consumer")
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--gi", choices=["yes", "no"], default="yes")
    ap.add_argument("--werror", action="store_true")
    args = ap.parse_args()

    t0 = time.monotonic()
    meson = meson_cmd(args.meson)
    srcroot = os.path.realpath(args.srcroot)
    work = os.path.abspath(args.workdir)
    src = os.path.join(work, "src")
    build = os.path.join(work, "build")
    if os.path.exists(work):
        shutil.rmtree(work)
    os.makedirs(os.path.join(src, "subprojects"))
    for name in CONSUMER_FILES:
        shutil.copy(os.path.join(args.consumer, name), os.path.join(src, name))
    os.symlink(srcroot, os.path.join(src, "subprojects", "ds"))

    failures = []
    opts = ["--wrap-mode=forcefallback",
            "-Dintrospection=" + ("enabled" if args.gi == "yes" else "disabled")]
    if args.werror:
        opts.append("--werror")
    r = run(meson + ["setup", build, src] + opts, capture=True)
    if r.returncode != 0:
        print("FAIL: the consumer does not configure with ds as a subproject")
        return 1
    log = r.stdout
    if "Executing subproject ds" not in log:
        failures.append("ds was not configured as a subproject")
    if not any(l.startswith("Dependency ds-1.0 found: YES") and "(overridden)" in l
               for l in log.splitlines()):
        failures.append("dependency('ds-1.0') was not the override from the subproject")

    # What ds defines as a subproject.
    def introspect(what):
        out = subprocess.run(meson + ["introspect", "--" + what, build],
                             check=True, capture_output=True, text=True).stdout
        return json.loads(out)

    ds_prefix = os.path.join(src, "subprojects", "ds") + os.sep
    forbidden = [os.path.join(ds_prefix, d) + os.sep
                 for d in ("tests", "examples", "docs", "introspection" + os.sep + "tests")]
    ds_targets = []
    for t in introspect("targets"):
        where = t.get("defined_in", "")
        if where.startswith(ds_prefix):
            ds_targets.append("%s (%s)" % (t["name"], os.path.relpath(where, src)))
            if any(where.startswith(f) for f in forbidden):
                failures.append("ds defines %s in %s as a subproject"
                                % (t["name"], os.path.relpath(where, src)))
    print("ds targets in the consumer build: " + ", ".join(sorted(ds_targets)))
    tests = sorted(t["name"] for t in introspect("tests"))
    benchmarks = sorted(t["name"] for t in introspect("benchmarks"))
    print("tests: %s; benchmarks: %s" % (", ".join(tests), ", ".join(benchmarks) or "none"))
    expected_tests = ["consumer-c"] + (["consumer-gi"] if args.gi == "yes" else [])
    if tests != sorted(expected_tests):
        failures.append("the consumer build has tests %s, expected %s (ds tests leaking?)"
                        % (tests, expected_tests))
    if benchmarks:
        failures.append("ds registers benchmarks as a subproject: %s" % benchmarks)
    for dest in introspect("installed").values():
        base = os.path.basename(dest)
        if base.endswith("-private.h"):
            failures.append("a private header would be installed: " + dest)
        if os.sep + "bin" + os.sep in dest or os.sep + "libexec" + os.sep in dest:
            failures.append("a program would be installed: " + dest)

    r = run(meson + ["compile", "-C", build], capture=True)
    if r.returncode != 0:
        failures.append("the consumer does not build")
    else:
        r = run(meson + ["test", "-C", build, "--no-rebuild", "--print-errorlogs",
                         "--verbose"], capture=True)
        if r.returncode != 0:
            failures.append("the consumer's tests fail")
        for t in expected_tests:
            if not any(t in l and " OK " in l for l in r.stdout.splitlines()):
                failures.append("%s did not pass" % t)

    print("consumer test: %.0f s" % (time.monotonic() - t0))
    if args.gi == "no":
        print("note: ds was built without introspection, the GI part was not run")
    for f in failures:
        print("FAIL: " + f)
    if not failures:
        print("OK: ds works as a Meson subproject (%s)" % ", ".join(expected_tests))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
