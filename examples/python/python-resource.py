#!/usr/bin/python3
# python-resource.py: a Ds.MemoryResource written in Python
#
# Copyright 2026 The ds authors
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Run from the source folder with `meson devenv -C build-ds -w .
# /usr/bin/python3 examples/python/python-resource.py`, or as the test
# ds-python-python-resource.
#
# A scratchpad takes its blocks from one upstream resource per kind. This
# one hands out host memory from a budget as bytearrays, objects that own
# it (ds keeps each alive until it is given back, and aligns inside it),
# records what it is asked, and shows what happens when it fails: the
# Python exception is chained into the error the scratchpad raises.

import gi

gi.require_version('Ds', '1.0')
from gi.repository import Ds, GObject  # noqa: E402

HOST = Ds.MemoryKind.HOST


class BudgetResource(GObject.Object, Ds.MemoryResource):
    """Host memory as bytearrays, at most `budget` bytes at a time."""

    def __init__(self, budget):
        super().__init__()
        self.budget = budget
        self.in_use = 0         # bytes handed out
        self.blocks = 0

    def do_get_kind(self):
        return HOST

    def do_allocate(self, size, alignment):
        if self.in_use + size > self.budget:
            raise MemoryError('budget of %d bytes exceeded (%d in use, %d asked)'
                              % (self.budget, self.in_use, size))
        self.in_use += size
        self.blocks += 1
        print('  upstream: allocate %6d bytes' % size)
        return bytearray(size + alignment)   # ds aligns inside it

    def do_deallocate(self, ptr, size, alignment):
        self.in_use -= size
        self.blocks -= 1
        print('  upstream: give back %5d bytes at 0x%x' % (size, ptr))


res = BudgetResource(budget=256 * 1024)
with Ds.Scratchpad(host_resource=res, initial_size_host=64 * 1024) as sp:
    print('small allocations share the first 64 KiB block:')
    blocks = [sp.alloc(HOST, 1000, 64) for _ in range(3)]
    print('  %d blocks, %d bytes reserved' % (len(blocks), sp.get_reserved(HOST)))
    print('a bigger one takes a second block, twice as large:')
    big = sp.alloc(HOST, 100 * 1024)
    big.write(0, b'from python')
    print('  %r' % big.tobytes(0, 11))
    print('one that exceeds the budget fails, with the reason:')
    try:
        sp.alloc(HOST, 200 * 1024)
    except MemoryError as e:        # Ds.OutOfMemoryError
        print('  %s (%s): %s' % (type(e).__name__, Ds.Error(e.code).value_nick, e))
        print('  caused by: %r' % e.__cause__)
    print('leaving with gives every block back, newest first:')
print('live upstream blocks afterwards: %d' % res.blocks)
assert res.blocks == 0 and res.in_use == 0
