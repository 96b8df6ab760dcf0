#!/usr/bin/python3
# The Python API's GPU paths, on a GPU: device, pinned and managed memory
# written and read back, uploads, the CUDA array interface and DLPack read
# by a consumer that copies through CUDA, orders of real streams, a Python
# resource of device memory.
#
# Copyright 2026 The ds authors
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The consumer here is CUDA itself, through ctypes (cudaMemcpy and streams
# of libcudart), so no GPU array library is needed. Without a usable GPU
# every case reports SKIP with the reason. On the GPU machine these run
# with the bundled Python (tests/gpu-run/run-gi-gpu.sh), also under
# compute-sanitizer memcheck. Runs under python3 -X dev.

import ctypes
import gc
import os
import sys
import threading
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from dstest import *  # noqa: E402,F401,F403
from dstest import GLib, GObject, Ds  # noqa: E402

import tap  # noqa: E402

try:
    import numpy as np
except ImportError:  # build-aux/ds-setup installs python3-numpy
    np = None

MEMCPY_DEFAULT = 4      # cudaMemcpyDefault: the direction from the addresses (UVA)
STREAM_NON_BLOCKING = 1


def load_cudart():
    for name in ('libcudart.so.13', 'libcudart.so.12', 'libcudart.so'):
        try:
            lib = ctypes.CDLL(name)
        except OSError:
            continue
        for fn, args in [('cudaMemcpy', [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t,
                                         ctypes.c_int]),
                         ('cudaMemcpyAsync', [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t,
                                              ctypes.c_int, ctypes.c_void_p]),
                         ('cudaMemsetAsync', [ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t,
                                              ctypes.c_void_p]),
                         ('cudaMalloc', [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t]),
                         ('cudaFree', [ctypes.c_void_p]),
                         ('cudaStreamCreateWithFlags', [ctypes.POINTER(ctypes.c_void_p),
                                                        ctypes.c_uint]),
                         ('cudaStreamDestroy', [ctypes.c_void_p]),
                         ('cudaStreamSynchronize', [ctypes.c_void_p]),
                         ('cudaDeviceSynchronize', [])]:
            f = getattr(lib, fn)
            f.argtypes = args
            f.restype = ctypes.c_int
        return lib
    return None


CUDART = load_cudart() if GPU_ERROR is None else None
SKIP = NO_GPU_REASON or (None if CUDART is not None else 'no libcudart to read memory back with')


def cuda(code, what):
    if code != 0:
        raise AssertionError('%s failed: CUDA error %d' % (what, code))


def copy_out(address, nbytes, stream=None):
    """The bytes at a device-visible @address, copied with cudaMemcpy (on
    @stream, then synchronized, when one is given)."""
    out = ctypes.create_string_buffer(nbytes)
    if stream is None:
        cuda(CUDART.cudaMemcpy(out, address, nbytes, MEMCPY_DEFAULT), 'cudaMemcpy')
    else:
        cuda(CUDART.cudaMemcpyAsync(out, address, nbytes, MEMCPY_DEFAULT, stream),
             'cudaMemcpyAsync')
        cuda(CUDART.cudaStreamSynchronize(stream), 'cudaStreamSynchronize')
    return out.raw


def new_stream():
    handle = ctypes.c_void_p()
    cuda(CUDART.cudaStreamCreateWithFlags(ctypes.byref(handle), STREAM_NON_BLOCKING),
         'cudaStreamCreateWithFlags')
    return handle.value


class CaiReader:
    """A consumer of __cuda_array_interface__ that keeps the object, as
    CuPy, PyTorch and Numba do, and copies the memory out through CUDA on
    the stream the interface names."""

    def __init__(self, obj):
        cai = obj.__cuda_array_interface__
        self.owner = obj
        self.address = cai['data'][0]
        self.stream = cai['stream']
        self.nbytes = int(cai['typestr'][2:])
        for n in cai['shape']:
            self.nbytes *= n

    def read(self):
        stream = None if self.stream is None else (0 if self.stream == 1 else self.stream)
        return copy_out(self.address, self.nbytes, stream)


_GetPointer = ctypes.pythonapi.PyCapsule_GetPointer
_GetPointer.restype = ctypes.c_void_p
_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_SetName = ctypes.pythonapi.PyCapsule_SetName
_SetName.restype = ctypes.c_int
_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]
_USED = ctypes.create_string_buffer(b'used_dltensor')


class DLTensor(ctypes.Structure):
    _fields_ = [('data', ctypes.c_void_p), ('device_type', ctypes.c_int32),
                ('device_id', ctypes.c_int32), ('ndim', ctypes.c_int32),
                ('code', ctypes.c_uint8), ('bits', ctypes.c_uint8), ('lanes', ctypes.c_uint16),
                ('shape', ctypes.POINTER(ctypes.c_int64)),
                ('strides', ctypes.POINTER(ctypes.c_int64)), ('byte_offset', ctypes.c_uint64)]


class DLManagedTensor(ctypes.Structure):
    _fields_ = [('dl_tensor', DLTensor), ('manager_ctx', ctypes.c_void_p),
                ('deleter', ctypes.CFUNCTYPE(None, ctypes.c_void_p))]


def dlpack_read(obj, stream=None, **kwargs):
    """What a DLPack consumer does: takes the capsule on its stream, copies
    the memory out through CUDA on that stream, and calls the deleter.
    Returns (bytes, (device type, device id))."""
    capsule = obj.__dlpack__(stream=stream, **kwargs)
    managed = DLManagedTensor.from_address(_GetPointer(capsule, b'dltensor'))
    _SetName(capsule, _USED)
    t = managed.dl_tensor
    nbytes = t.bits // 8
    for i in range(t.ndim):
        nbytes *= t.shape[i]
    consumer = None if stream in (None, -1, 1) else stream
    data = copy_out(t.data + t.byte_offset, nbytes, consumer)
    device = (t.device_type, t.device_id)
    managed.deleter(ctypes.addressof(managed))
    return data, device


DATA = bytes(range(256)) * 16       # 4 KiB


@unittest.skipIf(SKIP, SKIP)
class TestGpuMemory(DsTestCase):
    def test_write_tobytes_fill(self):
        sp = Ds.Scratchpad.new(default_order())
        for kind in GPU_KINDS:
            with self.subTest(kind=kind.value_nick):
                block = sp.alloc(kind, len(DATA), 256)
                self.assertEqual(block.get_address() % 256, 0)
                block.write(0, DATA)
                self.assertEqual(block.tobytes(), DATA)
                self.assertEqual(copy_out(block.get_address(), len(DATA)), DATA)
                block.fill(0xa5)
                self.assertEqual(block.tobytes(0, 16), b'\xa5' * 16)
                self.assertEqual(copy_out(block.get_address(), 16), b'\xa5' * 16)
                block.write(100, bytearray(b'middle'))
                self.assertEqual(block.tobytes(98, 10), b'\xa5\xa5middle\xa5\xa5')
        sp.release()
        for kind in GPU_KINDS:
            self.assertEqual(sp.get_reserved(kind), 0)

    def test_host_visible_views(self):
        if np is None:
            self.skipTest('NumPy is not installed (python3-numpy)')
        sp = Ds.Scratchpad.new(default_order())
        for kind in (PINNED, MANAGED):
            with self.subTest(kind=kind.value_nick):
                block = sp.alloc(kind, 64, 0)
                a = block.numpy(np.uint8)
                a[:] = np.arange(64, dtype=np.uint8)
                self.assertEqual(copy_out(block.get_address(), 64), bytes(range(64)))
                self.assertEqual(np.asarray(block).tobytes(), bytes(range(64)))
                del a
        gc.collect()
        sp.release()

    def test_to_device(self):
        sp = Ds.Scratchpad.new(default_order())
        block = sp.to_device(DATA, 64)
        self.assertEqual(block.get_kind(), DEVICE)
        self.assertEqual(copy_out(block.get_address(), len(DATA)), DATA)
        whole, blocks = sp.to_contiguous_device([b'abc', bytearray(b'defgh')], 256)
        self.assertEqual(copy_out(blocks[0].get_address(), 3), b'abc')
        self.assertEqual(copy_out(blocks[1].get_address(), 5), b'defgh')
        self.assertEqual(whole.tobytes(256, 5), b'defgh')
        sp.release()


@unittest.skipIf(SKIP, SKIP)
class TestGpuExports(DsTestCase):
    def test_cuda_array_interface(self):
        sp = Ds.Scratchpad.new(default_order())
        for kind in GPU_KINDS:
            with self.subTest(kind=kind.value_nick):
                block = sp.alloc(kind, len(DATA), 0)
                block.write(0, DATA)
                reader = CaiReader(block)
                self.assertEqual(reader.stream, 1)      # the legacy default stream
                self.assertEqual(reader.read(), DATA)
                view = CaiReader(block.view('<f4', (32, 32)))
                self.assertEqual(view.read(), DATA)
                del reader, view
        # The readers are gone; the blocks are only this frame's variables.
        sp.release()
        self.assertFalse(block.is_valid())

    def test_dlpack(self):
        sp = Ds.Scratchpad.new(default_order())
        stream = new_stream()
        try:
            for kind, device_type in ((DEVICE, 2), (PINNED, 1), (MANAGED, 2)):
                with self.subTest(kind=kind.value_nick):
                    block = sp.alloc(kind, len(DATA), 0)
                    block.write(0, DATA)
                    self.assertEqual(block.__dlpack_device__()[0], device_type)
                    for consumer in ((None, stream, -1) if device_type == 2 else (None,)):
                        data, device = dlpack_read(block, consumer)
                        self.assertEqual(data, DATA)
                        self.assertEqual(device[0], device_type)
            for kind, device in ((PINNED, (3, 0)), (PINNED, (2, 0)), (MANAGED, (13, 0)),
                                 (MANAGED, (1, 0))):
                with self.subTest(kind=kind.value_nick, dl_device=device):
                    block = sp.alloc(kind, 64, 0)
                    block.fill(9)
                    device = (device[0], block.__dlpack_device__()[1] if device[0] != 1 else 0)
                    data, seen = dlpack_read(block, None if device[0] == 1 else stream,
                                             dl_device=device)
                    self.assertEqual((data, seen), (b'\x09' * 64, device))
            gc.collect()
            self.assertEqual(sp.get_n_exports(), 0)
            sp.release()
        finally:
            cuda(CUDART.cudaStreamDestroy(stream), 'cudaStreamDestroy')

    def test_numpy_from_pinned_dlpack(self):
        if np is None:
            self.skipTest('NumPy is not installed (python3-numpy)')
        sp = Ds.Scratchpad.new(default_order())
        block = sp.alloc(PINNED, 16, 0)
        block.write(0, bytes(range(16)))
        a = np.from_dlpack(block)
        self.assertEqual(a.tolist(), list(range(16)))
        del a
        gc.collect()
        sp.release()


class StreamObject:
    """A stream as cuda.core hands it out."""

    def __init__(self, handle):
        self.handle = handle

    def __cuda_stream__(self):
        return (0, self.handle)


@unittest.skipIf(SKIP, SKIP)
class TestRealStreams(DsTestCase):
    def test_from_stream(self):
        stream = new_stream()
        try:
            for given in (stream, StreamObject(stream)):
                with self.subTest(given=type(given).__name__):
                    order = Ds.AccessOrder.from_stream(given)
                    self.assertTrue(order.is_device())
                    self.assertEqual(order.get_stream_handle(), stream)
                    self.assertEqual(order, Ds.AccessOrder.from_stream(stream))
                    sp = Ds.Scratchpad(device_order=order)
                    block = sp.alloc(DEVICE, len(DATA), 0)
                    block.write(0, DATA)
                    reader = CaiReader(block)
                    self.assertEqual(reader.stream, stream)
                    self.assertEqual(reader.read(), DATA)
                    data, _ = dlpack_read(block, stream)
                    self.assertEqual(data, DATA)
                    self.assertTrue(order.wait(default_order()))
                    del reader
                    sp.release()
                    del sp
                    gc.collect()
        finally:
            cuda(CUDART.cudaStreamSynchronize(stream), 'cudaStreamSynchronize')
            cuda(CUDART.cudaStreamDestroy(stream), 'cudaStreamDestroy')


class CudaMallocResource(GObject.Object, Ds.MemoryResource):
    """Device memory from cudaMalloc, in Python."""

    def __init__(self):
        super().__init__()
        self.live = {}
        self.taken = 0

    def do_get_kind(self):
        return DEVICE

    def do_allocate(self, size, alignment):
        ptr = ctypes.c_void_p()
        code = CUDART.cudaMalloc(ctypes.byref(ptr), size)
        if code != 0:
            raise GLib.Error.new_literal(Ds.error_quark(), 'cudaMalloc: error %d' % code,
                                         int(Ds.Error.CUDA))
        self.live[ptr.value] = size
        self.taken += 1
        return ptr.value

    def do_deallocate(self, ptr, size, alignment):
        assert self.live.pop(ptr) == size
        cuda(CUDART.cudaFree(ptr), 'cudaFree')


@unittest.skipIf(SKIP, SKIP)
class TestPythonDeviceResource(DsTestCase):
    def test_feeds_device_memory(self):
        res = CudaMallocResource()
        sp = Ds.Scratchpad(device_order=default_order(), device_resource=res)
        blocks = [sp.alloc(DEVICE, n, 256) for n in (1000, 100 * KiB, 3)]
        self.assertEqual(res.taken, 2)      # 64 KiB, then a block for 100 KiB
        for i, block in enumerate(blocks):
            data = bytes([i + 1]) * block.get_size()
            block.write(0, data)
            self.assertEqual(copy_out(block.get_address(), len(data)), data)
            self.assertTrue(any(base <= block.get_address() < base + size
                                for base, size in res.live.items()))
        data, _ = dlpack_read(blocks[1], None)
        self.assertEqual(data, b'\x02' * 100 * KiB)
        sp.release()
        self.assertEqual(res.live, {})

    def test_upload_through_it(self):
        res = CudaMallocResource()
        with Ds.Scratchpad(device_order=default_order(), device_resource=res) as sp:
            block = sp.to_device(DATA)
            self.assertEqual(copy_out(block.get_address(), len(DATA)), DATA)
            del block
        self.assertEqual(res.live, {})


class TestWithoutGpu(DsTestCase):
    def test_reason(self):
        if SKIP is None:
            self.skipTest('a GPU is present: the cases above ran')
        # The reason says why (no driver, no device, or no libcudart).
        self.assertTrue(SKIP)



@unittest.skipIf(SKIP, SKIP)
class TestGpuViewsOutliveTheRelease(DsTestCase):
    def test_views_keep_their_blocks_in_stream_order(self):
        # On a stream of its own: a release keeps the blocks views use and
        # gives them back, in that stream's order, when the views go.
        if np is None:
            self.skipTest('NumPy is not installed (python3-numpy)')
        stream = new_stream()
        try:
            sp = Ds.Scratchpad(device_order=Ds.AccessOrder.from_stream(stream))
            device = sp.empty((16, 16), 'u1', kind=DEVICE)          # a Ds.BlockView
            device.block.write(0, DATA[:256])
            arrays = {kind: sp.empty((16, 16), np.uint8, kind=kind) for kind in (PINNED, MANAGED)}
            for a in arrays.values():
                a[:] = 7
            other = sp.alloc(DEVICE, 1 << 20)       # a block of its own, no view
            sp.release()
            self.assertFalse(other.is_valid())
            for kind in (DEVICE, PINNED, MANAGED):
                self.assertGreater(sp.get_held_by_exports(kind), 0, kind.value_nick)
                self.assertEqual(sp.get_reserved(kind), 0, kind.value_nick)
            self.assertEqual(CaiReader(device).read(), DATA[:256])
            for a in arrays.values():
                self.assertEqual(int(a.sum()), 7 * 256)
            del device, arrays, a
            gc.collect()
            for kind in (DEVICE, PINNED, MANAGED):
                self.assertEqual(sp.get_held_by_exports(kind), 0, kind.value_nick)
            # The scratchpad goes on in the same stream.
            block = sp.alloc(DEVICE, 256, 0)
            block.write(0, DATA[:256])
            self.assertEqual(block.tobytes(), DATA[:256])
            sp.release()
        finally:
            cuda(CUDART.cudaStreamSynchronize(stream), 'cudaStreamSynchronize')
            cuda(CUDART.cudaStreamDestroy(stream), 'cudaStreamDestroy')


@unittest.skipIf(SKIP, SKIP)
class TestGpuKernelContext(DsTestCase):
    def test_run_views_keep_their_blocks(self):
        # KernelContext.run on a stream of its own: the scratchpad it makes
        # is released when the function returns; the blocks that views
        # still use go back, in the stream's order, when the views go.
        if np is None:
            self.skipTest('NumPy is not installed (python3-numpy)')
        stream = new_stream()
        try:
            ctx = Ds.KernelContext.new(Ds.AccessOrder.from_stream(stream), None)
            out = {}

            def work(context, data):
                sp = context.get_scratchpad()
                out['sp'] = sp
                device = sp.empty((16, 16), 'u1', kind=DEVICE)
                device.block.write(0, DATA[:256])
                out['device'] = device
                out['pinned'] = sp.empty((16, 16), np.uint8, kind=PINNED)
                out['pinned'][:] = 3
                sp.alloc(DEVICE, 1 << 20)       # a block of its own, no view
                return True

            # On a thread of its own, so that this thread's scratchpads do
            # not learn from the 1 MiB unit.
            ran = []
            thread = threading.Thread(target=lambda: ran.append(ctx.run(work, None)))
            thread.start()
            thread.join()
            self.assertEqual(ran, [True])
            sp = out['sp']
            for kind in (DEVICE, PINNED):
                self.assertEqual(sp.get_reserved(kind), 0, kind.value_nick)
                self.assertGreater(sp.get_held_by_exports(kind), 0, kind.value_nick)
            self.assertLess(sp.get_held_by_exports(DEVICE), 1 << 20)
            self.assertEqual(CaiReader(out['device']).read(), DATA[:256])
            data, _ = dlpack_read(out['device'], stream)
            self.assertEqual(data, DATA[:256])
            self.assertEqual(int(out['pinned'].sum()), 3 * 256)
            del out['device'], out['pinned']
            gc.collect()
            for kind in (DEVICE, PINNED):
                self.assertEqual(sp.get_held_by_exports(kind), 0, kind.value_nick)
        finally:
            cuda(CUDART.cudaStreamSynchronize(stream), 'cudaStreamSynchronize')
            cuda(CUDART.cudaStreamDestroy(stream), 'cudaStreamDestroy')


if __name__ == '__main__':
    tap.main()
