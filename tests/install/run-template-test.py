#!/usr/bin/env python3
# run-template-test.py: the element templates, copied out of the tree
#
# Copyright 2026 The ds authors
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Builds the templates as an author would, out of ds's tree:

  1. configures ds afresh with --prefix WORKDIR/prefix (library only) and
     runs meson install;
  2. copies each template folder (examples/gst/templates/analyzer, filter)
     to WORKDIR and builds it unchanged
     - against the installed ds: PKG_CONFIG_PATH into the prefix,
       --wrap-mode=nofallback, so that only pkg-config can satisfy it;
     - with ds as a subproject: subprojects/ds a symlink to the source
       tree (the offline stand-in for the wrap's git clone),
       --wrap-mode=forcefallback;
  3. loads each plugin with gst-inspect-1.0 (a registry of its own, no
     LD_LIBRARY_PATH: the prefix-built plugin finds libds through its
     RUNPATH), which must list the element;
  4. runs the guide's commands (each ```sh block of "Building against
     it" in introspection/docs/gst-element.md, as written) in copies of the
     filter against the prefix: the Meson build, and the link from
     pkg-config alone with -Wl,--no-undefined; each loads the element;
  5. the prefix stays the prefix: the installed dstracers plugin loads from
     it without LD_LIBRARY_PATH, and tools/ds-memory-plot is installed.

Prints the time of each step. By hand:
    python3 tests/install/run-template-test.py --srcroot . \\
        --workdir /tmp/ds-templates --gst-inspect "$(command -v gst-inspect-1.0)"
"""

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import time

TEMPLATES = {"analyzer": "dstemplate", "filter": "dsfilter"}


def run(cmd, env=None, cwd=None):
    print("+ " + " ".join(shlex.quote(c) for c in cmd), flush=True)
    r = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True)
    out = r.stdout + r.stderr
    # Keep the log readable: the tail of what each step said.
    lines = out.splitlines()
    if len(lines) > 40 and r.returncode == 0:
        lines = ["  ... (%d lines)" % (len(lines) - 20)] + lines[-20:]
    for line in lines:
        print("  " + line)
    sys.stdout.flush()
    return r


def meson_cmd(path):
    if path.endswith(".py"):
        return [sys.executable, path]
    return [path]


def guide_blocks(path):
    """The ```sh blocks of the guide's section "Building against it"."""
    text = open(path, encoding="utf-8").read()
    start = text.index("\n## Building against it")
    end = text.find("\n## ", start + 1)
    section = text[start:end if end >= 0 else len(text)]
    parts = section.split("```sh\n")[1:]
    return [p.split("\n```", 1)[0] for p in parts]


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--meson", default="meson")
    ap.add_argument("--srcroot", required=True, help="the ds source tree")
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--gst-inspect", required=True)
    args = ap.parse_args()

    t_all = time.monotonic()
    meson = meson_cmd(args.meson)
    srcroot = os.path.realpath(args.srcroot)
    work = os.path.abspath(args.workdir)
    prefix = os.path.join(work, "prefix")
    if os.path.exists(work):
        shutil.rmtree(work)
    os.makedirs(work)
    failures = []
    times = []

    def step(name, t0):
        times.append((name, time.monotonic() - t0))

    # --- 1. ds installed into a prefix -------------------------------------
    t0 = time.monotonic()
    dsbuild = os.path.join(work, "ds-build")
    r = run(meson + ["setup", dsbuild, srcroot, "--prefix", prefix, "-Dtests=false",
                     "-Dexamples=false", "-Dbenchmarks=false", "-Dintrospection=disabled",
                     "-Ddocumentation=disabled", "-Dgstreamer=enabled", "-Dcuda=enabled"])
    if r.returncode != 0:
        print("FAIL: ds does not configure with --prefix %s" % prefix)
        return 1
    r = run(meson + ["install", "-C", dsbuild, "--quiet"])
    if r.returncode != 0:
        print("FAIL: meson install --prefix failed")
        return 1
    opts = {o["name"]: o["value"] for o in json.loads(subprocess.run(
        meson + ["introspect", "--buildoptions", dsbuild],
        check=True, capture_output=True, text=True).stdout)}
    libdir = os.path.join(prefix, opts["libdir"])
    step("ds: configure, build, install --prefix", t0)

    base_env = dict(os.environ)
    for var in ("LD_LIBRARY_PATH", "GST_PLUGIN_PATH", "GST_PLUGIN_PATH_1_0", "PKG_CONFIG_LIBDIR"):
        base_env.pop(var, None)
    pc_env = dict(base_env, PKG_CONFIG_PATH=os.path.join(libdir, "pkgconfig"))

    def inspect(plugin_dir, element, what):
        env = dict(base_env, GST_PLUGIN_PATH=plugin_dir,
                   GST_REGISTRY=os.path.join(work, "registry-%s.bin" % what.replace(" ", "-")))
        r = run([args.gst_inspect, element], env=env)
        if r.returncode != 0 or element not in r.stdout:
            failures.append("gst-inspect-1.0 %s: not found (%s)" % (element, what))

    # --- 2, 3. each template, both ways ------------------------------------
    for folder, element in TEMPLATES.items():
        src = os.path.join(srcroot, "examples", "gst", "templates", folder)
        for how in ("installed", "subproject"):
            t0 = time.monotonic()
            copy = os.path.join(work, "%s-%s" % (folder, how))
            shutil.copytree(src, copy, symlinks=True)
            if how == "subproject":
                os.symlink(srcroot, os.path.join(copy, "subprojects", "ds"))
                setup = ["--wrap-mode=forcefallback"]
                env = base_env
            else:
                setup = ["--wrap-mode=nofallback"]
                env = pc_env
            build = os.path.join(copy, "build")
            r = run(meson + ["setup", build, copy] + setup, env=env)
            if r.returncode == 0:
                r = run(meson + ["compile", "-C", build], env=env)
            if r.returncode != 0:
                failures.append("the %s template does not build %s" %
                                (folder, "against the installed ds" if how == "installed"
                                 else "with ds as a subproject"))
                continue
            log = open(os.path.join(build, "meson-logs", "meson-log.txt")).read()
            want = ("Dependency ds-gst-1.0 found: YES" if how == "subproject"
                    else "Run-time dependency ds-gst-1.0 found: YES")
            if want not in log or (how == "subproject") != ("(overridden)" in log):
                failures.append("%s: ds-gst-1.0 did not come from the %s ds" % (folder, how))
            inspect(build, element, "%s %s" % (folder, how))
            step("%s template, %s ds: configure, build, gst-inspect" % (folder, how), t0)

    # --- 4. the guide's commands, as written --------------------------------
    # Each ```sh block of "Building against it" in the guide, run by bash -e
    # in a fresh copy of the filter with the prefix on PKG_CONFIG_PATH (and
    # no LD_LIBRARY_PATH): the Meson build and the pkg-config-alone link
    # with -Wl,--no-undefined, each loaded by its gst-inspect-1.0 dsfilter.
    src = os.path.join(srcroot, "examples", "gst", "templates", "filter")
    guide = os.path.join(srcroot, "introspection", "docs", "gst-element.md")
    # The commands say `meson` and `gst-inspect-1.0`: the ones this test was given.
    tool_dirs = [os.path.dirname(os.path.abspath(t)) for t in (args.gst_inspect, args.meson)
                 if os.path.isabs(t) and not t.endswith(".py")]
    for i, block in enumerate(guide_blocks(guide)):
        t0 = time.monotonic()
        copy = os.path.join(work, "filter-guide-%d" % (i + 1))
        shutil.copytree(src, copy)
        env = dict(pc_env, GST_REGISTRY=os.path.join(work, "registry-guide-%d.bin" % (i + 1)),
                   PATH=os.pathsep.join(tool_dirs + [pc_env.get("PATH", "")]))
        r = run(["bash", "-ec", block], env=env, cwd=copy)
        if r.returncode != 0 or "Factory Details" not in r.stdout:
            failures.append("the guide's commands (block %d of \"Building against it\") fail "
                            "in a copy of the filter" % (i + 1))
        step("the guide's commands, block %d" % (i + 1), t0)
    if not any(n.startswith("the guide's commands") for n, _ in times):
        failures.append("no ```sh block under \"Building against it\" in %s" % guide)
    elif not any("--no-undefined" in b for b in guide_blocks(guide)):
        failures.append("the guide's commands do not link with -Wl,--no-undefined")

    # --- 5. the prefix stays the prefix ------------------------------------
    t0 = time.monotonic()
    inspect(os.path.join(libdir, "gstreamer-1.0"), "dsmemory", "installed tracer")
    plot = os.path.join(prefix, opts["bindir"], "ds-memory-plot")
    if not os.access(plot, os.X_OK):
        failures.append("ds-memory-plot is not installed in %s" % os.path.dirname(plot))
    step("installed tracer and tools", t0)

    for name, seconds in times:
        print("time: %6.1f s  %s" % (seconds, name))
    print("time: %6.1f s  in all" % (time.monotonic() - t_all))
    for f in failures:
        print("FAIL: " + f)
    if not failures:
        print("OK: both templates build out of the tree against a prefix install and as a "
              "subproject, and load")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
