#!/usr/bin/env python3
# run-bench.py: one scratchpad lifecycle in C, Python and gjs, in one run
#
# Copyright 2026 The ds authors
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Runs bench-gi-lifecycle (C), bench-lifecycle.py (Python) and
bench-lifecycle.js (gjs) one after the other with the same N and prints,
for each variant, the median ns per lifecycle and per allocation, the
ratio to C through DsBlock (what the bindings call), and the RSS after a
warm-up and after N iterations.

    run-bench.py --c BUILDDIR/introspection/bench/bench-gi-lifecycle \\
        --python /usr/bin/python3 --gjs gjs [-n 100000] [--batches 20]

The Python and gjs runs need the build tree's typelib, libds and override
(meson devenv, or `meson test --benchmark gi-lifecycle`, which sets them).
DS_BENCH_LIFECYCLES overrides -n.
"""

import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
MiB = 1024 * 1024


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.stderr.write(r.stdout + r.stderr)
        raise SystemExit('FAIL: %s exited with %d' % (cmd[0], r.returncode))
    return [json.loads(line) for line in r.stdout.splitlines() if line.startswith('{')]


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--c', required=True)
    ap.add_argument('--python', default='/usr/bin/python3')
    ap.add_argument('--gjs', default='gjs')
    ap.add_argument('-n', type=int, default=int(os.environ.get('DS_BENCH_LIFECYCLES', 100000)))
    ap.add_argument('--batches', type=int, default=20)
    args = ap.parse_args()
    n, b = str(args.n), str(args.batches)

    results = run([args.c, n, b])
    results += run([args.python, os.path.join(HERE, 'bench-lifecycle.py'), n, b])
    results += run([args.gjs, os.path.join(HERE, 'bench-lifecycle.js'), n, b])

    titles = {
        'lifecycle': '%d lifecycles each (new scratchpad, one 4 KiB host block, 5 bytes '
                     'written and read back, released); median of %s batches' % (args.n, b),
        'allocation': '%d allocations each (a 64-byte host block from a long-lived '
                      'scratchpad released every 100); median of %s batches' % (args.n, b),
    }
    for what, title in titles.items():
        rows = [r for r in results if r.get('what', 'lifecycle') == what]
        base = rows[0]['ns']
        print(title)
        print('%-50s %9s %8s %28s' % ('', 'ns', 'vs C', 'RSS warm -> after N (MiB)'))
        for r in rows:
            rss = '%.1f -> %.1f' % (r['rss_before'] / MiB, r['rss_after'] / MiB)
            if 'rss_after_gc' in r:
                rss += ' (%.1f after GC)' % (r['rss_after_gc'] / MiB)
            print('%-50s %9.0f %7.1fx %28s' % (r['name'], r['ns'], r['ns'] / base, rss))
        print()
    return 0


if __name__ == '__main__':
    sys.exit(main())
