#!/usr/bin/python3
# Exports: zero-copy views of blocks and the memory they keep.
#
# Copyright 2026 The ds authors
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The policy under test: memory follows the views. While a memoryview,
# NumPy array, Ds.BlockView, DLPack capsule or CUDA-array-interface
# consumer of a block is alive, release() and leaving `with` give
# everything else back and keep the upstream blocks the views use until
# the last of them is gone (then they go back; get_held_by_exports()
# counts them); release(strict=True) refuses instead with a BufferError
# that names each view (mmap.close() does the same with exported
# buffers). A view keeps the scratchpad alive, so finalization cannot
# free the memory either; once the views are gone nothing leaks. Invalid
# blocks give InvalidArgumentError everywhere and no address. Runs under
# python3 -X dev.

import ctypes
import gc
import os
import sys
import textwrap
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from dstest import *  # noqa: E402,F401,F403
from dstest import GLib, Ds  # noqa: E402
import dstest  # noqa: E402

import tap  # noqa: E402

try:
    import numpy as np
except ImportError:  # build-aux/ds-setup installs python3-numpy
    np = None

NO_NUMPY = 'NumPy is not installed (python3-numpy)'

# An old crash reproducer (exit 139 once): the array outlives the with and
# a trim, and stays valid.
CRASH_REPRODUCER = textwrap.dedent('''
    import gi
    gi.require_version('Ds', '1.0')
    from gi.repository import Ds
    import numpy as np
    with Ds.Scratchpad() as sp:
        blk = sp.alloc(Ds.MemoryKind.HOST, 64 << 20, 0)
        a = np.frombuffer(blk.memoryview(), np.uint8)
        a[:] = 1
    Ds.MemoryResource.get_default(Ds.MemoryKind.HOST, -1).trim()
    print(a.sum())
''')

# The same, going on: the array stays valid across the trim, its memory
# is counted as held by exports, and goes back once it is dropped.
CRASH_CONTINUED = textwrap.dedent('''
    import gi
    gi.require_version('Ds', '1.0')
    from gi.repository import Ds
    import numpy as np
    with Ds.Scratchpad() as sp:
        blk = sp.alloc(Ds.MemoryKind.HOST, 64 << 20, 0)
        a = np.frombuffer(blk.memoryview(), np.uint8)
        a[:] = 1
    pool = Ds.MemoryResource.get_default(Ds.MemoryKind.HOST, -1)
    pool.trim()
    print('sum', a.sum())
    print('held', sp.get_held_by_exports(Ds.MemoryKind.HOST) >= 64 << 20)
    del a
    print('held', sp.get_held_by_exports(Ds.MemoryKind.HOST))
    print('valid', blk.is_valid(), 'reserved', sp.get_reserved(Ds.MemoryKind.HOST))
''')


MODULE_LEVEL = textwrap.dedent('''
    import sys
    sys.path.insert(0, %r)
    import gi
    gi.require_version('Ds', '1.0')
    from gi.repository import Ds
    import dstest
    sp, res = dstest.fake_gpu_scratchpad()
    with sp:
        b = sp.alloc(Ds.MemoryKind.DEVICE, 64)
        x = dstest.FakeCaiConsumer(b)
        del x
    print('released', res[Ds.MemoryKind.DEVICE].live == {})
''')


def exporters(sp, res):
    """(name, make) for every kind of export of a block of @sp."""
    out = [
        ('memoryview', lambda b: b.memoryview()),
        ('BlockView', lambda b: b.view('<u2', 8)),
        ('DLPack capsule', lambda b: b.__dlpack__()),
    ]
    if np is not None:
        out += [
            ('numpy()', lambda b: b.numpy('<f4', (2, 4))),
            ('np.frombuffer(memoryview)', lambda b: np.frombuffer(b.memoryview(), np.uint8)),
            ('np.asarray(view)', lambda b: np.asarray(b.view('u1'))),
            ('np.from_dlpack', lambda b: np.from_dlpack(b)),
        ]
    return out


class TestCrashReproducer(DsTestCase):
    def setUp(self):
        if np is None:
            self.skipTest(NO_NUMPY)

    def test_reproducer_runs(self):
        r = run_python(CRASH_REPRODUCER)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn('%d' % (64 << 20), r.stdout)

    def test_reproducer_stays_valid(self):
        r = run_python(CRASH_CONTINUED)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn('sum %d' % (64 << 20), r.stdout)
        self.assertIn('held True\nheld 0\n', r.stdout)
        self.assertIn('valid False reserved 0', r.stdout)


# The first NumPy script a new user writes: the array is a local that
# outlives the with, since it returns from inside it.
IDIOM = textwrap.dedent('''
    import gi
    gi.require_version('Ds', '1.0')
    from gi.repository import Ds
    import numpy as np

    def normalize(frame):
        with Ds.Scratchpad() as sp:
            tmp = sp.alloc(Ds.MemoryKind.HOST, frame.nbytes * 4).numpy(np.float32, frame.shape)
            np.divide(frame, 255.0, out=tmp)
            return float(tmp.mean())

    frame = np.full((48, 64), 51, np.uint8)
    print('mean %.3f' % normalize(frame))
''')

# 10,000 units of work with NumPy views that outlive their unit, some
# kept across units; at the end the memory the default host pool holds is
# within its release threshold (what it keeps idle).
UNITS = textwrap.dedent('''
    import gc
    import gi
    gi.require_version('Ds', '1.0')
    from gi.repository import Ds
    import numpy as np
    HOST = Ds.MemoryKind.HOST

    def unit(i, sp, frame):
        with sp:
            a = sp.empty(frame.shape, np.float32)
            b = sp.alloc(HOST, frame.nbytes * 4).numpy('f4', frame.shape)
            np.multiply(frame, 2.0, out=a)
            np.add(a, 1.0, out=b)
            view = b[::2]           # a NumPy view of the view
            return view, float(a.sum())

    sp = Ds.Scratchpad()
    frame = np.arange(32 * 1024, dtype=np.uint8).reshape(128, 256)
    kept = []
    for i in range(10000):
        view, total = unit(i, sp, frame)
        if i % 100 == 0:
            kept.append(view)        # some outlive many units
        if len(kept) > 8:
            kept.pop(0)
        assert view[1, 1] == 2.0 * frame[2, 1] + 1.0
    held_by_views = sp.get_held_by_exports(HOST)
    del view, kept
    gc.collect()
    pool = Ds.MemoryResource.get_default(HOST, -1)
    stats = pool.get_stats()
    print('units 10000 held-by-views-before-drop %d after %d' % (
        held_by_views, sp.get_held_by_exports(HOST)))
    print('pool bytes_in_use %d bytes_held %d threshold %d' % (
        stats.bytes_in_use, stats.bytes_held, pool.props.release_threshold))
    assert sp.get_held_by_exports(HOST) == 0
    assert stats.bytes_in_use == 0, stats.bytes_in_use
    assert stats.bytes_held <= pool.props.release_threshold, stats.bytes_held
    print('ok')
''')


class TestMemoryFollowsViews(DsTestCase):
    def setUp(self):
        if np is None:
            self.skipTest(NO_NUMPY)

    def test_idiom(self):
        r = run_python(IDIOM)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(r.stdout, 'mean 0.200\n')

    def test_10000_units(self):
        r = run_python(UNITS)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn('ok', r.stdout)
        self.assertIn('after 0', r.stdout)

    def test_held_blocks_in_stream_order_and_stats(self):
        # Only the upstream blocks that views use are held; they go back
        # to the resource they came from when their last view dies.
        sp, res = fake_gpu_scratchpad()
        small = sp.alloc(HOST, 64)                  # block 1 (64 KiB)
        big = sp.alloc(HOST, 256 * KiB)             # block 2, no view
        view = small.numpy('u1')
        other = small.view('u1', 8)
        sp.release()
        self.assertEqual(sp.get_held_by_exports(HOST), 64 * KiB)
        self.assertEqual(sp.get_reserved(HOST), 0)
        self.assertEqual(len(res[HOST].live), 1)
        self.assertEqual(len(res[HOST].deallocations()), 1, 'the block without views went back')
        del view
        self.assertEqual(len(res[HOST].live), 1, 'one view is still alive')
        del other
        self.assertEqual(res[HOST].live, {})
        self.assertEqual(sp.get_held_by_exports(HOST), 0)
        del small, big
        # The scratchpad is usable: a new unit takes new memory.
        self.assertEqual(sp.alloc(HOST, 16).tobytes(0, 0), b'')
        sp.release()

    def test_a_view_exports_again_after_the_release(self):
        # A view that outlived a release still owns its memory: a DLPack
        # capsule or a NumPy array made from it afterwards joins what the
        # view keeps, and the block goes back when the last of them dies.
        sp, res = fake_gpu_scratchpad()
        view = sp.alloc(HOST, 64).view('u1', 64)
        np.asarray(view)[:] = 5
        sp.release()
        self.assertEqual(sp.get_held_by_exports(HOST), 64 * KiB)
        again = np.from_dlpack(view)
        array = view.numpy()
        del view
        gc.collect()
        self.assertEqual(len(res[HOST].live), 1, 'the capsule and the array keep the block')
        self.assertEqual(int(again.sum()), 5 * 64)
        self.assertEqual(int(array.sum()), 5 * 64)
        del again
        gc.collect()
        self.assertEqual(len(res[HOST].live), 1, 'the array keeps the block')
        del array
        gc.collect()
        self.assertEqual(res[HOST].live, {})
        self.assertEqual(sp.get_held_by_exports(HOST), 0)

    def test_strict_keeps_the_report(self):
        sp, _ = fake_gpu_scratchpad()
        array = sp.alloc(HOST, 64).numpy('f4', (4, 4))
        with self.assertRaises(BufferError) as cm:
            sp.release(strict=True)
        self.assertIn('a NumPy array of 64 bytes of host memory', str(cm.exception))
        self.assertIn('%s:' % os.path.basename(__file__), str(cm.exception))
        self.assertEqual(sp.get_reserved(HOST), 64 * KiB, 'nothing was released')
        del array
        sp.release(strict=True)


class TestExportPolicy(DsTestCase):
    def test_release_refused_while_exported(self):
        sp, res = fake_gpu_scratchpad()
        for name, make in exporters(sp, res):
            with self.subTest(exporter=name):
                block = sp.alloc(HOST, 64, 64)
                block.write(0, b'\x07' * 64)
                export = make(block)
                self.assertEqual(sp.get_n_exports(), 1, name)
                reserved = sp.get_reserved(HOST)
                with self.assertRaises(BufferError) as cm:
                    sp.release(strict=True)
                self.assertIn('1 export(s)', str(cm.exception))
                # Nothing was given back; the block and the view still work.
                self.assertEqual(sp.get_reserved(HOST), reserved)
                self.assertEqual(len(res[HOST].live), 1)
                self.assertTrue(block.is_valid())
                self.assertEqual(block.tobytes(0, 4), b'\x07' * 4)
                del export
                gc.collect()
                self.assertEqual(sp.get_n_exports(), 0, name)
                sp.release()
                self.assertEqual(res[HOST].live, {}, 'nothing leaks')
                self.assertFalse(block.is_valid())

    def test_with_exit_lets_memory_follow_the_view(self):
        sp, res = fake_gpu_scratchpad()
        with sp:
            block = sp.alloc(HOST, 256, 0)
            other = sp.alloc(HOST, 128 * KiB, 0)    # a block of its own, no view
            mv = block.memoryview()
            mv[:5] = b'hello'
        # Released: the block is invalid, the view's memory is still the
        # view's, counted as held by exports; the other block went back.
        self.assertFalse(block.is_valid())
        self.assertFalse(other.is_valid())
        self.assertEqual(bytes(mv[:5]), b'hello')
        self.assertEqual(sp.get_reserved(HOST), 0)
        self.assertEqual(sp.get_held_by_exports(HOST), 64 * KiB)
        self.assertEqual(len(res[HOST].live), 1)
        del mv
        self.assertEqual(sp.get_held_by_exports(HOST), 0)
        self.assertEqual(res[HOST].live, {})
        self.assertEqual(sorted(d[2] for d in res[HOST].deallocations()),
                         [64 * KiB, 128 * KiB])

    def test_with_exception_is_not_masked(self):
        sp, res = fake_gpu_scratchpad()
        with self.assertRaises(KeyError):
            with sp:
                block = sp.alloc(HOST, 64, 0)
                mv = block.memoryview()
                mv[:3] = b'abc'
                raise KeyError('the body failed')
        # Released, the memory following the view: still valid.
        self.assertEqual(bytes(mv[:3]), b'abc')
        self.assertEqual(sp.get_held_by_exports(HOST), 64 * KiB)
        del mv
        self.assertEqual(res[HOST].live, {})

    def test_with_exception_without_exports_releases(self):
        sp, res = fake_gpu_scratchpad()
        with self.assertRaises(KeyError):
            with sp:
                sp.alloc(HOST, 64, 0)
                raise KeyError('boom')
        self.assertEqual(res[HOST].live, {})

    def test_view_keeps_scratchpad_and_memory(self):
        sp, res = fake_gpu_scratchpad()
        host = res[HOST]
        block = sp.alloc(HOST, 100, 0)
        view = block.view('u1')
        mv = view.memoryview()
        mv[:4] = b'keep'
        del sp, block
        gc.collect()
        # The view holds an export, the export the scratchpad: no
        # finalization, the memory is still the view's.
        self.assertEqual(len(host.live), 1)
        self.assertEqual(bytes(mv[:4]), b'keep')
        del mv, view
        gc.collect()
        # The last export gone, the scratchpad is finalized and gives
        # its memory back.
        self.assertEqual(host.live, {})
        self.assertEqual(len(host.deallocations()), 1)

    def test_exports_counted_per_view(self):
        sp, _ = fake_gpu_scratchpad()
        block = sp.alloc(HOST, 64, 0)
        views = [block.memoryview() for _ in range(3)] + [block.view('u1')]
        self.assertEqual(sp.get_n_exports(), 4)
        other, _ = fake_gpu_scratchpad()
        self.assertEqual(other.get_n_exports(), 0, 'counts are per scratchpad')
        self.assertIsInstance(views[-1].block, Ds.Block)  # the view's export
        del views[-1]
        self.assertEqual(sp.get_n_exports(), 3)
        views[0].release()  # memoryview.release() drops its export too
        gc.collect()
        self.assertEqual(sp.get_n_exports(), 2)
        del views
        gc.collect()
        self.assertEqual(sp.get_n_exports(), 0)


class TestInvalidBlocks(DsTestCase):
    def test_every_access_is_a_ds_error(self):
        sp, _ = fake_gpu_scratchpad()
        host = sp.alloc(HOST, 64, 0)
        pinned = sp.alloc(PINNED, 64, 0)
        sp.release()
        for block in (host, pinned):
            self.assertFalse(block.is_valid())
            self.assertIn('(released)', repr(block))
            for name, call in [
                    ('get_address', lambda: block.get_address()),
                    ('memoryview', lambda: block.memoryview()),
                    ('view', lambda: block.view('u1')),
                    ('numpy', lambda: block.numpy()),
                    ('__dlpack__', lambda: block.__dlpack__()),
                    ('read', lambda: block.read(0, 1)),
                    ('write', lambda: block.write(0, b'x')),
                    ('tobytes', lambda: block.tobytes()),
                    ('fill', lambda: block.fill(0))]:
                if name == 'numpy' and np is None:
                    continue
                with self.subTest(kind=block.get_kind().value_nick, call=name):
                    e = self.assertRaisesDsError(Ds.Error.INVALID_ARGUMENT, call)
                    self.assertIn('released', e.message)
            self.assertEqual(sp.get_n_exports(), 0)
            # Exports are the override's to make: a hand-made one would pin
            # the scratchpad with nothing to drop it.
            self.assertFalse(hasattr(block, 'export'))
        # The CUDA array interface of a pinned block: the same error, not
        # an AttributeError (hasattr() must not hide it).
        with self.assertRaises(GLib.Error) as cm:
            pinned.__cuda_array_interface__
        self.assertDsError(cm.exception, Ds.Error.INVALID_ARGUMENT)

    def test_c_address_is_zero(self):
        sp = Ds.Scratchpad()
        block = sp.alloc(HOST, 64, 0)
        address = block.get_address()
        self.assertNotEqual(address, 0)
        sp.release()
        # The introspected method, under the override: 0, never the old
        # address.
        self.assertEqual(Ds.Block.__mro__[1].get_address(block), 0)


class TestNumpyAsarray(DsTestCase):
    """numpy.asarray(block): zero-copy for what the CPU can address, a
    TypeError otherwise; never a 0-d object array."""

    def setUp(self):
        if np is None:
            self.skipTest(NO_NUMPY)

    def test_host_visible_kinds(self):
        sp, _ = fake_gpu_scratchpad()
        for kind in (HOST, PINNED, MANAGED):
            with self.subTest(kind=kind.value_nick):
                block = sp.alloc(kind, 32, 64)
                a = np.asarray(block)
                self.assertEqual((a.dtype, a.shape), (np.uint8, (32,)))
                self.assertEqual(a.ctypes.data, block.get_address())
                a[:] = 7
                self.assertEqual(block.tobytes(0, 2), b'\x07\x07')
                self.assertEqual(sp.get_n_exports(), 1)
                f = np.asarray(block, dtype=np.float32)    # a converted copy
                self.assertEqual(f[0], 7.0)
                del a, f
                gc.collect()
                self.assertEqual(sp.get_n_exports(), 0)
        view = np.asarray(sp.alloc(HOST, 16).view('<f4'))
        self.assertEqual(view.shape, (4,))

    def test_device_kind(self):
        sp, _ = fake_gpu_scratchpad()
        block = sp.alloc(DEVICE, 32, 0)
        for obj in (block, block.view('<f4')):
            with self.subTest(obj=type(obj).__name__):
                with self.assertRaises(TypeError) as cm:
                    np.asarray(obj)
                self.assertIn('not addressable by the CPU', str(cm.exception))
        del obj
        gc.collect()
        self.assertEqual(sp.get_n_exports(), 0)


class TestBufferErrorNames(DsTestCase):
    def test_every_kind_of_export_is_named(self):
        sp, _ = fake_gpu_scratchpad()
        block = sp.alloc(HOST, 64, 0)
        exports = [block.memoryview(), block.view('u1'), block.__dlpack__()]
        if np is not None:
            exports += [block.numpy(), np.asarray(block)]
        device = sp.alloc(DEVICE, 32, 0)
        consumer = FakeCaiConsumer(device)
        with self.assertRaises(BufferError) as cm:
            sp.release(strict=True)
        message = str(cm.exception)
        self.assertIn('%d export(s)' % (len(exports) + 1), message)
        here = os.path.basename(__file__)
        for text in ('a memoryview of 64 bytes of host memory at 0x%x, made at' %
                     block.get_address(), 'a Ds.BlockView of 64 bytes',
                     'a DLPack tensor of shape (64,)', 'unconsumed capsule',
                     'the Ds.Block of 32 bytes of device memory',
                     '__cuda_array_interface__ was read at'):
            self.assertIn(text, message)
        if np is not None:
            self.assertIn('a NumPy array of 64 bytes', message)
            self.assertIn('a buffer (memoryview(block), bytes(block), numpy.asarray(block)) '
                          'of 64 bytes', message)
        # Where each was made (the DLPack capsule does not say).
        self.assertGreaterEqual(message.count(here + ':'), len(exports) - 1)
        del exports, consumer
        gc.collect()
        sp.release()

    def test_exports_made_in_c_are_counted(self):
        # An export the override did not make (C code holding a DsBlock
        # export) is counted by number.
        path = next((line.split()[-1] for line in open('/proc/self/maps')
                     if '/libds-1.0.so' in line), None)
        if path is None:
            self.skipTest('libds is not mapped from a file')
        lib = ctypes.CDLL(path)
        lib.ds_block_export.restype = ctypes.c_void_p
        lib.ds_block_export.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
        lib.ds_block_unref.argtypes = [ctypes.c_void_p]
        sp = Ds.Scratchpad()
        block = sp.alloc(HOST, 16)
        export = lib.ds_block_export(hash(block), None)    # a Ds.Block hashes as its pointer
        mv = block.memoryview()
        with self.assertRaises(BufferError) as cm:
            sp.release(strict=True)
        self.assertIn('2 export(s)', str(cm.exception))
        self.assertIn('1 export(s) made outside Python', str(cm.exception))
        lib.ds_block_unref(export)
        del mv
        sp.release()


class TestViews(DsTestCase):
    def test_view_shapes(self):
        sp, _ = fake_gpu_scratchpad()
        block = sp.alloc(HOST, 100, 64)
        view = block.view('<f4', (5, 5))
        self.assertEqual(view.shape, (5, 5))
        self.assertEqual(view.typestr, '<f4')
        self.assertEqual(view.nbytes, 100)
        self.assertEqual(view.address, block.get_address())
        self.assertEqual(block.view('u1', 10, offset=90).address, block.get_address() + 90)
        self.assertEqual(block.view('<i2').shape, (50,))
        self.assertEqual(block.view('u1', ()).shape, ())
        for dtype in ('float32', 'f4', '=f4'):
            self.assertEqual(block.view(dtype, 1).typestr, '<f4' if sys.byteorder == 'little' else '>f4')
        e = self.assertRaisesDsError(Ds.Error.INVALID_ARGUMENT, block.view, '<f8', (5, 5))
        self.assertIn('does not fit', e.message)
        self.assertRaisesDsError(Ds.Error.INVALID_ARGUMENT, block.view, 'u1', 1, 101)
        self.assertRaises(ValueError, block.view, '<f8')        # 100 % 8 != 0
        self.assertRaises(ValueError, block.view, 'u1', (-1,))
        self.assertRaises(TypeError, block.view, 'object')
        self.assertRaises(TypeError, block.view, 'f3')
        self.assertRaises(TypeError, block.view, 3.5)
        del view
        gc.collect()
        self.assertEqual(sp.get_n_exports(), 0)

    def test_float16_and_complex_memoryview(self):
        # Python 3.11's memoryview.cast() takes neither: typed through NumPy.
        if np is None:
            self.skipTest(NO_NUMPY)
        sp, _ = fake_gpu_scratchpad()
        block = sp.alloc(HOST, 64, 0)
        for dtype, fmt, shape in [('f2', 'e', (4,)), ('<f2', 'e', (2, 2)), ('c8', 'Zf', (2,))]:
            with self.subTest(dtype=dtype):
                mv = block.view(dtype, shape).memoryview()
                self.assertEqual((mv.format, mv.shape, mv.readonly), (fmt, shape, False))
                want = np.arange(np.prod(shape)).astype(dtype).reshape(shape)
                np.asarray(mv)[...] = want
                self.assertEqual(block.tobytes(0, mv.nbytes), want.tobytes())
                del mv
        gc.collect()
        self.assertEqual(sp.get_n_exports(), 0)

    def test_typed_memoryview(self):
        sp, _ = fake_gpu_scratchpad()
        block = sp.alloc(HOST, 16, 0)
        mv = block.view('i4' if sys.byteorder == 'little' else '<i4', 4).memoryview()
        self.assertEqual(mv.format, 'i')
        self.assertEqual(mv.shape, (4,))
        mv[2] = -7
        self.assertEqual(block.tobytes(8, 4), (-7).to_bytes(4, sys.byteorder, signed=True))

    def test_numpy(self):
        if np is None:
            self.skipTest(NO_NUMPY)
        sp, _ = fake_gpu_scratchpad()
        for kind in (HOST, PINNED, MANAGED):
            with self.subTest(kind=kind.value_nick):
                block = sp.alloc(kind, 4 * 32, 64)
                a = block.numpy(np.float32, (4, 8))
                self.assertEqual(a.shape, (4, 8))
                self.assertEqual(a.dtype, np.float32)
                self.assertTrue(a.flags.writeable)
                self.assertTrue(a.flags.c_contiguous)
                self.assertEqual(a.ctypes.data, block.get_address())
                a[:] = np.arange(32, dtype=np.float32).reshape(4, 8)
                self.assertEqual(block.tobytes(), a.tobytes())
                block.write(0, np.full(8, 2.5, np.float32))
                self.assertEqual(a[0].tolist(), [2.5] * 8)
                del a
        gc.collect()
        self.assertEqual(sp.get_n_exports(), 0)

    def test_device_kind_is_not_cpu_addressable(self):
        sp, _ = fake_gpu_scratchpad()
        device = sp.alloc(DEVICE, 64, 0)
        for call in (device.memoryview, device.numpy, device.view('u1').memoryview):
            e = self.assertRaisesDsError(Ds.Error.INVALID_ARGUMENT, call)
            self.assertIn('not addressable by the CPU', e.message)
        self.assertFalse(hasattr(device.view('u1'), '__array_interface__'))


class TestCudaArrayInterface(DsTestCase):
    def test_gpu_kinds(self):
        sp, _ = fake_gpu_scratchpad()
        for kind in (PINNED, DEVICE, MANAGED):
            with self.subTest(kind=kind.value_nick):
                block = sp.alloc(kind, 96, 256)
                cai = block.view('<f8', (3, 4)).__cuda_array_interface__
                self.assertEqual(cai, {
                    'shape': (3, 4), 'typestr': '<f8', 'data': (block.get_address(), False),
                    'strides': None, 'version': 3,
                    # host order: the scratchpad's work is synchronous
                    'stream': None})
                bytes_cai = block.__cuda_array_interface__
                self.assertEqual(bytes_cai['shape'], (96,))
                self.assertEqual(bytes_cai['typestr'], '|u1')

    def test_host_block_has_none(self):
        sp = Ds.Scratchpad()
        block = sp.alloc(HOST, 16, 0)
        self.assertFalse(hasattr(block, '__cuda_array_interface__'))
        self.assertFalse(hasattr(block.view('u1'), '__cuda_array_interface__'))

    def test_block_interface_pins_until_the_block_is_gone(self):
        # A CAI consumer keeps the object it read the interface from: so the
        # Block itself is an export from then on.
        sp, res = fake_gpu_scratchpad()
        block = sp.alloc(DEVICE, 64, 0)
        consumer = [block]  # what CuPy/Numba hold on to
        block.__cuda_array_interface__
        block.__cuda_array_interface__
        self.assertEqual(sp.get_n_exports(), 1)
        del block
        self.assertRaises(BufferError, sp.release, strict=True)
        consumer.clear()
        gc.collect()
        self.assertEqual(sp.get_n_exports(), 0)
        sp.release()
        self.assertEqual(res[DEVICE].live, {})

    def test_consumer_gone_before_with_ends(self):
        # with sp: b = sp.alloc(DEVICE, n); x = consumer(b); del x
        # must release at the end of with, though b is still a variable.
        sp, res = fake_gpu_scratchpad()
        with sp:
            b = sp.alloc(DEVICE, 256)
            x = FakeCaiConsumer(b)
            self.assertEqual(sp.get_n_exports(), 1)
            del x
        self.assertEqual(res[DEVICE].live, {})
        self.assertFalse(b.is_valid())
        # The block checks itself: a consumer now gets an error, not memory.
        with self.assertRaises(Ds.InvalidArgumentError) as cm:
            FakeCaiConsumer(b)
        self.assertDsError(cm.exception, Ds.Error.INVALID_ARGUMENT)

    def test_probe_does_not_keep_the_memory(self):
        # CuPy, PyTorch and Numba probe with hasattr() first.
        sp, res = fake_gpu_scratchpad()
        with sp:
            b = sp.alloc(DEVICE, 64)
            self.assertTrue(hasattr(b, '__cuda_array_interface__'))
            c = b
            self.assertTrue(hasattr(c, '__cuda_array_interface__'))
        self.assertEqual(res[DEVICE].live, {})
        del b, c

    def test_live_consumer_keeps_the_memory(self):
        sp, res = fake_gpu_scratchpad()
        b = sp.alloc(DEVICE, 64)
        ctypes.memset(b.get_address(), 0x5a, 64)    # host memory behind it
        x = FakeCaiConsumer(b)
        with self.assertRaises(BufferError) as cm:
            sp.release(strict=True)
        message = str(cm.exception)
        self.assertIn('1 export(s)', message)
        self.assertIn('whose __cuda_array_interface__ was read at %s:' % dstest.__file__, message)
        self.assertIn('cupy.asarray()', message)
        # Nothing was given back: the consumer still sees its bytes.
        self.assertEqual(x.read(4), b'\x5a' * 4)
        self.assertEqual(len(res[DEVICE].live), 1)
        # Without strict, the consumer keeps the memory past the release.
        with sp:
            pass
        self.assertFalse(b.is_valid())
        self.assertEqual(x.read(4), b'\x5a' * 4)
        self.assertEqual(len(res[DEVICE].live), 1)
        del x, b, cm
        gc.collect()
        self.assertEqual(res[DEVICE].live, {})

    def test_consumer_holding_the_only_reference(self):
        sp, res = fake_gpu_scratchpad()
        x = FakeCaiConsumer(sp.alloc(DEVICE, 64))
        self.assertRaises(BufferError, sp.release, strict=True)
        self.assertEqual(len(res[DEVICE].live), 1)
        del x
        sp.release()
        self.assertEqual(res[DEVICE].live, {})

    def test_block_held_elsewhere_counts(self):
        # A block that something besides the releasing frame's variables
        # refers to (a list, another function) may be a consumer's.
        sp, res = fake_gpu_scratchpad()
        b = sp.alloc(DEVICE, 64)
        kept = [b]
        b.__cuda_array_interface__
        self.assertRaises(BufferError, sp.release, strict=True)
        kept.clear()
        sp.release(strict=True)     # now only this frame's b refers to it
        self.assertEqual(res[DEVICE].live, {})

        def helper(scratchpad):
            scratchpad.release(strict=True)
        b = sp.alloc(DEVICE, 64)
        b.__cuda_array_interface__
        self.assertRaises(BufferError, helper, sp)
        del b
        helper(sp)

    def test_at_module_level(self):
        # A script's with at module level: its variables are the globals.
        r = run_python(MODULE_LEVEL % os.path.dirname(os.path.abspath(__file__)))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn('released True', r.stdout)

    def test_view_for_a_consumer(self):
        # The view is the consumer's own: it goes with the consumer.
        sp, res = fake_gpu_scratchpad()
        with sp:
            b = sp.alloc(DEVICE, 64)
            x = FakeCaiConsumer(b.view('<f4', (4, 4)))
            kept = [b]
            del x
        self.assertEqual(res[DEVICE].live, {})
        del kept

    def test_real_device_stream(self):
        if GPU_ERROR is not None:
            self.skipTest(NO_GPU_REASON)
        sp = Ds.Scratchpad.new(default_order())
        block = sp.alloc(DEVICE, 4096, 0)
        cai = block.view('<f4', (32, 32)).__cuda_array_interface__
        self.assertEqual(cai['stream'], 1)  # the legacy default stream
        self.assertEqual(cai['shape'], (32, 32))
        del cai
        gc.collect()


_PyCapsule_IsValid = ctypes.pythonapi.PyCapsule_IsValid
_PyCapsule_IsValid.restype = ctypes.c_int
_PyCapsule_IsValid.argtypes = [ctypes.py_object, ctypes.c_char_p]
_PyCapsule_GetPointer = ctypes.pythonapi.PyCapsule_GetPointer
_PyCapsule_GetPointer.restype = ctypes.c_void_p
_PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_PyCapsule_SetName = ctypes.pythonapi.PyCapsule_SetName
_PyCapsule_SetName.restype = ctypes.c_int
_PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]
_USED = ctypes.create_string_buffer(b'used_dltensor')


class DLDevice(ctypes.Structure):
    _fields_ = [('device_type', ctypes.c_int32), ('device_id', ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [('code', ctypes.c_uint8), ('bits', ctypes.c_uint8), ('lanes', ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [('data', ctypes.c_void_p), ('device', DLDevice), ('ndim', ctypes.c_int32),
                ('dtype', DLDataType), ('shape', ctypes.POINTER(ctypes.c_int64)),
                ('strides', ctypes.POINTER(ctypes.c_int64)), ('byte_offset', ctypes.c_uint64)]


class DLManagedTensor(ctypes.Structure):
    _fields_ = [('dl_tensor', DLTensor), ('manager_ctx', ctypes.c_void_p),
                ('deleter', ctypes.CFUNCTYPE(None, ctypes.c_void_p))]


class TestDLPack(DsTestCase):
    """The capsule as the DLPack spec has it, read the way a consumer does."""

    def consume(self, capsule):
        """What a consumer does: take the tensor, rename the capsule."""
        self.assertTrue(_PyCapsule_IsValid(capsule, b'dltensor'))
        address = _PyCapsule_GetPointer(capsule, b'dltensor')
        self.assertEqual(_PyCapsule_SetName(capsule, _USED), 0)
        return DLManagedTensor.from_address(address)

    def test_capsule_fields_every_kind(self):
        # Pinned memory is host memory (kDLCPU: NumPy and PyTorch take it),
        # managed memory GPU memory (kDLCUDA: PyTorch and CuPy take it).
        sp, _ = fake_gpu_scratchpad()
        expected = {HOST: (1, 0), PINNED: (1, 0), DEVICE: (2, 0), MANAGED: (2, 0)}
        for kind in ALL_KINDS:
            with self.subTest(kind=kind.value_nick):
                block = sp.alloc(kind, 48, 64)
                view = block.view('<f4', (3, 4))
                self.assertEqual(view.__dlpack_device__(), expected[kind])
                self.assertEqual(block.__dlpack_device__(), expected[kind])
                capsule = view.__dlpack__(stream=None if expected[kind][0] == 1 else -1)
                del view
                gc.collect()
                self.assertEqual(sp.get_n_exports(), 1, 'the capsule holds an export')
                managed = self.consume(capsule)
                t = managed.dl_tensor
                self.assertEqual(t.data, block.get_address())
                self.assertEqual((t.device.device_type, t.device.device_id), expected[kind])
                self.assertEqual(t.ndim, 2)
                self.assertEqual([t.shape[0], t.shape[1]], [3, 4])
                self.assertFalse(t.strides)  # NULL: C-contiguous
                self.assertEqual((t.dtype.code, t.dtype.bits, t.dtype.lanes), (2, 32, 1))
                self.assertEqual(t.byte_offset, 0)
                # The consumer owns it now: destroying the renamed capsule
                # must not delete it; the consumer's deleter call does.
                del capsule
                gc.collect()
                self.assertEqual(sp.get_n_exports(), 1)
                managed.deleter(ctypes.addressof(managed))
                gc.collect()
                self.assertEqual(sp.get_n_exports(), 0)

    def test_unconsumed_capsule_deletes_itself(self):
        sp, _ = fake_gpu_scratchpad()
        block = sp.alloc(HOST, 64, 0)
        capsule = block.__dlpack__()
        self.assertEqual(sp.get_n_exports(), 1)
        self.assertRaises(BufferError, sp.release, strict=True)
        del capsule
        gc.collect()
        self.assertEqual(sp.get_n_exports(), 0)
        sp.release()

    def test_dl_device_opt_ins(self):
        sp, _ = fake_gpu_scratchpad()
        cases = {HOST: ([(1, 0)], [(2, 0), (3, 0)]),
                 PINNED: ([(1, 0), (3, 0), (2, 0)], [(13, 0), (2, 1)]),
                 DEVICE: ([(2, 0)], [(1, 0), (13, 0)]),
                 MANAGED: ([(2, 0), (13, 0), (1, 0)], [(3, 0)])}
        for kind, (takes, refuses) in cases.items():
            block = sp.alloc(kind, 64, 0)
            for device in takes:
                with self.subTest(kind=kind.value_nick, dl_device=device):
                    capsule = block.__dlpack__(dl_device=device,
                                               stream=None if device[0] == 1 else -1)
                    t = self.consume(capsule).dl_tensor
                    self.assertEqual((t.device.device_type, t.device.device_id), device)
                    managed = DLManagedTensor.from_address(
                        _PyCapsule_GetPointer(capsule, b'used_dltensor'))
                    managed.deleter(ctypes.addressof(managed))
            for device in refuses:
                with self.subTest(kind=kind.value_nick, refused=device):
                    self.assertRaises(BufferError, block.__dlpack__, dl_device=device)
        gc.collect()
        self.assertEqual(sp.get_n_exports(), 0)

    def test_numpy_takes_pinned_and_managed(self):
        if np is None:
            self.skipTest(NO_NUMPY)
        sp, _ = fake_gpu_scratchpad()
        pinned = sp.alloc(PINNED, 16, 0)
        pinned.write(0, bytes(range(16)))
        self.assertEqual(np.from_dlpack(pinned).tolist(), list(range(16)))
        managed = sp.alloc(MANAGED, 16, 0)
        with self.assertRaises((RuntimeError, BufferError, TypeError)):
            np.from_dlpack(managed)      # kDLCUDA: NumPy's from_dlpack refuses
        self.assertEqual(np.asarray(managed).nbytes, 16)   # the CPU way
        gc.collect()
        self.assertEqual(sp.get_n_exports(), 0)

    def test_bad_arguments(self):
        sp, _ = fake_gpu_scratchpad()
        block = sp.alloc(DEVICE, 16, 0)
        self.assertRaises(TypeError, block.__dlpack__, 1)
        self.assertRaises(TypeError, block.__dlpack__, strem=1)
        self.assertRaises(TypeError, block.__dlpack__, stream='1')
        self.assertRaises(TypeError, block.__dlpack__, dl_device=2)
        self.assertRaises(BufferError, block.__dlpack__, copy=True)
        gc.collect()
        self.assertEqual(sp.get_n_exports(), 0)

    def test_dtype_codes(self):
        sp, _ = fake_gpu_scratchpad()
        block = sp.alloc(HOST, 64, 0)
        for dtype, want in [('i1', (0, 8)), ('<u2', (1, 16)), ('<f8', (2, 64)),
                            ('<c8', (5, 64)), ('b1', (6, 8))]:
            with self.subTest(dtype=dtype):
                capsule = block.view(dtype, 1).__dlpack__()
                t = self.consume(capsule).dl_tensor
                self.assertEqual((t.dtype.code, t.dtype.bits), want)
                managed = DLManagedTensor.from_address(_PyCapsule_GetPointer(capsule, b'used_dltensor'))
                managed.deleter(ctypes.addressof(managed))
        big = '>f4' if sys.byteorder == 'little' else '<f4'
        self.assertRaises(BufferError, block.view(big, 1).__dlpack__)
        gc.collect()
        self.assertEqual(sp.get_n_exports(), 0)

    def test_cpu_stream_must_be_none(self):
        sp = Ds.Scratchpad()
        block = sp.alloc(HOST, 64, 0)
        self.assertRaises(BufferError, block.__dlpack__, stream=5)
        self.assertRaises(BufferError, block.__dlpack__, dl_device=(2, 0))
        self.assertRaises(BufferError, block.__dlpack__, copy=True)
        gc.collect()
        self.assertEqual(sp.get_n_exports(), 0)

    def test_numpy_from_dlpack(self):
        if np is None:
            self.skipTest(NO_NUMPY)
        sp = Ds.Scratchpad()
        block = sp.alloc(HOST, 24, 64)
        block.write(0, np.arange(6, dtype=np.float32))
        a = np.from_dlpack(block.view(np.float32, (2, 3)))
        self.assertEqual(a.tolist(), [[0, 1, 2], [3, 4, 5]])
        self.assertEqual(a.ctypes.data, block.get_address())
        raw = np.from_dlpack(block)
        self.assertEqual(raw.dtype, np.uint8)
        self.assertEqual(raw.shape, (24,))
        self.assertEqual(sp.get_n_exports(), 2)
        del a, raw
        gc.collect()
        self.assertEqual(sp.get_n_exports(), 0)
        sp.release()

    def test_real_device_capsule(self):
        if GPU_ERROR is not None:
            self.skipTest(NO_GPU_REASON)
        sp = Ds.Scratchpad.new(default_order())
        block = sp.alloc(DEVICE, 64, 0)
        capsule = block.__dlpack__(stream=None)
        t = self.consume(capsule).dl_tensor
        self.assertEqual(t.device.device_type, 2)
        managed = DLManagedTensor.from_address(_PyCapsule_GetPointer(capsule, b'used_dltensor'))
        managed.deleter(ctypes.addressof(managed))


if __name__ == '__main__':
    tap.main()
