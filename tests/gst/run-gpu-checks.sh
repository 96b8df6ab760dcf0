#!/bin/bash
# run-gpu-checks.sh: the GStreamer integration's checks on a GPU machine,
# from a bundle made by ../shared/gpu/bundle (which has no GStreamer of its
# own to rely on: the plugins travel in the bundle).
#
# Copyright 2026 The ds authors
# SPDX-License-Identifier: LGPL-2.1-or-later
#
#   build-aux/ds-setup gpu-bundle BUNDLE            # Debian 12 build, or
#   build-aux/ds-setup gpu-bundle-debian13 BUNDLE   # Debian 13 (as root)
#   # on the GPU machine (carry BUNDLE):
#   BUNDLE/run-gpu-checks.sh [LOGDIR]
#
# The bundle holds the gst suite (tests and the per-buffer benchmark), the
# GStreamer plugins coreelements, videotestsrc, videoconvertscale and
# nvcodec, and this script. A Debian 13 bundle also carries Debian 13's
# loader and C runtime (the GPU machine's glibc is older): run.sh and this
# script start every program through it. On a machine without a GPU the
# same runs end with the GPU cases skipped.
#
# Runs, writing each log to LOGDIR (default $OUT, else /tmp/ds-gst-gpu):
#   1. every bundled test (BUNDLE/run.sh)                    tests.log
#      (and, if test-gst-element-gpu failed, each of its
#      cases in a process of its own)                        cases.log
#   2. the benchmark (BUNDLE/run.sh --bench)                 bench.log
#   3. compute-sanitizer memcheck, one process per case (at
#      most 90 s each), over the GPU cases of
#      test-gst-cuda-context and six of test-gst-element     memcheck-*.log
# and prints a summary. Exits non-zero if any of them failed.

set -uo pipefail

B=$(cd "$(dirname "$0")" && pwd)
LOG=${1:-${OUT:-/tmp/ds-gst-gpu}}
mkdir -p "$LOG"
status=0

{
  echo "== machine"
  nvidia-smi -L 2>&1 || true
  nvidia-smi --query-gpu=driver_version,memory.used,memory.total --format=csv 2>&1 || true
} | tee "$LOG/machine.log"

# Meson gives these tests an LD_LIBRARY_PATH of several build folders,
# which the bundler cannot map; every library they need is in lib/.
sed -i 's|LD_LIBRARY_PATH="[^"]*"|LD_LIBRARY_PATH="$B/lib"|' "$B/tests.list"

echo "== tests"
"$B/run.sh" 2>&1 | tee "$LOG/tests.log"
((PIPESTATUS[0] == 0)) || status=1

# The environment run.sh gives the tests, for running them by hand.
export LD_LIBRARY_PATH="$B/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export GST_PLUGIN_SYSTEM_PATH="$B/plugins" GST_PLUGIN_PATH="$B/data/build/examples/gst"
export GST_REGISTRY_FORK=no GST_REGISTRY="$B/data/build/tests/gst/registry.bin"
export G_DEBUG=gc-friendly

# A Debian 13 bundle carries its loader and C runtime in libc/ (ds-setup
# gpu-bundle-debian13): what is started here goes through that loader too,
# as run.sh does it, with the machine's libcuda found after the bundle's
# libraries.
RUN=()
if [[ -x $B/libc/ld-linux-x86-64.so.2 ]]; then
  host_cuda=$(ldconfig -p 2>/dev/null | awk '/libcuda\.so\.1 .*x86-64/ {print $NF; exit}')
  RUN=("$B/libc/ld-linux-x86-64.so.2" --library-path
       "$B/libc:$LD_LIBRARY_PATH${host_cuda:+:$(dirname "$host_cuda")}")
fi

# A failed GTest case ends its process: when test-gst-element-gpu failed,
# run each of its cases alone as well, so that one failure hides no other.
if grep -q -- '--- test-gst-element-gpu: FAILED' "$LOG/tests.log"; then
  echo "== test-gst-element GPU cases, one process each"
  for path in $("${RUN[@]}" "$B/bin/test-gst-element" -l | grep '^/DsGst/Element/gpu/'); do
    timeout -k 5 120 "${RUN[@]}" "$B/bin/test-gst-element" --tap -p "$path" >"$LOG/case.log" 2>&1
    rc=$?
    echo "$path: exit $rc $(grep -E '^(ok|not ok)' "$LOG/case.log" | head -1)"
    if ((rc != 0)); then
      grep -E 'ERROR|CRITICAL|WARNING|Bail' "$LOG/case.log" | head -5
      cp "$LOG/case.log" "$LOG/case-$(basename "$path").log"
    fi
  done 2>&1 | tee "$LOG/cases.log"
fi

echo "== benchmark"
"$B/run.sh" --bench 2>&1 | tee "$LOG/bench.log"
((PIPESTATUS[0] == 0)) || status=1

sanitize () {
  local name=$1 path=$2
  local log="$LOG/memcheck-$name-$(basename "$path").log"
  if ! "${RUN[@]}" "$B/bin/$name" -l | grep -qx -- "$path"; then
    return   # a case this build does not have (GstCudaStream: 1.24+)
  fi
  timeout -k 5 90 compute-sanitizer --tool memcheck --error-exitcode 1 --leak-check full \
    "${RUN[@]}" "$B/bin/$name" --tap -p "$path" >"$log" 2>&1
  local rc=$?
  echo "-- memcheck $name $path: exit $rc, $(grep -E '^(ok|not ok)' "$log" | tr '\n' ' ')$(grep -m1 'ERROR SUMMARY' "$log")"
  ((rc == 0)) || status=1
}

if command -v compute-sanitizer >/dev/null 2>&1; then
  echo "== compute-sanitizer memcheck (--leak-check full), one process per case"
  for path in alloc-in-context finalize-other-thread reuse-steady pools-go-with-context wrong-stream \
              first-use-threads cuda-stream; do
    sanitize test-gst-cuda-context "/DsGst/CudaContext/gpu/$path"
  done
  for path in harness-ds-reuse harness-ds-meta pipeline-I420 queue-ds-meta app-context cuda-memory; do
    sanitize test-gst-element "/DsGst/Element/gpu/$path"
  done
elif ! command -v nvidia-smi >/dev/null 2>&1; then
  echo "== no GPU machine here (no nvidia-smi): memcheck left out"
else
  echo "== compute-sanitizer not found: memcheck not run"
  status=1
fi

echo "== summary"
tail -1 "$LOG/tests.log"
for f in "$LOG"/memcheck-*.log; do
  echo "$(basename "$f"): $(grep -m1 'ERROR SUMMARY' "$f" || echo 'no ERROR SUMMARY line')"
done
echo "overall: $([[ $status == 0 ]] && echo OK || echo FAILED)"
exit $status
