#!/bin/bash
# run-gpu-reliability.sh: the GPU reliability checks on a GPU
# machine, from a bundle made by ../shared/gpu/bundle.
#
# Copyright 2026 The ds authors
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Here (the development machine):
#   meson setup build-gpu -Dcuda=enabled && meson compile -C build-gpu
#   ../shared/gpu/bundle build-gpu .gpu --suite cuda --suite soak
#   cp tests/gpu-run/run-gpu-reliability.sh .gpu/
# On the GPU machine (device tool: carry [".gpu"]):
#   .gpu/run-gpu-reliability.sh [STEP...]
#
# Steps (default: all, in this order):
#   tests      every bundled GPU test (BUNDLE/run.sh)
#   memcheck   compute-sanitizer memcheck --leak-check full  \
#   racecheck  compute-sanitizer racecheck                    | over every
#   synccheck  compute-sanitizer synccheck                    | *-gpu program,
#   initcheck  compute-sanitizer initcheck                   /  one process each
#   fault      test-fault-injection-gpu, with its fault totals
#   soak       ds-soak, full length (SOAK_LIFECYCLES, default 1000000)
#
# Environment: SOAK_LIFECYCLES, SOAK_SEED (default: the clock), SAN_TIMEOUT
# (seconds per sanitizer process, default 600), SAN_PROGRAMS (space-separated
# program names, default every bin/*-gpu), LOG (the log folder, default
# /tmp/ds-gpu-reliability). The logs are packed into
# $OUT/gpu-reliability-logs.tar.gz and the summary is also written to
# $OUT/gpu-reliability-summary.txt (the device tool brings back only a few
# files). One line per step and program in the summary; exits non-zero if
# anything failed. A 10-minute device call fits one or two steps: run the
# steps over several calls (e.g. "tests fault", "memcheck", "racecheck",
# "synccheck initcheck", "soak").

set -uo pipefail

B=$(cd "$(dirname "$0")" && pwd)
LOG=${LOG:-/tmp/ds-gpu-reliability}
OUTDIR=${OUT:-$LOG}
SOAK_LIFECYCLES=${SOAK_LIFECYCLES:-1000000}
SAN_TIMEOUT=${SAN_TIMEOUT:-600}
mkdir -p "$LOG/san" "$OUTDIR"
SUMMARY="$LOG/summary.txt"
: >"$SUMMARY"
status=0

export LD_LIBRARY_PATH="$B/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export G_DEBUG=gc-friendly G_ENABLE_DIAGNOSTIC=1

say () { echo "$*" | tee -a "$SUMMARY"; }

steps=("$@")
((${#steps[@]})) || steps=(tests memcheck racecheck synccheck initcheck fault soak)

{
  echo "== machine"
  nvidia-smi -L 2>&1 || true
  nvidia-smi --query-gpu=driver_version,memory.used,memory.total --format=csv 2>&1 || true
  compute-sanitizer --version 2>&1 | tail -1 || true
} >"$LOG/machine.log"
cat "$LOG/machine.log"

programs () {
  if [[ -n ${SAN_PROGRAMS:-} ]]; then
    echo "$SAN_PROGRAMS"
  else
    (cd "$B/bin" && ls -- *-gpu 2>/dev/null)
  fi
}

# TAP counts of a log: "N ok, N not ok, N skipped".
tap_counts () {
  local ok notok skip
  ok=$(grep -cE '^ok [0-9]+' "$1")
  skip=$(grep -cE '^ok [0-9]+ .*# SKIP' "$1")
  notok=$(grep -cE '^not ok [0-9]+' "$1")
  echo "$((ok - skip)) ok, $notok not ok, $skip skipped"
}

sanitize () {
  local tool=$1 prog=$2 extra=()
  local log="$LOG/san/$tool-$prog.log"
  [[ $tool == memcheck ]] && extra=(--leak-check full)
  local start=$SECONDS
  timeout -k 10 "$SAN_TIMEOUT" compute-sanitizer --tool "$tool" "${extra[@]}" \
    --error-exitcode 1 "$B/bin/$prog" --tap >"$log" 2>&1
  local rc=$?
  local errors
  errors=$(grep -m1 'ERROR SUMMARY' "$log" | sed 's/^=* *//')
  [[ -n $errors ]] || errors="no ERROR SUMMARY line"
  local verdict=PASS
  if ((rc == 124 || rc == 137)); then
    verdict="TIMEOUT after ${SAN_TIMEOUT}s"
  elif ((rc != 0)); then
    verdict="FAIL (exit $rc)"
  fi
  [[ $verdict == PASS ]] || status=1
  say "$(printf '%-10s %-34s %-22s %s; %s; %ds' "$tool" "$prog" "$verdict" "$errors" "$(tap_counts "$log")" $((SECONDS - start)))"
}

for step in "${steps[@]}"; do
  case $step in
    tests)
      echo "== GPU tests"
      "$B/run.sh" 2>&1 | tee "$LOG/tests.log"
      ((PIPESTATUS[0] == 0)) || status=1
      say "tests      $(tail -1 "$LOG/tests.log")"
      grep -E -- '^--- .*FAILED' "$LOG/tests.log" | tee -a "$SUMMARY"
      ;;
    memcheck|racecheck|synccheck|initcheck)
      echo "== compute-sanitizer $step"
      for prog in $(programs); do
        sanitize "$step" "$prog"
      done
      ;;
    fault)
      echo "== fault injection"
      timeout -k 10 1200 "$B/bin/test-fault-injection-gpu" --tap >"$LOG/fault.log" 2>&1
      rc=$?
      ((rc == 0)) || status=1
      grep '^# fault injection:' "$LOG/fault.log" >"$LOG/fault-totals.log"
      say "fault      exit $rc; $(tap_counts "$LOG/fault.log")"
      say "$(grep '^# fault injection, ' "$LOG/fault.log" || echo '# no totals line')"
      ;;
    soak)
      echo "== soak"
      soak_args=(--lifecycles "$SOAK_LIFECYCLES")
      [[ -n ${SOAK_SEED:-} ]] && soak_args+=(--seed "$SOAK_SEED")
      "$B/bin/ds-soak" "${soak_args[@]}" 2>&1 | tee "$LOG/soak.log"
      rc=${PIPESTATUS[0]}
      ((rc == 0)) || status=1
      say "soak       exit $rc"
      grep -E '^\||^ds-soak|half:|FAIL' "$LOG/soak.log" >>"$SUMMARY"
      ;;
    *)
      echo "unknown step $step" >&2
      exit 2
      ;;
  esac
done

say "overall: $( ((status == 0)) && echo PASS || echo FAIL)"
if [[ $OUTDIR != "$LOG" ]]; then
  cp "$SUMMARY" "$OUTDIR/gpu-reliability-summary.txt"
  tar -C "$(dirname "$LOG")" -czf "$OUTDIR/gpu-reliability-logs.tar.gz" "$(basename "$LOG")"
fi
exit $status
