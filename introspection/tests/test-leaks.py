#!/usr/bin/python3
# Memory over many lifecycles on the documented path.
#
# Copyright 2026 The ds authors
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# RSS and the number of Python objects after N scratchpad lifecycles (with
# blocks, views and NumPy arrays) must not grow; the pools must hold no more
# than before. DS_LEAK_LIFECYCLES sets N (default 20000; the report's
# 100 000 come from introspection/bench/run-bench.py). Runs under -X dev.

import gc
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from dstest import *  # noqa: E402,F401,F403
from dstest import GLib, Ds  # noqa: E402

import tap  # noqa: E402

try:
    import numpy as np
except ImportError:  # build-aux/ds-setup installs python3-numpy
    np = None

N = int(os.environ.get('DS_LEAK_LIFECYCLES', '20000'))
# Allowed RSS growth after the warm-up: allocator noise, not a leak (one
# lost 64 KiB block per lifecycle would be 1.3 GB at N = 20000).
RSS_SLACK = 8 * MiB
# Under AddressSanitizer (meson test --setup asangi sets this) freed
# memory sits in ASan's quarantine, so RSS says nothing about leaks there:
# the object counts and the pools' bytes are still checked.
SANITIZER = os.environ.get('DS_TEST_SANITIZER', '')


def lifecycle(i):
    """The README's path: with, alloc, write, read, a view, released views."""
    with Ds.Scratchpad(initial_size_host=1 << 16) as sp:
        block = sp.alloc(HOST, 4096, 64)
        block.write(0, b'hello')
        assert block.read(0, 5).get_data() == b'hello'
        with block.memoryview() as view:
            view[5] = i & 0xff
        if np is not None:
            a = block.numpy(np.uint32, 16, offset=64)
            a[:] = i
            del a


def pool_in_use():
    stats = Ds.MemoryResource.get_default(HOST, -1).get_stats()
    return stats.bytes_in_use


class TestLeaks(DsTestCase):
    def measure(self, body, n):
        for i in range(min(2000, n)):
            body(i)
        gc.collect()
        objects, rss, in_use = len(gc.get_objects()), rss_bytes(), pool_in_use()
        for i in range(n):
            body(i)
        gc.collect()
        return (len(gc.get_objects()) - objects, rss_bytes() - rss, pool_in_use() - in_use)

    def report(self, what, n, objects, rss):
        print('# %s: %d lifecycles: %+d objects, RSS %+.1f MiB' % (what, n, objects, rss / MiB))

    def assert_rss(self, rss):
        if SANITIZER:
            print('# RSS not checked under the %s sanitizer (its quarantine keeps freed '
                  'memory)' % SANITIZER)
            return
        self.assertLess(rss, RSS_SLACK)

    def test_documented_path(self):
        objects, rss, in_use = self.measure(lifecycle, N)
        self.report('documented path', N, objects, rss)
        self.assertLess(objects, 100)
        self.assert_rss(rss)
        self.assertEqual(in_use, 0, 'the host pool holds memory it did not before')

    def test_attribute_attempts_leave_no_cycle(self):
        # Finding 4: `sp.x = block` made a cycle through C (+548 MB over
        # 100k iterations); now it raises and nothing is kept.
        def body(i):
            sp = Ds.Scratchpad()
            block = sp.alloc(HOST, 4096, 64)
            try:
                sp.x = block
            except AttributeError:
                pass
        objects, rss, in_use = self.measure(body, N)
        self.report('sp.x = block attempts', N, objects, rss)
        self.assertLess(objects, 100)
        self.assert_rss(rss)
        self.assertEqual(in_use, 0)

    def test_dropped_without_release(self):
        # Python drops a scratchpad (and its memory) with its last reference.
        def body(i):
            sp = Ds.Scratchpad()
            sp.alloc(HOST, 4096, 64).write(0, b'x')
        objects, rss, in_use = self.measure(body, N)
        self.report('dropped without release', N, objects, rss)
        self.assert_rss(rss)
        self.assertEqual(in_use, 0)

    def test_kernel_context_releases_held_scratchpad(self):
        # The scratchpad of KernelContext.run() goes back at return even if
        # the callback kept it (as a JavaScript wrapper does until GC).
        kept = []

        def work(context, data):
            sp = context.get_scratchpad()
            kept.append(sp)
            sp.alloc(HOST, 4096, 64)
            return True
        ctx = Ds.KernelContext.new(Ds.AccessOrder.new_host(), None)
        self.assertTrue(ctx.run(work, None))
        self.assertEqual(kept[0].get_reserved(HOST), 0)
        self.assertEqual(kept[0].get_n_blocks(HOST), 0)

        # ... except the block a view of it still uses, until the view goes.
        views = []

        def export(context, data):
            views.append(context.get_scratchpad().alloc(HOST, 64).memoryview())
            return True
        self.assertTrue(ctx.run(export, None))
        views[0][:2] = b'ok'
        self.assertEqual(bytes(views[0][:2]), b'ok')
        sp = views[0].obj._ds_export.block.get_scratchpad()
        self.assertEqual(sp.get_reserved(HOST), 0)
        self.assertGreater(sp.get_held_by_exports(HOST), 0)
        views.clear()
        gc.collect()
        self.assertEqual(sp.get_held_by_exports(HOST), 0)


if __name__ == '__main__':
    tap.main()
