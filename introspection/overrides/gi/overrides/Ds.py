# PyGObject overrides for Ds-1.0
#
# Copyright 2026 The ds authors
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Kept minimal, as PyGObject's override guidelines ask: methods are added to
# the introspected classes (no class overrides, no __init__):
#
#   with Ds.Scratchpad(...) as sp:    # __exit__ calls sp.release()
#   block.memoryview()                # zero-copy, writable; host-visible kinds
#   block.__cuda_array_interface__    # CUDA Array Interface v3; GPU-visible kinds
#
# Everything else is plain GI: Block.read()/write()/fill() work for every
# kind, in Python and in gjs alike.

import ctypes

from ..module import get_introspection_module

Ds = get_introspection_module('Ds')

__all__ = []


def _scratchpad_enter(self):
    return self


def _scratchpad_exit(self, exc_type, exc_value, traceback):
    # Gives everything back now, in stream order; the scratchpad stays
    # usable. Memory views and raw addresses taken inside the block must
    # not be used after this.
    self.release()
    return False


Ds.Scratchpad.__enter__ = _scratchpad_enter
Ds.Scratchpad.__exit__ = _scratchpad_exit


_HOST_VISIBLE = (Ds.MemoryKind.HOST, Ds.MemoryKind.PINNED, Ds.MemoryKind.MANAGED)
_DEVICE_VISIBLE = (Ds.MemoryKind.PINNED, Ds.MemoryKind.DEVICE, Ds.MemoryKind.MANAGED)


def _check_valid(block):
    if not block.is_valid():
        raise ValueError('the scratchpad of this Ds.Block was released: '
                         'its memory is no longer the block\'s')


def _block_memoryview(self):
    """A writable, zero-copy memoryview of the block's bytes.

    Only for the kinds the CPU can address (HOST, PINNED, MANAGED); for
    DEVICE use read()/write() or __cuda_array_interface__. The view keeps
    the block (and so the scratchpad) alive, but not past a release() of
    the scratchpad: do not use it after that.
    """
    kind = self.get_kind()
    if kind not in _HOST_VISIBLE:
        raise ValueError('a %s block is not addressable by the CPU; '
                         'use read()/write() or __cuda_array_interface__'
                         % kind.value_nick)
    _check_valid(self)
    size = self.get_size()
    if size == 0:
        return memoryview(bytearray())
    array = (ctypes.c_ubyte * size).from_address(self.get_address())
    array._ds_owner = self
    return memoryview(array).cast('B')


def _block_cuda_array_interface(self):
    kind = self.get_kind()
    if kind not in _DEVICE_VISIBLE:
        # AttributeError, so that hasattr(block, '__cuda_array_interface__')
        # is False for host blocks, as consumers expect.
        raise AttributeError('a %s block is not addressable by the GPU'
                             % kind.value_nick)
    _check_valid(self)
    stream = self.get_scratchpad().get_device_order().get_stream_handle()
    # CAI v3: 0 is not allowed; 1 is the legacy default stream, 2 the
    # per-thread one (whose handle is 2 already).
    if stream == 0:
        stream = 1
    return {
        'shape': (self.get_size(),),
        'typestr': '|u1',
        'data': (self.get_address(), False),
        'strides': None,
        'version': 3,
        'stream': stream,
    }


Ds.Block.memoryview = _block_memoryview
Ds.Block.__cuda_array_interface__ = property(_block_cuda_array_interface)
