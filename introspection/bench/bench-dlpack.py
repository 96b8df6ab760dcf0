#!/usr/bin/python3
# bench-dlpack.py: a block's DLPack export against NumPy's own, in one run
#
# Copyright 2026 The ds authors
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Times __dlpack__ and __dlpack_device__ of a host Ds.Block and of a
Ds.BlockView against those of a NumPy array of the same size, and the round
trip numpy.from_dlpack() (device, capsule, consumer, deleter) of each, in
one process; prints the median ns per call over BATCHES batches and the
ratio to NumPy's. Then the typed arrays: block.numpy(dtype, shape) and
numpy.asarray(block) against numpy.from_dlpack(block), and
sp.empty(shape, dtype) against numpy.empty() (both dropped at once; the
scratchpad released every 100, a unit of work), three of them per unit as
a kernel would take them.

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
    print()
    print('typed arrays, ns per call (ratio to the first column)')
    print('%-32s %10s %18s %18s' % ('', 'baseline', 'Ds', ''))
    numpy_of = block.numpy
    typed = [
        ('numpy.from_dlpack(block)  |  block.numpy(f4, (32, 32))  |  numpy.asarray(block)',
         lambda: np.from_dlpack(block), lambda: numpy_of('f4', (32, 32)),
         lambda: np.asarray(block)),
    ]
    unit = Ds.Scratchpad()
    count = [0]
    empty = getattr(unit, 'empty', None)
    if empty is None:       # an override without empty(): what a user writes
        def empty(shape, dtype):
            return unit.alloc(Ds.MemoryKind.HOST, 4096, 64).numpy(dtype, shape)

    def ds_empty():
        empty((32, 32), np.float32)
        count[0] += 1
        if count[0] == 100:
            count[0] = 0
            unit.release()

    def ds_empty3():
        empty((32, 32), np.float32)
        empty((32, 32), np.float32)
        empty((32, 32), np.float32)
        count[0] += 1
        if count[0] == 100:
            count[0] = 0
            unit.release()

    def np_empty3():
        np.empty((32, 32), np.float32)
        np.empty((32, 32), np.float32)
        np.empty((32, 32), np.float32)
    typed += [
        ('numpy.empty((32, 32), f4)  |  sp.empty((32, 32), f4)',
         lambda: np.empty((32, 32), np.float32), ds_empty, None),
        ('3 x numpy.empty  |  3 x sp.empty (one unit)', np_empty3, ds_empty3, None),
    ]
    for name, base_call, ds_call, other_call in typed:
        base = median_ns(base_call, n, batches)
        d = median_ns(ds_call, n, batches)
        line = '%-32s\n%-32s %10.0f %10.0f (%4.1fx)' % (name, '', base, d, d / base)
        if other_call is not None:
            o = median_ns(other_call, n, batches)
            line += ' %10.0f (%4.1fx)' % (o, o / base)
        print(line)
    gc.enable()
    gc.collect()
    assert sp.get_n_exports() == 1, 'every capsule went back (the view is one export)'
    del view, rows, typed
    sp.release()
    unit.release()
    return 0


if __name__ == '__main__':
    sys.exit(main())
