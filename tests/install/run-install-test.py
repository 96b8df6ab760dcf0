#!/usr/bin/env python3
# run-install-test.py: install ds into a DESTDIR and use it from there only
#
# Copyright 2026 The ds authors
# SPDX-License-Identifier: LGPL-2.1-or-later
"""meson install --destdir WORKDIR/root of an existing build, then:

  - the tree: headers in INCLUDEDIR/ds-1.0 (no -private.h, <ds.h> and the
    generated headers present), libds-1.0.so -> .so.SOVERSION -> real file
    with SONAME libds-1.0.so.SOVERSION, ds-1.0.pc, no program but the
    ds-memory-plot tool in bindir (nothing else in bindir/libexecdir, no ELF
    file but the libraries (libds,
    and libds-gst and the dstracers GStreamer plugin in a build with
    GStreamer): no test, example or benchmark binary);
  - ds-1.0.pc (and ds-gst-1.0.pc) use only ${prefix}-relative paths, so
    they relocate, and name no shared CUDA runtime (libds links the static
    one: ds-1.0.pc's Libs.private names it once, for static links);
  - install-consumer.c compiles with nothing but
    `pkg-config --cflags --libs ds-1.0`, PKG_CONFIG_PATH and
    PKG_CONFIG_SYSROOT_DIR pointing into the install tree (the sysroot also
    gets symlinks to the include folders from outside the tree, as a real
    sysroot would hold them), and runs with LD_LIBRARY_PATH into the tree,
    loading the installed libds;
  - in a build with GStreamer, install-gst-consumer.c (--gst-program) the
    same way with nothing but `pkg-config --cflags --libs ds-gst-1.0`:
    <ds-gst.h> with gstcuda's headers and the toolkit's <cuda.h>;
  - Ds-1.0.gir and Ds-1.0.typelib are installed, the GIR names
    ds-1.0/ds.h/libds-1.0.so.SOVERSION, and /usr/bin/python3 loads the
    typelib from the tree with GI_TYPELIB_PATH (when built with
    introspection);
  - the PyGObject override Ds.py is installed in the gi/overrides folder of
    /usr/bin/python3's site folder inside the prefix (under the DESTDIR), the
    Ds.pyi stub in gi-stubs/repository/ beside it, and /usr/bin/python3
    imports that installed override and uses it.

By hand:
    python3 tests/install/run-install-test.py --builddir build \\
        --workdir /tmp/ds-install --program tests/install/install-consumer.c
"""

import argparse
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

GI_SCRIPT = r"""
import os, sys
import gi
gi.require_version("Ds", "1.0")
from gi.repository import Ds, GLib
root = os.path.realpath(sys.argv[1])
typelib = os.path.realpath(gi.Repository.get_default().get_typelib_path("Ds"))
print("typelib:", typelib)
assert typelib.startswith(root + os.sep), "typelib not from the install tree"
pad = Ds.Scratchpad.new(None)
block = pad.alloc(Ds.MemoryKind.HOST, 128, 64)
assert block.get_size() == 128 and block.get_address() % 64 == 0
block.write(0, GLib.Bytes.new(b"installed"))
assert block.read(0, 9).get_data() == b"installed"
with open("/proc/self/maps") as f:
    libs = {l.split()[-1] for l in f if "libds-1.0.so" in l}
print("libds:", ", ".join(sorted(libs)))
assert libs and all(os.path.realpath(l).startswith(root + os.sep) for l in libs), \
    "libds not loaded from the install tree"
if len(sys.argv) > 2:
    # The PyGObject override was installed: it must be the one in use.
    mod = sys.modules.get("gi.overrides.Ds")
    where = os.path.realpath(mod.__file__) if mod else None
    print("override:", where)
    assert where and where.startswith(root + os.sep), "override not from the install tree"
    with Ds.Scratchpad.new(None) as pad2:
        b = pad2.alloc(Ds.MemoryKind.HOST, 16, 0)
        b.memoryview()[:3] = b"abc"
        assert b.read(0, 3).get_data() == b"abc"
print("Ds-1.0 from the installed tree: ok")
"""


def run(cmd, env=None, capture=True):
    print("+ " + " ".join(shlex.quote(c) for c in cmd), flush=True)
    r = subprocess.run(cmd, env=env, capture_output=capture, text=True)
    if capture:
        sys.stdout.write(r.stdout)
        sys.stdout.write(r.stderr)
        sys.stdout.flush()
    return r


def meson_cmd(path):
    if path.endswith(".py"):
        return [sys.executable, path]
    return [path]


def under(root, path):
    return os.path.join(root, path.lstrip(os.sep))


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--meson", default="meson")
    ap.add_argument("--builddir", required=True)
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--program", required=True, help="install-consumer.c")
    ap.add_argument("--gst-program", help="install-gst-consumer.c (checked when ds-gst-1.0 is installed)")
    ap.add_argument("--cc", default=os.environ.get("CC", "cc"))
    ap.add_argument("--gi", choices=["yes", "no"], default="yes")
    args = ap.parse_args()

    t0 = time.monotonic()
    meson = meson_cmd(args.meson)
    build = os.path.abspath(args.builddir)
    work = os.path.abspath(args.workdir)
    root = os.path.join(work, "root")
    if os.path.exists(work):
        shutil.rmtree(work)
    os.makedirs(work)
    failures = []

    r = run(meson + ["install", "-C", build, "--no-rebuild", "--quiet",
                     "--destdir", root])
    if r.returncode != 0:
        print("FAIL: meson install --destdir failed")
        return 1

    opts = {o["name"]: o["value"] for o in json.loads(subprocess.run(
        meson + ["introspect", "--buildoptions", build],
        check=True, capture_output=True, text=True).stdout)}
    version = json.loads(subprocess.run(
        meson + ["introspect", "--projectinfo", build],
        check=True, capture_output=True, text=True).stdout)["version"]
    prefix = opts["prefix"]

    def d(name):
        v = opts[name]
        return v if os.path.isabs(v) else os.path.join(prefix, v)

    libdir, incdir, datadir = d("libdir"), d("includedir"), d("datadir")
    progdirs = [d("bindir"), d("libexecdir"), d("sbindir")]
    r_lib, r_inc = under(root, libdir), under(root, os.path.join(incdir, "ds-1.0"))

    # --- the tree -----------------------------------------------------------
    installed = []
    for dirpath, _, files in os.walk(root):
        for f in files:
            installed.append(os.path.join(dirpath, f))
    print("installed %d files under %s:" % (len(installed), root))
    for p in sorted(installed):
        print("  " + os.path.relpath(p, root) + (" -> " + os.readlink(p) if os.path.islink(p) else ""))
    headers = []
    for p in installed:
        rel = "/" + os.path.relpath(p, root)
        base = os.path.basename(p)
        if base.endswith("-private.h"):
            failures.append("private header installed: " + rel)
        tool = base == "ds-memory-plot" and rel.startswith(progdirs[0] + "/")
        if any(rel.startswith(pd + "/") for pd in progdirs) and not tool:
            failures.append("program installed: " + rel)
        if not os.path.islink(p):
            with open(p, "rb") as f:
                elf = f.read(4) == b"\x7fELF"
            # libds, libds-alloc, libds-recorder, libds-gst and the dstracers plugin where GStreamer was
            # found (src/gst), and the PyGObject override's extension module
            # beside Ds.py.
            if elf and not re.fullmatch(r"libds(-alloc|-recorder|-gst)?-1\.0\.so\.\d+\.\d+\.\d+", base) and \
               not (base == "libgstdstracers.so" and "/gstreamer-1.0/" in rel) and \
               not (re.fullmatch(r"_gi_ds\.cpython-.*\.so", base) and "/gi/overrides/" in rel):
                failures.append("binary other than libds installed (test/example?): " + rel)
            elif not elf and os.access(p, os.X_OK) and not base.endswith(".py") and not tool:
                failures.append("executable file installed: " + rel)
        if p.startswith(r_inc + os.sep) and base.endswith(".h"):
            headers.append(base)
    for h in ("ds.h", "ds-version.h", "ds-enum-types.h", "ds-version-macros.h"):
        if h not in headers:
            failures.append("%s not installed in %s" % (h, r_inc))
    print("headers: %d in %s" % (len(headers), os.path.relpath(r_inc, root)))

    so = os.path.join(r_lib, "libds-1.0.so")
    soname = None
    if not os.path.islink(so):
        failures.append("libds-1.0.so (development symlink) missing")
    else:
        dyn = subprocess.run(["readelf", "-d", so], capture_output=True, text=True).stdout
        m = re.search(r"\(SONAME\)\s+Library soname: \[([^\]]+)\]", dyn)
        soname = m.group(1) if m else None
        print("SONAME: %s; chain: libds-1.0.so -> %s -> %s"
              % (soname, os.readlink(so), os.path.basename(os.path.realpath(so))))
        if not soname or not re.fullmatch(r"libds-1\.0\.so\.\d+", soname):
            failures.append("SONAME is %r, expected libds-1.0.so.SOVERSION" % soname)
        elif not os.path.exists(os.path.join(r_lib, soname)):
            failures.append("%s (the SONAME link) is not installed" % soname)

    # --- pkg-config -----------------------------------------------------------
    pcdir = os.path.join(r_lib, "pkgconfig")
    env = dict(os.environ)
    env["PKG_CONFIG_PATH"] = pcdir
    env["PKG_CONFIG_SYSROOT_DIR"] = root
    env.pop("PKG_CONFIG_LIBDIR", None)

    def read_pc(name):
        pc = os.path.join(pcdir, name + ".pc")
        if not os.path.exists(pc):
            return None
        with open(pc) as f:
            text = f.read()
        print("%s.pc:\n%s" % (name, text))
        for line in text.splitlines():
            if line.startswith("prefix="):
                continue
            if any(x in line for x in (libdir, incdir)):
                failures.append("%s.pc has a path not relative to ${prefix}: %s" % (name, line))
        if not re.search(r"^Version:\s*%s\s*$" % re.escape(version), text, re.M):
            failures.append("%s.pc does not say Version: %s" % (name, version))
        # The CUDA runtime is linked statically into libds: no shared
        # runtime anywhere, and the static one only for a static link of
        # libds (Libs.private of ds-1.0), once.
        if re.search(r"libcudart\.so|-lcudart(\s|$)", text):
            failures.append("%s.pc names the shared CUDA runtime" % name)
        for line in text.splitlines():
            if not line.startswith("Libs.private:") and "cudart" in line:
                failures.append("%s.pc names the CUDA runtime outside Libs.private: %s"
                                % (name, line))
            if line.count("cudart_static") > 1:
                failures.append("%s.pc names the static CUDA runtime twice: %s" % (name, line))
        return text

    def sysroot_link(flags):
        """The sysroot prefix applies to every package's paths: give the
        sysroot the -I/-L folders of FLAGS that are not in the install tree
        (those of what ds requires, the CUDA toolkit's headers) as links to
        the machine's own, as a real sysroot would hold them."""
        for flag in flags:
            if not flag.startswith(("-I", "-L")) or not flag[2:].startswith(root + os.sep):
                continue
            target = flag[2:]
            path = os.sep + os.path.relpath(target, root)
            if os.path.isdir(path) and not os.path.exists(target):
                os.makedirs(os.path.dirname(target), exist_ok=True)
                os.symlink(path, target)

    def build_and_run(name, program, exe, lib_flag, inc_dir, loaded_re):
        """Compiles PROGRAM with nothing but pkg-config --cflags --libs NAME
        and runs it against the install tree."""
        r = run(["pkg-config", "--cflags", "--libs", name], env=env)
        if r.returncode != 0:
            failures.append("pkg-config --cflags --libs %s failed" % name)
            return
        flags = shlex.split(r.stdout)
        sysroot_link(flags)
        if "-I" + inc_dir not in flags:
            failures.append("pkg-config %s does not give -I%s" % (name, inc_dir))
        if lib_flag not in flags:
            failures.append("pkg-config %s does not give %s" % (name, lib_flag))
        cc = shlex.split(args.cc)
        r = run(cc + ["-std=gnu11", "-Wall", "-Wextra", "-Werror", program, "-o", exe] + flags)
        if r.returncode != 0:
            failures.append("%s does not build from pkg-config %s alone"
                            % (os.path.basename(program), name))
            return
        renv = dict(os.environ)
        renv["LD_LIBRARY_PATH"] = r_lib
        r = run([exe], env=renv)
        m = re.search(loaded_re, r.stdout, re.M)
        if r.returncode != 0:
            failures.append("%s failed (rc %d)" % (os.path.basename(exe), r.returncode))
        elif not m or not os.path.realpath(m.group(1)).startswith(root + os.sep):
            failures.append("%s did not load its library from the install tree"
                            % os.path.basename(exe))

    if read_pc("ds-1.0") is None:
        failures.append("ds-1.0.pc not installed in " + pcdir)
    else:
        build_and_run("ds-1.0", args.program, os.path.join(work, "install-consumer"),
                      "-lds-1.0", r_inc, r"^libds: (.*)$")

    # ds-gst-1.0, in a build with GStreamer: <ds-gst.h> (which includes
    # gstcuda's headers and the toolkit's <cuda.h> when built with
    # gstreamer-cuda) from its .pc file alone.
    if args.gst_program and read_pc("ds-gst-1.0") is not None:
        build_and_run("ds-gst-1.0", args.gst_program,
                      os.path.join(work, "install-gst-consumer"), "-lds-gst-1.0",
                      under(root, os.path.join(incdir, "ds-gst-1.0")), r"^libds-gst: (.*)$")
    elif args.gst_program:
        print("note: no ds-gst-1.0.pc installed (built without GStreamer)")

    # --- GObject-Introspection --------------------------------------------------
    gir = under(root, os.path.join(datadir, "gir-1.0", "Ds-1.0.gir"))
    typelibdir = os.path.join(r_lib, "girepository-1.0")
    typelib = os.path.join(typelibdir, "Ds-1.0.typelib")
    if args.gi == "yes":
        if not os.path.exists(gir):
            failures.append("Ds-1.0.gir not installed at " + gir)
        else:
            ns = {"core": "http://www.gtk.org/introspection/core/1.0",
                  "c": "http://www.gtk.org/introspection/c/1.0"}
            tree = ET.parse(gir).getroot()
            pkgs = [p.get("name") for p in tree.findall("core:package", ns)]
            incs = [i.get("name") for i in tree.findall("c:include", ns)]
            space = tree.find("core:namespace", ns)
            shlib = space.get("shared-library") if space is not None else None
            print("GIR: package %s, c:include %s, shared-library %s" % (pkgs, incs, shlib))
            if pkgs != ["ds-1.0"]:
                failures.append("GIR <package> is %s, expected ds-1.0" % pkgs)
            if "ds.h" not in incs:
                failures.append("GIR <c:include> does not name ds.h")
            if soname and (shlib is None or soname not in shlib.split(",")):
                failures.append("GIR shared-library %r does not name %s" % (shlib, soname))
        if not os.path.exists(typelib):
            failures.append("Ds-1.0.typelib not installed at " + typelib)
        else:
            genv = dict(os.environ)
            genv["GI_TYPELIB_PATH"] = typelibdir
            genv["LD_LIBRARY_PATH"] = r_lib
            overrides = [p for p in installed
                         if p.endswith(os.path.join("gi", "overrides", "Ds.py"))]
            # The override must land inside the prefix, in the site folder
            # there that /usr/bin/python3 searches (overrides-dir.py), or
            # in -Dpygobject-overrides-dir.
            want_dir = opts.get("pygobject-overrides-dir", "")
            if not want_dir:
                script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                      "introspection", "overrides", "overrides-dir.py")
                r = subprocess.run(["/usr/bin/python3", script, opts.get("prefix", "/usr/local")],
                                   capture_output=True, text=True)
                want_dir = r.stdout.strip() if r.returncode == 0 else ""
            # Only what configure said it builds: without Python's headers
            # the override (and its extension module) is not built.
            planned = any(dst.endswith(os.path.join("gi", "overrides", "Ds.py"))
                          for dst in json.loads(subprocess.run(
                              meson + ["introspect", "--installed", build],
                              check=True, capture_output=True, text=True).stdout).values())
            if not planned:
                print("note: the build does not install the PyGObject override (configure said so)")
            if want_dir and planned:
                want = under(root, os.path.join(want_dir, "Ds.py"))
                print("PyGObject overrides folder of /usr/bin/python3: " + want_dir)
                if want not in overrides:
                    failures.append("Ds.py not installed in %s (where /usr/bin/python3's "
                                    "PyGObject looks); installed: %s"
                                    % (want_dir, [os.path.relpath(p, root) for p in overrides]))
                stub = under(root, os.path.join(os.path.dirname(os.path.dirname(want_dir)),
                                                "gi-stubs", "repository", "Ds.pyi"))
                if stub not in installed:
                    failures.append("the Ds.pyi type stub is not installed at "
                                    + os.path.relpath(stub, root))
            extra = []
            if overrides:
                site = os.path.dirname(os.path.dirname(os.path.dirname(overrides[0])))
                genv["PYTHONPATH"] = site + os.pathsep + genv.get("PYTHONPATH", "")
                genv["PYTHONDONTWRITEBYTECODE"] = "1"
                extra = ["override"]
                print("PyGObject override installed in " + os.path.relpath(site, root))
            r = run(["/usr/bin/python3", "-c", GI_SCRIPT, root] + extra, env=genv)
            if r.returncode != 0:
                failures.append("the installed typelib does not work from Python")
    else:
        print("note: the build has no introspection; GIR/typelib not checked")

    print("install test: %.0f s" % (time.monotonic() - t0))
    for f in failures:
        print("FAIL: " + f)
    if not failures:
        print("OK: the installed ds works from pkg-config%s"
              % (" and GI" if args.gi == "yes" else ""))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
