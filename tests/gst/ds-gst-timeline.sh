#!/bin/bash
# ds-gst-timeline.sh: the memory timeline of a GPU pipeline with a pause,
# packed here and run on a GPU machine in one call.
#
# Copyright 2026 The ds authors
# SPDX-License-Identifier: LGPL-2.1-or-later
#
#   tests/gst/ds-gst-timeline.sh pack [BUNDLE [BUILDDIR]]
#       (here) configure BUILDDIR (default build-gpu) with -Dcuda=enabled
#       if need be, build ds-gst-timeline, the dsexamples and dstracers
#       plugins, and pack them with GStreamer's coreelements and
#       videotestsrc plugins into BUNDLE (default .gpu/timeline) with
#       ../shared/gpu/bundle ($DS_GPU_BUNDLER)
#   BUNDLE/ds-gst-timeline.sh run
#       (there; carry BUNDLE) run tests/gst/ds-gst-timeline.c: 1080p
#       videotestsrc ! dslumastats ! fakesink, PLAYING, PAUSED past the
#       pools' idle timeout, PLAYING, stopped; writes to $OUT (default
#       /tmp/ds-timeline): recording.csv, tracer.log, run.log, machine.txt
#
# Then, here: tools/ds-memory-plot OUT/recording.csv -o timeline.png
#             tools/ds-memory-plot OUT/tracer.log --elements-only -o elements.png

set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

case ${1:-} in
  pack)
    srcdir=$(cd "$here/../.." && pwd)
    bundle=$(realpath -m "${2:-$srcdir/.gpu/timeline}")
    builddir=$(realpath -m "${3:-$srcdir/build-gpu}")
    bundler=${DS_GPU_BUNDLER:-$srcdir/../shared/gpu/bundle}
    python=python3
    [[ -x /usr/bin/python3 ]] && python=/usr/bin/python3
    if [[ ! -f $builddir/build.ninja ]]; then
      meson setup "$builddir" "$srcdir" -Dcuda=enabled --werror
    fi
    meson compile -C "$builddir" -j "$(nproc 2>/dev/null || echo 2)"
    if ! meson introspect "$builddir" --benchmarks | grep -q '"ds-gst-timeline"'; then
      echo "ds-gst-timeline.sh: $builddir has no ds-gst-timeline (it needs CUDA, nvcc," \
           "GStreamer's video library and the examples)" >&2
      exit 1
    fi
    "$python" "$bundler" "$builddir" "$bundle" --suite timeline \
      --gst-plugin coreelements --gst-plugin videotestsrc
    cp "$here/ds-gst-timeline.sh" "$bundle/"
    echo "bundle: $bundle ($(du -sh "$bundle" | cut -f1))"
    echo "run there: $bundle/ds-gst-timeline.sh run   (carry: ${bundle#"$srcdir"/})"
    ;;

  run)
    out=${OUT:-/tmp/ds-timeline}
    mkdir -p "$out"
    {
      nvidia-smi -L 2>&1 || true
      nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv 2>&1 || true
    } >"$out/machine.txt"
    cat "$out/machine.txt"
    # Meson gives the program an LD_LIBRARY_PATH of build folders, which
    # the bundler cannot map; every library it needs is in lib/.
    sed -i 's|LD_LIBRARY_PATH="[^"]*"|LD_LIBRARY_PATH="$B/lib"|' "$here/tests.list"
    # The bundle's run.sh puts its libraries and plugins in place; the
    # program puts the timeline's own plugins on GST_PLUGIN_PATH and
    # writes to $OUT.
    OUT=$out DS_TIMELINE=1 "$here/run.sh" --bench ds-gst-timeline 2>&1 | tee "$out/run.log"
    status=${PIPESTATUS[0]}
    ls -la "$out"
    exit "$status"
    ;;

  *)
    sed -n '2,/^$/s/^# \{0,1\}//p' "$0"
    exit 2
    ;;
esac
