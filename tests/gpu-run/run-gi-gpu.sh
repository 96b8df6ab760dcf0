#!/bin/bash
# run-gi-gpu.sh: the gi suite's Python tests with a bundled Python, on a
# machine that has no Python, GLib or PyGObject of its own (the GPU machine).
#
# Copyright 2026 The ds authors
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Here (Debian 12, the development machine):
#   meson setup build -Dcuda=enabled && meson compile -C build
#   tests/gpu-run/pack-python.sh build .gpu/ds-python.tar.xz
# On the GPU machine, from the checkout (device tool: carry [".gpu"]):
#   tests/gpu-run/run-gi-gpu.sh .gpu/ds-python.tar.xz [STEP...]
#
# Unpacks the tarball under /tmp (DS_PYTHON_DIR, default
# /tmp/ds-python-$UID), checks that python3.11, gi and NumPy are the
# unpacked ones, and runs the steps (default: tests):
#   tests     every Python test of the gi suite (introspection/tests/test-*.py,
#             the ones meson runs with python3 -X dev), one after the other
#   memcheck  test-gpu.py under compute-sanitizer memcheck (leak check off:
#             CPython's own allocations are not ds's)
# Each test's TAP goes to $OUT/NAME.tap (OUT, default /tmp/ds-gi-gpu); the
# summary, one line per test and a total, to $OUT/summary.txt and stdout.
# Exits non-zero when a test failed (TAP TODO cases are not failures).
#
# Where nvidia-smi lists a GPU (or DS_GI_EXPECT_GPU=1), the GPU kinds must
# work: libds must allocate device memory and libcudart.so.13 must load,
# and a case skipped for want of a GPU or of libcudart counts as a failure,
# so that a pass on the GPU machine means the GPU paths ran.

set -uo pipefail

if (($# < 1)); then
  sed -n '3,/^$/p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
tarball=$(realpath "$1")
shift
steps=("$@")
((${#steps[@]})) || steps=(tests)

src=$(cd "$(dirname "$0")/../.." && pwd)
P=${DS_PYTHON_DIR:-/tmp/ds-python-$UID}
OUT=${OUT:-/tmp/ds-gi-gpu}
mkdir -p "$OUT"
rm -rf "$P"
mkdir -p "$P"
tar -C "$P" --strip-components=1 -xJf "$tarball" || exit 1

# Only the unpacked tree: no user site, the system's Python paths unknown.
export PYTHONHOME="$P/usr"
export PYTHONPATH="$src/introspection/overrides:$P/ds/overrides"
export PYTHONNOUSERSITE=1 PYTHONDONTWRITEBYTECODE=1
export GI_TYPELIB_PATH="$P/ds:$P/typelib"
export LD_LIBRARY_PATH="$P/ds:$P/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export G_DEBUG=gc-friendly
python=$P/usr/bin/python3.11
summary=$OUT/summary.txt
: >"$summary"
say () { echo "$*" | tee -a "$summary"; }

gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
expect_gpu=${DS_GI_EXPECT_GPU:-$((gpus > 0 ? 1 : 0))}
say "== $(uname -n): $(nvidia-smi -L 2>/dev/null | head -1 || echo 'no nvidia-smi')"
say "== GPU kinds expected to work: $( ((expect_gpu)) && echo yes || echo 'no (skips allowed)')"
if ! "$python" -c "
import sys, gi, numpy
gi.require_version('Ds', '1.0')
from gi.repository import Ds
import gi.overrides._gi_ds as ext
import ctypes, ssl, numpy.linalg
prefix = sys.argv[1]
where = {'python': sys.prefix, 'gi': gi.__file__, 'numpy': numpy.__file__, '_gi_ds': ext.__file__}
# Every library loaded so far, but the C runtime and the driver, from the tree.
system = ('ld-linux', 'libc.so', 'libm.so', 'libdl.so', 'libpthread.so', 'librt.so',
          'libutil.so', 'libresolv.so', 'libstdc++.so', 'libgcc_s.so', 'libcuda.so', 'libnvidia')
for line in open('/proc/self/maps'):
    path = line.split()[-1]
    name = path.rsplit('/', 1)[-1]
    if '.so' in name and path.startswith('/') and not name.startswith(system):
        where[name] = path
outside = {k: v for k, v in where.items() if not v.startswith(prefix)}
print('python', sys.version.split()[0], 'from', sys.prefix, '; numpy', numpy.__version__,
      '; PyGObject', gi.__version__)
if outside:
    sys.exit('not the unpacked tree: %r' % outside)
# What the GPU cases need: device memory from libds, libcudart to read it back.
sp = Ds.Scratchpad.new(Ds.AccessOrder.new_for_handle(0, -1))
try:
    block = sp.alloc(Ds.MemoryKind.DEVICE, 16, 0)
    print('libds device memory: yes, at 0x%x' % block.get_address())
    gpu = True
except Exception as e:
    print('libds device memory: no (%s)' % e)
    gpu = False
sp.release()
try:
    ctypes.CDLL('libcudart.so.13')
    print('libcudart.so.13:', ' '.join(sorted({l.split()[-1] for l in open('/proc/self/maps')
                                               if 'libcudart' in l})))
except OSError as e:
    print('libcudart.so.13: no (%s)' % e)
    gpu = False
if sys.argv[2] == '1' and not gpu:
    sys.exit('a GPU is listed but the GPU kinds do not work')
" "$P" "$expect_gpu" 2>&1 | tee -a "$summary"; then
  say "FAIL: the bundled Python does not start or the GPU kinds do not work"
  exit 1
fi

status=0
total_ok=0 total_fail=0 total_skip=0 total_todo=0
run_tap () {  # NAME COMMAND...
  local name=$1; shift
  local log=$OUT/$name.tap
  timeout -k 10 "${TEST_TIMEOUT:-600}" "$@" >"$log" 2>&1
  local rc=$?
  local ok fail skip todo
  ok=$(grep -c '^ok ' "$log")
  skip=$(grep -c '^ok .*# SKIP' "$log")
  todo=$(grep -c '^not ok .*# TODO' "$log")
  fail=$(grep '^not ok ' "$log" | grep -vc '# TODO')
  if ((expect_gpu)); then
    # Skipped for want of what the GPU machine has: failures there.
    local missing
    missing=$(grep -cE '^ok .*# SKIP.*(no usable GPU|no libcudart)' "$log")
    skip=$((skip - missing)) ok=$((ok - missing)) fail=$((fail + missing))
    ((missing == 0)) || grep -E '^ok .*# SKIP.*(no usable GPU|no libcudart)' "$log" |
      head -5 | sed 's/^/    (counted as failed) /' | tee -a "$summary"
  fi
  # A test that died without a failing case counts as one failure.
  ((rc != 0 && fail == 0)) && fail=1
  total_ok=$((total_ok + ok - skip)) total_skip=$((total_skip + skip))
  total_fail=$((total_fail + fail)) total_todo=$((total_todo + todo))
  if ((rc != 0 || fail != 0)); then
    status=1
    say "FAIL $name: exit $rc, $((ok - skip)) passed, $fail failed, $skip skipped, $todo todo"
    grep -A20 '^not ok ' "$log" | grep -v '# TODO' | head -40 | sed 's/^/    /' | tee -a "$summary"
  else
    say "ok   $name: $((ok - skip)) passed, $skip skipped, $todo todo"
  fi
}

for step in "${steps[@]}"; do
  case $step in
    tests)
      for t in "$src"/introspection/tests/test-*.py; do
        t=$(basename "$t" .py)
        run_tap "$t" "$python" -X dev "$src/introspection/tests/$t.py"
      done ;;
    memcheck)
      if ! command -v compute-sanitizer >/dev/null; then
        say "FAIL memcheck: no compute-sanitizer"; status=1; continue
      fi
      run_tap memcheck-test-gpu compute-sanitizer --tool memcheck --leak-check no \
        --error-exitcode 1 "$python" "$src/introspection/tests/test-gpu.py" ;;
    *) say "unknown step $step"; status=1 ;;
  esac
done
say "== $total_ok passed, $total_fail failed, $total_skip skipped, $total_todo todo"
exit $status
