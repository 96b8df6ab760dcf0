#!/usr/bin/python3
# test-memory-plot.py: tools/ds-memory-plot on a real recording and on a
# GStreamer tracer log makes PNGs of the size asked for (TAP).
#
# Copyright 2026 The ds authors
# SPDX-License-Identifier: LGPL-2.1-or-later
#
#   test-memory-plot.py PLOT-TOOL HOST-SOAK
#
# The recording comes from a two-second run of ds-host-soak (two threads,
# the default host pool and two private ones, with a recorder); the
# tracer log is written here in the dsmemory tracer's format (its own test,
# tests/gst/test-gst-tracer.c, reads that format back from the tracer).

import os
import struct
import subprocess
import sys
import tempfile

results = []


def check(name, ok, why=''):
    results.append((name, ok, why))


def png_size(path):
    with open(path, 'rb') as f:
        head = f.read(24)
    if head[:8] != b'\x89PNG\r\n\x1a\n' or head[12:16] != b'IHDR':
        return None
    return struct.unpack('>II', head[16:24])


TRACER_LOG = '''\
0:00:00.004134866 1 0x1 DEBUG GST_TRACER gsttracerrecord.c:123:gst_tracer_record_build_format: new format string: dsmemory-scratch, ts=(guint64)%lu, thread-id=(uint)%u, element-id=(string)%s, element=(string)%s, pad=(string)%s, scratchpad=(guint64)%lu, kind=(string)%s, event=(string)%s, bytes=(guint64)%lu, held=(guint64)%lu, pool=(guint64)%lu;
0:00:00.100000000 1 0x1 TRACE GST_TRACER :0:: dsmemory-pool, ts=(guint64)100000000, pool=(guint64)1, kind=(string)pinned, device=(int)0, event=(string)upstream-alloc, count=(uint)1, bytes=(guint64)4194304, held=(guint64)4194304, in-use=(guint64)4194304, pending=(guint64)0, peak=(guint64)4194304, label=(string)none;
0:00:00.100000100 1 0x1 TRACE GST_TRACER :0:: dsmemory-scratch, ts=(guint64)100000100, thread-id=(uint)1, element-id=(string)0x2, element=(string)stats, pad=(string)sink, scratchpad=(guint64)1, kind=(string)pinned, event=(string)block, bytes=(guint64)4194304, held=(guint64)4194304, pool=(guint64)1;
0:00:00.200000000 1 0x1 TRACE GST_TRACER :0:: dsmemory-scratch, ts=(guint64)200000000, thread-id=(uint)1, element-id=(string)0x2, element=(string)stats, pad=(string)sink, scratchpad=(guint64)1, kind=(string)pinned, event=(string)release, bytes=(guint64)4194304, held=(guint64)0, pool=(guint64)1;
0:00:00.210000000 1 0x1 TRACE GST_TRACER :0:: dsmemory-pool, ts=(guint64)210000000, pool=(guint64)1, kind=(string)pinned, device=(int)0, event=(string)free, count=(uint)1, bytes=(guint64)4194304, held=(guint64)4194304, in-use=(guint64)0, pending=(guint64)4194304, peak=(guint64)4194304, label=(string)none;
0:00:00.300000000 1 0x1 TRACE GST_TRACER :0:: dsmemory-mark, ts=(guint64)300000000, label=(string)paused;
0:00:03.300000000 1 0x1 TRACE GST_TRACER :0:: dsmemory-pool, ts=(guint64)3300000000, pool=(guint64)1, kind=(string)pinned, device=(int)0, event=(string)idle-release, count=(uint)1, bytes=(guint64)4194304, held=(guint64)0, in-use=(guint64)0, pending=(guint64)0, peak=(guint64)4194304, label=(string)none;
0:00:04.000000000 1 0x1 TRACE GST_TRACER :0:: dsmemory-mark, ts=(guint64)4000000000, label=(string)playing;
'''


def main():
    plot, soak = sys.argv[1], sys.argv[2]
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print('1..0 # SKIP no matplotlib for %s (Debian: python3-matplotlib)' %
              sys.executable)
        return 0

    with tempfile.TemporaryDirectory() as d:
        run = subprocess.run([soak, '--seconds', '2', '--threads', '2', '--seed', '1', '--out', d],
                             capture_output=True, text=True)
        recording = os.path.join(d, 'recording.csv')
        check('the host soak writes a recording', run.returncode == 0 and os.path.exists(recording),
              run.stdout + run.stderr)

        if os.path.exists(recording):
            out = os.path.join(d, 'recording.png')
            run = subprocess.run([sys.executable, plot, recording, '-o', out,
                                  '--series', os.path.join(d, 'monitor.csv') + ':rss'],
                                 capture_output=True, text=True)
            check('a recording plots', run.returncode == 0, run.stdout + run.stderr)
            check('at the default size, 1400x900', png_size(out) == (1400, 900), str(png_size(out)))
            check('with its three pools', ': 3 pools' in run.stdout, run.stdout)

            out = os.path.join(d, 'small.png')
            run = subprocess.run([sys.executable, plot, recording, '-o', out, '--size', '640x480',
                                  '--dpi', '80'], capture_output=True, text=True)
            check('at the size asked for, 640x480', run.returncode == 0 and png_size(out) == (640, 480),
                  run.stdout + run.stderr + str(png_size(out)))

        log = os.path.join(d, 'tracer.log')
        with open(log, 'w') as f:
            f.write(TRACER_LOG)
        out = os.path.join(d, 'tracer.png')
        run = subprocess.run([sys.executable, plot, log, '-o', out, '--size', '1000x700'],
                             capture_output=True, text=True)
        check('a tracer log plots, pools and elements', run.returncode == 0 and
              png_size(out) == (1000, 700) and '1 pools, 1 elements, 2 marks' in run.stdout,
              run.stdout + run.stderr + str(png_size(out)))

        run = subprocess.run([sys.executable, plot, log, '-o', out, '--series', log + ':nothing'],
                             capture_output=True, text=True)
        check('a series column that is not there is an error', run.returncode != 0, run.stdout)

        empty = os.path.join(d, 'no-tracer.log')
        with open(empty, 'w') as f:
            f.write('0:00:00.1 1 0x1 INFO GST_INIT gst.c:1:init: no tracer here\n')
        out = os.path.join(d, 'empty.png')
        run = subprocess.run([sys.executable, plot, empty, '-o', out], capture_output=True, text=True)
        check('a log without dsmemory records is an error that names the tracer, and no picture',
              run.returncode != 0 and 'no dsmemory records: is the tracer loaded?' in run.stderr and
              not os.path.exists(out), run.stdout + run.stderr)

    print('1..%d' % len(results))
    for i, (name, ok, why) in enumerate(results, 1):
        print('%s %d - %s' % ('ok' if ok else 'not ok', i, name))
        if not ok:
            for line in why.splitlines()[-15:]:
                print('# ' + line)
    return 0 if all(ok for _, ok, _ in results) else 1


if __name__ == '__main__':
    sys.exit(main())
