#!/bin/bash
# run-gpu-ds.sh: one device call's worth of GPU checks and benchmarks,
# from a bundle made by ../shared/gpu/bundle (see HACKING.md, "Running on a
# GPU machine").
#
# Copyright 2026 The ds authors
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Here:
#   ../shared/gpu/bundle build-gpu .gpu --suite ds --suite bench
#   cp -n .gpu/lib/* .gpu/data/build/src/
#   cp tests/gpu-run/run-gpu-ds.sh tests/gpu-run/run-gpu-reliability.sh .gpu/
#   # for an A/B: another build's library as .gpu/ab/base/libds-1.0.so.1,
#   # and its benchmarks as .gpu/ab/base/bench-* (the inline allocations
#   # are compiled into the caller)
# On the GPU machine (device tool: carry [".gpu"]):
#   DEADLINE=570 .gpu/run-gpu-ds.sh STEP...
#
# Steps, each into $OUT/STEP.txt, skipped once DEADLINE seconds (default
# 570) have gone: tests (every bundled test), lifecycle, cuda-calls, bump,
# threads, host, pool (the benchmark of that name, DS_BENCH_TIME default
# 1.0), san (compute-sanitizer memcheck, racecheck, synccheck, initcheck
# over every *-gpu program, SAN_TIMEOUT=150), abN (N alternating pairs of
# each benchmark in AB_BENCHES, default bench-lifecycle, at
# DS_BENCH_TIME=0.3, the ab/base build first, into $OUT/ab-BENCH-base-I.txt
# and ab-BENCH-new-I.txt), gst and gst-bench (the GStreamer
# tests and bench-gst-scratch of a second bundle in $B/gst, its libraries
# shared with $B/lib deleted: see HACKING.md). The device tool brings back only a
# few files: OUT=/tmp/o ... then tar /tmp/o into the real $OUT.
B=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
DEADLINE=${DEADLINE:-570}; T0=$SECONDS
left () { echo $((DEADLINE - (SECONDS - T0))); }
NEW="$B/data/build/src:$B/lib"; BASE="$B/ab/base:$B/lib"
nvidia-smi -L > "$OUT/device.txt" 2>&1
for step in "$@"; do
  l=$(left); ((l > 20)) || { echo "skip $step: no time" >> "$OUT/drive.txt"; continue; }
  s=$SECONDS
  case $step in
    tests) timeout -k 5 $l "$B/run.sh" > "$OUT/tests.txt" 2>&1 ;;
    san) SAN_TIMEOUT=150 timeout -k 5 $l "$B/run-gpu-reliability.sh" memcheck racecheck synccheck initcheck > "$OUT/san.txt" 2>&1 ;;
    lifecycle|cuda-calls|bump|threads|host|pool)
      G_DEBUG=gc-friendly DS_BENCH_TIME=${DS_BENCH_TIME:-1.0} LD_LIBRARY_PATH="$NEW" timeout -k 5 $l "$B/bin/bench-$step" > "$OUT/$step.txt" 2>&1 ;;
    gst)  # a GStreamer bundle in $B/gst (HACKING.md: bundle build-gpu .gpu/gst --suite gst ...)
      timeout -k 5 $l "$B/gst/run.sh" > "$OUT/gst.txt" 2>&1 ;;
    gst-bench)
      G=$B/gst
      DS_BENCH_TIME=${DS_BENCH_TIME:-1.0} GST_PLUGIN_SYSTEM_PATH="$G/plugins" GST_REGISTRY_FORK=no \
        GST_PLUGIN_PATH="$G/data/build/examples/gst" \
        LD_LIBRARY_PATH="$G/data/build/examples/gst:$G/lib:$NEW" \
        timeout -k 5 $l "$G/bin/bench-gst-scratch" > "$OUT/gst-bench.txt" 2>&1 ;;
    ab*)  # abN: N alternating pairs of each benchmark in AB_BENCHES, base first
      n=${step#ab}
      for ((i = 1; i <= n; i++)); do
        for bench in ${AB_BENCHES:-bench-lifecycle}; do
          for v in base new; do
            l=$(left); ((l > 20)) || break 3
            P="$B/bin/$bench"; L=$NEW
            if [[ $v == base ]]; then
              L=$BASE; [[ -x $B/ab/base/$bench ]] && P="$B/ab/base/$bench"
            fi
            G_DEBUG=gc-friendly DS_BENCH_TIME=0.3 LD_LIBRARY_PATH="$L" timeout -k 5 $l "$P" > "$OUT/ab-$bench-$v-$i.txt" 2>&1
          done
        done
      done ;;
  esac
  echo "$step: rc=$? $((SECONDS - s)) s" >> "$OUT/drive.txt"
done
cat "$OUT/drive.txt"
