#!/bin/bash
# run-gpu-checks.sh: the GStreamer integration's checks on a GPU machine,
# from bundles made by build-aux/ds-setup (the machine has no GStreamer,
# GLib or compiler of its own: everything travels in the bundles).
#
# Copyright 2026 The ds authors
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Here:
#   build-aux/ds-setup gpu-bundle .gpu/gst-deb12            # Debian 12 build
#   build-aux/ds-setup gpu-bundle-debian13 .gpu/gst-deb13   # Debian 13 (as root)
# each also writes BUNDLE.tar.xz. On the GPU machine, from the checkout
# (device tool: carry [".gpu/gst-deb12.tar.xz", ".gpu/gst-deb13.tar.xz"]):
#   tests/gst/run-gpu-checks.sh .gpu/gst-deb12.tar.xz .gpu/gst-deb13.tar.xz
# A bundle may also be given as its folder; BUNDLE/run-gpu-checks.sh with
# no argument checks the bundle it is in.
#
# For each bundle (unpacked under $TMPDIR), with its name as the label:
#   tests       every bundled test (the gst suite, test-order-mark-gpu):
#               TAP per test, a PASS, FAIL or SKIP line per GPU case; the
#               GPU cases of a failed test again, one process each
#   waits       the host's waits for the GPU per frame, by owner, that the
#               GPU cases of test-gst-template counted (CUPTI)
#   meta        the cross-stream contract, from the tests' TAP: with the
#               reader registered the consumer reads the producer's bytes,
#               without it the next producer's
#   bench       bench-gst-scratch (the per-buffer benchmark)
#   leaks       test-gst-exit under compute-sanitizer --leak-check full:
#               no leak after ds_memory_resource_trim_defaults (), and the
#               report without it (--no-trim) for comparison
#   inspect     gst-inspect-1.0 of dslumastats, dstemplate and dsfilter
# then, over all bundles, the cases most worth it first:
#   memcheck    compute-sanitizer memcheck and racecheck over the GPU
#   racecheck   cases of the gst tests, one process per case (the
#               pipelines at their smallest sizes, test-gst-template's
#               with --frames=$DS_GPU_SANITIZE_FRAMES, default 30: a
#               sanitized run is 10-100x slower), each bounded by
#               $DS_GPU_CASE_LIMIT seconds (default 120)
# Logs go to LOGDIR/LABEL/ (LOGDIR: $DS_GPU_LOGDIR, else $OUT/gst-gpu,
# else /tmp/ds-gst-gpu); at the end LOGDIR is packed into $OUT/gst-gpu-logs.tar.xz
# (when OUT is set) and the summary is also written to $OUT/gst-gpu-summary.txt.
#
# DS_GPU_TESTS names the bundled tests the tests step runs, and the
# programs the sanitizer steps take cases of (default: all).
# DS_GPU_BUDGET (seconds, default 540) bounds the run: the sanitizer runs
# stop (and say how many were left out) once it is spent, so that both
# bundles fit one 10-minute device call. DS_GPU_STEPS picks steps (default:
# all). On a machine without a GPU every GPU
# case skips and the sanitizer steps are left out with the reason.
# Exits non-zero if anything failed.

set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
bundles=("$@")
if ((${#bundles[@]} == 0)); then
  if [[ -f $here/tests.list ]]; then
    bundles=("$here")
  else
    sed -n '3,/^$/p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
  fi
fi

LOGDIR=${DS_GPU_LOGDIR:-${OUT:+$OUT/gst-gpu}}
LOGDIR=${LOGDIR:-/tmp/ds-gst-gpu}
BUDGET=${DS_GPU_BUDGET:-540}
STEPS=${DS_GPU_STEPS:-tests waits meta bench leaks inspect memcheck racecheck}
WORK=${TMPDIR:-/tmp}/ds-gst-gpu-bundles.$$
mkdir -p "$LOGDIR" "$WORK"
trap 'rm -rf "$WORK"' EXIT
SUMMARY=$LOGDIR/summary.txt
: >"$SUMMARY"
status=0
start=$SECONDS

say () { echo "$*" | tee -a "$SUMMARY"; }
fail () { say "FAIL: $*"; status=1; }
want () { [[ " $STEPS " == *" $1 "* ]]; }
time_left () { echo $((BUDGET - (SECONDS - start))); }

{
  echo "== machine"
  uname -a
  nvidia-smi -L 2>&1 || true
  nvidia-smi --query-gpu=name,driver_version,memory.used,memory.total --format=csv 2>&1 || true
  command -v compute-sanitizer && compute-sanitizer --version 2>&1 | tail -1
} >"$LOGDIR/machine.log" 2>&1
say "== $(nvidia-smi -L 2>/dev/null | head -1 || echo 'no GPU (no nvidia-smi)')"
have_gpu=0
nvidia-smi -L >/dev/null 2>&1 && have_gpu=1
# GStreamer's CUDA filters (cudaconvertscale) compile their kernels with
# NVRTC, which they open as libnvrtc.so: the machine's, wherever it is,
# unless GST_CUDA_NVRTC_LIBNAME names one. CUDA 13's refuses the
# architecture GStreamer 1.22 and 1.26 ask for, and nvcodec then registers
# no CUDA filter (the inspect step says so): name an older one (HACKING.md).
if [[ -z ${GST_CUDA_NVRTC_LIBNAME:-} ]]; then
  for f in $(ldconfig -p 2>/dev/null | awk '/libnvrtc\.so/ {print $NF}') \
           /usr/local/cuda/lib64/libnvrtc.so* /usr/local/cuda-*/lib64/libnvrtc.so* \
           /usr/local/lib/python3*/dist-packages/nvidia/cu*/lib/libnvrtc.so* \
           /usr/lib/python3/dist-packages/nvidia/cu*/lib/libnvrtc.so*; do
    if [[ -f $f && $f != *builtins* ]]; then
      export GST_CUDA_NVRTC_LIBNAME=$f
      break
    fi
  done
fi
say "== NVRTC for GStreamer's CUDA filters: ${GST_CUDA_NVRTC_LIBNAME:-none found}"

# The GPU cases of a test program of bundle $B, one path a line (GLib
# 2.84 lists them as TAP comments, "# /path").
gpu_cases () {
  "${RUN[@]}" "$B/bin/$1" -l 2>/dev/null | sed -n 's|^\(# \)\{0,1\}\(/DsGst/[A-Za-z]*/gpu/.*\)$|\2|p'
}

# run_case LOG TIMEOUT PROGRAM PATH [SANITIZER-ARGS...]: one case alone,
# with the program's arguments PROG_ARGS.
PROG_ARGS=()
run_case () {
  local log=$1 t=$2 prog=$3 path=$4
  shift 4
  if (($#)); then
    timeout -k 5 "$t" compute-sanitizer "$@" "${RUN[@]}" "$B/bin/$prog" "${PROG_ARGS[@]}" --tap -p "$path" >"$log" 2>&1
  else
    timeout -k 5 "$t" "${RUN[@]}" "$B/bin/$prog" "${PROG_ARGS[@]}" --tap -p "$path" >"$log" 2>&1
  fi
}

# The GPU cases under compute-sanitizer, most worth it first: the
# cross-stream meta, the kernels (harness, template), the streams, the
# pipelines at their smallest sizes, the contexts. The 300-frame pipelines
# of the larger sizes only add time.
SANITIZE_ORDER=(
  test-gst-scratch-meta:'/DsGst/ScratchMeta/gpu/reader-registered'
  test-gst-scratch-meta:'/DsGst/ScratchMeta/gpu/reader-not-registered'
  test-gst-template:'/DsGst/Template/gpu/chain-NV12'
  test-gst-template:'/DsGst/Template/gpu/filter-system-NV12'
  test-gst-template:'/DsGst/Template/gpu/analyzer-system-GRAY8'
  test-gst-template:'/DsGst/Template/gpu/filter-cuda-I420'
  test-gst-template:'/DsGst/Template/gpu/analyzer-cuda-I420'
  test-gst-template:'/DsGst/Template/gpu/filter-system-GRAY8'
  test-gst-template:'/DsGst/Template/gpu/analyzer-system-I420'
  test-gst-template:'/DsGst/Template/gpu/*'
  test-gst-element:'/DsGst/Element/gpu/harness'
  test-gst-scratch-meta:'/DsGst/ScratchMeta/gpu/*'
  test-gst-stream:'/DsGst/Stream/gpu/*'
  test-gst-element:'/DsGst/Element/gpu/pipeline-I420'
  test-gst-element:'/DsGst/Element/gpu/pipeline-Y444'
  test-gst-element:'/DsGst/Element/gpu/cuda-memory'
  test-gst-element:'/DsGst/Element/gpu/adopt-context'
  test-gst-element:'/DsGst/Element/gpu/states'
  test-gst-element:'/DsGst/Element/gpu/app-context'
  test-gst-element:'/DsGst/Element/gpu/restart'
  test-gst-cuda-context:'/DsGst/CudaContext/gpu/*'
)

# sanitize_case TOOL PROG PATH: one case of the current bundle.
sanitize_case () {
  local tool=$1 prog=$2 path=$3 log rc args=(--tool "$1" --error-exitcode 1)
  local t0=$SECONDS limit
  [[ $tool == racecheck ]] && args+=(--racecheck-report all)
  mkdir -p "$L/$tool"
  log=$L/$tool/$prog-$(basename "$path").log
  limit=$(( $(time_left) - 10 ))
  ((limit > ${DS_GPU_CASE_LIMIT:-120})) && limit=${DS_GPU_CASE_LIMIT:-120}
  PROG_ARGS=()
  [[ $prog == test-gst-template ]] && PROG_ARGS=(--frames="${DS_GPU_SANITIZE_FRAMES:-30}")
  run_case "$log" "$limit" "$prog" "$path" "${args[@]}"
  rc=$?
  PROG_ARGS=()
  if ((rc != 0)) || grep -q '^not ok' "$log"; then
    say "FAIL $label $tool $path ($((SECONDS - t0)) s)"
    fail "$label $tool $prog $path: exit $rc$( ((rc == 124)) && echo " (timed out after $limit s)"), $(grep -m1 'ERROR SUMMARY' "$log" || echo 'no ERROR SUMMARY')"
    return 1
  fi
  if grep -qE '^ok .*# SKIP' "$log"; then
    say "SKIP $label $tool $path: $(grep -m1 -E '^ok .*# SKIP' "$log" | sed 's/.*# SKIP //')"
  else
    say "PASS $label $tool $path ($((SECONDS - t0)) s, $(grep -m1 'ERROR SUMMARY' "$log" || echo 'no ERROR SUMMARY'))"
  fi
  return 0
}

step_tests () {
  local out=$L/tests.log prog path rc
  # shellcheck disable=SC2086
  "$B/run.sh" ${DS_GPU_TESTS:-} >"$out" 2>&1
  rc=$?
  say "$label tests: $(tail -1 "$out")"
  # GLib 2.74 numbers TAP lines; 2.84 does not number a failed case.
  say "$label GPU cases: $(grep -E '^ok ([0-9]+ )?/[^ ]*/gpu/' "$out" | grep -vc '# SKIP') passed," \
      "$(grep -cE '^not ok ([0-9]+ )?/[^ ]*/gpu/' "$out") failed," \
      "$(grep -cE '^ok ([0-9]+ )?/[^ ]*/gpu/.*# SKIP' "$out") skipped"
  # Each GPU case: PASS, FAIL or SKIP (with the reason).
  grep -E '^(ok|not ok) ([0-9]+ )?/[^ ]*/gpu/' "$out" |
    sed -E -e "s|^ok ([0-9]+ )?(/[^ ]*) # SKIP (.*)|SKIP $label \2: \3|" \
           -e "s|^ok ([0-9]+ )?(/[^ ]*).*|PASS $label \2|" \
           -e "s|^not ok ([0-9]+ )?(/[^ ]*).*|FAIL $label \2|" | tee -a "$SUMMARY" >/dev/null
  ((rc == 0)) || fail "$label tests: run.sh exited $rc ($(grep -- '--- .*FAILED' "$out" | tr '\n' ' '))"
  # A failed GTest case ends its process: the GPU cases of every program
  # that failed, one process each, so that one failure hides no other.
  for prog in $(grep -- '--- .*: FAILED' "$out" | sed 's/^--- \(.*\): FAILED.*/\1/; s/-gpu$//'); do
    [[ -x $B/bin/$prog ]] || continue
    for path in $(gpu_cases "$prog"); do
      run_case "$L/case.log" 300 "$prog" "$path"
      rc=$?
      echo "$prog $path: exit $rc $(grep -E '^(ok|not ok)' "$L/case.log" | head -1)"
      ((rc == 0)) || cp "$L/case.log" "$L/case-$prog-$(basename "$path").log"
    done >>"$L/cases.log" 2>&1
  done
  if [[ -s $L/cases.log ]]; then
    say "$label GPU cases of the failed programs, one process each:" \
        "$(grep -c ': exit 0 ' "$L/cases.log") passed, $(grep -E ': exit [0-9]+ ' "$L/cases.log" | grep -vc ': exit 0 ') failed"
    grep -E ': exit [1-9][0-9]* ' "$L/cases.log" | sed "s/^/$label failed alone: /" | tee -a "$SUMMARY" >/dev/null
  fi
}

step_waits () {
  local out=$L/tests.log
  if ! grep -q '^# host waits per frame: ' "$out"; then
    say "$label waits: no counts (test-gst-template's GPU cases did not run)"
    return
  fi
  grep -E '^# (host waits per frame: |the program)' "$out" | sed "s/^# /$label /" | tee -a "$SUMMARY" >/dev/null
}

step_meta () {
  local out=$L/tests.log reg not
  reg=$(grep -E '^(ok|not ok) .*/DsGst/ScratchMeta/gpu/reader-registered' "$out" | head -1)
  not=$(grep -E '^(ok|not ok) .*/DsGst/ScratchMeta/gpu/reader-not-registered' "$out" | head -1)
  say "$label meta, reader registered:     ${reg:-not run}"
  say "$label meta, reader not registered: ${not:-not run}"
  if [[ $reg == "not ok"* || $not == "not ok"* ]]; then
    fail "$label meta: the cross-stream contract does not hold"
  elif ((have_gpu)) && [[ $reg != ok* || $not != ok* || $reg == *"# SKIP"* || $not == *"# SKIP"* ]]; then
    fail "$label meta: the cross-stream cases did not run"
  fi
  # What each consumer read (the cases say it in a TAP comment).
  grep -E '^# the consumer read' "$out" | sed "s/^/$label meta: /" | tee -a "$SUMMARY" >/dev/null
}

step_bench () {
  local out=$L/bench.log
  "$B/run.sh" --bench >"$out" 2>&1 || fail "$label bench: $(tail -1 "$out")"
  say "$label bench: $(grep -c 'x$' "$out") rows ($(tail -1 "$out"))"
}

step_leaks () {
  local out=$L/leaks.log rc leaked
  if ((!have_gpu)) || ! command -v compute-sanitizer >/dev/null 2>&1; then
    say "$label leaks: left out (no GPU or no compute-sanitizer here)"
    return
  fi
  env GST_PLUGIN_PATH="$B/data/build/examples/gst" \
    timeout -k 5 240 compute-sanitizer --tool memcheck --leak-check full --error-exitcode 1 \
    "${RUN[@]}" "$B/bin/test-gst-exit" >"$out" 2>&1
  rc=$?
  leaked=$(grep -cE 'Leaked [0-9]+ bytes' "$out")
  say "$label leaks, after ds_memory_resource_trim_defaults (): exit $rc, $leaked leak(s); $(grep -m1 'LEAK SUMMARY' "$out" || grep -m1 'ERROR SUMMARY' "$out")"
  ((rc == 0 && leaked == 0)) || fail "$label leaks: compute-sanitizer reports a leak at exit"
  env GST_PLUGIN_PATH="$B/data/build/examples/gst" \
    timeout -k 5 240 compute-sanitizer --tool memcheck --leak-check full \
    "${RUN[@]}" "$B/bin/test-gst-exit" --no-trim >"$L/leaks-no-trim.log" 2>&1
  say "$label leaks, without it (--no-trim): $(grep -cE 'Leaked [0-9]+ bytes' "$L/leaks-no-trim.log") leak(s); $(grep -m1 'LEAK SUMMARY' "$L/leaks-no-trim.log" || echo 'no LEAK SUMMARY line')"
}

step_inspect () {
  local element out
  if [[ ! -x $B/bin/gst-inspect-1.0 ]]; then
    fail "$label inspect: the bundle has no gst-inspect-1.0"
    return
  fi
  for element in dslumastats dstemplate dsfilter; do
    out=$L/gst-inspect-$element.log
    env GST_PLUGIN_PATH="$B/data/build/examples/gst:$B/data/build/examples/gst/templates" \
        GST_PLUGIN_SYSTEM_PATH="$B/plugins" GST_REGISTRY="$WORK/registry-$label.bin" \
        GST_REGISTRY_FORK=no \
      "${RUN[@]}" "$B/bin/gst-inspect-1.0" "$element" >"$out" 2>&1
    if grep -q 'Factory Details' "$out" && ! grep -qE 'CRITICAL|WARNING' "$out"; then
      say "$label inspect $element: ok ($(grep -m1 -E '^ +Version' "$out" | xargs), $(grep -cE '^  [a-z-]+ +:' "$out") properties)"
    else
      fail "$label inspect $element: $(head -3 "$out" | tr '\n' ' ')"
    fi
  done
  # GStreamer's own CUDA filters (the gstcuda-chain case): whether nvcodec
  # registers them here, and what its loaders said if not.
  out=$L/gst-inspect-nvcodec.log
  env GST_PLUGIN_SYSTEM_PATH="$B/plugins" GST_REGISTRY="$WORK/registry-$label-nvcodec.bin" \
      GST_REGISTRY_FORK=no GST_DEBUG="nvcodec:6,cudanvrtc:6,cudaloader:6,cudautils:5,GST_PLUGIN_LOADING:5" \
      GST_DEBUG_NO_COLOR=1 \
    "${RUN[@]}" "$B/bin/gst-inspect-1.0" nvcodec >"$out" 2>&1
  say "$label inspect nvcodec: $(grep -cE '^ +cuda[a-z]+:' "$out") cuda* features ($(grep -oE '^ +cuda[a-z]+:' "$out" | xargs | head -c 200)); $(grep -E 'nvrtc|Could not|Failed|failed|error' "$out" | head -3 | cut -c1-200 | tr '\n' ' ')"
}

# enter_bundle LABEL: B, L, RUN and the environment of that bundle.
declare -A BUNDLE_DIR
enter_bundle () {
  label=$1
  B=${BUNDLE_DIR[$label]}
  L=$LOGDIR/$label
  mkdir -p "$L"
  # The environment run.sh gives the tests, for what is started here.
  export LD_LIBRARY_PATH="$B/lib"
  export GST_PLUGIN_SYSTEM_PATH="$B/plugins" GST_PLUGIN_PATH="$B/data/build/examples/gst"
  export GST_REGISTRY_FORK=no GST_REGISTRY="$WORK/registry-$label-tests.bin"
  export G_DEBUG=gc-friendly
  # A Debian 13 bundle carries its loader and C runtime in libc/: what is
  # started here goes through that loader too, as run.sh does it, with the
  # machine's libcuda found after the bundle's libraries.
  # The machine's own tools (sed, tar, compute-sanitizer) must not see
  # that bundle's libraries, which may need a newer libc than the machine's.
  RUN=()
  if [[ -x $B/libc/ld-linux-x86-64.so.2 ]]; then
    host_cuda=$(ldconfig -p 2>/dev/null | awk '/libcuda\.so\.1 .*x86-64/ {print $NF; exit}')
    RUN=("$B/libc/ld-linux-x86-64.so.2" --library-path
         "$B/libc:$B/lib${host_cuda:+:$(dirname "$host_cuda")}")
    unset LD_LIBRARY_PATH
  fi
}

labels=()
for bundle in "${bundles[@]}"; do
  if [[ -f $bundle ]]; then
    label=$(basename "$bundle" .tar.xz)
    mkdir -p "$WORK/$label"
    tar -C "$WORK/$label" --strip-components=1 -xJf "$bundle" || { fail "cannot unpack $bundle"; continue; }
    BUNDLE_DIR[$label]=$WORK/$label
  else
    label=$(basename "$(cd "$bundle" && pwd)")
    BUNDLE_DIR[$label]=$(cd "$bundle" && pwd)
  fi
  labels+=("$label")
  # Meson gives the tests an LD_LIBRARY_PATH of several build folders,
  # which the bundler cannot map; every library they need is in lib/.
  sed -i 's|LD_LIBRARY_PATH="[^"]*"|LD_LIBRARY_PATH="$B/lib"|' "${BUNDLE_DIR[$label]}/tests.list"
done

for label in "${labels[@]}"; do
  enter_bundle "$label"
  say "== $label ($(cat "$B/build-info.txt" 2>/dev/null || echo "$B"))"
  for step in $STEPS; do
    echo "-- $label $step (${SECONDS}s)"
    case $step in
      tests) step_tests;;
      waits) step_waits;;
      meta) step_meta;;
      bench) step_bench;;
      leaks) step_leaks;;
      inspect) step_inspect;;
      memcheck|racecheck) ;;
      *) fail "unknown step $step";;
    esac
  done
done

tools=()
want memcheck && tools+=(memcheck)
want racecheck && tools+=(racecheck)
if ((${#tools[@]})); then
  if ((!have_gpu)); then
    say "== compute-sanitizer: left out (no GPU here)"
  elif ! command -v compute-sanitizer >/dev/null 2>&1; then
    fail "compute-sanitizer not found"
  else
    say "== compute-sanitizer ${tools[*]}, one process per case, while the budget lasts"
    declare -A done_case n_run n_bad
    cut=0
    for entry in "${SANITIZE_ORDER[@]}"; do
      prog=${entry%%:*} pattern=${entry#*:}
      # With DS_GPU_TESTS, only the programs of those tests.
      if [[ -n ${DS_GPU_TESTS:-} && " $DS_GPU_TESTS " != *" $prog "* &&
            " $DS_GPU_TESTS " != *" $prog-gpu "* ]]; then
        continue
      fi
      for label in "${labels[@]}"; do
        enter_bundle "$label"
        [[ -x $B/bin/$prog ]] || continue
        for path in $(gpu_cases "$prog"); do
          # shellcheck disable=SC2053
          [[ $path == $pattern ]] || continue
          # The larger pipelines only add time; the counter and GStreamer's
          # own chain count waits, which a sanitizer run does not.
          case $path in
            */pipeline-GRAY8|*/pipeline-NV12|*/host-wait-counter|*/gstcuda-chain) continue;;
          esac
          for tool in "${tools[@]}"; do
            key=$label:$tool:$prog:$path
            [[ -z ${done_case[$key]:-} ]] || continue
            done_case[$key]=1
            if (($(time_left) < 30)); then
              cut=$((cut + 1))
              continue
            fi
            n_run[$label:$tool]=$(( ${n_run[$label:$tool]:-0} + 1 ))
            sanitize_case "$tool" "$prog" "$path" ||
              n_bad[$label:$tool]=$(( ${n_bad[$label:$tool]:-0} + 1 ))
          done
        done
      done
    done
    for label in "${labels[@]}"; do
      for tool in "${tools[@]}"; do
        say "$label $tool: ${n_run[$label:$tool]:-0} cases, ${n_bad[$label:$tool]:-0} failed"
      done
    done
    ((cut == 0)) || say "compute-sanitizer: $cut case runs left out: the time budget ($BUDGET s) was spent"
  fi
fi

say "== $((SECONDS - start)) s; overall: $( ((status == 0)) && echo OK || echo FAILED)"
if [[ -n ${OUT:-} ]]; then
  cp "$SUMMARY" "$OUT/gst-gpu-summary.txt"
  tar -C "$(dirname "$LOGDIR")" -cJf "$OUT/gst-gpu-logs.tar.xz" "$(basename "$LOGDIR")" &&
    [[ $LOGDIR == "$OUT/"* ]] && rm -rf "$LOGDIR"
fi
exit $status
