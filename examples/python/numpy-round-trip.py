#!/usr/bin/python3
# numpy-round-trip.py: scratch memory as NumPy arrays, and to the GPU and back
#
# Copyright 2026 The ds authors
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Run from the source folder with `meson devenv -C build-ds -w . /usr/bin/python3
# examples/python/numpy-round-trip.py` (a python3 that has PyGObject), or as
# the test ds-python-numpy-round-trip. Needs NumPy (python3-numpy).
#
# 1. a host block seen as a 2-D float32 array, filled and summed in place;
# 2. the same memory through DLPack (numpy.from_dlpack);
# 3. arrays that outlive the scratchpad's release: the memory follows them;
# 4. with a GPU: the array uploaded with to_device(), a device block whose
#    __cuda_array_interface__ CuPy, Numba or PyTorch can take, read back.

import gi

gi.require_version('Ds', '1.0')
from gi.repository import Ds  # noqa: E402

import numpy as np  # noqa: E402

HOST = Ds.MemoryKind.HOST
DEVICE = Ds.MemoryKind.DEVICE

order = Ds.AccessOrder.from_stream(0)          # the legacy default stream
with Ds.Scratchpad(device_order=order) as sp:
    # 1. A zero-copy, writable view: the array's memory is the block's.
    block = sp.alloc(HOST, 4 * 8 * 4, 64)
    a = block.numpy(np.float32, (4, 8))
    a[:] = np.arange(32, dtype=np.float32).reshape(4, 8)
    a *= 0.5
    print('host block at 0x%x as %s %s: row sums %s'
          % (block.get_address(), a.dtype, a.shape, a.sum(axis=1).tolist()))
    assert a.ctypes.data == block.get_address()

    # 2. DLPack: another consumer of the same bytes.
    b = np.from_dlpack(block.view(np.float32, (32,)))
    assert b[7] == a[0, 7] == 3.5
    print('np.from_dlpack sees the same memory: b[7] =', b[7])

    # 3. Views are exports: a release gives everything else back and keeps
    #    the memory they use until they are gone, so an array may outlive
    #    the with (release(strict=True) would refuse, naming each).
    print('exports alive:', sp.get_n_exports())
    c = sp.empty((2, 3), np.int32)         # like numpy.empty: not zeroed
    c[:] = 7

    # 4. To the GPU and back.
    data = np.linspace(0, 1, 256, dtype=np.float32)
    try:
        device = sp.to_device(data)        # DALI's ToGPU: a device Ds.Block
    except (Ds.NoDeviceError, Ds.NotSupportedError) as e:
        print('no GPU round trip here:', e)
    else:
        cai = device.view(np.float32, (256,)).__cuda_array_interface__
        print('device block: typestr %s shape %s stream %s'
              % (cai['typestr'], cai['shape'], cai['stream']))
        back = np.frombuffer(device.tobytes(), np.float32)
        assert np.array_equal(back, data)
        print('read back from the device: %d floats, equal' % back.size)

# Released: the arrays still hold their memory, counted until they go.
print('after the with: a.sum() = %.1f, c.sum() = %d, %d bytes held by them'
      % (a.sum(), c.sum(), sp.get_held_by_exports(HOST)))
assert a.sum() == 248.0 and c.sum() == 42
del a, b, c
print('held after del: %d bytes' % sp.get_held_by_exports(HOST))
