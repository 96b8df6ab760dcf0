# torch.py: PyTorch's temporaries from ds
#
# Copyright 2026 The ds authors
# SPDX-License-Identifier: LGPL-2.1-or-later

"""PyTorch's CUDA memory from ds.

Scoped (PyTorch's own allocator stays for everything else)::

    import ds_alloc.torch
    with ds_alloc.torch.scope():
        y = model(x)          # temporaries from ds's device pool
    # the scope's memory is back in ds, in stream order

The whole process (call before the first CUDA allocation)::

    ds_alloc.torch.use_for_process()

A tensor read on another stream than the one it was made on::

    with torch.cuda.stream(side):
        out = t * 2
        ds_alloc.torch.hand_off(t, side)    # instead of t.record_stream(side)
"""

from . import _lib
from ._lib import DsAllocError

__all__ = ["allocator", "scope", "use_for_process", "hand_off", "DsAllocError"]

_allocator = None


def _torch():
    try:
        import torch
    except ImportError as e:
        raise ImportError("ds_alloc.torch needs PyTorch (import torch failed: %s)" % e) from e
    if not torch.cuda.is_available():
        raise DsAllocError("PyTorch sees no CUDA device: ds_alloc.torch serves CUDA memory only",
                           "NO_DEVICE")
    return torch


def allocator():
    """The ``torch.cuda.memory.CUDAPluggableAllocator`` over libds-alloc's
    ``ds_torch_alloc`` and ``ds_torch_free`` (one per process)."""
    global _allocator
    torch = _torch()
    if _allocator is None:
        _allocator = torch.cuda.memory.CUDAPluggableAllocator(
            _lib.library_path(), "ds_torch_alloc", "ds_torch_free")
    return _allocator


class scope:
    """A block in which PyTorch's allocations on this thread come from ds
    (``pool``, a ``ds_alloc.Pool``; None: ds's default device pool).

    The scope is a ``torch.cuda.MemPool`` over libds-alloc, used with
    ``torch.cuda.use_mem_pool``: PyTorch still splits and caches blocks
    inside the scope, with its usual ``record_stream`` rules. When the
    block ends the MemPool goes and PyTorch gives its free segments back
    to ds, each in the order of the stream it was taken for; segments
    that tensors made in the scope still hold go back when those tensors
    are gone and PyTorch empties its cache (``torch.cuda.empty_cache()``).
    ``trim=True`` then gives the pool's cached memory back to the driver
    (``Pool.trim()``, or ``ds_alloc.trim_defaults()`` for ds's default
    pools; either waits for the device).
    """

    def __init__(self, pool=None, device=None, trim=False):
        self.pool = pool
        self.device = device
        self.trim = trim
        self._mempool = None
        self._use = None
        self._pushed = False

    def __enter__(self):
        torch = _torch()
        if self._mempool is not None:
            raise RuntimeError("this ds_alloc.torch.scope is already entered")
        _lib._call(_lib._load().ds_alloc_push_resource, self.pool)
        self._pushed = True
        try:
            self._mempool = torch.cuda.MemPool(allocator().allocator())
            self._use = torch.cuda.use_mem_pool(self._mempool, self.device)
            self._use.__enter__()
        except BaseException:
            self._end()
            raise
        return self

    def _end(self):
        self._use = None
        # ~MemPool empties the pool's cache: its free segments come back
        # through ds_torch_free now.
        self._mempool = None
        if self._pushed:
            self._pushed = False
            _lib._load().ds_alloc_pop_resource()

    def __exit__(self, *exc):
        use = self._use
        try:
            if use is not None:
                use.__exit__(*exc)
        finally:
            self._end()
        if self.trim:
            if self.pool is not None:
                self.pool.trim()
            else:
                _lib.trim_defaults()
        return False


def use_for_process(pool=None):
    """Puts every CUDA allocation of PyTorch in this process on ds
    (``torch.cuda.memory.change_current_allocator``), from ``pool`` (None:
    ds's default device pool of each device). Call it before the first CUDA
    allocation: PyTorch refuses to change an allocator that has allocated.

    What PyTorch's pluggable path does not have: ``torch.cuda.memory_stats``
    and ``memory_reserved`` stay 0, snapshots are empty, and
    ``record_stream`` does nothing (use ``hand_off``). ``Pool.stats()``
    and ds's recorder tell instead.
    """
    torch = _torch()
    if pool is not None:
        _lib.set_process_pool(pool.device, pool)
    try:
        torch.cuda.memory.change_current_allocator(allocator())
    except RuntimeError as e:
        raise DsAllocError("PyTorch's CUDA allocator cannot be changed any more (%s): call "
                           "ds_alloc.torch.use_for_process () before the first CUDA "
                           "allocation" % e, "INVALID_ARGUMENT") from e


def hand_off(tensor, stream):
    """Makes ``tensor``'s memory safe for work queued on ``stream`` so far,
    whatever allocator it came from: ``tensor.record_stream(stream)`` for
    PyTorch's own caching, and, where the memory is ds's, the stream is
    registered as a reader, so the memory goes back to ds only after that
    work (also with ``use_for_process``, where ``record_stream`` does
    nothing). Call it after queuing the reads. Returns True when ds
    registered the reader, False when the memory is not ds's."""
    torch = _torch()
    if not isinstance(stream, torch.cuda.Stream):
        raise TypeError("stream must be a torch.cuda.Stream, not %s" % type(stream).__name__)
    if tensor.device.type != "cuda":
        raise ValueError("hand_off needs a CUDA tensor, not one on %s" % tensor.device)
    tensor.record_stream(stream)
    if tensor.numel() == 0:
        return False
    try:
        _lib.add_reader(tensor.data_ptr(), stream.cuda_stream, tensor.device.index)
    except DsAllocError as e:
        if e.code == "INVALID_ARGUMENT":
            return False
        raise
    return True
