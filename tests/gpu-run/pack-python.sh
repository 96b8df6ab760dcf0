#!/bin/bash
# pack-python.sh: Debian's Python with PyGObject and NumPy, and a build's
# libds, as one tar.xz for a GPU machine that has neither GLib nor Python.
#
# Copyright 2026 The ds authors
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Usage: tests/gpu-run/pack-python.sh BUILDDIR OUT.tar.xz
#
# Packs, from this machine's Debian 12 packages (the files dpkg lists for
# them): python3.11 and its standard library without its tests, idle,
# tkinter and the extension modules that would bring databases, NIS and
# curses (python3.11-minimal, libpython3.11-minimal, libpython3.11-stdlib),
# PyGObject (python3-gi), NumPy without its tests (python3-numpy), the
# GLib/GObject/Gio typelibs (gir1.2-glib-2.0); from BUILDDIR: libds,
# libds-recorder, their typelibs and the override's extension module (_gi_ds); the shared CUDA
# runtime (libcudart.so.13), which the GPU tests load with ctypes to read
# memory back; and every shared library all of these load (ldd), except the C
# runtime (glibc, libstdc++, libgcc_s) and the NVIDIA driver, which the GPU
# machine has. Then checks with ldd that nothing in the tree needs a
# library from outside it but those, and says how big the tarball is.
#
# The tree, under ds-python/: usr/ (PYTHONHOME), typelib/, lib/, and ds/
# (libds, libds-recorder, their typelibs, overrides/gi/overrides/_gi_ds*.so). The override
# itself (Ds.py) and the tests come from the checkout:
# tests/gpu-run/run-gi-gpu.sh unpacks the tarball under /tmp and runs the
# gi suite's Python tests with it.

set -euo pipefail

if (($# != 2)); then
  sed -n '3,/^$/p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
build=$(cd "$1" && pwd)
out=$(realpath -m "$2")
packages=(python3.11-minimal libpython3.11-minimal libpython3.11-stdlib
          python3-gi python3-numpy gir1.2-glib-2.0)

stage=$(mktemp -d /tmp/ds-pack.XXXXXX)
trap 'rm -rf "$stage"' EXIT
root=$stage/ds-python
mkdir -p "$root/usr" "$root/lib" "$root/typelib" "$root/ds/overrides/gi/overrides"

# Files of the packages, without what tests and editors need, caches,
# documentation and the configuration under /etc.
skip='^/usr/lib/python3\.11/(test|idlelib|tkinter|turtledemo|lib2to3|ensurepip)/'
skip+='|/__pycache__/|^/usr/lib/python3/dist-packages/numpy/(.*/)?tests/'
skip+='|^/usr/share/|^/etc/|/sitecustomize\.py$'
# and the extension modules no test imports that would bring libraries
# (Berkeley DB, NIS and Kerberos, curses, SQLite) or are CPython's tests
skip+='|/lib-dynload/(_dbm|_gdbm|nis|_curses|_curses_panel|readline|_sqlite3|ossaudiodev'
skip+='|_test[a-z_]*|_xx[a-z_]*|_ctypes_test)\.cpython'
for p in "${packages[@]}"; do
  dpkg -L "$p" | while read -r f; do
    [[ -f $f || -L $f ]] || continue
    [[ $f =~ $skip ]] && continue
    case $f in
      /usr/lib/x86_64-linux-gnu/girepository-1.0/*.typelib) cp -L "$f" "$root/typelib/" ;;
      /usr/*) mkdir -p "$root$(dirname "$f")"; cp -a "$f" "$root$f" ;;
    esac
  done
done
ln -sf python3.11 "$root/usr/bin/python3"

# The build's part.
cp -L "$build/src/libds-1.0.so.1" "$root/ds/"
cp "$build/src/Ds-1.0.typelib" "$root/ds/"
cp -L "$build/src/recorder/libds-recorder-1.0.so.1" "$build/src/recorder/DsRecorder-1.0.typelib" "$root/ds/"
cp "$build"/introspection/overrides/gi/overrides/_gi_ds*.so "$root/ds/overrides/gi/overrides/"

# Every library the tree loads, found the way this machine finds it.
keep () {  # the C runtime and the driver stay the GPU machine's own
  case $1 in
    linux-vdso*|ld-linux*|libc.so*|libm.so*|libdl.so*|libpthread.so*|librt.so*|\
    libutil.so*|libresolv.so*|libstdc++.so*|libgcc_s.so*|libcuda.so*|libnvidia*) return 1 ;;
  esac
  return 0
}
elves () {
  find "$root" -type f \( -name '*.so' -o -name '*.so.*' -o -path '*/bin/python3.11' \) -print
}
# libds links the CUDA runtime statically; the GPU tests read memory back
# through the shared one (ctypes), which nothing in the tree links.
cudart=$(/sbin/ldconfig -p | awk '$1 == "libcudart.so.13" { print $NF; exit }')
extra=(/usr/lib/x86_64-linux-gnu/libgirepository-1.0.so.1 ${cudart:+"$cudart"})
for f in "${extra[@]}"; do cp -L "$f" "$root/lib/"; done
if [[ -z $cudart ]]; then
  echo "warning: no libcudart.so.13 here: the GPU tests will skip for want of it" >&2
fi
while :; do
  added=0
  while read -r elf; do
    while read -r name target; do
      keep "$name" || continue
      [[ -e $root/lib/$name || $target == "$root"/* ]] && continue
      cp -L "$target" "$root/lib/$name"
      added=1
    done < <(LD_LIBRARY_PATH="$root/ds:$root/lib" ldd "$elf" 2>/dev/null |
             awk '$2 == "=>" && $3 ~ /^\// { print $1, $3 }')
  done < <(elves)
  ((added)) || break
done

# Check: nothing in the tree needs what the tree lacks.
bad=0
while read -r elf; do
  while read -r line; do
    name=$(basename "${line%% *}")
    if [[ $line == *"not found"* ]]; then
      echo "FAIL: $elf needs $name, which is nowhere" >&2; bad=1
    elif keep "$name" && [[ $line != *"$root/"* ]]; then
      echo "FAIL: $elf takes $name from outside the tree: $line" >&2; bad=1
    fi
  done < <(LD_LIBRARY_PATH="$root/ds:$root/lib" ldd "$elf" 2>/dev/null | awk '{$1=$1; print}' |
           grep -v '^statically linked' || true)
done < <(elves)
((bad == 0)) || exit 1

find "$root" -name '__pycache__' -prune -exec rm -rf {} +
mkdir -p "$(dirname "$out")"
XZ_OPT=${XZ_OPT:--6} tar -C "$stage" -cJf "$out" ds-python
echo "packed $(du -sh "$root" | cut -f1) ($(find "$root" -type f | wc -l) files, \
$(ls "$root/lib" | wc -l) libraries) into $out: $(du -h "$out" | cut -f1)"
