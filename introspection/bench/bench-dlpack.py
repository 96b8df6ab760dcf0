#!/usr/bin/python3
# bench-dlpack.py: a block's DLPack export against NumPy's own, in one run
#
# Copyright 2026 The ds authors
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Times __dlpack__ and __dlpack_device__ of a host Ds.Block and of a
Ds.BlockView against those of a NumPy array of the same size, and the round
trip numpy.from_dlpack() (device, capsule, consumer, deleter) of each, in
one process; prints the median ns per call over BATCHES batches and the
ratio to NumPy's.

    bench-dlpack.py [N] [BATCHES]

Needs the build tree's typelib, libds and override (meson devenv, or
`meson test --benchmark gi-dlpack`). DS_BENCH_LIFECYCLES overrides N.
"""

import gc
import os
import sys
import time

import gi

gi.require_version('Ds', '1.0')
from gi.repository import Ds  # noqa: E402

import numpy as np  # noqa: E402


def median_ns(func, n, batches):
    for _ in range(1000):
        func()
    ns = []
    for _ in range(batches):
        t0 = time.perf_counter_ns()
        for _ in range(n // batches):
            func()
        ns.append((time.perf_counter_ns() - t0) / (n // batches))
    ns.sort()
    return ns[len(ns) // 2]


def main():
    n = int(os.environ.get('DS_BENCH_LIFECYCLES', sys.argv[1] if len(sys.argv) > 1 else 200000))
    batches = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    sp = Ds.Scratchpad()
    block = sp.alloc(Ds.MemoryKind.HOST, 4096, 64)
    view = block.view('<f4', (32, 32))
    array = np.zeros((32, 32), np.float32)
    rows = [
        ('__dlpack__()', array.__dlpack__, block.__dlpack__, view.__dlpack__),
        ('__dlpack_device__()', array.__dlpack_device__, block.__dlpack_device__,
         view.__dlpack_device__),
        ('numpy.from_dlpack(x), dropped', lambda: np.from_dlpack(array),
         lambda: np.from_dlpack(block), lambda: np.from_dlpack(view)),
    ]
    gc.disable()
    print('%d calls each, median of %d batches, ns per call (ratio to NumPy)' % (n, batches))
    print('%-32s %10s %18s %18s' % ('', 'NumPy', 'Ds.Block', 'Ds.BlockView'))
    for name, numpy_call, block_call, view_call in rows:
        base = median_ns(numpy_call, n, batches)
        b = median_ns(block_call, n, batches)
        v = median_ns(view_call, n, batches)
        print('%-32s %10.0f %10.0f (%4.1fx) %10.0f (%4.1fx)' % (name, base, b, b / base,
                                                              v, v / base))
    gc.enable()
    gc.collect()
    assert sp.get_n_exports() == 1, 'every capsule went back (the view is one export)'
    del view, rows
    sp.release()
    return 0


if __name__ == '__main__':
    sys.exit(main())
