# PyGObject overrides for Ds-1.0
#
# Copyright 2026 The ds authors
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Pythonic additions to the introspected Ds-1.0 API.

Everything that bindings share (orders, scratchpads, blocks, resources)
comes from GObject-Introspection; this module adds what a GPU Python user
expects on top:

- ``with Ds.Scratchpad() as sp:`` gives everything back at the end;
- zero-copy views of a block that are *exports*: ``block.memoryview()``,
  ``block.numpy(dtype, shape)``, ``block.view(dtype, shape)`` with the
  NumPy array interface, ``__cuda_array_interface__`` (v3) and DLPack
  (``__dlpack__``/``__dlpack_device__``). While an export is alive the
  scratchpad is not released: ``release()`` (and leaving ``with``) raises
  ``BufferError``, as ``mmap.close()`` does with exported buffers, so no
  view ever points at memory that was given back;
- ``block.write()`` takes any bytes-like object, ``sp.to_device()`` and
  ``sp.to_contiguous_device()`` return blocks, ``Ds.AccessOrder.from_stream``
  takes CUDA stream objects (``__cuda_stream__``, CuPy, PyTorch, Numba);
- errors are ``GLib.Error`` in the ``Ds.Error`` domain; an exception raised
  by a Python ``Ds.MemoryResource`` is chained into the error it causes,
  and one raised by its ``do_deallocate`` is reported as ``Ds.LeakWarning``;
- ``Ds.Scratchpad`` takes no Python attributes: one that refers to a block
  would be a reference cycle through C that the garbage collector cannot
  break.

The API reference has a Python and JavaScript guide (python-javascript.md).
"""

from __future__ import annotations

import ctypes
import operator
import re
import sys
import threading
import traceback
import warnings

from gi.repository import GLib

from ..module import get_introspection_module
from ..overrides import override

Ds = get_introspection_module('Ds')

__all__ = []

HOST = Ds.MemoryKind.HOST
PINNED = Ds.MemoryKind.PINNED
DEVICE = Ds.MemoryKind.DEVICE
MANAGED = Ds.MemoryKind.MANAGED
_HOST_VISIBLE = (HOST, PINNED, MANAGED)
_DEVICE_VISIBLE = (PINNED, DEVICE, MANAGED)

_DOMAIN = Ds.error_quark()
_RELEASED = "The block's scratchpad was released; its memory is gone"

# Looked up once: an attribute of the GLib proxy module costs ~0.8 us a
# lookup, more than the call it would be used for.
_Bytes = GLib.Bytes
_GError = GLib.Error
_block_write = Ds.Block.write
_block_write_data = Ds.Block.write_data
_block_read = Ds.Block.read
_block_get_address = Ds.Block.get_address
_block_export = Ds.Block.export
_scratchpad_alloc = Ds.Scratchpad.alloc
_scratchpad_release = Ds.Scratchpad.release
_scratchpad_get_n_exports = Ds.Scratchpad.get_n_exports


def _error(code, message):
    return _GError.new_literal(_DOMAIN, message, int(code))


def _as_bytes(data, what='data'):
    """bytes for any bytes-like object (a copy unless it is bytes)."""
    if isinstance(data, bytes):
        return data
    try:
        return memoryview(data).tobytes()
    except TypeError:
        raise TypeError('%s must be a bytes-like object (bytes, bytearray, '
                        'memoryview, a NumPy array) or GLib.Bytes, not %s'
                        % (what, type(data).__name__)) from None


# --- element types ------------------------------------------------------------

_TYPESTR = re.compile(r'^([<>|=])?([biufc])(\d+)$')
_NAMES = {
    'bool': 'b1', 'int8': 'i1', 'int16': 'i2', 'int32': 'i4', 'int64': 'i8',
    'uint8': 'u1', 'uint16': 'u2', 'uint32': 'u4', 'uint64': 'u8',
    'float16': 'f2', 'float32': 'f4', 'float64': 'f8',
    'complex64': 'c8', 'complex128': 'c16',
}
_NATIVE = '<' if sys.byteorder == 'little' else '>'
# struct formats for typed memoryviews
_FORMATS = {'b1': '?', 'i1': 'b', 'u1': 'B', 'i2': 'h', 'u2': 'H', 'i4': 'i',
            'u4': 'I', 'i8': 'q', 'u8': 'Q', 'f2': 'e', 'f4': 'f', 'f8': 'd'}
# DLPack type codes
_DL_CODES = {'i': 0, 'u': 1, 'f': 2, 'c': 5, 'b': 6}


def _parse_dtype(dtype):
    """(typestr, itemsize, kind) of a NumPy dtype-like or a typestring."""
    np = sys.modules.get('numpy')
    if np is not None:
        d = np.dtype(dtype)
        if d.kind not in 'biufc' or d.fields is not None or d.subdtype is not None:
            raise TypeError('a block view takes a plain numeric dtype, not %r' % (d,))
        return d.str, d.itemsize, d.kind
    if isinstance(dtype, type) and dtype in (bool, int, float, complex):
        dtype = {bool: 'b1', int: 'i8', float: 'f8', complex: 'c16'}[dtype]
    if not isinstance(dtype, str):
        raise TypeError('dtype must be a NumPy dtype or a typestring such as '
                        "'<f4', not %r" % (dtype,))
    m = _TYPESTR.match(_NAMES.get(dtype, dtype))
    if not m:
        raise TypeError("unknown dtype %r (use a typestring such as '<f4', "
                        "'u1', or a NumPy dtype)" % (dtype,))
    order, kind, size = m.group(1), m.group(2), int(m.group(3))
    if size not in (1, 2, 4, 8, 16) or (kind == 'b' and size != 1) or \
       (kind == 'c' and size < 8):
        raise TypeError('unsupported dtype %r' % (dtype,))
    if size == 1:
        order = '|'
    elif order in (None, '=', '|'):
        order = _NATIVE
    return '%s%s%d' % (order, kind, size), size, kind


def _parse_shape(shape, itemsize, available):
    if shape is None:
        if available % itemsize != 0:
            raise ValueError('%d bytes are not a whole number of %d-byte items; '
                             'give a shape' % (available, itemsize))
        return (available // itemsize,)
    if isinstance(shape, int):
        shape = (shape,)
    shape = tuple(operator.index(n) for n in shape)
    if any(n < 0 for n in shape):
        raise ValueError('negative dimension in shape %r' % (shape,))
    return shape


# --- exports -------------------------------------------------------------------

class BlockView:
    """A typed, zero-copy view of a ``Ds.Block``'s memory: an export.

    Made by ``block.view(dtype, shape, offset)``. While a view (or anything
    made from it: a NumPy array, a memoryview, a consumer of its CUDA array
    interface) is alive, the block's scratchpad is not released:
    ``Scratchpad.release()`` and leaving ``with`` raise ``BufferError``. Drop
    the view and what was made from it (``del``) to release.

    A view speaks every protocol its memory kind allows:

    - host, pinned and managed memory: the NumPy array interface
      (``numpy.asarray(view)``), ``view.numpy()``, ``view.memoryview()``;
    - pinned, device and managed memory: ``__cuda_array_interface__``
      (version 3, with the scratchpad's stream), for CuPy, Numba, PyTorch;
    - all kinds: DLPack (``__dlpack__``, ``__dlpack_device__``), e.g.
      ``numpy.from_dlpack(view)`` for host memory, ``torch.from_dlpack``.

    Only C-contiguous views are made; ``shape``, ``typestr``, ``itemsize``,
    ``nbytes``, ``kind`` and ``address`` describe it.
    """

    __slots__ = ('_export', 'address', 'kind', 'typestr', 'itemsize',
                 'shape', 'nbytes', '__weakref__')

    def __init__(self, block: Block, dtype='u1', shape: int | tuple | None = None,
                 offset: int = 0) -> None:
        # Raises GLib.Error (Ds.Error.INVALID_ARGUMENT) for a block whose
        # scratchpad was released.
        export = _block_export(block)
        typestr, itemsize, _ = _parse_dtype(dtype)
        size = block.get_size()
        offset = operator.index(offset)
        if offset < 0 or offset > size:
            raise _error(Ds.Error.INVALID_ARGUMENT,
                         'Offset %d is outside the block of %d bytes' % (offset, size))
        shape = _parse_shape(shape, itemsize, size - offset)
        nbytes = itemsize
        for n in shape:
            nbytes *= n
        if nbytes > size - offset:
            raise _error(Ds.Error.INVALID_ARGUMENT,
                         'A view of shape %r of %s (%d bytes) at offset %d does not '
                         'fit the block of %d bytes' % (shape, typestr, nbytes, offset, size))
        self._export = export
        self.address = Ds.Block.get_address(self._export) + offset
        self.kind = block.get_kind()
        self.typestr = typestr
        self.itemsize = itemsize
        self.shape = shape
        self.nbytes = nbytes

    def __repr__(self) -> str:
        return '<Ds.BlockView %s %s %r at 0x%x>' % (self.kind.value_nick, self.typestr,
                                                  self.shape, self.address)

    @property
    def block(self) -> Block:
        """The export (a ``Ds.Block``) this view holds."""
        return self._export

    def _stream(self) -> int | None:
        """The CUDA stream the scratchpad works in, as CAI/DLPack want it."""
        order = self._export.get_scratchpad().get_device_order()
        if not order.is_device():
            return None
        handle = order.get_stream_handle()
        return 1 if handle == 0 else handle

    @property
    def __array_interface__(self) -> dict:
        """The NumPy array interface (version 3); host-visible kinds only."""
        if self.kind not in _HOST_VISIBLE:
            raise AttributeError('a %s block is not addressable by the CPU'
                                 % self.kind.value_nick)
        return {'shape': self.shape, 'typestr': self.typestr,
                'data': (self.address, False), 'strides': None, 'version': 3}

    @property
    def __cuda_array_interface__(self) -> dict:
        """The CUDA array interface (version 3); GPU-visible kinds only.

        ``stream`` is the scratchpad's device stream (1 for the legacy default
        stream), on which a consumer must order its work, or ``None`` when the
        scratchpad works in host order.
        """
        if self.kind not in _DEVICE_VISIBLE:
            raise AttributeError('a %s block is not addressable by the GPU'
                                 % self.kind.value_nick)
        return {'shape': self.shape, 'typestr': self.typestr,
                'data': (self.address, False), 'strides': None, 'version': 3,
                'stream': self._stream()}

    def __dlpack_device__(self) -> tuple[int, int]:
        """(device type, device id) as DLPack numbers them."""
        device = max(self._export.get_scratchpad().get_device_order().get_device(), 0)
        return {HOST: (_kDLCPU, 0), PINNED: (_kDLCUDAHost, 0),
                DEVICE: (_kDLCUDA, device), MANAGED: (_kDLCUDAManaged, device)}[self.kind]

    def __dlpack__(self, *, stream: int | None = None, max_version: tuple | None = None,
                   dl_device: tuple | None = None, copy: bool | None = None) -> object:
        """A DLPack capsule ("dltensor") of this view.

        The capsule holds its own export: the memory stays until the consumer
        calls the deleter (or the unconsumed capsule is collected). For CUDA
        memory, ``stream`` is the consumer's stream (None: the legacy default
        stream, -1: no synchronisation); the consumer's stream is made to
        wait for the scratchpad's.
        """
        if copy:
            raise BufferError('Ds.BlockView.__dlpack__ cannot copy')
        device = self.__dlpack_device__()
        if dl_device is not None and tuple(dl_device) != device:
            raise BufferError('Ds.BlockView is on DLPack device %r, not %r' % (device, dl_device))
        if device[0] == _kDLCPU:
            if stream not in (None, -1):
                raise BufferError('stream must be None for memory on the CPU, not %r' % (stream,))
        elif stream != -1:
            _order_consumer(self._export, stream)
        return _dlpack_capsule(self)

    def numpy(self) -> 'numpy.ndarray':
        """A NumPy array of this view (zero-copy, writable); host-visible kinds."""
        if self.kind not in _HOST_VISIBLE:
            raise _error(Ds.Error.INVALID_ARGUMENT,
                         'A %s block is not addressable by the CPU; use '
                         '__cuda_array_interface__ or DLPack' % self.kind.value_nick)
        import numpy
        return numpy.asarray(self)

    def memoryview(self) -> memoryview:
        """A writable, zero-copy memoryview of this view; host-visible kinds.

        Typed (``format``/``shape``) where the struct module knows the type,
        bytes otherwise.
        """
        if self.kind not in _HOST_VISIBLE:
            raise _error(Ds.Error.INVALID_ARGUMENT,
                         'A %s block is not addressable by the CPU; use read()/'
                         'write(), __cuda_array_interface__ or DLPack'
                         % self.kind.value_nick)
        array = (ctypes.c_ubyte * self.nbytes).from_address(self.address)
        array._ds_export = self._export
        view = memoryview(array).cast('B')
        fmt = _FORMATS.get(self.typestr[1:])
        if fmt is not None and self.typestr[0] in ('|', _NATIVE):
            view = view.cast(fmt, self.shape) if self.nbytes else view
        return view


# DLPack, through ctypes: DLManagedTensor in a PyCapsule named "dltensor".
_kDLCPU, _kDLCUDA, _kDLCUDAHost, _kDLCUDAManaged = 1, 2, 3, 13


class _DLDevice(ctypes.Structure):
    _fields_ = [('device_type', ctypes.c_int32), ('device_id', ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [('code', ctypes.c_uint8), ('bits', ctypes.c_uint8), ('lanes', ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [('data', ctypes.c_void_p), ('device', _DLDevice), ('ndim', ctypes.c_int32),
                ('dtype', _DLDataType), ('shape', ctypes.POINTER(ctypes.c_int64)),
                ('strides', ctypes.POINTER(ctypes.c_int64)), ('byte_offset', ctypes.c_uint64)]


_DLDeleter = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class _DLManagedTensor(ctypes.Structure):
    _fields_ = [('dl_tensor', _DLTensor), ('manager_ctx', ctypes.c_void_p),
                ('deleter', _DLDeleter)]


_dl_live = {}  # address of a DLManagedTensor -> what keeps it and its memory


def _dl_delete(address):
    live = _dl_live
    if live is not None:
        live.pop(address, None)


_dl_deleter = _DLDeleter(_dl_delete)
_DLTENSOR = ctypes.create_string_buffer(b'dltensor')
# Private prototypes: ctypes.pythonapi.X is one object shared by every module,
# and another module's argtypes for it would change ours.
_PyCapsule_New = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.c_void_p, ctypes.c_void_p,
                                   ctypes.c_void_p)(('PyCapsule_New', ctypes.pythonapi))
_PyCapsule_IsValid = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p)(
    ('PyCapsule_IsValid', ctypes.pythonapi))
_PyCapsule_GetPointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p)(
    ('PyCapsule_GetPointer', ctypes.pythonapi))


def _capsule_destructor(capsule):
    # A capsule still named "dltensor" was never consumed: its tensor is
    # still ours to delete. (A consumer renames it "used_dltensor" and calls
    # the deleter itself.)
    if _PyCapsule_IsValid(capsule, b'dltensor'):
        _dl_delete(_PyCapsule_GetPointer(capsule, b'dltensor'))


_capsule_destructor_c = _DLDeleter(_capsule_destructor)


def _dlpack_capsule(view):
    _, _, kind = _parse_dtype(view.typestr)
    if view.typestr[0] not in ('|', _NATIVE):
        raise BufferError('DLPack has no byte order: %s is not native' % view.typestr)
    managed = _DLManagedTensor()
    shape = (ctypes.c_int64 * max(len(view.shape), 1))(*view.shape)
    device_type, device_id = view.__dlpack_device__()
    tensor = managed.dl_tensor
    tensor.data = view.address
    tensor.device = _DLDevice(device_type, device_id)
    tensor.ndim = len(view.shape)
    tensor.dtype = _DLDataType(_DL_CODES[kind], view.itemsize * 8, 1)
    tensor.shape = shape
    tensor.strides = None
    tensor.byte_offset = 0
    managed.deleter = _dl_deleter
    address = ctypes.addressof(managed)
    # The entry keeps the struct, the shape and an export of the memory
    # until the deleter runs.
    _dl_live[address] = (managed, shape, Ds.Block.export(view.block))
    return _PyCapsule_New(address, ctypes.addressof(_DLTENSOR), _capsule_destructor_c)


def _order_consumer(block, stream):
    """Makes the consumer's stream wait for the scratchpad's (DLPack)."""
    producer = block.get_scratchpad().get_device_order()
    if not producer.is_device():
        return  # host order: the scratchpad's work is done when it returns
    handle = 0 if stream is None else operator.index(stream)
    if handle == 1:
        handle = 0
    consumer = Ds.AccessOrder.new_for_handle(handle, producer.get_device())
    consumer.wait(producer)


# --- Ds.Block ------------------------------------------------------------------

@override
class Block(Ds.Block):
    """One scratch allocation: address, size, kind, copy-in/out, views.

    A block keeps its scratchpad alive and is valid until that scratchpad is
    released; afterwards every method that would touch the memory raises
    ``GLib.Error`` with ``Ds.Error.INVALID_ARGUMENT``. Zero-copy views
    (``memoryview()``, ``numpy()``, ``view()``, ``__cuda_array_interface__``,
    ``__dlpack__``) are exports: they keep the memory from being released.
    """

    def __repr__(self) -> str:
        return '<Ds.Block %s %d bytes%s>' % (
            self.get_kind().value_nick, self.get_size(),
            (' at 0x%x' % Ds.Block.get_address(self)) if self.is_valid() else ' (released)')

    def get_address(self) -> int:
        """The address as an int; raises GLib.Error once the block is invalid."""
        address = _block_get_address(self)
        if address == 0:
            raise _error(Ds.Error.INVALID_ARGUMENT, _RELEASED)
        return address

    def write(self, offset: int, data: bytes | bytearray | memoryview | GLib.Bytes) -> bool:
        """Copies ``data`` (any bytes-like object, or GLib.Bytes) in at ``offset``."""
        if type(data) is bytes:
            return _block_write_data(self, offset, data)
        if isinstance(data, _Bytes):
            return _block_write(self, offset, data)
        return _block_write_data(self, offset, _as_bytes(data))

    def tobytes(self, offset: int = 0, length: int | None = None) -> bytes:
        """A copy of the bytes as ``bytes`` (every kind; see ``read()``)."""
        if length is None:
            length = self.get_size() - offset
        return _block_read(self, offset, length).get_data()

    def view(self, dtype='u1', shape: int | tuple | None = None,
             offset: int = 0) -> BlockView:
        """A typed zero-copy view (a ``Ds.BlockView``, an export).

        ``dtype`` is a NumPy dtype or a typestring (``'<f4'``, ``'u1'``);
        ``shape`` an int or a tuple (default: as many items as fit); the
        view starts ``offset`` bytes into the block.
        """
        return BlockView(self, dtype, shape, offset)

    def numpy(self, dtype='u1', shape: int | tuple | None = None,
              offset: int = 0) -> 'numpy.ndarray':
        """A NumPy array of the memory (zero-copy, writable), for host,
        pinned and managed blocks. The array is an export: while it lives,
        the scratchpad cannot be released."""
        return BlockView(self, dtype, shape, offset).numpy()

    def memoryview(self) -> memoryview:
        """A writable, zero-copy memoryview of the bytes (host, pinned and
        managed blocks); an export, like ``numpy()``."""
        return BlockView(self).memoryview()

    @property
    def __cuda_array_interface__(self) -> dict:
        """The CUDA array interface (v3, bytes) of a pinned, device or
        managed block. The block (this Python object) becomes an export
        until it is gone, since a consumer holds on to it, not to a view."""
        if self.get_kind() not in _DEVICE_VISIBLE:
            raise AttributeError('a %s block is not addressable by the GPU'
                                 % self.get_kind().value_nick)
        view = self.__dict__.get('_ds_cai_view')
        if view is None:
            view = self.__dict__['_ds_cai_view'] = BlockView(self)
        return view.__cuda_array_interface__

    def __dlpack__(self, **kwargs) -> object:
        """A DLPack capsule of the bytes (see ``Ds.BlockView.__dlpack__``)."""
        return BlockView(self).__dlpack__(**kwargs)

    def __dlpack_device__(self) -> tuple[int, int]:
        """(DLPack device type, device id) of the block's memory."""
        return BlockView(self).__dlpack_device__()


Block = override(Block)
__all__ += ['Block', 'BlockView']


# --- Ds.Scratchpad --------------------------------------------------------------

_tls = threading.local()


def _chain_resource_error(error):
    """The exception a Python resource raised behind @error, if any. (The
    scratchpad puts the request it was serving in front of the resource's
    message.)"""
    pending = getattr(_tls, 'pending', None)
    if pending is not None and error.message.endswith(pending[0]):
        _tls.pending = None
        return pending[1]
    return None


@override
class Scratchpad(Ds.Scratchpad):
    """Short-lived scratch memory of the four kinds, given back at once, in
    stream order, by ``release()``, at the end of ``with``, or when the
    scratchpad is finalized.

    ``with Ds.Scratchpad(device_order=order) as sp:`` releases at the end.
    ``release()`` raises ``BufferError`` while exports of its blocks
    (memoryviews, NumPy arrays, views, DLPack capsules, CUDA array interface
    consumers) are alive; ``get_n_exports()`` counts them. A scratchpad
    takes no Python attributes. One scratchpad is used by one thread at a
    time.
    """

    def __setattr__(self, name: str, value) -> None:
        raise AttributeError(
            "Ds.Scratchpad takes no Python attributes ('%s'): one that refers to "
            "a block (or a view of one) would be a reference cycle through C "
            "that Python's garbage collector cannot break, keeping the "
            "scratchpad's memory forever. Keep such things in a dict or an "
            "object of your own." % name)

    def __enter__(self) -> Scratchpad:
        """Returns the scratchpad; leaving ``with`` releases it."""
        return self

    def __exit__(self, exc_type, exc_value, traceback) -> bool:
        """Releases (see ``release()``). When the body raised while exports
        are alive, the memory is kept instead (until the next ``release()``
        or the scratchpad's end) and the body's exception propagates."""
        if exc_type is not None and _scratchpad_get_n_exports(self) > 0:
            # Unwinding: the frames that hold views are still alive. Keep the
            # memory (until the next release() or the scratchpad's end)
            # rather than hide the exception behind a BufferError.
            return False
        self.release()
        return False

    def release(self) -> None:
        """Gives all memory back now, in stream order; the scratchpad stays
        usable. Raises ``BufferError`` (and releases nothing) while exports
        of its blocks are alive."""
        n = _scratchpad_get_n_exports(self)
        if n:
            raise BufferError(
                'cannot release a Ds.Scratchpad while %d export(s) of its blocks '
                '(memoryviews, NumPy arrays, Ds.BlockViews, DLPack capsules, CUDA '
                'array interface consumers) are alive; drop them first' % n)
        _scratchpad_release(self)

    def alloc(self, kind: MemoryKind, size: int, alignment: int = 0) -> Block | None:
        """Allocates ``size`` bytes of ``kind`` memory as a ``Ds.Block``
        (``None`` for size 0). ``alignment`` is a power of two, 0 for 16.
        Raises ``GLib.Error`` (Ds.Error domain); when a Python upstream
        resource raised, its exception is the error's ``__cause__``."""
        try:
            return _scratchpad_alloc(self, kind, size, alignment)
        except _GError as e:
            cause = _chain_resource_error(e)
            if cause is not None:
                raise e from cause
            raise

    def to_device(self, data: bytes | bytearray | memoryview,
                  alignment: int = 0) -> Block | None:
        """Uploads a copy of ``data`` (bytes-like) into device scratch in the
        device order (DALI's ToGPU) and returns the device ``Ds.Block``."""
        try:
            return Ds.Scratchpad.to_device(self, _as_bytes(data), alignment)
        except _GError as e:
            cause = _chain_resource_error(e)
            if cause is not None:
                raise e from cause
            raise

    def to_contiguous_device(self, arrays: list, alignment: int = 0
                             ) -> tuple[Block | None, list[Block | None]]:
        """Packs ``arrays`` (bytes-like objects) into one device block with one
        copy (DALI's ToContiguousGPU). Returns ``(block, blocks)``: the whole
        block and one block per array (``None`` for an empty one)."""
        data = [a if isinstance(a, _Bytes) else _Bytes.new(_as_bytes(a, 'arrays[%d]' % i))
                for i, a in enumerate(arrays)]
        try:
            return Ds.Scratchpad.to_contiguous_device(self, data, alignment)
        except _GError as e:
            cause = _chain_resource_error(e)
            if cause is not None:
                raise e from cause
            raise


Scratchpad = override(Scratchpad)
__all__.append('Scratchpad')


# --- Ds.AccessOrder ---------------------------------------------------------------

def _stream_handle(stream):
    """(handle, device or -1) of a CUDA stream given as an int or an object."""
    device = -1
    if stream is None:
        return 0, device
    if isinstance(stream, bool):
        raise TypeError('a CUDA stream, not a bool')
    if isinstance(stream, int):
        handle = stream
    else:
        protocol = getattr(stream, '__cuda_stream__', None)
        if protocol is not None:
            value = protocol() if callable(protocol) else protocol
            version, handle = value
            if version != 0:
                raise TypeError('__cuda_stream__ version %r is not known (0 is)' % (version,))
        elif hasattr(stream, 'cuda_stream'):       # PyTorch
            handle = stream.cuda_stream
        elif hasattr(stream, 'ptr'):               # CuPy
            handle = stream.ptr
        elif hasattr(stream, 'handle'):            # Numba (a ctypes c_void_p)
            handle = stream.handle
            handle = getattr(handle, 'value', handle) or 0
        else:
            raise TypeError('%s is not a CUDA stream: expected an int, None, or an '
                            'object with __cuda_stream__, .cuda_stream (PyTorch), '
                            '.ptr (CuPy) or .handle (Numba)' % type(stream).__name__)
        for attr in ('device_id', 'device_index'):
            value = getattr(stream, attr, None)
            if isinstance(value, int) and not isinstance(value, bool):
                device = value
                break
        else:
            dev = getattr(stream, 'device', None)
            for attr in ('device_id', 'index'):
                value = getattr(dev, attr, None)
                if isinstance(value, int) and not isinstance(value, bool):
                    device = value
                    break
    handle = operator.index(handle)
    if handle < 0 or handle >= 1 << 64:
        raise ValueError('%d is not a stream handle' % handle)
    # cudaStreamLegacy (1) is the legacy default stream, which ds calls 0.
    if handle == 1:
        handle = 0
    return handle, device


@override
class AccessOrder(Ds.AccessOrder):
    """Host order, or a CUDA stream on a device (``from_stream``)."""

    @classmethod
    def from_stream(cls, stream: object = None, device: int = -1) -> AccessOrder:
        """The order of a CUDA stream given as an int handle (0 or ``None``:
        the legacy default stream; 2: the per-thread one) or as a stream
        object: anything with ``__cuda_stream__`` (cuda.core), PyTorch's
        ``torch.cuda.Stream`` (``.cuda_stream``), CuPy's ``Stream``
        (``.ptr``), Numba's (``.handle``). ``device`` -1 takes the stream
        object's device if it says, else the stream's own. An int must be
        the handle of a live stream: it is a pointer the CUDA driver
        dereferences, and no library can check one (as with
        ``torch.cuda.ExternalStream``); prefer passing the stream object."""
        handle, stream_device = _stream_handle(stream)
        if device == -1:
            device = stream_device
        return Ds.AccessOrder.new_for_handle(handle, device)

    def __repr__(self) -> str:
        if self.is_host():
            return '<Ds.AccessOrder host>'
        if self.is_device():
            return '<Ds.AccessOrder stream 0x%x on device %d>' % (self.get_stream_handle(),
                                                                 self.get_device())
        return '<Ds.AccessOrder unset>'


AccessOrder = override(AccessOrder)
__all__.append('AccessOrder')


# --- Ds.MemoryResource in Python -----------------------------------------------------

class LeakWarning(RuntimeWarning):
    """Memory could not be given back to a Python ``Ds.MemoryResource``
    (its ``do_deallocate`` raised): it is leaked. The exception is the
    warning's ``__cause__``."""


__all__.append('LeakWarning')


def _where(exc):
    tb = traceback.extract_tb(exc.__traceback__)
    return (' (at %s:%d)' % (tb[-1].filename, tb[-1].lineno)) if tb else ''


def _implementation(obj, name):
    # PyGObject 3.42 hooks a subclass's interface vfunc into the vtable it
    # shares with its parent, so the parent's instances would call the
    # subclass's code: look the implementation up by the instance's type.
    for klass in type(obj).__mro__:
        func = klass.__dict__.get(name)
        if func is not None:
            return getattr(func, '__wrapped__', func)
    raise AttributeError(name)


def _wrap_allocate(name, func):
    def do_allocate(self, size, alignment, *args):
        try:
            address = _implementation(self, name)(self, size, alignment, *args)
        except _GError:
            raise
        except Exception as e:
            message = '%s.%s raised %s: %s%s' % (type(self).__qualname__, name,
                                                 type(e).__name__, e, _where(e))
            _tls.pending = (message, e)
            raise _error(Ds.Error.OUT_OF_MEMORY, message) from e
        if isinstance(address, bool) or not isinstance(address, int) or address <= 0:
            message = ('%s.%s returned %r, not an address (an int > 0); raise '
                       'GLib.Error for a failure' % (type(self).__qualname__, name, address))
            raise _error(Ds.Error.OUT_OF_MEMORY, message)
        if alignment and address % alignment:
            message = ('%s.%s returned 0x%x, which is not aligned to %d'
                       % (type(self).__qualname__, name, address, alignment))
            raise _error(Ds.Error.INVALID_ARGUMENT, message)
        return address
    do_allocate.__name__ = name
    do_allocate.__qualname__ = func.__qualname__
    do_allocate.__doc__ = func.__doc__
    do_allocate.__wrapped__ = func
    return do_allocate


def _wrap_deallocate(name, func):
    def do_deallocate(self, ptr, size, alignment, *args):
        try:
            _implementation(self, name)(self, ptr, size, alignment, *args)
        except Exception as e:
            w = LeakWarning('%s.%s raised %s: %s%s; the %d bytes at 0x%x were not '
                            'given back (leaked)' % (type(self).__qualname__, name,
                                                     type(e).__name__, e, _where(e),
                                                     size, ptr))
            w.__cause__ = e
            # Pointed at the line that raised; every leak is reported.
            tb = traceback.extract_tb(e.__traceback__)
            frame = tb[-1] if tb else None
            warnings.warn_explicit(w, LeakWarning, frame.filename if frame else '<ds>',
                                   frame.lineno if frame else 0)
    do_deallocate.__name__ = name
    do_deallocate.__qualname__ = func.__qualname__
    do_deallocate.__doc__ = func.__doc__
    do_deallocate.__wrapped__ = func
    return do_deallocate


@override
class MemoryResource(Ds.MemoryResource):
    """An upstream allocator of one memory kind.

    A Python class implements it with ``do_get_kind()``,
    ``do_allocate(size, alignment)`` (return the address as an int; raise
    ``GLib.Error`` or any exception on failure) and ``do_deallocate(ptr,
    size, alignment)``. An exception from ``do_allocate`` becomes a
    ``GLib.Error`` that names it (and is chained as its ``__cause__`` by
    ``Scratchpad.alloc()``); one from ``do_deallocate`` is reported as a
    ``Ds.LeakWarning``, since there is no caller to raise it to.
    """

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        for name in ('do_allocate', 'do_allocate_async'):
            func = cls.__dict__.get(name)
            if callable(func) and not hasattr(func, '__wrapped__'):
                setattr(cls, name, _wrap_allocate(name, func))
        for name in ('do_deallocate', 'do_deallocate_async'):
            func = cls.__dict__.get(name)
            if callable(func) and not hasattr(func, '__wrapped__'):
                setattr(cls, name, _wrap_deallocate(name, func))


MemoryResource = override(MemoryResource)
__all__.append('MemoryResource')
