# cupy.py: CuPy's temporaries from ds
#
# Copyright 2026 The ds authors
# SPDX-License-Identifier: LGPL-2.1-or-later

"""CuPy's device memory from ds::

    import ds_alloc.cupy
    with ds_alloc.cupy.scope():
        y = cupy.sqrt(x) + 1      # from ds, on the current stream

Each array's memory is taken in the order of CuPy's current stream and
goes back to ds in that order when CuPy lets go of it (the stream is kept
alive until then). An array read on
another stream: ``ds_alloc.cupy.hand_off(array, stream)`` after queuing
the reads.
"""

import contextlib

from . import _lib
from ._lib import DsAllocError

__all__ = ["allocator", "scope", "hand_off", "DsAllocError"]


def _cupy():
    try:
        import cupy
    except ImportError as e:
        raise ImportError("ds_alloc.cupy needs CuPy (import cupy failed: %s)" % e) from e
    return cupy


class _Block:
    """Owns one block: gives it back when CuPy drops the memory. It keeps
    the stream the block was taken on alive until then, since the block
    goes back in that stream's order (CuPy destroys a Stream's handle when
    the last reference to it goes)."""

    __slots__ = ("ptr", "stream", "__weakref__")

    def __init__(self, ptr, stream):
        self.ptr = ptr
        self.stream = stream

    def __del__(self):
        ptr, self.ptr = self.ptr, 0
        lib = getattr(_lib, "_lib", None)
        if ptr and lib is not None:
            lib.ds_alloc_deallocate(ptr, None)
        self.stream = None


def allocator(pool=None):
    """A CuPy allocator (``size -> cupy.cuda.MemoryPointer``) taking memory
    from ``pool`` (None: the pool pushed on this thread, else ds's
    default) in the order of CuPy's current stream, for
    ``cupy.cuda.set_allocator`` or ``cupy.cuda.using_allocator``."""
    cupy = _cupy()
    lib = _lib._load()
    get_stream = cupy.cuda.get_current_stream
    get_device = cupy.cuda.runtime.getDevice
    unowned = cupy.cuda.UnownedMemory
    pointer = cupy.cuda.MemoryPointer

    def malloc(size):
        device = get_device()
        stream = get_stream()
        try:
            ptr = _lib._call(lib.ds_alloc_allocate, pool, size, device, stream.ptr)
        except DsAllocError as e:
            if e.code == "OUT_OF_MEMORY":
                raise cupy.cuda.memory.OutOfMemoryError(size, 0, 0) from e
            raise
        return pointer(unowned(ptr, size, _Block(ptr, stream), device_id=device), 0)

    return malloc


@contextlib.contextmanager
def scope(pool=None):
    """Within the block, CuPy's allocations on this thread come from ds
    (``cupy.cuda.using_allocator``)."""
    cupy = _cupy()
    with cupy.cuda.using_allocator(allocator(pool)):
        yield


def hand_off(array, stream):
    """Registers ``stream`` (a ``cupy.cuda.Stream``) as a reader of
    ``array``'s memory: it goes back to ds only after the work queued on
    ``stream`` so far. Returns False when the memory is not ds's."""
    if array.nbytes == 0:
        return False
    try:
        _lib.add_reader(array.data.ptr, stream.ptr, array.device.id)
    except DsAllocError as e:
        if e.code == "INVALID_ARGUMENT":
            return False
        raise
    return True
