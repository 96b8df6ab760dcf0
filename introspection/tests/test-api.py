#!/usr/bin/python3
# The Python API a GPU Python user expects, and what it reports.
#
# Copyright 2026 The ds authors
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Wrong-kind resources and properties that
# read back what is in effect; exceptions from Python resources chained or
# reported; no reference cycle through a scratchpad; write() from any
# bytes-like object, uploads that return blocks, orders from stream objects,
# docstrings and the type stub. Runs under python3 -X dev.

import array
import ast
import ctypes
import gc
import inspect
import os
import pydoc
import sys
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

STUB = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'overrides',
                    'gi-stubs', 'repository', 'Ds.pyi')


class TestWrongKindResources(DsTestCase):
    """Finding 3 (the C side is in test-scratchpad-settings)."""

    def test_wrong_kind_is_an_error_at_first_allocation(self):
        pinned = RecordingResource(kind=PINNED)
        sp = Ds.Scratchpad(host_resource=pinned)   # no critical, no error yet
        e = self.assertRaisesDsError(Ds.Error.INVALID_ARGUMENT, sp.alloc, HOST, 16)
        self.assertIn('host-resource', e.message)
        self.assertIn('pinned', e.message)
        self.assertIn('host', e.message.replace('host-resource', ''))
        self.assertEqual(pinned.calls, [], 'the wrong resource is never called')
        # It stays an error, and other kinds are not affected.
        self.assertRaisesDsError(Ds.Error.INVALID_ARGUMENT, sp.alloc, HOST, 16)
        self.assertEqual(sp.get_n_blocks(HOST), 0)

    def test_wrong_kind_gpu_property(self):
        host = RecordingResource(kind=HOST)
        sp = Ds.Scratchpad(device_order=Ds.AccessOrder.new_host(), device_resource=host)
        e = self.assertRaisesDsError(Ds.Error.INVALID_ARGUMENT, sp.alloc, DEVICE, 16)
        self.assertIn('device-resource', e.message)
        self.assertTrue(sp.alloc(HOST, 16).is_valid())

    @made_up_handles
    def test_properties_read_back_what_is_in_effect(self):
        order = Ds.AccessOrder.new_for_handle(fake_handle(5), 0)
        sp = Ds.Scratchpad(device_order=order)
        self.assertTrue(sp.props.pinned_dealloc_order.equal(order))
        self.assertTrue(sp.props.managed_dealloc_order.equal(order))
        host_order = Ds.AccessOrder.new_host()
        sp2 = Ds.Scratchpad(device_order=order, pinned_dealloc_order=host_order)
        self.assertTrue(sp2.props.pinned_dealloc_order.is_host())
        self.assertTrue(sp2.props.managed_dealloc_order.equal(order))
        # The default host resource, before and after the first allocation.
        default = Ds.MemoryResource.get_default(HOST, -1)
        self.assertIs(sp.props.host_resource, default)
        sp.alloc(HOST, 16)
        self.assertIs(sp.props.host_resource, default)
        mine = RecordingResource()
        self.assertIs(Ds.Scratchpad(host_resource=mine).props.host_resource, mine)


class TestPythonResourceErrors(DsTestCase):
    """Finding 4: what a failing Python resource reports."""

    def resource(self, behaviour):
        res = RecordingResource()
        res.allocate_hook = behaviour
        return res

    def test_exception_is_chained(self):
        def boom(size, alignment):
            raise ValueError('no room in the test pool')
        sp = Ds.Scratchpad(host_resource=self.resource(boom))
        with self.assertRaises(GLib.Error) as cm:
            sp.alloc(HOST, 100)
        e = cm.exception
        self.assertDsError(e, Ds.Error.OUT_OF_MEMORY)
        self.assertIn('do_allocate raised ValueError: no room in the test pool', e.message)
        self.assertIn(os.path.basename(__file__), e.message)
        self.assertIsInstance(e.__cause__, ValueError)
        self.assertEqual(str(e.__cause__), 'no room in the test pool')
        self.assertIsNotNone(e.__cause__.__traceback__)
        # The scratchpad is consistent and works once the resource does.
        self.assertEqual(sp.get_n_blocks(HOST), 0)

    def test_memory_error(self):
        def full(size, alignment):
            raise MemoryError()
        sp = Ds.Scratchpad(host_resource=self.resource(full))
        with self.assertRaises(GLib.Error) as cm:
            sp.alloc(HOST, 100)
        self.assertDsError(cm.exception, Ds.Error.OUT_OF_MEMORY)
        self.assertIsInstance(cm.exception.__cause__, MemoryError)

    def test_glib_error_passes_through(self):
        def cuda(size, alignment):
            raise GLib.Error.new_literal(Ds.error_quark(), 'custom failure', int(Ds.Error.CUDA))
        sp = Ds.Scratchpad(host_resource=self.resource(cuda))
        with self.assertRaises(GLib.Error) as cm:
            sp.alloc(HOST, 100)
        self.assertDsError(cm.exception, Ds.Error.CUDA)
        # The resource's message, after the request as the caller made it.
        self.assertEqual(cm.exception.message, 'Cannot allocate 100 bytes of host memory '
                         'with alignment 0 (the default, 16): custom failure')

    def test_bad_return_values(self):
        for value, why in [(None, 'returned None'), ('0x1000', "returned '0x1000'"),
                           (-16, 'returned -16'), (True, 'returned True'),
                           (0x1001, 'not aligned')]:
            with self.subTest(value=value):
                sp = Ds.Scratchpad(host_resource=self.resource(lambda s, a, v=value: v))
                e = self.assertRaisesDsError(Ds.Error.INVALID_ARGUMENT, sp.alloc, HOST, 16)
                self.assertIn(why, e.message)

    def test_other_entry_points_name_the_exception(self):
        # Called directly (not through Scratchpad.alloc), the error still
        # names the exception, which is chained there too.
        def boom(size, alignment):
            raise KeyError('direct')
        res = self.resource(boom)
        with self.assertRaises(GLib.Error) as cm:
            res.allocate(64, 16)
        self.assertIn("KeyError: 'direct'", cm.exception.message)
        ctx = Ds.KernelContext.new(Ds.AccessOrder.new_host(), Ds.Scratchpad(host_resource=res))

        def work(context, data):
            context.get_scratchpad().alloc(HOST, 16)
            return True
        with self.assertRaises(GLib.Error) as cm:
            ctx.run(work, None)
        self.assertIn("KeyError: 'direct'", cm.exception.message)

    def test_failing_deallocate_is_reported(self):
        def leak(ptr, size, alignment):
            raise RuntimeError('cannot take it back')
        res = RecordingResource()
        res.deallocate_hook = leak
        sp = Ds.Scratchpad(host_resource=res)
        sp.alloc(HOST, 100)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter('always')
            sp.release()
        leaks = [w for w in caught if issubclass(w.category, Ds.LeakWarning)]
        self.assertEqual(len(leaks), 1, [str(w.message) for w in caught])
        message = str(leaks[0].message)
        self.assertIn('do_deallocate raised RuntimeError: cannot take it back', message)
        self.assertIn('65536 bytes at 0x%x' % next(iter(res.live)), message)
        self.assertIn('leaked', message)
        self.assertIsInstance(leaks[0].message.__cause__, RuntimeError)
        self.assertEqual(leaks[0].filename, __file__)
        # The scratchpad itself is released and usable.
        self.assertEqual(sp.get_reserved(HOST), 0)

    def test_subclass_overrides_are_separate(self):
        # PyGObject 3.42 hooks a subclass's interface vfunc into the vtable
        # it shares with the parent; the override dispatches on the type.
        class A(GObject.Object, Ds.MemoryResource):
            def do_get_kind(self):
                return HOST

            def do_allocate(self, size, alignment):
                return 0x1000

            def do_deallocate(self, ptr, size, alignment):
                pass

        class B(A):
            def do_allocate(self, size, alignment):
                return 0x2000

        class C(B):
            pass
        self.assertEqual(A().allocate(16, 16), 0x1000)
        self.assertEqual(B().allocate(16, 16), 0x2000)
        self.assertEqual(C().allocate(16, 16), 0x2000)
        self.assertEqual(A().allocate(16, 16), 0x1000)

    def test_failing_deallocate_shows_by_default(self):
        code = '''
import gi, ctypes
gi.require_version('Ds', '1.0')
from gi.repository import Ds, GObject
class R(GObject.Object, Ds.MemoryResource):
    def do_get_kind(self):
        return Ds.MemoryKind.HOST
    def do_allocate(self, size, alignment):
        self.buf = ctypes.create_string_buffer(size + alignment)
        return (ctypes.addressof(self.buf) + alignment - 1) & ~(alignment - 1)
    def do_deallocate(self, ptr, size, alignment):
        raise OSError('gone')
sp = Ds.Scratchpad(host_resource=R())
sp.alloc(Ds.MemoryKind.HOST, 8, 0)
sp.release()
print('done')
'''
        r = run_python(code, dev=False)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn('done', r.stdout)
        self.assertIn('LeakWarning: R.do_deallocate raised OSError: gone', r.stderr)


class TestNoCycles(DsTestCase):
    """Finding 4: `sp.x = block` was a cycle through C the GC cannot break."""

    def test_scratchpad_takes_no_attributes(self):
        sp = Ds.Scratchpad()
        block = sp.alloc(HOST, 64)
        with self.assertRaises(AttributeError) as cm:
            sp.x = block
        self.assertIn('reference cycle', str(cm.exception))
        self.assertRaises(AttributeError, setattr, sp, 'cache', {})
        self.assertFalse(hasattr(sp, 'x'))
        # Properties still work through props.
        self.assertEqual(sp.props.initial_size_host, 64 * KiB)

    def test_lifecycles_free_everything(self):
        # The documented path, with attribute attempts and views, leaves no
        # Python object and no scratchpad behind.
        res = RecordingResource()
        gc.collect()
        before = len(gc.get_objects())
        for i in range(2000):
            with Ds.Scratchpad(host_resource=res) as sp:
                block = sp.alloc(HOST, 256)
                try:
                    sp.x = block
                except AttributeError:
                    pass
                mv = block.memoryview()
                mv[0] = i & 0xff
                del mv
        del sp, block
        gc.collect()
        self.assertEqual(res.live, {})
        self.assertEqual(len(res.allocations()), 2000)
        self.assertEqual(len(res.deallocations()), 2000)
        self.assertLess(len(gc.get_objects()) - before, 50)


class TestBytesLike(DsTestCase):
    def test_write_any_bytes_like(self):
        sp = Ds.Scratchpad()
        block = sp.alloc(HOST, 64)
        inputs = [b'bytes', bytearray(b'bytearray'), memoryview(b'memoryview'),
                  array.array('B', b'array'), GLib.Bytes.new(b'GLib.Bytes')]
        if np is not None:
            inputs += [np.frombuffer(b'numpy', np.uint8),
                       np.arange(4, dtype='<u2'),
                       np.arange(12, dtype=np.uint8).reshape(3, 4)[:, ::2]]  # not contiguous
        for data in inputs:
            with self.subTest(type=type(data).__name__):
                block.fill(0)
                self.assertTrue(block.write(3, data))
                want = data.get_data() if isinstance(data, GLib.Bytes) else \
                    (data.tobytes() if hasattr(data, 'tobytes') else bytes(data))
                self.assertEqual(block.tobytes(3, len(want)), want)
        for bad in ('text', 42, None, [1, 2, 3]):
            with self.subTest(bad=bad):
                self.assertRaises(TypeError, block.write, 0, bad)
        self.assertRaisesDsError(Ds.Error.INVALID_ARGUMENT, block.write, 60, b'too long')

    def test_write_data_from_c(self):
        sp = Ds.Scratchpad()
        block = sp.alloc(HOST, 16)
        self.assertTrue(block.write_data(0, b'abc'))
        self.assertEqual(block.tobytes(0, 3), b'abc')

    def test_large_write_is_one_copy(self):
        # 32 MiB through write(): PyGObject would marshal a bytearray byte
        # by byte (seconds); the override hands C one bytes object.
        sp = Ds.Scratchpad(initial_size_host=32 * MiB)
        block = sp.alloc(HOST, 32 * MiB)
        data = bytearray(32 * MiB)
        data[-1] = 9
        import time
        t = time.perf_counter()
        block.write(0, data)
        elapsed = time.perf_counter() - t
        self.assertEqual(block.tobytes(32 * MiB - 1, 1), b'\x09')
        self.assertLess(elapsed, 1.0, '32 MiB write took %.2f s' % elapsed)


class TestUploads(DsTestCase):
    def test_to_device_returns_a_block(self):
        sp = Ds.Scratchpad.new(default_order())
        data = bytes(range(200))
        if GPU_ERROR is not None:
            for arg in (data, bytearray(data)) + ((np.arange(50, dtype=np.float32),) if np else ()):
                with self.assertRaises(GLib.Error) as cm:
                    sp.to_device(arg)
                self.assertEqual(cm.exception.domain, DS_ERROR_DOMAIN)
                self.assertIn(cm.exception.code, (int(Ds.Error.NO_DEVICE), int(Ds.Error.NOT_SUPPORTED)))
            self.assertRaises(TypeError, sp.to_device, 'text')
            self.assertIsNone(sp.to_device(b''))
            self.skipTest('the upload itself: ' + NO_GPU_REASON)
        block = sp.to_device(data, 64)
        self.assertIsInstance(block, Ds.Block)
        self.assertEqual(block.get_kind(), DEVICE)
        self.assertEqual(block.get_size(), 200)
        self.assertEqual(block.get_address() % 64, 0)
        self.assertEqual(block.tobytes(), data)

    def test_to_contiguous_device_returns_blocks(self):
        sp = Ds.Scratchpad.new(default_order())
        arrays = [b'abc', bytearray(b''), memoryview(b'defgh')]
        self.assertRaises(TypeError, sp.to_contiguous_device, [b'x', 3])
        if GPU_ERROR is not None:
            with self.assertRaises(GLib.Error) as cm:
                sp.to_contiguous_device(arrays, 256)
            self.assertEqual(cm.exception.domain, DS_ERROR_DOMAIN)
            self.skipTest('the upload itself: ' + NO_GPU_REASON)
        whole, blocks = sp.to_contiguous_device(arrays, 256)
        self.assertEqual(whole.get_kind(), DEVICE)
        self.assertEqual(whole.get_size(), 256 + 5)
        self.assertEqual(len(blocks), 3)
        self.assertIsNone(blocks[1])
        self.assertEqual(blocks[0].get_address(), whole.get_address())
        self.assertEqual(blocks[2].get_address(), whole.get_address() + 256)
        self.assertEqual(blocks[2].tobytes(), b'defgh')


class FakeCudaCoreStream:
    def __init__(self, handle, device_id):
        self.handle_value = handle
        self.device = type('Device', (), {'device_id': device_id})()

    def __cuda_stream__(self):
        return (0, self.handle_value)


class FakeTorchStream:
    def __init__(self, handle, index):
        self.cuda_stream = handle
        self.device_index = index


class FakeCupyStream:
    def __init__(self, handle, device_id):
        self.ptr = handle
        self.device_id = device_id


class FakeNumbaStream:
    def __init__(self, handle):
        self.handle = ctypes.c_void_p(handle)


class TestOrdersFromStreams(DsTestCase):
    def check(self, order, handle, device):
        self.assertIsInstance(order, Ds.AccessOrder)
        self.assertTrue(order.is_device())
        self.assertEqual(order.get_stream_handle(), handle)
        self.assertEqual(order.get_device(), device)

    @made_up_handles
    def test_ints(self):
        self.check(Ds.AccessOrder.from_stream(fake_handle(9), 1), fake_handle(9), 1)
        # None, 0 and cudaStreamLegacy (1) are the legacy default stream.
        for legacy in (None, 0, 1):
            self.assertEqual(Ds.AccessOrder.from_stream(legacy, 0).get_stream_handle(), 0)
        self.check(Ds.AccessOrder.from_stream(2, 0), 2, 0)  # per-thread
        self.assertEqual(repr(Ds.AccessOrder.from_stream(fake_handle(1), 3)),
                         '<Ds.AccessOrder stream 0x%x on device 3>' % fake_handle(1))

    @made_up_handles
    def test_stream_objects(self):
        self.check(Ds.AccessOrder.from_stream(FakeCudaCoreStream(fake_handle(11), 1)), fake_handle(11), 1)
        self.check(Ds.AccessOrder.from_stream(FakeTorchStream(fake_handle(22), 2)), fake_handle(22), 2)
        self.check(Ds.AccessOrder.from_stream(FakeCupyStream(fake_handle(33), 3)), fake_handle(33), 3)
        self.check(Ds.AccessOrder.from_stream(FakeNumbaStream(fake_handle(44)), 0), fake_handle(44), 0)
        # An explicit device wins over the stream's.
        self.check(Ds.AccessOrder.from_stream(FakeCupyStream(fake_handle(33), 3), 0), fake_handle(33), 0)

    def test_not_streams(self):
        class Versioned:
            def __cuda_stream__(self):
                return (1, 0x10)
        for bad, error in [('0x10', TypeError), (1.5, TypeError), (object(), TypeError),
                           (True, TypeError), (-3, ValueError), (1 << 64, ValueError),
                           (Versioned(), TypeError)]:
            with self.subTest(bad=bad):
                self.assertRaises(error, Ds.AccessOrder.from_stream, bad)

    @made_up_handles
    def test_scratchpad_on_stream_object(self):
        order = Ds.AccessOrder.from_stream(FakeTorchStream(fake_handle(22), 0))
        sp = Ds.Scratchpad(device_order=order)
        self.assertEqual(sp.get_device_order().get_stream_handle(), fake_handle(22))


class TestDocumentation(DsTestCase):
    def additions(self):
        import gi.overrides.Ds as override
        for cls in (override.Block, override.BlockView, override.Scratchpad,
                    override.AccessOrder, override.MemoryResource, override.LeakWarning,
                    override.KernelContext, override.OutOfMemoryError):
            yield cls.__name__, cls
            for name, value in vars(cls).items():
                if name.startswith('_') and name not in (
                        '__enter__', '__exit__', '__dlpack__', '__dlpack_device__',
                        '__cuda_array_interface__', '__array_interface__'):
                    continue
                if callable(value) or isinstance(value, (property, classmethod)):
                    yield '%s.%s' % (cls.__name__, name), value

    def test_docstrings(self):
        # A boxed type's class docstring is always generated by PyGObject
        # (StructMeta.__doc__ ignores the override's): Block's is checked
        # in the source instead.
        import gi.overrides.Ds as override
        self.assertIn('One scratch allocation', vars(override.Block)['__doc__'])
        missing = [name for name, value in self.additions()
                   if name != 'Block' and
                   not (inspect.getdoc(value.__func__ if isinstance(value, classmethod) else value)
                        or '').strip()]
        self.assertEqual(missing, [])

    def test_help_shows_them(self):
        text = pydoc.render_doc(Ds.Scratchpad, renderer=pydoc.plaintext)
        self.assertIn('BufferError', text)
        self.assertIn('takes no Python attributes', text)
        text = pydoc.render_doc(Ds.Block, renderer=pydoc.plaintext)
        self.assertIn('numpy(self, dtype=', text)
        self.assertIn('export', text)
        self.assertTrue(Ds.__name__)

    def test_stub_parses_and_covers_the_api(self):
        with open(STUB, encoding='utf-8') as f:
            tree = ast.parse(f.read(), STUB)

        def names(body):
            out = set()
            for n in body:
                if isinstance(n, (ast.FunctionDef, ast.ClassDef)):
                    out.add(n.name)
                elif isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name):
                    out.add(n.target.id)
                elif isinstance(n, ast.Assign):
                    out.update(t.id for t in n.targets if isinstance(t, ast.Name))
            return out

        module = names(tree.body)
        members = {n.name: names(n.body) for n in tree.body if isinstance(n, ast.ClassDef)}
        protocols = ('__enter__', '__exit__', '__dlpack__', '__dlpack_device__',
                     '__cuda_array_interface__', '__array_interface__')
        missing = []
        for name in dir(Ds):
            if name.startswith('_'):
                continue
            if name not in module:
                missing.append(name)
                continue
            cls = getattr(Ds, name)
            if not inspect.isclass(cls) or name not in members:
                continue
            # Struct fields (PyGObject makes a property of each, private
            # ones included) are not checked.
            private = {a for c in cls.__mro__ if c.__module__ == 'gi.repository.Ds'
                       for a, v in vars(c).items() if isinstance(v, property)}
            # What this class itself defines (introspected or overridden),
            # not what it inherits from another Ds type, GObject or object.
            own = [c for c in cls.__mro__ if c.__name__ == name and
                   c.__module__ in ('gi.repository.Ds', 'gi.overrides.Ds')]
            for attr in dir(cls):
                if (attr.startswith('_') and attr not in protocols) or attr.startswith('do_') \
                   or attr in private or attr in ('props', 'ref', 'unref', 'copy', 'free'):
                    continue
                if not any(attr in vars(c) for c in own):
                    continue
                if attr not in members[name]:
                    missing.append('%s.%s' % (name, attr))
        self.assertEqual(missing, [], 'not in %s: regenerate it with gen-stub.py' % STUB)


class TestScratchpadHead(DsTestCase):
    """The head that C callers bump in (Ds.ScratchpadHead, Ds.BumpWindow) is
    a plain record to Python: one made in Python is its own memory, and its
    GObject field is refused rather than read or written."""

    def test_a_head_made_in_python_is_harmless(self):
        w = Ds.BumpWindow()
        w.cur, w.end = 32, 64
        h = Ds.ScratchpadHead()
        h.host = w
        self.assertEqual((h.host.cur, h.host.end), (32, 64))
        self.assertEqual((h.managed.cur, h.managed.end), (0, 0))
        with self.assertRaises(RuntimeError):
            h.parent_instance
        with self.assertRaises(RuntimeError):
            h.parent_instance = GObject.Object()
        with self.assertRaises(OverflowError):
            h.device.cur = -1


class TestVersionCheck(DsTestCase):
    def test_a_mismatch_names_the_three_files(self):
        # An override of another ds found first (an old installation):
        # the import fails and names the override, _gi_ds and the typelib.
        import tempfile
        here = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..',
                            'overrides', 'gi', 'overrides', 'Ds.py')
        with open(here, encoding='utf-8') as f:
            code = f.read()
        self.assertIn('\n_OVERRIDE_API = ', code)
        with tempfile.TemporaryDirectory() as tmp:
            os.makedirs(os.path.join(tmp, 'gi', 'overrides'))
            stale = os.path.join(tmp, 'gi', 'overrides', 'Ds.py')
            with open(stale, 'w', encoding='utf-8') as f:
                f.write(code.replace('\n_OVERRIDE_API = ', '\n_OVERRIDE_API = 1000 + '))
            old = os.environ.get('PYTHONPATH', '')
            os.environ['PYTHONPATH'] = tmp + os.pathsep + old
            try:
                r = run_python('import gi\ngi.require_version("Ds", "1.0")\n'
                               'from gi.repository import Ds\n')
            finally:
                os.environ['PYTHONPATH'] = old
        self.assertNotEqual(r.returncode, 0)
        self.assertIn('ImportError: The Ds override does not match the rest of ds', r.stderr)
        self.assertIn(stale, r.stderr)
        self.assertRegex(r.stderr, r'_gi_ds\.cpython-[^ ]*\.so \(override API \d+, built '
                                   r'for ds \d+\.\d+\.\d+\)')
        self.assertRegex(r.stderr, r'Ds-1\.0\.typelib \(ds \d+\.\d+\.\d+\)')

if __name__ == '__main__':
    tap.main()
