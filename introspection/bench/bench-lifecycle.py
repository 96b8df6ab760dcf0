#!/usr/bin/python3
# bench-lifecycle.py: the binding lifecycle of bench-gi-lifecycle.c, in Python
#
# Copyright 2026 The ds authors
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Usage: bench-lifecycle.py N BATCHES; prints one JSON object per variant
# (see bench-gi-lifecycle.c): "documented" is the README's path (with,
# sp.alloc, block.write(bytes), block.tobytes()); "GI calls only" the same
# through the introspected methods, without the override's additions; the
# allocation is sp.alloc(HOST, 64) from a scratchpad released every 100.

import json
import os
import sys
import time

import gi

gi.require_version('Ds', '1.0')
from gi.repository import Ds  # noqa: E402

HOST = Ds.MemoryKind.HOST
GIScratchpad = Ds.Scratchpad.__mro__[1]   # the introspected class under the override
GIBlock = Ds.Block.__mro__[1]


def rss():
    with open('/proc/self/statm') as f:
        return int(f.read().split()[1]) * os.sysconf('SC_PAGE_SIZE')


def documented():
    with Ds.Scratchpad() as sp:
        block = sp.alloc(HOST, 4096, 64)
        block.write(0, b'hello')
        if block.tobytes(0, 5) != b'hello':
            raise AssertionError


def gi_only():
    sp = Ds.Scratchpad()
    block = GIScratchpad.alloc(sp, HOST, 4096, 64)
    GIBlock.write_data(block, 0, b'hello')
    if GIBlock.read(block, 0, 5).get_data() != b'hello':
        raise AssertionError
    GIScratchpad.release(sp)


ALLOCS_PER_RELEASE = 100
_reused = Ds.Scratchpad()
_count = [0]


def allocation():
    _reused.alloc(HOST, 64)
    _count[0] += 1
    if _count[0] % ALLOCS_PER_RELEASE == 0:
        _reused.release()


def allocation_gi_only():
    GIScratchpad.alloc(_reused, HOST, 64, 0)
    _count[0] += 1
    if _count[0] % ALLOCS_PER_RELEASE == 0:
        GIScratchpad.release(_reused)


def reused():
    block = _reused.alloc(HOST, 4096, 64)
    block.write(0, b'hello')
    if block.tobytes(0, 5) != b'hello':
        raise AssertionError
    _reused.release()


def run(what, name, lifecycle, n, batches):
    for _ in range(1000):
        lifecycle()
    before = rss()
    per_batch = n // batches
    ns = []
    for _ in range(batches):
        t0 = time.perf_counter_ns()
        for _ in range(per_batch):
            lifecycle()
        ns.append((time.perf_counter_ns() - t0) / per_batch)
    after = rss()
    ns.sort()
    print(json.dumps({'what': what, 'name': name, 'lifecycles': per_batch * batches,
                      'ns': ns[len(ns) // 2],
                      'rss_before': before, 'rss_after': after}), flush=True)


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100000
    batches = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    run('lifecycle', 'Python, documented path (with, override)', documented, n, batches)
    run('lifecycle', 'Python, GI calls only', gi_only, n, batches)
    run('lifecycle', 'Python, reused scratchpad (release() per unit)', reused, n, batches)
    run('allocation', 'Python, sp.alloc(HOST, 64) (override)', allocation, n, batches)
    run('allocation', 'Python, GI calls only', allocation_gi_only, n, batches)


if __name__ == '__main__':
    main()
