#!/bin/sh
# make-gpu-bundle.sh: packs ds-alloc-gpu-check.py for a GPU machine
#
# Copyright 2026 The ds authors
# SPDX-License-Identifier: LGPL-2.1-or-later
#
#   tests/alloc/make-gpu-bundle.sh BUILDDIR OUTDIR
#
# OUTDIR gets libds-alloc, libds and the GLib libraries they load (lib/;
# libffi and PCRE2, which the machine's Python may have already, in
# lib-fallback/, searched last), the ds_alloc package (py/), the check and
# run.sh, which runs it with the machine's python3 (the one with PyTorch and
# CuPy; no PyGObject needed) and passes its arguments on (without a GPU,
# PyTorch or CuPy it says so and exits 77):
#
#   OUTDIR/run.sh                       everything, logs in $OUT
#   OUTDIR/run.sh --only cupy memcheck  some of it
set -eu

if [ $# -ne 2 ]; then
  echo "usage: $0 BUILDDIR OUTDIR" >&2
  exit 2
fi
build=$1
out=$2
src=$(cd "$(dirname "$0")/../.." && pwd)

rm -rf "$out"
mkdir -p "$out/lib" "$out/lib-fallback" "$out/py"
cp -L "$build/src/libds-1.0.so.1" "$build/src/alloc/libds-alloc-1.0.so.1" "$out/lib/"
LD_LIBRARY_PATH="$build/src" ldd "$build/src/alloc/libds-alloc-1.0.so.1" |
  awk '$3 ~ /^\// { print $1, $3 }' |
  while read -r name path; do
    case $name in
      libds*|libc.so*|libm.so*|libdl.so*|libpthread.so*|librt.so*|libgcc_s*|ld-linux*) ;;
      libffi*|libpcre2*) cp -L "$path" "$out/lib-fallback/" ;;
      *) cp -L "$path" "$out/lib/" ;;
    esac
  done
cp -r "$src/src/alloc/ds_alloc" "$out/py/"
rm -f "$out/py/ds_alloc/_config.py.in"
rm -rf "$out/py/ds_alloc/__pycache__"
cp "$src/tests/alloc/ds-alloc-gpu-check.py" "$out/"
cat > "$out/run.sh" <<'EOF'
#!/bin/sh
B=$(cd "$(dirname "$0")" && pwd)
export LD_LIBRARY_PATH="$B/lib:${LD_LIBRARY_PATH:-}:$B/lib-fallback"
export PYTHONPATH="$B/py"
export PYTHONUNBUFFERED=1
if ! nvidia-smi -L 2>/dev/null; then
  echo "SKIP: no NVIDIA driver or GPU on this machine"
  exit 77
fi
if ! python3 -c "import torch, cupy" 2>/dev/null; then
  echo "SKIP: $(command -v python3) has no PyTorch or no CuPy"
  exit 77
fi
python3 -c "import sys, torch, cupy; print(sys.version.split()[0], 'torch', torch.__version__, 'cupy', cupy.__version__)"
exec python3 "$B/ds-alloc-gpu-check.py" --out "${OUT:-.}" "$@"
EOF
chmod +x "$out/run.sh"
echo "$out: $(du -sh "$out" | cut -f1)"
