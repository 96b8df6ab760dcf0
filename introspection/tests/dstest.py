# dstest.py: what the Python GI tests share
#
# Copyright 2026 The ds authors
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The tests run by meson (suite 'gi') with GI_TYPELIB_PATH and
# LD_LIBRARY_PATH set to the build tree and PYTHONPATH to
# introspection/overrides, and print TAP (tap.py).
#
# On a machine without a GPU the pinned, device and managed kinds must fail
# with Ds.Error.NO_DEVICE (NOT_SUPPORTED in a -Dcuda=disabled build); the
# GPU cases check that and skip the real GPU path with the reason. Where a
# GPU is present they test the real path instead. Cases that need memory of
# a GPU kind but no GPU use fake_gpu_scratchpad(): Python resources of those
# kinds that hand out host memory, and host order, so no CUDA is called.

import ctypes
import gc
import os
import subprocess
import sys
import unittest

import tap

import gi

gi.require_version('GLib', '2.0')
gi.require_version('GObject', '2.0')
gi.require_version('Ds', '1.0')
from gi.repository import GLib, GObject, Ds  # noqa: E402

HOST = Ds.MemoryKind.HOST
PINNED = Ds.MemoryKind.PINNED
DEVICE = Ds.MemoryKind.DEVICE
MANAGED = Ds.MemoryKind.MANAGED
GPU_KINDS = (PINNED, DEVICE, MANAGED)
ALL_KINDS = (HOST,) + GPU_KINDS
KiB = 1024
MiB = 1024 * KiB
DS_ERROR_DOMAIN = GLib.quark_to_string(Ds.error_quark())


def default_order():
    # The legacy default stream of the current device: building it touches
    # no CUDA API.
    return Ds.AccessOrder.new_for_handle(0, -1)


def probe_gpu():
    """None when the GPU kinds work, else the GLib.Error that says why not."""
    sp = Ds.Scratchpad.new(default_order())
    try:
        sp.alloc(DEVICE, 16, 0)
    except GLib.Error as e:
        return e
    finally:
        sp.release()
    return None


GPU_ERROR = probe_gpu()
NO_GPU_REASON = None if GPU_ERROR is None else 'no usable GPU: ' + GPU_ERROR.message

# A made-up stream handle is a pointer that a real CUDA driver dereferences
# (ds_access_order_new_for_handle () says so): the cases that check the
# value semantics of orders with made-up handles run where no GPU answers;
# test-gpu.py checks orders of real streams.
_FAKE_STREAMS = ctypes.create_string_buffer(4096)


def fake_handle(i):
    """A made-up stream handle: an integer that points at memory of this
    process, as a stream handle does, but is no stream (the i-th of 256)."""
    return ctypes.addressof(_FAKE_STREAMS) + 16 * i


made_up_handles = unittest.skipIf(
    GPU_ERROR is None,
    'a made-up stream handle would crash the CUDA driver; test-gpu.py uses real streams')


class DsTestCase(unittest.TestCase):
    def assertDsError(self, error, code):
        self.assertEqual(error.domain, DS_ERROR_DOMAIN, error.message)
        self.assertEqual(error.code, int(code), error.message)
        self.assertTrue(error.message)

    def assertRaisesDsError(self, code, func, *args):
        with self.assertRaises(GLib.Error) as cm:
            func(*args)
        self.assertDsError(cm.exception, code)
        return cm.exception


class RecordingResource(GObject.Object, Ds.MemoryResource):
    """A Python resource of any kind, handing out host memory (ctypes
    buffers), that records what it is asked."""

    def __init__(self, fail=False, kind=HOST):
        super().__init__()
        self.calls = []
        self.live = {}
        self.fail = fail
        self.kind = kind
        # Tests change behaviour through these rather than by subclassing
        # (see test_subclass_overrides_are_separate in test-api.py).
        self.allocate_hook = None
        self.deallocate_hook = None
        self.get_kind_hook = None

    def do_get_kind(self):
        if self.get_kind_hook is not None:
            return self.get_kind_hook()
        return self.kind

    def do_allocate(self, size, alignment):
        self.calls.append(('allocate', size, alignment))
        if self.allocate_hook is not None:
            return self.allocate_hook(size, alignment)
        if self.fail:
            raise GLib.Error.new_literal(Ds.error_quark(), 'recording resource is full',
                                         int(Ds.Error.OUT_OF_MEMORY))
        buf = ctypes.create_string_buffer(size + alignment)
        address = (ctypes.addressof(buf) + alignment - 1) & ~(alignment - 1)
        self.live[address] = (buf, size, alignment)
        return address

    def do_deallocate(self, ptr, size, alignment):
        self.calls.append(('deallocate', ptr, size, alignment))
        if self.deallocate_hook is not None:
            return self.deallocate_hook(ptr, size, alignment)
        buf, live_size, live_alignment = self.live.pop(ptr)
        assert (live_size, live_alignment) == (size, alignment), \
            'deallocate with other size/alignment than allocate'

    def allocations(self):
        return [c for c in self.calls if c[0] == 'allocate']

    def deallocations(self):
        return [c for c in self.calls if c[0] == 'deallocate']


RecordingHostResource = RecordingResource


def fake_gpu_scratchpad(**props):
    """A scratchpad in host order whose pinned, device and managed blocks
    come from RecordingResources (host memory): blocks of every kind, no
    CUDA call, on any machine. Returns (scratchpad, {kind: resource})."""
    res = {kind: RecordingResource(kind=kind) for kind in ALL_KINDS}
    sp = Ds.Scratchpad(device_order=Ds.AccessOrder.new_host(),
                       host_resource=res[HOST], pinned_resource=res[PINNED],
                       device_resource=res[DEVICE], managed_resource=res[MANAGED],
                       **props)
    return sp, res


def rss_bytes():
    """The resident set size of this process, from /proc/self/statm."""
    with open('/proc/self/statm') as f:
        return int(f.read().split()[1]) * os.sysconf('SC_PAGE_SIZE')


def run_python(code, *args, dev=True):
    """Runs @code in a new interpreter with this one's environment;
    returns the CompletedProcess (text, captured)."""
    cmd = [sys.executable] + (['-X', 'dev'] if dev else []) + ['-c', code] + list(args)
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


def probe_python_resource():
    """None when addresses cross the Ds.MemoryResource vfuncs intact."""
    res = RecordingHostResource()
    ptr = res.allocate(64, 16)
    if ptr not in res.live:
        return ('the address returned by do_allocate did not reach C intact '
                '(%r, expected one of %r): PyGObject cannot marshal a gpointer '
                'vfunc return or argument; DsMemoryResource\'s allocate, '
                'allocate_async, deallocate and deallocate_async need '
                '(type guint64) on the pointer' % (ptr, list(res.live)))
    res.deallocate(ptr, 64, 16)
    if res.live:
        return 'do_deallocate did not get the address back intact: %r' % (res.calls,)
    return None


PY_RESOURCE_PROBLEM = probe_python_resource()


def needs_c(letter, what):
    """Marks a test that waits for a change of the C library: an expected
    failure until then, shown in TAP as
    "# TODO needs C change (letter): what"."""
    return tap.expected_failure('needs C change (%s): %s' % (letter, what))


class FakeCaiConsumer:
    """What CuPy's asarray(), torch.as_tensor() and Numba's as_cuda_array()
    do with an object that has __cuda_array_interface__: read it once and
    keep the object as the owner of the memory. read() copies the bytes
    with ctypes, so a test on host memory behind a GPU kind (see
    fake_gpu_scratchpad()) can see that the memory is still there."""

    def __init__(self, obj):
        cai = obj.__cuda_array_interface__
        assert cai['version'] == 3 and cai['data'][1] is False
        self.owner = obj
        self.address = cai['data'][0]
        self.nbytes = 1
        for n in cai['shape']:
            self.nbytes *= n

    def read(self, n=None):
        return ctypes.string_at(self.address, self.nbytes if n is None else n)
