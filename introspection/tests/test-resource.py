#!/usr/bin/python3
# Ds.MemoryResource from Python: classes refused when they are defined,
# what their methods raise, raw resources called from Python.
#
# Copyright 2026 The ds authors
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Every script that used to crash the process runs in a process of its own
# and must exit normally with the error the README promises, the cases
# that go around the override (to reach the C library as gjs and C callers
# do) included. Runs under python3 -X dev.

import ctypes
import gc
import os
import sys
import textwrap
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from dstest import *  # noqa: E402,F401,F403
from dstest import GLib, GObject, Ds  # noqa: E402

import tap  # noqa: E402

try:
    import numpy as np
except ImportError:  # build-aux/ds-setup installs python3-numpy
    np = None

PRELUDE = textwrap.dedent('''
    import ctypes, sys, warnings
    import gi
    gi.require_version('Ds', '1.0')
    from gi.repository import Ds, GLib, GObject
    HOST = Ds.MemoryKind.HOST

    class Memory:
        """Host memory for resources: ctypes buffers by address."""
        buffers = {}
        def take(self, size, alignment):
            buf = ctypes.create_string_buffer(size + alignment)
            address = (ctypes.addressof(buf) + alignment - 1) & ~(alignment - 1)
            self.buffers[address] = buf
            return address
        def give(self, ptr):
            del self.buffers[ptr]
''')

# Goes around the override's class check, as a C or gjs caller would: what
# C must then do itself (C change (a)).
BYPASS = textwrap.dedent('''
    import gi.overrides.Ds
    gi.overrides.Ds._check_resource_class = lambda cls: None
''')

# The shapes of resource the C library used to crash on.
SHAPES = {
    'no do_deallocate': '''
        def do_get_kind(self):
            return HOST
        def do_allocate(self, size, alignment):
            return Memory().take(size, alignment)
    ''',
    'no do_allocate': '''
        def do_get_kind(self):
            return HOST
        def do_deallocate(self, ptr, size, alignment):
            Memory().give(ptr)
    ''',
    'only do_allocate_async': '''
        def do_get_kind(self):
            return HOST
        def do_allocate_async(self, size, alignment, order):
            return Memory().take(size, alignment)
    ''',
    'do_allocate_async without do_deallocate_async': '''
        def do_get_kind(self):
            return HOST
        def do_allocate(self, size, alignment):
            return Memory().take(size, alignment)
        def do_deallocate(self, ptr, size, alignment):
            Memory().give(ptr)
        def do_allocate_async(self, size, alignment, order):
            return Memory().take(size, alignment)
    ''',
}


def shape_script(shape, bypass=False):
    return PRELUDE + (BYPASS if bypass else '') + textwrap.dedent('''
        try:
            class R(GObject.Object, Ds.MemoryResource):
    ''') + textwrap.indent(textwrap.dedent(SHAPES[shape]), '        ') + textwrap.dedent('''
        except TypeError as e:
            print('TypeError:', e)
            sys.exit(0)
        sp = Ds.Scratchpad(device_order=Ds.AccessOrder.new_host(), host_resource=R())
        try:
            sp.alloc(HOST, 100)
            print('allocated')
        except GLib.Error as e:
            print('GLib.Error:', Ds.Error(e.code).value_nick, e.message)
        sp.release()
        print('released')
    ''')


class TestClassChecks(DsTestCase):
    """A class a scratchpad could not use is refused where it is defined."""

    def test_shapes_in_a_process_each(self):
        for shape in SHAPES:
            with self.subTest(shape=shape):
                r = run_python(shape_script(shape))
                self.assertEqual(r.returncode, 0, 'crashed:\n' + r.stderr)
                self.assertIn('TypeError: Ds.MemoryResource class R must define', r.stdout)
                missing = {'no do_deallocate': 'do_deallocate(self, ptr, size, alignment)',
                           'no do_allocate': 'do_allocate(self, size, alignment)',
                           'only do_allocate_async': 'do_allocate(self, size, alignment)',
                           'do_allocate_async without do_deallocate_async':
                               'do_deallocate_async(self, ptr, size, alignment, order)'}[shape]
                self.assertIn(missing, r.stdout)

    def test_complete_classes_and_subclasses(self):
        class Base(GObject.Object, Ds.MemoryResource):
            def do_get_kind(self):
                return HOST

            def do_allocate(self, size, alignment):
                return 0x1000

            def do_deallocate(self, ptr, size, alignment):
                pass

        class Child(Base):      # inherits all three
            def do_allocate(self, size, alignment):
                return 0x2000

        self.assertEqual(Child().get_kind(), HOST)

    def test_shared_code_in_a_mixin(self):
        # PyGObject does not hook up a plain mixin's do_* methods (C would
        # call NULL); named in the class body, as the TypeError says, they
        # are.
        class Shared:
            def do_get_kind(self):
                return HOST

            def do_deallocate(self, ptr, size, alignment):
                pass

        with self.assertRaises(TypeError) as cm:
            class Mixed(Shared, GObject.Object, Ds.MemoryResource):
                def do_allocate(self, size, alignment):
                    return 0x3000
        self.assertIn('do_get_kind(self), do_deallocate(self, ptr, size, alignment)',
                      str(cm.exception))
        self.assertIn('do_deallocate = Mixin.do_deallocate', str(cm.exception))

        class Concrete(Shared, GObject.Object, Ds.MemoryResource):
            do_get_kind = Shared.do_get_kind
            do_deallocate = Shared.do_deallocate

            def do_allocate(self, size, alignment):
                return 0x3000

        self.assertEqual(Concrete().get_kind(), HOST)
        with self.assertRaises(TypeError):
            class Abstract(GObject.Object, Ds.MemoryResource):
                def do_get_kind(self):
                    return HOST

    def test_introspected_resources_are_not_checked(self):
        self.assertEqual(Ds.PoolResource.new(Ds.HostMemoryResource.new()).get_kind(), HOST)


class TestClassChecksInC(DsTestCase):
    """Around the override, the C library must check a resource itself: at
    the first allocation from it, DS_ERROR_INVALID_ARGUMENT and no call
    into it (gjs and C callers have no override)."""

    def check(self, shape):
        r = run_python(shape_script(shape, bypass=True))
        self.assertEqual(r.returncode, 0, 'crashed (%d):\n%s' % (r.returncode, r.stderr))
        self.assertIn('GLib.Error: invalid-argument', r.stdout)
        self.assertIn('released', r.stdout)
        self.assertNotIn('CRITICAL', r.stderr)

    def test_no_deallocate(self):
        self.check('no do_deallocate')

    def test_no_allocate(self):
        self.check('no do_allocate')

    def test_only_allocate_async(self):
        self.check('only do_allocate_async')


RAW_SCRIPTS = {
    'a pointer it did not hand out': '''
        res.deallocate(0x1234, 16, 16)
    ''',
    'a second free': '''
        address = res.allocate(64, 16)
        res.deallocate(address, 64, 16)
        res.deallocate(address, 64, 16)
    ''',
    'another size': '''
        address = res.allocate(64, 16)
        res.deallocate(address, 32, 16)
    ''',
}


def raw_script(case, bypass=False):
    call = textwrap.dedent(RAW_SCRIPTS[case])
    if bypass:
        # The introspected method under the override: what gjs calls.
        call = call.replace('res.deallocate(', 'introspected.deallocate(res, ')
    return PRELUDE + textwrap.dedent('''
        res = Ds.HostMemoryResource.new()
        introspected = next(k for k in Ds.MemoryResource.__mro__
                            if k.__module__ == 'gi.repository.Ds')
        try:
    ''') + textwrap.indent(call, '    ') + textwrap.dedent('''
            print('no error')
        except GLib.Error as e:
            print('GLib.Error:', Ds.Error(e.code).value_nick, e.message)
        print('done')
    ''')


class TestRawResources(DsTestCase):
    """Ds.HostMemoryResource.new().deallocate(0x1234, 16, 16) crashed."""

    def test_in_a_process_each(self):
        for case in RAW_SCRIPTS:
            with self.subTest(case=case):
                r = run_python(raw_script(case))
                self.assertEqual(r.returncode, 0, 'crashed:\n' + r.stderr)
                self.assertIn('GLib.Error: invalid-argument', r.stdout)
                self.assertIn('nothing was deallocated', r.stdout)
                self.assertIn('done', r.stdout)

    def test_allocate_deallocate_pairs(self):
        for res in (Ds.HostMemoryResource.new(), Ds.PoolResource.new(Ds.HostMemoryResource.new()),
                    RecordingResource()):
            with self.subTest(resource=type(res).__name__):
                a = res.allocate(100, 64)
                b = res.allocate(100, 0)
                self.assertEqual(a % 64, 0)
                res.deallocate(b, 100, 16)      # alignment 0 is 16
                res.deallocate(a, 100, 64)
                self.assertRaisesDsError(Ds.Error.INVALID_ARGUMENT, res.deallocate, a, 100, 64)
                e = self.assertRaisesDsError(Ds.Error.INVALID_ARGUMENT, res.deallocate,
                                             0x10, 16, 16)
                self.assertIn('0x10 was not handed out', e.message)
        other = Ds.HostMemoryResource.new()
        mine = Ds.HostMemoryResource.new()
        address = mine.allocate(64, 16)
        self.assertRaisesDsError(Ds.Error.INVALID_ARGUMENT, other.deallocate, address, 64, 16)
        mine.deallocate(address, 64, 16)

    def test_numpy_addresses(self):
        if np is None:
            self.skipTest('NumPy is not installed (python3-numpy)')
        res = Ds.HostMemoryResource.new()
        address = res.allocate(np.int64(64), np.uint32(16))
        res.deallocate(np.uint64(address), np.int64(64), 16)
        self.assertRaises(TypeError, res.allocate, np.float64(64), 16)

    def test_foreign_pointer_in_c(self):
        self.check_c('a pointer it did not hand out')

    def test_second_free_in_c(self):
        self.check_c('a second free')

    def check_c(self, case):
        r = run_python(raw_script(case, bypass=True))
        self.assertEqual(r.returncode, 0, 'crashed (%d):\n%s' % (r.returncode, r.stderr))
        self.assertIn('Ds-CRITICAL', r.stderr)
        self.assertIn('done', r.stdout)


class Raising(RecordingResource):
    """A RecordingResource whose methods raise what a test gives them."""

    def raise_in(self, method, exc):
        def hook(*args):
            raise exc
        setattr(self, method + '_hook', hook)
        return self


class TestBaseExceptions(DsTestCase):
    """A KeyboardInterrupt or SystemExit in a resource goes on out of the
    call that made the resource run, as it is."""

    def entry_points(self, res):
        sp = Ds.Scratchpad(device_order=Ds.AccessOrder.new_host(), host_resource=res)
        pool = Ds.PoolResource.new(res)
        ctx = Ds.KernelContext.new(Ds.AccessOrder.new_host(),
                                   Ds.Scratchpad(device_order=Ds.AccessOrder.new_host(),
                                                 host_resource=res))
        return [('Scratchpad.alloc', lambda: sp.alloc(HOST, 100)),
                ('MemoryResource.allocate', lambda: res.allocate(100, 16)),
                ('a pool over it', lambda: pool.allocate(100, 16)),
                ('KernelContext.run', lambda: ctx.run(
                    lambda c, d: c.get_scratchpad().alloc(HOST, 100) is not None, None))]

    def test_in_do_allocate(self):
        for exc in (KeyboardInterrupt('^C'), SystemExit(7)):
            res = Raising().raise_in('allocate', exc)
            for name, call in self.entry_points(res):
                with self.subTest(exception=type(exc).__name__, call=name):
                    with self.assertRaises(type(exc)) as cm:
                        call()
                    self.assertIs(cm.exception, exc)
                    self.assertEqual(res.live, {})

    def test_from_the_callback_of_run(self):
        ctx = Ds.KernelContext.new(Ds.AccessOrder.new_host(), None)

        def interrupted(context, data):
            raise KeyboardInterrupt('in the work')
        self.assertRaises(KeyboardInterrupt, ctx.run, interrupted, None)

        def failing(context, data):
            raise ValueError('the work failed')
        with self.assertRaises(ValueError) as cm:
            ctx.run(failing, None)
        self.assertEqual(str(cm.exception), 'the work failed')

    def test_in_do_deallocate_during_release(self):
        res = Raising()
        sp = Ds.Scratchpad(device_order=Ds.AccessOrder.new_host(), host_resource=res)
        sp.alloc(HOST, 100)
        res.raise_in('deallocate', KeyboardInterrupt('^C while releasing'))
        with self.assertRaises(KeyboardInterrupt):
            sp.release()
        # The release itself went through; the block is leaked.
        self.assertEqual(sp.get_reserved(HOST), 0)
        self.assertEqual(len(res.live), 1)

    def test_in_do_deallocate_at_finalize(self):
        res = Raising()
        sp = Ds.Scratchpad(device_order=Ds.AccessOrder.new_host(), host_resource=res)
        sp.alloc(HOST, 100)
        res.raise_in('deallocate', KeyboardInterrupt('^C at finalize'))
        seen = []
        hook, sys.unraisablehook = sys.unraisablehook, seen.append
        try:
            del sp
            gc.collect()
        finally:
            sys.unraisablehook = hook
        self.assertEqual(len(seen), 1)
        self.assertIsInstance(seen[0].exc_value, KeyboardInterrupt)
        self.assertIn('do_deallocate raised KeyboardInterrupt', seen[0].err_msg)

    def test_system_exit_ends_the_process_with_its_code(self):
        r = run_python(PRELUDE + textwrap.dedent('''
            class R(GObject.Object, Ds.MemoryResource):
                def do_get_kind(self):
                    return HOST
                def do_allocate(self, size, alignment):
                    sys.exit(7)
                def do_deallocate(self, ptr, size, alignment):
                    pass
            sp = Ds.Scratchpad(host_resource=R())
            try:
                sp.alloc(HOST, 16)
            except KeyboardInterrupt:
                pass
            print('not reached')
        '''))
        self.assertEqual(r.returncode, 7, r.stdout + r.stderr)
        self.assertNotIn('not reached', r.stdout)


class TestGetKind(DsTestCase):
    def test_raising_get_kind_fails_the_allocation(self):
        for value in ('raises', 42, 'host'):
            with self.subTest(get_kind=value):
                res = RecordingResource()

                def get_kind(value=value):
                    if value == 'raises':
                        raise LookupError('which kind?')
                    return value
                res.get_kind_hook = get_kind
                for kind, prop in ((HOST, 'host_resource'), (DEVICE, 'device_resource')):
                    sp = Ds.Scratchpad(device_order=Ds.AccessOrder.new_host(), **{prop: res})
                    e = self.assertRaisesDsError(Ds.Error.INVALID_ARGUMENT, sp.alloc, kind, 16)
                    self.assertIn('do_get_kind raised', e.message)
                    self.assertIsNotNone(e.__cause__)
                    self.assertEqual(sp.get_reserved(kind), 0)
                self.assertEqual(res.allocations(), [], 'never used')

    def test_ints_are_kinds(self):
        res = RecordingResource()
        res.get_kind_hook = lambda: 0
        sp = Ds.Scratchpad(host_resource=res)
        self.assertTrue(sp.alloc(HOST, 16).is_valid())


class TestAddresses(DsTestCase):
    def test_numpy_int_address(self):
        # Anything with __index__ is an address: NumPy's integers are.
        if np is None:
            self.skipTest('NumPy is not installed (python3-numpy)')
        res = RecordingResource()

        def numpy_address(size, alignment):
            buf = ctypes.create_string_buffer(size + alignment)
            address = (ctypes.addressof(buf) + alignment - 1) & ~(alignment - 1)
            res.live[address] = (buf, size, alignment)
            return np.int64(address)
        res.allocate_hook = numpy_address
        sp = Ds.Scratchpad(host_resource=res)
        block = sp.alloc(HOST, 64)
        base = next(iter(res.live))
        self.assertTrue(base <= block.get_address() < base + 64 * KiB)
        block.write(0, b'numpy')
        self.assertEqual(ctypes.string_at(block.get_address(), 5), b'numpy')
        sp.release()
        self.assertEqual(res.live, {})

    def test_refused_values_name_their_type(self):
        for value, text in [(4096.0, '4096.0 (float)'), ('0x1000', "'0x1000' (str)"),
                            (None, 'None (NoneType)')]:
            with self.subTest(value=value):
                res = RecordingResource()
                res.allocate_hook = lambda s, a, v=value: v
                e = self.assertRaisesDsError(Ds.Error.INVALID_ARGUMENT,
                                             Ds.Scratchpad(host_resource=res).alloc, HOST, 16)
                self.assertIn(text, e.message)


class TestOutOfMemory(DsTestCase):
    def test_memory_error(self):
        res = RecordingResource(fail=True)
        sp = Ds.Scratchpad(host_resource=res)
        with self.assertRaises(MemoryError) as cm:
            sp.alloc(HOST, 100)
        e = cm.exception
        self.assertIsInstance(e, GLib.Error)
        self.assertIsInstance(e, Ds.OutOfMemoryError)
        self.assertTrue(e.matches(Ds.error_quark(), Ds.Error.OUT_OF_MEMORY))
        self.assertIn('recording resource is full', e.message)
        for call in (lambda: res.allocate(64, 16), lambda: Ds.Scratchpad().alloc(HOST, 1 << 50)):
            self.assertRaises(MemoryError, call)

    def test_other_codes_are_not(self):
        with self.assertRaises(GLib.Error) as cm:
            Ds.Scratchpad().alloc(HOST, 16, 3)
        self.assertNotIsInstance(cm.exception, MemoryError)



# What a resource may do to the scratchpad it serves, each in a process
# of its own (python3 -X dev, faulthandler on): never a signal.
CRASH_CLASSES = {
    'disposes its scratchpad in do_allocate': ('''
        class R(Base):
            def do_allocate(self, size, alignment):
                sp.run_dispose()
                return Base.do_allocate(self, size, alignment)
        sp = Ds.Scratchpad(host_resource=R())
        try:
            sp.alloc(HOST, 16)
        except Ds.DisposedError as e:
            print('DisposedError:', e)
        sp.release()
        del sp
        print('done')
    ''', 'DisposedError: Cannot allocate 16 bytes'),
    'disposes its scratchpad in do_deallocate': ('''
        class R(Base):
            def do_deallocate(self, ptr, size, alignment):
                sp.run_dispose()
                Base.do_deallocate(self, ptr, size, alignment)
        sp = Ds.Scratchpad(host_resource=R())
        sp.alloc(HOST, 16)
        sp.alloc(HOST, 1 << 20)
        sp.release()
        del sp
        print('done')
    ''', 'done'),
    'allocates from its scratchpad in do_allocate': ('''
        class R(Base):
            def do_allocate(self, size, alignment):
                sp.alloc(HOST, 16)
        sp = Ds.Scratchpad(host_resource=R())
        try:
            sp.alloc(HOST, 16)
        except Ds.BusyError as e:
            print('BusyError: %d characters' % len(str(e)))
            assert len(str(e)) < 300, e
        print('done')
    ''', 'BusyError: '),
    'releases its scratchpad in do_deallocate': ('''
        import warnings
        class R(Base):
            def do_deallocate(self, ptr, size, alignment):
                Base.do_deallocate(self, ptr, size, alignment)
                sp.release()
        sp = Ds.Scratchpad(host_resource=R())
        sp.alloc(HOST, 16)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter('always')
            sp.release()
        print('warnings', len(caught), caught[0].category.__name__)
        print('cause', type(caught[0].message.__cause__).__name__)
        print('done')
    ''', 'warnings 1 LeakWarning\ncause BusyError'),
    'hands over memory as an object (bytearray)': ('''
        import weakref
        class Owner(bytearray):
            pass
        owners = []
        class R(Base):
            def do_allocate(self, size, alignment):
                owner = Owner(size + alignment)
                owners.append(weakref.ref(owner))
                return owner
            def do_deallocate(self, ptr, size, alignment):
                print('deallocate, owner alive:', owners[0]() is not None)
        sp = Ds.Scratchpad(host_resource=R())
        block = sp.alloc(HOST, 100, 64)
        block.write(0, b'x' * 100)
        print('aligned', block.get_address() % 64 == 0, block.tobytes(0, 3))
        sp.release()
        print('owner gone:', owners[0]() is None)
    ''', 'aligned True b\'xxx\'\ndeallocate, owner alive: True\nowner gone: True'),
    'hands over too little or read-only memory': ('''
        for value in (bytearray(8), b'x' * 100000):
            class R(Base):
                def do_allocate(self, size, alignment, v=value):
                    return v
            try:
                Ds.Scratchpad(host_resource=R()).alloc(HOST, 16)
            except (Ds.OutOfMemoryError, Ds.InvalidArgumentError) as e:
                print(type(e).__name__)
    ''', 'OutOfMemoryError\nInvalidArgumentError'),
    'hands over a NumPy array': ('''
        import numpy as np
        class R(Base):
            def do_allocate(self, size, alignment):
                return np.empty(size + alignment, np.uint8)
        sp = Ds.Scratchpad(host_resource=R())
        a = sp.empty((10, 10), 'f8')
        a[:] = 2
        print('sum', a.sum())
        del a
        sp.release()
    ''', 'sum 200.0'),
}

CRASH_PROLOGUE = '''
import faulthandler
faulthandler.enable()
import gi
gi.require_version('Ds', '1.0')
from gi.repository import Ds, GObject
HOST = Ds.MemoryKind.HOST
UP = Ds.MemoryResource.get_default(HOST, -1)

class Base(GObject.Object, Ds.MemoryResource):
    def do_get_kind(self):
        return HOST
    def do_allocate(self, size, alignment):
        return UP.allocate(size, alignment)
    def do_deallocate(self, ptr, size, alignment):
        UP.deallocate(ptr, size, alignment)
'''


class TestResourcesCannotCrash(DsTestCase):
    def test_each_in_its_own_process(self):
        for name, (body, expected) in CRASH_CLASSES.items():
            with self.subTest(resource=name):
                r = run_python(CRASH_PROLOGUE + textwrap.dedent(body))
                self.assertGreaterEqual(r.returncode, 0, 'a signal:\n' + r.stderr)
                self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
                self.assertNotIn('CRITICAL', r.stderr)
                self.assertIn(expected, r.stdout, r.stdout + r.stderr)

if __name__ == '__main__':
    tap.main()
