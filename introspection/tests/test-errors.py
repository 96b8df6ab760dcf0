#!/usr/bin/python3
# The README's "Errors" table, Python column: every row, tried.
#
# Copyright 2026 The ds authors
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Reads the table from README.md and makes one case per row: the misuse as
# the row describes it, and what the Python cell says it gets (the cell's
# first clause: `GLib.Error` with the codes it names, an exception type,
# `None`, a warning, "critical logged", "works" or "not reachable"). A row
# without a case here, or a case without a row, fails. Runs under
# python3 -X dev. test-errors.js does the same for the gjs column.

import os
import re
import sys
import textwrap
import unittest
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from dstest import *  # noqa: E402,F401,F403
from dstest import GLib, GObject, Ds  # noqa: E402

import tap  # noqa: E402

try:
    import numpy as np
except ImportError:  # build-aux/ds-setup installs python3-numpy
    np = None

README = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'README.md')


def read_table(column):
    """[(misuse, cell)] of the Errors table, @column 'Python' or 'gjs'."""
    with open(README, encoding='utf-8') as f:
        text = f.read()
    section = text.split('\n## Errors\n', 1)[1].split('\n## ', 1)[0]
    rows = [line for line in section.splitlines() if line.startswith('|')]
    header = [c.strip() for c in rows[0].strip('|').split('|')]
    index = header.index(column)
    table = []
    for line in rows[2:]:
        cells = [c.strip() for c in line.strip().strip('|').split('|')]
        assert len(cells) == len(header), 'a cell holds a "|": %s' % line
        table.append((cells[0], cells[index]))
    return table


def expectation(cell):
    """What a cell promises, from its first clause."""
    clause = re.split(r'[;:(]', cell, 1)[0]
    if clause.startswith('works'):
        return ('works',)
    if clause.startswith('not reachable'):
        return ('not reachable',)
    if clause.startswith('critical logged'):
        return ('critical',)
    tokens = re.findall(r'`([^`]+)`', clause)
    assert tokens, 'no outcome in %r' % cell
    if tokens[0] == 'GLib.Error':
        # The codes, and the classes it also is (`MemoryError`).
        return ('GLib.Error', frozenset(t for t in tokens[1:] if t.isupper()),
                frozenset(t for t in tokens[1:] if re.match(r'^[A-Z][a-z]\w*Error$', t)))
    if tokens[0] in ('None', 'null'):
        return ('returns None',)
    if tokens[0] == 'Ds.LeakWarning':
        return ('warns', 'LeakWarning')
    return ('raises', frozenset(tokens))


# What a case saw.
class Seen:
    def __init__(self, what, value=None):
        self.what, self.value = what, value

    def __repr__(self):
        return '<%s %r>' % (self.what, self.value)


def attempt(func, *args):
    """Seen('raised', exception) or Seen('returned', value)."""
    try:
        value = func(*args)
    except BaseException as e:  # KeyboardInterrupt too: a row is about it
        return Seen('raised', e)
    return Seen('returned', value)


NOT_REACHABLE = Seen('not reachable')
CRITICAL = Seen('critical')


def critical_in(code):
    """Runs @code in a new interpreter; CRITICAL when it exits normally
    with a Ds-CRITICAL logged and the line 'value stays' printed."""
    r = run_python(textwrap.dedent('''
        import gi
        gi.require_version('Ds', '1.0')
        from gi.repository import Ds, GLib, GObject
        HOST = Ds.MemoryKind.HOST
    ''') + textwrap.dedent(code))
    if r.returncode == 0 and 'Ds-CRITICAL' in r.stderr and 'value stays' in r.stdout:
        return CRITICAL
    return Seen('exit %d' % r.returncode, r.stdout + r.stderr)


def with_resource(allocate=None, get_kind=None, deallocate=None):
    res = RecordingResource()
    res.allocate_hook = allocate
    res.deallocate_hook = deallocate
    if get_kind is not None:
        res.get_kind_hook = get_kind
    return res


# --- one case per row: (substring of the misuse, case, expected failure) ---------

def case_size_0():
    seen = attempt(Ds.Scratchpad().alloc, HOST, 0)
    assert len(seen.value) == 0 and seen.value.get_address() == 0, seen
    if np is not None:
        assert seen.value.numpy('f4').shape == (0,)
        assert Ds.Scratchpad().empty((0, 3), 'f4').shape == (0, 3)
    return seen


def case_overflow():
    return attempt(Ds.Scratchpad().alloc, HOST, 2 ** 64 - 2)


def case_no_upstream():
    seen = attempt(Ds.Scratchpad().alloc, HOST, 1 << 50)   # past any address space
    other = attempt(Ds.Scratchpad().alloc, HOST, 16, 1 << 63)
    assert type(other.value) is type(seen.value), (seen, other)
    return seen


def case_alignment():
    return attempt(Ds.Scratchpad().alloc, HOST, 16, 3)


def case_unknown_kind():
    seen = attempt(Ds.Scratchpad().alloc, 42, 16)
    for other in (attempt(Ds.Scratchpad().alloc, -1, 16),
                  attempt(Ds.MemoryResource.get_default, 4, -1)):
        assert type(other.value) is type(seen.value) and \
            other.value.code == seen.value.code, (seen, other)
    return seen


def case_negative():
    seen = attempt(Ds.Scratchpad().alloc, HOST, -1)
    block = Ds.Scratchpad().alloc(HOST, 64)
    for other in (attempt(block.read, -1, 2), attempt(block.tobytes, 0, -1),
                  attempt(block.write, -3, b'x'), attempt(Ds.Scratchpad().alloc, HOST, 16, -16)):
        assert type(other.value) is type(seen.value), (seen, other)
    return seen


def case_not_an_integer():
    sp = Ds.Scratchpad()
    seen = attempt(sp.alloc, HOST, 16.7)
    assert type(attempt(sp.alloc, HOST, '16').value) is type(seen.value)
    assert type(attempt(sp.alloc(HOST, 64).tobytes, 1.0).value) is type(seen.value)
    if np is not None:
        block = sp.alloc(np.int32(0), np.int64(16), np.uint64(64))
        assert block.get_size() == 16 and block.get_address() % 64 == 0
    return seen


def case_n_times_size():
    # alloc_array and DS_SCRATCHPAD_ALLOC_N are C only.
    if hasattr(Ds.Scratchpad, 'alloc_array'):
        return Seen('reachable', 'Ds.Scratchpad.alloc_array')
    return NOT_REACHABLE


def case_other_kind():
    return attempt(Ds.Scratchpad(host_resource=RecordingResource(kind=PINNED)).alloc, HOST, 16)


def case_resource_without_vfuncs():
    def define():
        class NoDeallocate(GObject.Object, Ds.MemoryResource):
            def do_get_kind(self):
                return HOST

            def do_allocate(self, size, alignment):
                return 0x1000
        return NoDeallocate
    return attempt(define)


def case_no_gpu():
    if GPU_ERROR is None:
        raise unittest.SkipTest('a GPU is present: the GPU kinds work')
    return attempt(Ds.Scratchpad().alloc, DEVICE, 16)


def case_upstream_fails():
    def boom(size, alignment):
        raise ValueError('the test pool is full')
    seen = attempt(Ds.Scratchpad(host_resource=with_resource(boom)).alloc, HOST, 16)
    assert isinstance(seen.value.__cause__, ValueError), seen
    return seen


def case_keyboard_interrupt():
    def interrupted(size, alignment):
        raise KeyboardInterrupt('^C in do_allocate')
    seen = attempt(Ds.Scratchpad(host_resource=with_resource(interrupted)).alloc, HOST, 16)
    assert str(seen.value) == '^C in do_allocate', seen
    return seen


def case_get_kind_raises():
    def no_kind():
        raise LookupError('which kind?')
    res = with_resource(get_kind=no_kind)
    seen = attempt(Ds.Scratchpad(host_resource=res).alloc, HOST, 16)
    assert isinstance(seen.value.__cause__, LookupError), seen
    assert res.allocations() == [], 'the resource is not used'
    return seen


def case_deallocate_raises():
    def cannot(ptr, size, alignment):
        raise RuntimeError('cannot take it back')
    sp = Ds.Scratchpad(host_resource=with_resource(deallocate=cannot))
    sp.alloc(HOST, 16)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        sp.release()
    names = {w.category.__name__ for w in caught}
    return Seen('warned', 'LeakWarning') if names == {'LeakWarning'} else Seen('warned', names)


def case_no_address():
    seen = attempt(Ds.Scratchpad(host_resource=with_resource(lambda s, a: '0x1000')).alloc,
                   HOST, 16)
    assert "'0x1000' (str)" in seen.value.message, seen
    return seen


def case_range():
    block = Ds.Scratchpad().alloc(HOST, 64)
    seen = attempt(block.tobytes, 100)
    assert type(attempt(block.read, 90, 20).value) is type(seen.value)
    return seen


def case_fill():
    return attempt(Ds.Scratchpad().alloc(HOST, 64).fill, 256)


def case_cpu_view():
    sp, _ = fake_gpu_scratchpad()
    return attempt(sp.alloc(DEVICE, 64).memoryview)


def case_dlpack():
    return attempt(lambda: Ds.Scratchpad().alloc(HOST, 64).__dlpack__(dl_device=(2, 0)))


def case_disposed():
    sp = Ds.Scratchpad()
    sp.run_dispose()
    return attempt(sp.alloc, HOST, 16)


def case_setting():
    sp = Ds.Scratchpad()
    sp.alloc(HOST, 16)
    seen = attempt(setattr, sp.props, 'initial_size_host', 1 << 20)
    for other in (attempt(sp.set_property, 'initial-size-host', 1 << 20),
                  attempt(sp.set_max_block_size, 1 << 20),
                  attempt(sp.set_resource, HOST, None)):
        assert type(other.value) is type(seen.value), (seen, other)
    assert sp.props.initial_size_host == 65536, 'the value stays'
    sp.props.keep_blocks = True             # may change at any time
    sp.release()
    sp.props.initial_size_host = 1 << 20    # and any setting after a release
    assert sp.props.initial_size_host == 1 << 20
    return seen


def case_release_exported():
    sp = Ds.Scratchpad()
    view = sp.alloc(HOST, 64).memoryview()
    strict = attempt(sp.release, True)
    assert isinstance(strict.value, BufferError), strict
    assert 'a memoryview of 64 bytes' in str(strict.value), strict
    view[:4] = b'kept'
    seen = attempt(sp.release)
    assert bytes(view[:4]) == b'kept' and sp.get_held_by_exports(HOST) == 64 * 1024, seen
    del view
    assert sp.get_held_by_exports(HOST) == 0
    return seen


def case_resource_reenters():
    sp = Ds.Scratchpad()

    def again(size, alignment):
        sp.alloc(HOST, 16)
    sp.props.host_resource = with_resource(again)
    seen = attempt(sp.alloc, HOST, 16)
    assert len(str(seen.value)) < 300, seen
    return seen


def case_resource_disposes():
    sp = Ds.Scratchpad()
    res = with_resource()

    def dispose(size, alignment):
        sp.run_dispose()
        res.allocate_hook = None
        return res.do_allocate(size, alignment)
    res.allocate_hook = dispose
    sp.props.host_resource = res
    seen = attempt(sp.alloc, HOST, 16)
    sp.release()
    return seen


TWO_THREADS = '''
import threading, ctypes, sys
import gi
gi.require_version('Ds', '1.0')
from gi.repository import Ds, GLib, GObject
HOST = Ds.MemoryKind.HOST
entered, go = threading.Event(), threading.Event()

class Slow(GObject.Object, Ds.MemoryResource):
    buffers = {}
    def do_get_kind(self):
        return HOST
    def do_allocate(self, size, alignment):
        if threading.current_thread() is not threading.main_thread():
            entered.set()
            go.wait(10)
        buf = ctypes.create_string_buffer(size + alignment)
        address = (ctypes.addressof(buf) + alignment - 1) & ~(alignment - 1)
        self.buffers[address] = buf
        return address
    def do_deallocate(self, ptr, size, alignment):
        del self.buffers[ptr]

sp = Ds.Scratchpad(host_resource=Slow())
first = []
worker = threading.Thread(target=lambda: first.append(sp.alloc(HOST, 16)))
worker.start()
entered.wait(10)
try:
    sp.alloc(HOST, 16)          # while the worker is inside alloc
    print('second thread: allocated')
except GLib.Error as e:
    print('second thread: GLib.Error', e.domain, e.code, e.message)
go.set()
worker.join()
print('first thread: allocated' if first else 'first thread: nothing')
sp.release()
print('released')
'''


def case_two_threads():
    r = run_python(TWO_THREADS)
    if r.returncode != 0 or 'CRITICAL' in r.stderr or 'released' not in r.stdout:
        return Seen('exit %d' % r.returncode, r.stdout + r.stderr)
    if 'second thread: GLib.Error ds-error-quark' in r.stdout and \
       'first thread: allocated' in r.stdout:
        m = re.search(r'second thread: GLib.Error ds-error-quark (\d+) (.*)', r.stdout)
        return Seen('raised', GLib.Error.new_literal(Ds.error_quark(), m.group(2),
                                                     int(m.group(1))))
    return Seen('no error', r.stdout)


def case_hidden():
    sp = Ds.Scratchpad()
    block = sp.alloc(HOST, 16)
    order = Ds.AccessOrder.new_host()
    context = Ds.KernelContext.new(order, None)
    reachable = [name for obj, name in [
        (block, 'ref'), (block, 'unref'), (block, 'export'), (order, 'free'),
        (context, 'ref'), (context, 'unref'), (Ds.PoolStats(), 'free'),
        (Ds.ScratchpadIface, 'alloc'), (order, 'type'), (order, 'stream'),
        (order, 'device'), (order, 'stream_id'), (order, 'context')] if hasattr(obj, name)]
    return NOT_REACHABLE if not reachable else Seen('reachable', reachable)


def case_wrong_self():
    seen = attempt(Ds.Scratchpad.get_reserved, None, HOST)
    assert type(attempt(Ds.Scratchpad().get_reserved, 42).value) is type(seen.value)
    return seen


def case_error_set():
    # PyGObject passes every call a GError location of its own.
    return NOT_REACHABLE


def case_pool_twice():
    pool = Ds.PoolResource.new(Ds.HostMemoryResource.new())
    address = pool.allocate(64, 16)
    pool.deallocate(address, 64, 16)
    seen = attempt(pool.deallocate, address, 64, 16)
    assert pool.get_stats().refused_deallocations == 0, 'C never saw it'
    return seen


def case_stream_handle_nowhere():
    if GPU_ERROR is None:
        # The README's row: with a driver, the driver dereferences the
        # handle; nothing may be asked of it here.
        raise unittest.SkipTest('a CUDA driver is present: the handle is the caller\'s word '
                                '(the README names this row undefined there)')
    seen = attempt(Ds.AccessOrder.new_for_handle, 0x1000, 0)
    other = attempt(Ds.AccessOrder.from_stream, 3, 0)
    assert type(other.value) is type(seen.value), (seen, other)
    return seen


def case_raw_resource():
    res = Ds.HostMemoryResource.new()
    seen = attempt(res.deallocate, 0x1234, 16, 16)
    address = res.allocate(64, 16)
    res.deallocate(address, 64, 16)
    assert type(attempt(res.deallocate, address, 64, 16).value) is type(seen.value)
    return seen


CASES = [
    ('size 0', case_size_0, None),
    ('a size that overflows once padded', case_overflow, None),
    ('no upstream can give', case_no_upstream, None),
    ('not a power of two', case_alignment, None),
    ('an unknown kind (`(DsMemoryKind) 42`', case_unknown_kind, None),
    ('a negative size', case_negative, None),
    ('that is not an integer', case_not_an_integer, None),
    ('`n × size` overflows', case_n_times_size, None),
    ('a resource of another kind', case_other_kind, None),
    ('a resource without `allocate`', case_resource_without_vfuncs, None),
    ('a GPU kind without a driver', case_no_gpu, None),
    ('the upstream fails', case_upstream_fails, None),
    ('raises `KeyboardInterrupt`', case_keyboard_interrupt, None),
    ('`do_get_kind` raises', case_get_kind_raises, None),
    ('`do_deallocate` raises', case_deallocate_raises, None),
    ('returns no memory', case_no_address, None),
    ('a block range outside the block', case_range, None),
    ('a `fill()` value', case_fill, None),
    ('a zero-copy view the CPU cannot address', case_cpu_view, None),
    ('a DLPack request', case_dlpack, None),
    ('after `g_object_run_dispose()`', case_disposed, None),
    ('a setting (orders', case_setting, None),
    ('`release` while exports', case_release_exported, None),
    ('calls back into the scratchpad it serves', case_resource_reenters, None),
    ('disposes the scratchpad it serves', case_resource_disposes, None),
    ('used by two threads at once', case_two_threads, None),
    ('`ref`, `unref`, `free` or `export`', case_hidden, None),
    ('`NULL` or a wrong object', case_wrong_self, None),
    ('`*error` already set', case_error_set, None),
    ('given back to a `DsPoolResource` twice', case_pool_twice, None),
    ('given to a raw resource', case_raw_resource, None),
    ('points at no memory of the process', case_stream_handle_nowhere, None),
]


def matches(expected, seen):
    what = expected[0]
    if what == 'GLib.Error':
        e = seen.value
        if seen.what != 'raised' or not isinstance(e, GLib.Error) or \
           e.domain != DS_ERROR_DOMAIN:
            return False
        names = {Ds.Error(e.code).value_nick.upper().replace('-', '_')}
        classes = {c.__name__ for c in type(e).__mro__}
        return (not expected[1] or names & expected[1]) and expected[2] <= classes
    if what == 'raises':
        return seen.what == 'raised' and bool(
            {c.__name__ for c in type(seen.value).__mro__} & expected[1])
    if what == 'returns None':
        return seen.what == 'returned' and seen.value is None
    if what == 'warns':
        return seen.what == 'warned' and seen.value == expected[1]
    if what == 'works':
        return seen.what == 'returned'
    if what == 'not reachable':
        return seen is NOT_REACHABLE
    if what == 'critical':
        return seen is CRITICAL
    return False


class TestErrorsTable(DsTestCase):
    def test_every_row_has_a_case(self):
        rows = [misuse for misuse, _ in read_table('Python')]
        for key, _, _ in CASES:
            with self.subTest(case=key):
                self.assertEqual(len([r for r in rows if key in r]), 1,
                                 'the case %r names no single row' % key)
        for misuse in rows:
            with self.subTest(row=misuse):
                self.assertEqual(len([k for k, _, _ in CASES if k in misuse]), 1,
                                 'a row without a case: %s' % misuse)


def _make_test(key, case, cell):
    def test(self):
        expected = expectation(cell)
        seen = case()
        self.assertTrue(matches(expected, seen),
                        'the README says %r (%r); the case saw %r' % (cell, expected, seen))
    return test


def _add_tests():
    table = read_table('Python')
    for n, (key, case, todo) in enumerate(CASES):
        cells = [cell for misuse, cell in table if key in misuse]
        if len(cells) != 1:
            continue        # test_every_row_has_a_case says so
        test = _make_test(key, case, cells[0])
        if todo:
            test = tap.expected_failure(todo)(test)
        name = 'test_row_%02d_%s' % (n + 1, re.sub(r'\W+', '_', key).strip('_').lower())
        test.__name__ = name
        setattr(TestErrorsTable, name, test)


_add_tests()


if __name__ == '__main__':
    tap.main()
