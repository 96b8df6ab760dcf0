#!/usr/bin/python3
# Ds-1.0 from Python through GObject-Introspection (PyGObject).
#
# Copyright 2026 The ds authors
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Run by meson (suite 'gi') with GI_TYPELIB_PATH and LD_LIBRARY_PATH set to
# the build tree and PYTHONPATH to introspection/overrides. Prints TAP.
#
# On a machine without a GPU the pinned, device and managed kinds must fail
# with Ds.Error.NO_DEVICE (NOT_SUPPORTED in a -Dcuda=disabled build); the
# GPU cases check that and skip the real GPU path with the reason. Where a
# GPU is present they test the real path instead.

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


class TestEnums(DsTestCase):
    def test_memory_kind_values(self):
        self.assertEqual([int(k) for k in ALL_KINDS], [0, 1, 2, 3])
        self.assertEqual([k.value_nick for k in ALL_KINDS],
                         ['host', 'pinned', 'device', 'managed'])
        self.assertTrue(issubclass(Ds.MemoryKind, GObject.GEnum))

    def test_error_codes(self):
        self.assertEqual(int(Ds.Error.INVALID_ARGUMENT), 0)
        self.assertEqual(int(Ds.Error.NOT_SUPPORTED), 1)
        self.assertEqual(int(Ds.Error.NO_DEVICE), 2)
        self.assertEqual(int(Ds.Error.OUT_OF_MEMORY), 3)
        self.assertEqual(int(Ds.Error.CUDA), 4)
        self.assertEqual(DS_ERROR_DOMAIN, 'ds-error-quark')


class TestAccessOrder(DsTestCase):
    def test_host(self):
        order = Ds.AccessOrder.new_host()
        self.assertTrue(order.is_host())
        self.assertFalse(order.is_device())
        self.assertEqual(order.get_stream_handle(), 0)
        self.assertTrue(order.equal(Ds.AccessOrder.new_host()))

    @made_up_handles
    def test_stream_handle(self):
        order = Ds.AccessOrder.new_for_handle(0, -1)
        self.assertFalse(order.is_host())
        self.assertTrue(order.is_device())
        self.assertEqual(order.get_stream_handle(), 0)
        self.assertFalse(order.equal(Ds.AccessOrder.new_host()))
        # A stream handle is an integer that round-trips.
        fake = Ds.AccessOrder.new_for_handle(fake_handle(7), 0)
        self.assertEqual(fake.get_stream_handle(), fake_handle(7))
        self.assertEqual(fake.get_device(), 0)
        self.assertTrue(fake.equal(fake.copy()))
        self.assertFalse(fake.equal(order))

    @made_up_handles
    def test_handle_is_not_probed(self):
        # An integer handle must be a live stream: ds does not probe the
        # process's memory to guess. Without a driver the order keeps it,
        # and device work in it fails cleanly.
        for nowhere in (3, 42, 0x1000, 0x7f00deadbe00):
            with self.subTest(handle=nowhere):
                for order in (Ds.AccessOrder.new_for_handle(nowhere, 0),
                              Ds.AccessOrder.from_stream(nowhere, 0)):
                    self.assertEqual(order.get_stream_handle(), nowhere)
                    sp = Ds.Scratchpad.new(order)
                    with self.assertRaises((Ds.NoDeviceError, Ds.NotSupportedError)):
                        sp.alloc(Ds.MemoryKind.DEVICE, 64)

    def test_host_wait_is_a_no_op(self):
        # Host orders never call into CUDA, even on a machine without one.
        host = Ds.AccessOrder.new_host()
        self.assertTrue(host.wait(Ds.AccessOrder.new_host()))
        order = default_order()
        self.assertTrue(order.wait(host))

    @made_up_handles
    def test_equality_is_by_value(self):
        host, other_host = Ds.AccessOrder.new_host(), Ds.AccessOrder.new_host()
        self.assertEqual(host, other_host)
        self.assertEqual(hash(host), hash(other_host))
        a, b = Ds.AccessOrder.new_for_handle(fake_handle(1), 0), Ds.AccessOrder.new_for_handle(fake_handle(1), 0)
        self.assertEqual(a, b)
        self.assertEqual(hash(a), hash(b))
        self.assertEqual(a, a.copy())
        self.assertNotEqual(a, host)
        self.assertNotEqual(a, Ds.AccessOrder.new_for_handle(fake_handle(1), 1))
        self.assertNotEqual(a, Ds.AccessOrder.new_for_handle(fake_handle(2), 0))
        self.assertEqual(len({host, other_host, a, b, a.copy()}), 2)
        self.assertNotEqual(host, 'host')
        self.assertFalse(host == None)  # noqa: E711
        sp = Ds.Scratchpad(device_order=a)
        self.assertEqual(sp.get_device_order(), b)
        self.assertEqual(sp.props.device_order, b)

    @made_up_handles
    def test_boxed_property_round_trip(self):
        order = Ds.AccessOrder.new_for_handle(fake_handle(3), 0)
        sp = Ds.Scratchpad(device_order=order)
        self.assertTrue(sp.props.device_order.equal(order))
        self.assertTrue(sp.get_device_order().equal(order))


class TestScratchpad(DsTestCase):
    def test_properties(self):
        pinned_order = Ds.AccessOrder.new_host()
        sp = Ds.Scratchpad(device_order=default_order(),
                           pinned_dealloc_order=pinned_order,
                           initial_size_host=1 * MiB,
                           initial_size_device=4 * MiB)
        self.assertEqual(sp.props.initial_size_host, 1 * MiB)
        self.assertEqual(sp.props.initial_size_device, 4 * MiB)
        self.assertEqual(sp.props.initial_size_pinned, 64 * KiB)
        self.assertEqual(sp.props.initial_size_managed, 64 * KiB)
        self.assertEqual(sp.get_initial_size(HOST), 1 * MiB)
        self.assertEqual(sp.get_initial_size(MANAGED), 64 * KiB)
        self.assertTrue(sp.get_dealloc_order(PINNED).is_host())
        # managed-dealloc-order defaults to the device order.
        self.assertTrue(sp.get_dealloc_order(MANAGED).equal(sp.get_device_order()))
        self.assertIsInstance(sp, Ds.ScratchpadIface)

    def test_settings_until_first_alloc(self):
        sp = Ds.Scratchpad()
        pspec = Ds.Scratchpad.find_property('initial-size-host')
        self.assertFalse(pspec.flags & GObject.ParamFlags.CONSTRUCT_ONLY)
        self.assertEqual(pspec.value_type, GObject.TYPE_UINT64)
        # Settable until the first allocation.
        sp.props.initial_size_host = 128 * KiB
        self.assertEqual(sp.get_initial_size(HOST), 128 * KiB)
        for name in ('device-order', 'pinned-dealloc-order', 'managed-dealloc-order',
                     'host-resource', 'pinned-resource', 'device-resource',
                     'managed-resource', 'initial-size-pinned',
                     'initial-size-device', 'initial-size-managed'):
            self.assertIsNotNone(Ds.Scratchpad.find_property(name), name)
        # Construction allocates nothing.
        for kind in ALL_KINDS:
            self.assertEqual(sp.get_reserved(kind), 0)
            self.assertEqual(sp.get_n_blocks(kind), 0)

    def test_new_full(self):
        sizes = [1 * MiB, 0, 4 * MiB, 0]
        sp = Ds.Scratchpad.new_full(default_order(), Ds.AccessOrder.new_host(), None, sizes)
        self.assertEqual([sp.get_initial_size(k) for k in ALL_KINDS],
                         [1 * MiB, 64 * KiB, 4 * MiB, 64 * KiB])
        self.assertTrue(sp.get_dealloc_order(PINNED).is_host())
        self.assertTrue(sp.get_dealloc_order(MANAGED).equal(sp.get_device_order()))
        # A host request that fits the 1 MiB first block takes just that.
        sp.alloc(HOST, 768 * KiB, 0)
        self.assertEqual(sp.get_n_blocks(HOST), 1)
        self.assertEqual(sp.get_reserved(HOST), 1 * MiB)

    def test_set_resource(self):
        sp = Ds.Scratchpad.new(Ds.AccessOrder.new_host())
        pool = Ds.PoolResource.new(Ds.HostMemoryResource.new())
        notified = []
        sp.connect('notify::host-resource', lambda *args: notified.append(args[1].name))
        sp.set_resource(HOST, pool)
        self.assertIs(sp.get_resource(HOST), pool)
        self.assertIs(sp.props.host_resource, pool)
        self.assertEqual(notified, ['host-resource'])
        sp.set_resource(HOST, pool)
        self.assertEqual(notified, ['host-resource'])
        sp.alloc(HOST, 1000, 0)
        self.assertEqual(pool.get_stats().cache_misses, 1)

    def test_zero_initial_size_is_default(self):
        sp = Ds.Scratchpad(initial_size_host=0)
        self.assertEqual(sp.get_initial_size(HOST), 64 * KiB)

    def test_host_block_round_trip(self):
        sp = Ds.Scratchpad.new(default_order())
        block = sp.alloc(HOST, 1000, 64)
        self.assertEqual(block.get_kind(), HOST)
        self.assertEqual(block.get_size(), 1000)
        self.assertIsInstance(block.get_address(), int)
        self.assertNotEqual(block.get_address(), 0)
        self.assertEqual(block.get_address() % 64, 0)
        self.assertIs(block.get_scratchpad(), sp)
        self.assertTrue(block.is_valid())

        data = bytes(range(256)) * 3
        self.assertTrue(block.write(10, GLib.Bytes.new(data)))
        self.assertEqual(block.read(10, len(data)).get_data(), data)

        self.assertTrue(block.fill(0x5a))
        self.assertEqual(block.read(0, 1000).get_data(), b'\x5a' * 1000)

        # The memory really is at the address: read it with ctypes.
        self.assertEqual(ctypes.string_at(block.get_address(), 4), b'\x5a' * 4)

    def test_block_bounds(self):
        sp = Ds.Scratchpad()
        block = sp.alloc(HOST, 100, 0)
        self.assertRaisesDsError(Ds.Error.INVALID_ARGUMENT, block.read, 90, 20)
        self.assertRaisesDsError(Ds.Error.INVALID_ARGUMENT,
                                 block.write, 99, GLib.Bytes.new(b'ab'))
        self.assertEqual(block.read(100, 0).get_data(), b'')

    def test_zero_size(self):
        # An empty block, as an empty array is an array: nothing set up.
        sp = Ds.Scratchpad()
        for kind in (HOST, DEVICE):
            block = sp.alloc(kind, 0, 0)
            self.assertEqual((len(block), block.size, block.kind, block.address), (0, 0, kind, 0))
            self.assertTrue(block.is_valid())
            self.assertEqual(block.tobytes(), b'')
            self.assertEqual(sp.get_n_blocks(kind), 0)
        self.assertEqual(bytes(sp.alloc(HOST, 0)), b'')
        self.assertEqual(sp.alloc(HOST, 0).memoryview().nbytes, 0)

    def test_bad_alignment(self):
        sp = Ds.Scratchpad()
        for alignment in (3, 24, 100):
            e = self.assertRaisesDsError(Ds.Error.INVALID_ARGUMENT,
                                         sp.alloc, HOST, 16, alignment)
            self.assertIn(str(alignment), e.message)
        # Nothing was set up by the failures.
        self.assertEqual(sp.get_n_blocks(HOST), 0)
        self.assertEqual(sp.get_reserved(HOST), 0)

    def test_size_overflow(self):
        sp = Ds.Scratchpad()
        gsize_max = 2 ** (8 * ctypes.sizeof(ctypes.c_size_t)) - 1
        self.assertRaisesDsError(Ds.Error.INVALID_ARGUMENT,
                                 sp.alloc, HOST, gsize_max, 16)
        self.assertRaisesDsError(Ds.Error.INVALID_ARGUMENT,
                                 sp.alloc, HOST, gsize_max - 8, 4096)
        self.assertEqual(sp.get_n_blocks(HOST), 0)

    def test_unknown_kind(self):
        sp = Ds.Scratchpad()
        for kind in (7, -1, 4):
            e = self.assertRaisesDsError(Ds.Error.INVALID_ARGUMENT, sp.alloc, kind, 16, 0)
            self.assertEqual(e.message, 'Unknown memory kind %d' % kind)
        self.assertRaises(TypeError, sp.alloc, 'host', 16)
        self.assertEqual(sp.alloc(0, 16).get_kind(), HOST)      # an int kind
        self.assertEqual(sp.get_n_blocks(HOST), 1)

    def test_growth_and_stats(self):
        sp = Ds.Scratchpad()
        a = sp.alloc(HOST, 1000, 0)
        self.assertEqual(sp.get_n_blocks(HOST), 1)
        self.assertEqual(sp.get_reserved(HOST), 64 * KiB)
        # What the allocations took of the blocks: 1000 bytes at the
        # start of the first take 1008.
        self.assertEqual(sp.get_allocated(HOST), 1008)
        b = sp.alloc(HOST, 1000, 0)
        self.assertEqual(sp.get_n_blocks(HOST), 1)
        self.assertNotEqual(a.get_address(), b.get_address())
        # Does not fit in the rest of the first block: a second, bigger one.
        sp.alloc(HOST, 100 * KiB, 0)
        self.assertEqual(sp.get_n_blocks(HOST), 2)
        self.assertGreaterEqual(sp.get_reserved(HOST), 64 * KiB + 128 * KiB)
        # The first block's tail, left for the second, is not counted.
        self.assertEqual(sp.get_allocated(HOST), 2016 + 100 * KiB)
        for kind in GPU_KINDS:
            self.assertEqual(sp.get_reserved(kind), 0)

    def test_release(self):
        sp = Ds.Scratchpad()
        block = sp.alloc(HOST, 4 * KiB, 0)
        generation = block.get_generation()
        sp.release()
        self.assertFalse(block.is_valid())
        self.assertEqual(sp.get_reserved(HOST), 0)
        self.assertEqual(sp.get_allocated(HOST), 0)
        self.assertEqual(sp.get_n_blocks(HOST), 0)
        self.assertRaises(GLib.Error, block.read, 0, 1)
        # Usable again, and blocks from before are told apart.
        again = sp.alloc(HOST, 4 * KiB, 0)
        self.assertTrue(again.is_valid())
        self.assertNotEqual(again.get_generation(), generation)
        self.assertEqual(sp.get_n_blocks(HOST), 1)

    def test_keep_blocks(self):
        sp = Ds.Scratchpad(keep_blocks=True)
        self.assertTrue(sp.get_keep_blocks())
        block = sp.alloc(HOST, 4 * KiB, 0)
        block.write(0, b'old')
        address = block.get_address()
        sp.release()
        # The block stays with the scratchpad, empty; views of the unit
        # before are invalid all the same, though the memory is mapped.
        self.assertEqual(sp.get_n_blocks(HOST), 1)
        self.assertEqual(sp.get_allocated(HOST), 0)
        self.assertFalse(block.is_valid())
        self.assertRaises(GLib.Error, block.read, 0, 1)
        self.assertRaisesDsError(Ds.Error.INVALID_ARGUMENT, block.memoryview)
        again = sp.alloc(HOST, 4 * KiB, 0)
        self.assertEqual(again.get_address(), address)
        again.write(0, b'new')
        self.assertRaises(GLib.Error, block.read, 0, 3)
        sp.props.keep_blocks = False
        sp.release()
        self.assertEqual(sp.get_n_blocks(HOST), 0)
        self.assertEqual(sp.get_reserved(HOST), 0)

    def test_block_keeps_scratchpad_alive(self):
        sp = Ds.Scratchpad()
        block = sp.alloc(HOST, 64, 0)
        del sp
        gc.collect()
        self.assertTrue(block.is_valid())
        self.assertTrue(block.write(0, GLib.Bytes.new(b'x' * 64)))
        self.assertEqual(block.read(0, 64).get_data(), b'x' * 64)
        self.assertIsInstance(block.get_scratchpad(), Ds.Scratchpad)

    def test_default_host_resource(self):
        res = Ds.MemoryResource.get_default(HOST, -1)
        self.assertEqual(res.get_kind(), HOST)
        self.assertIs(res, Ds.MemoryResource.get_default(HOST, -1))


class TestKernelContext(DsTestCase):
    def test_run_creates_scratchpad(self):
        ctx = Ds.KernelContext.new(default_order(), None)
        self.assertIsNone(ctx.get_scratchpad())
        seen = []

        def work(context, data):
            sp = context.get_scratchpad()
            self.assertIsInstance(sp, Ds.Scratchpad)
            block = sp.alloc(HOST, 100, 0)
            block.write(0, GLib.Bytes.new(b'k' * 100))
            seen.append((data, sp.get_allocated(HOST)))
            return True

        self.assertTrue(ctx.run(work, 'payload'))
        self.assertEqual(seen, [('payload', 112)])
        # The scratchpad existed for the call only.
        self.assertIsNone(ctx.get_scratchpad())

    def test_run_uses_given_scratchpad(self):
        sp = Ds.Scratchpad()
        ctx = Ds.KernelContext.new(Ds.AccessOrder.new_host(), sp)
        self.assertTrue(ctx.get_order().is_host())

        def work(context, data):
            self.assertIs(context.get_scratchpad(), sp)
            context.get_scratchpad().alloc(HOST, 10, 0)
            return True

        self.assertTrue(ctx.run(work, None))
        self.assertIs(ctx.get_scratchpad(), sp)
        self.assertEqual(sp.get_allocated(HOST), 16)

    def test_run_error(self):
        ctx = Ds.KernelContext.new(default_order(), None)

        def work(context, data):
            context.get_scratchpad().alloc(HOST, 16, 3)  # bad alignment
            return True

        self.assertRaisesDsError(Ds.Error.INVALID_ARGUMENT, ctx.run, work, None)
        self.assertIsNone(ctx.get_scratchpad())

    def test_run_views_keep_their_memory(self):
        # The memory follows the views out of run(), as out of a `with`:
        # what no view uses goes back when the function returns, the
        # block a view uses when the view is gone.
        try:
            import numpy as np
        except ImportError:
            self.skipTest('NumPy is not installed (python3-numpy)')
        ctx = Ds.KernelContext.new(Ds.AccessOrder.new_host(), None)
        out = {}

        def work(context, data):
            sp = context.get_scratchpad()
            out['sp'] = sp
            out['view'] = sp.empty((16,), np.float32)
            out['view'][:] = np.arange(16)
            sp.alloc(HOST, 1 * MiB)         # an upstream block of its own
            return True

        # On a thread of its own: the 1 MiB unit would teach this thread's
        # default-resource scratchpads a bigger first block.
        ran = []
        thread = threading.Thread(target=lambda: ran.append(ctx.run(work, None)))
        thread.start()
        thread.join()
        self.assertEqual(ran, [True])
        self.assertIsNone(ctx.get_scratchpad())
        sp = out['sp']
        self.assertEqual(sp.get_reserved(HOST), 0)
        self.assertEqual(sp.get_n_blocks(HOST), 0)
        held = sp.get_held_by_exports(HOST)
        self.assertGreater(held, 0)
        self.assertLess(held, 1 * MiB)      # the big block went back
        self.assertEqual(out['view'].tolist(), list(range(16)))
        del out['view']
        gc.collect()
        self.assertEqual(sp.get_held_by_exports(HOST), 0)


class TestPythonResource(DsTestCase):
    def setUp(self):
        # A scratchpad over a resource whose addresses are garbled would
        # write to random memory: fail cleanly instead.
        if PY_RESOURCE_PROBLEM is not None:
            self.fail(PY_RESOURCE_PROBLEM)

    def test_resource_interface(self):
        res = RecordingHostResource()
        self.assertIsInstance(res, Ds.MemoryResource)
        self.assertEqual(res.get_kind(), HOST)
        self.assertFalse(res.is_stream_ordered())
        ptr = res.allocate(100, 32)
        self.assertIn(ptr, res.live)
        self.assertEqual(ptr % 32, 0)
        res.deallocate(ptr, 100, 32)
        self.assertEqual(res.calls, [('allocate', 100, 32), ('deallocate', ptr, 100, 32)])

    def test_scratchpad_uses_python_upstream(self):
        res = RecordingHostResource()
        sp = Ds.Scratchpad(host_resource=res)
        self.assertIs(sp.props.host_resource, res)
        self.assertEqual(res.calls, [], 'construction must allocate nothing')

        small = sp.alloc(HOST, 1000, 64)
        self.assertEqual(len(res.allocations()), 1)
        _, size0, align0 = res.allocations()[0]
        self.assertEqual(size0, 64 * KiB)
        base = next(iter(res.live))
        self.assertTrue(base <= small.get_address() < base + size0)
        self.assertEqual(small.get_address() % 64, 0)

        # The memory is the resource's: what goes in through the block is
        # in the Python buffer.
        small.write(0, GLib.Bytes.new(b'python!'))
        self.assertEqual(ctypes.string_at(small.get_address(), 7), b'python!')

        # A second block, twice the first, for a request that does not fit.
        sp.alloc(HOST, 100 * KiB, 0)
        self.assertEqual(len(res.allocations()), 2)
        size1 = res.allocations()[1][1]
        self.assertGreaterEqual(size1, 2 * size0)
        self.assertGreaterEqual(size1, 100 * KiB)
        self.assertEqual(res.deallocations(), [])

        del small
        sp.release()
        deallocs = res.deallocations()
        self.assertEqual(len(deallocs), 2, 'every block back exactly once')
        # Newest first, each with the size and alignment it was taken with.
        allocated = [(size, align) for _, size, align in res.allocations()]
        self.assertEqual([(size, align) for _, _, size, align in deallocs],
                         list(reversed(allocated)))
        self.assertEqual(res.live, {})
        self.assertEqual(sp.get_reserved(HOST), 0)

        # Finalize gives back what a reused scratchpad took.
        sp.alloc(HOST, 10, 0)
        self.assertEqual(len(res.allocations()), 3)
        del sp
        gc.collect()
        self.assertEqual(len(res.deallocations()), 3)
        self.assertEqual(res.live, {})

    def test_upstream_failure(self):
        res = RecordingHostResource(fail=True)
        sp = Ds.Scratchpad(host_resource=res)
        with self.assertRaises(GLib.Error) as cm:
            sp.alloc(HOST, 100, 0)
        self.assertEqual(cm.exception.domain, DS_ERROR_DOMAIN)
        self.assertIn(cm.exception.code, (int(Ds.Error.OUT_OF_MEMORY), int(Ds.Error.CUDA)))
        self.assertEqual(sp.get_n_blocks(HOST), 0)
        # The scratchpad stays consistent and works once the upstream does.
        res.fail = False
        block = sp.alloc(HOST, 100, 0)
        self.assertTrue(block.is_valid())
        sp.release()
        self.assertEqual(res.live, {})


class TestOverrides(DsTestCase):
    def test_with_releases(self):
        if PY_RESOURCE_PROBLEM is not None:
            self.fail(PY_RESOURCE_PROBLEM)
        res = RecordingHostResource()
        with Ds.Scratchpad(host_resource=res) as sp:
            sp.alloc(HOST, 100, 0)
            self.assertEqual(len(res.live), 1)
        self.assertEqual(res.live, {})
        self.assertEqual(sp.get_reserved(HOST), 0)

    def test_with_releases_on_exception(self):
        sp = Ds.Scratchpad()
        with self.assertRaises(KeyError):
            with sp:
                sp.alloc(HOST, 100, 0)
                raise KeyError('boom')
        self.assertEqual(sp.get_n_blocks(HOST), 0)

    def test_memoryview(self):
        sp = Ds.Scratchpad()
        block = sp.alloc(HOST, 256, 0)
        block.fill(0)
        mv = block.memoryview()
        self.assertEqual(len(mv), 256)
        self.assertFalse(mv.readonly)
        mv[0:5] = b'hello'
        self.assertEqual(block.read(0, 5).get_data(), b'hello')
        block.write(10, GLib.Bytes.new(b'zero-copy'))
        self.assertEqual(bytes(mv[10:19]), b'zero-copy')
        # The view keeps the block, and so its memory, alive.
        del block
        gc.collect()
        self.assertEqual(bytes(mv[0:5]), b'hello')
        mv.release()

    def test_memoryview_after_release(self):
        sp = Ds.Scratchpad()
        block = sp.alloc(HOST, 16, 0)
        sp.release()
        self.assertRaisesDsError(Ds.Error.INVALID_ARGUMENT, block.memoryview)

    def test_no_cuda_array_interface_for_host(self):
        sp = Ds.Scratchpad()
        block = sp.alloc(HOST, 16, 0)
        self.assertFalse(hasattr(block, '__cuda_array_interface__'))


class TestGpuKinds(DsTestCase):
    def test_gpu_kinds_without_gpu(self):
        if GPU_ERROR is None:
            self.skipTest('a GPU is present: the GPU kinds are tested for real below')
        sp = Ds.Scratchpad()
        for kind in GPU_KINDS:
            with self.assertRaises(GLib.Error) as cm:
                sp.alloc(kind, 1024, 0)
            e = cm.exception
            self.assertEqual(e.domain, DS_ERROR_DOMAIN)
            self.assertIn(e.code, (int(Ds.Error.NO_DEVICE), int(Ds.Error.NOT_SUPPORTED)),
                          e.message)
            self.assertTrue(e.message, 'the error must say why')
            # The failure set nothing up; the host kind still works.
            self.assertEqual(sp.get_n_blocks(kind), 0)
            self.assertEqual(sp.get_reserved(kind), 0)
        self.assertTrue(sp.alloc(HOST, 1024, 0).is_valid())

    def test_gpu_round_trip(self):
        if GPU_ERROR is not None:
            self.skipTest(NO_GPU_REASON)
        sp = Ds.Scratchpad.new(default_order())
        data = bytes(range(256)) * 16
        for kind in GPU_KINDS:
            block = sp.alloc(kind, len(data), 256)
            self.assertEqual(block.get_address() % 256, 0)
            block.write(0, GLib.Bytes.new(data))
            self.assertEqual(block.read(0, len(data)).get_data(), data, kind.value_nick)
            block.fill(7)
            self.assertEqual(block.read(0, 16).get_data(), b'\x07' * 16)
            self.assertGreater(sp.get_reserved(kind), 0)
        sp.release()
        for kind in GPU_KINDS:
            self.assertEqual(sp.get_reserved(kind), 0)

    def test_gpu_overrides(self):
        if GPU_ERROR is not None:
            self.skipTest(NO_GPU_REASON)
        sp = Ds.Scratchpad.new(default_order())
        device = sp.alloc(DEVICE, 4096, 0)
        cai = device.__cuda_array_interface__
        self.assertEqual(cai['version'], 3)
        self.assertEqual(cai['shape'], (4096,))
        self.assertEqual(cai['data'], (device.get_address(), False))
        self.assertEqual(cai['stream'], 1)  # legacy default stream
        self.assertRaisesDsError(Ds.Error.INVALID_ARGUMENT, device.memoryview)
        pinned = sp.alloc(PINNED, 64, 0)
        mv = pinned.memoryview()
        mv[0:3] = b'abc'
        self.assertEqual(pinned.read(0, 3).get_data(), b'abc')
        self.assertTrue(hasattr(pinned, '__cuda_array_interface__'))
        mv.release()


if __name__ == '__main__':
    tap.main()
