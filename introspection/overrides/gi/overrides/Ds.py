# PyGObject overrides for Ds-1.0
#
# Copyright 2026 The ds authors
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Pythonic additions to the introspected Ds-1.0 API.

Everything that bindings share (orders, scratchpads, blocks, resources)
comes from GObject-Introspection; this module adds what a GPU Python user
expects on top:

- ``with Ds.Scratchpad() as sp:`` gives everything back at the end, but
  the memory that live views use, which follows the views: it goes back,
  in stream order, when the last of them is gone (RMM, CuPy and PyTorch
  let memory live as long as the array too); ``release(strict=True)``
  refuses instead with a ``BufferError`` naming each view;
- zero-copy views of a block are *exports*: ``sp.empty(shape, dtype)``,
  ``block.numpy(dtype, shape)``, ``numpy.asarray(block)``,
  ``memoryview(block)``, ``block.view(dtype, shape)`` with the NumPy array
  interface, ``__cuda_array_interface__`` (v3) and DLPack (``__dlpack__``,
  ``__dlpack_device__``);
- ``block.write()`` takes any bytes-like object, ``sp.to_device()`` and
  ``sp.to_contiguous_device()`` return blocks, ``Ds.AccessOrder.from_stream``
  takes CUDA stream objects (``GstCuda.CudaStream``, ``DsGst.Stream``,
  ``__cuda_stream__``, CuPy, PyTorch, Numba);
- errors raise a class per ``Ds.Error`` code, a ``GLib.Error`` that is also
  the natural builtin (``InvalidArgumentError`` a ``ValueError``,
  ``OutOfMemoryError`` a ``MemoryError``, ...) whose ``str()`` is the
  message; sizes and offsets are ints (``TypeError`` otherwise); an
  exception raised by a Python ``Ds.MemoryResource`` is chained into the
  error it causes, a ``KeyboardInterrupt`` or ``SystemExit`` goes on out
  of the call, and one raised by its ``do_deallocate`` is reported as
  ``Ds.LeakWarning``; a resource class without the methods a scratchpad
  calls is refused when it is defined; ``do_allocate`` hands memory over
  as an object that owns it, kept alive until ``do_deallocate``;
- ``Ds.Scratchpad`` takes no Python attributes: one that refers to a block
  would be a reference cycle through C that the garbage collector cannot
  break;
- what would let Python code free memory twice or read memory given back
  is not there: ``ref``/``unref``/``free`` of boxed types, ``export`` and
  ``Ds.ScratchpadIface.alloc`` (a raw address), the private fields of
  ``Ds.AccessOrder``; a resource's ``deallocate()`` from Python takes only
  what its ``allocate()`` handed out;
- this file, ``_gi_ds`` and the typelib must be of one ds, or the import
  fails naming the three.

The native half, ``gi.overrides._gi_ds``, holds exports as C references and
makes DLPack capsules. The API reference has a Python and JavaScript guide
(python-javascript.md).
"""

from __future__ import annotations

import _thread
import ctypes
import operator
import re
import sys
import threading
import traceback
import warnings
import weakref

import gi
from gi.repository import GLib

from ..module import get_introspection_module
from ..overrides import override

try:
    from . import _gi_ds
except ImportError as e:  # pragma: no cover - a broken installation
    raise ImportError(
        'The Ds override needs its extension module gi.overrides._gi_ds, which is '
        'built and installed with ds (it needs Python\'s headers: python3-dev); '
        'from a build tree, run under `meson devenv`: %s' % e) from e

Ds = get_introspection_module('Ds')

# The _gi_ds functions this file is written for (its OVERRIDE_API).
_OVERRIDE_API = 2


def _check_versions():
    """Refuses to run with a _gi_ds or a typelib of another ds: an old
    override installed where PyGObject looks first would otherwise run
    against a new library without a word."""
    typelib = '%d.%d.%d' % (Ds.MAJOR_VERSION, Ds.MINOR_VERSION, Ds.MICRO_VERSION)
    api = getattr(_gi_ds, 'OVERRIDE_API', None)
    built = getattr(_gi_ds, 'DS_VERSION', None)
    if api == _OVERRIDE_API and built == typelib:
        return
    try:
        path = gi.Repository.get_default().get_typelib_path('Ds')
    except Exception:       # pragma: no cover - what the message can say
        path = '?'
    raise ImportError(
        'The Ds override does not match the rest of ds:\n'
        '  %s (override API %d)\n'
        '  %s (override API %s, built for ds %s)\n'
        '  %s (ds %s)\n'
        'An older installation is found first: remove it, or run from one '
        'installation or one build tree (meson devenv).'
        % (__file__, _OVERRIDE_API, getattr(_gi_ds, '__file__', '?'), api, built, path,
           typelib))


_check_versions()

__all__ = []

HOST = Ds.MemoryKind.HOST
PINNED = Ds.MemoryKind.PINNED
DEVICE = Ds.MemoryKind.DEVICE
MANAGED = Ds.MemoryKind.MANAGED
_KINDS = (HOST, PINNED, DEVICE, MANAGED)
_HOST_VISIBLE = (HOST, PINNED, MANAGED)
_DEVICE_VISIBLE = (PINNED, DEVICE, MANAGED)
_MemoryKind = Ds.MemoryKind
_GSIZE_MAX = (1 << 64) - 1

_DOMAIN = Ds.error_quark()
_DOMAIN_NAME = GLib.quark_to_string(_DOMAIN)
_RELEASED = "The block's scratchpad was released; its memory is gone"

# Looked up once: an attribute of the GLib proxy module costs ~0.8 us a
# lookup, more than the call it would be used for.
_Bytes = GLib.Bytes
_GError = GLib.Error
_block_write = Ds.Block.write
_block_read = Ds.Block.read
_block_fill = Ds.Block.fill
_block_get_address = Ds.Block.get_address
_scratchpad_alloc = Ds.Scratchpad.alloc
_scratchpad_get_n_exports = Ds.Scratchpad.get_n_exports
_scratchpad_get_allocated = Ds.Scratchpad.get_allocated
_scratchpad_set_max_block_size = Ds.Scratchpad.set_max_block_size
_scratchpad_set_resource = Ds.Scratchpad.set_resource
_scratchpad_to_device = Ds.Scratchpad.to_device
_scratchpad_to_contiguous_device = Ds.Scratchpad.to_contiguous_device
_resource_allocate = Ds.MemoryResource.allocate
_resource_deallocate = Ds.MemoryResource.deallocate
_resource_allocate_async = Ds.MemoryResource.allocate_async
_resource_deallocate_async = Ds.MemoryResource.deallocate_async
_kernel_context_run = Ds.KernelContext.run
_new_for_handle = Ds.AccessOrder.new_for_handle
_get_default = Ds.MemoryResource.get_default
_get_ident = _thread.get_ident
_Export = _gi_ds.Export
_release = _gi_ds.release
_numpy = _gi_ds.numpy
_empty = _gi_ds.empty
_read = _gi_ds.read
_write = _gi_ds.write


# --- errors ------------------------------------------------------------------------

class DsError(GLib.Error):
    """The base of the errors of the ``Ds.Error`` domain: a ``GLib.Error``
    (``e.domain``, ``e.code``, ``e.message``, ``e.matches()``) whose
    ``str()`` is its message. Each code has its class, which is also the
    builtin exception a Python programmer would catch for it."""

    def __str__(self) -> str:
        return self.message


class InvalidArgumentError(DsError, ValueError):
    """``Ds.Error.INVALID_ARGUMENT``: a size, alignment, kind, range or
    order that is not valid; also a ``ValueError``."""


class NotSupportedError(DsError, NotImplementedError):
    """``Ds.Error.NOT_SUPPORTED``: ds was built without CUDA, or the
    resource cannot do it; also a ``NotImplementedError``."""


class NoDeviceError(DsError, RuntimeError):
    """``Ds.Error.NO_DEVICE``: no CUDA driver or device; also a
    ``RuntimeError``."""


class OutOfMemoryError(DsError, MemoryError):
    """``Ds.Error.OUT_OF_MEMORY``: the upstream could not give the memory;
    also a ``MemoryError``."""


class CudaError(DsError, RuntimeError):
    """``Ds.Error.CUDA``: a CUDA call failed (the message names the CUDA
    error); also a ``RuntimeError``."""


class DisposedError(DsError, RuntimeError):
    """``Ds.Error.DISPOSED``: the object was disposed; also a
    ``RuntimeError``."""


class BusyError(DsError, RuntimeError):
    """``Ds.Error.BUSY``: another thread is inside the scratchpad, or its
    own memory resource called it back; also a ``RuntimeError``."""


_ERROR_CLASSES = {int(Ds.Error.INVALID_ARGUMENT): InvalidArgumentError,
                  int(Ds.Error.NOT_SUPPORTED): NotSupportedError,
                  int(Ds.Error.NO_DEVICE): NoDeviceError,
                  int(Ds.Error.OUT_OF_MEMORY): OutOfMemoryError,
                  int(Ds.Error.CUDA): CudaError,
                  int(Ds.Error.DISPOSED): DisposedError,
                  int(Ds.Error.BUSY): BusyError}

__all__ += ['DsError', 'InvalidArgumentError', 'NotSupportedError', 'NoDeviceError',
            'OutOfMemoryError', 'CudaError', 'DisposedError', 'BusyError']


def _error(code, message):
    code = int(code)
    return _ERROR_CLASSES.get(code, DsError)(message, _DOMAIN_NAME, code)


def _error_from(domain, code, message):
    """The exception for a GError (the extension module makes them so)."""
    if domain == _DOMAIN:
        return _error(code, message)
    return _GError.new_literal(domain, message, code)


def _typed(e):
    """@e, or the class of its code if it is a plain GLib.Error of the
    Ds.Error domain."""
    if type(e) is _GError and e.domain == _DOMAIN_NAME:
        typed = _error(e.code, e.message)
        typed.__cause__ = e.__cause__
        typed.__traceback__ = e.__traceback__
        return typed
    return e


# What Python resources raised during a call that the override made (an
# "entry point"), by thread: (vfunc, exception, message of the GLib.Error
# that stood for it in C).
_pending = {}


def _failed(e):
    """What to raise for the GLib.Error @e of an entry point: a
    KeyboardInterrupt (any BaseException that is not an Exception) a Python
    resource raised, as it was; else @e (a MemoryError as well for
    OUT_OF_MEMORY) with the resource's exception as its cause."""
    pending = _pending.pop(_get_ident(), None) if _pending else None
    if pending is not None:
        vfunc, exc, message = pending
        if not isinstance(exc, Exception):
            exc.__suppress_context__ = True
            return exc
        if vfunc == 'do_get_kind':
            failed = _error(Ds.Error.INVALID_ARGUMENT, message)
            failed.__cause__ = exc
            return failed
        if e.message.endswith(message):
            failed = _typed(e)
            failed.__cause__ = exc
            return failed
    failed = _typed(e)
    if failed is not e:
        failed.__suppress_context__ = True
    return failed


def _raise_pending():
    """Raises a KeyboardInterrupt (any BaseException that is not an
    Exception) that a Python resource raised in a call that did not fail:
    in do_deallocate during release(), or in an upstream allocation that a
    pool made again. An Exception the call got over is dropped."""
    pending = _pending.pop(_get_ident(), None)
    if pending is not None and not isinstance(pending[1], Exception):
        raise pending[1]


def _count(value, what):
    """@value as a size, offset or alignment for C: an int (anything with
    __index__, such as numpy.int64) in 0..2**64-1."""
    if type(value) is not int:
        if isinstance(value, float) or not hasattr(type(value), '__index__'):
            raise TypeError('%s must be an int, not %s' % (what, type(value).__name__))
        value = operator.index(value)
    if value < 0 or value > _GSIZE_MAX:
        raise _error(Ds.Error.INVALID_ARGUMENT, '%s %d is %s' % (
            what.capitalize(), value, 'negative' if value < 0 else 'larger than any size'))
    return value


def _kind(kind):
    """@kind as a Ds.MemoryKind; an unknown value is INVALID_ARGUMENT, as
    in C."""
    if type(kind) is _MemoryKind:
        return kind
    if isinstance(kind, float) or not hasattr(type(kind), '__index__'):
        raise TypeError('kind must be a Ds.MemoryKind, not %s' % type(kind).__name__)
    value = operator.index(kind)
    if not 0 <= value < len(_KINDS):
        raise _error(Ds.Error.INVALID_ARGUMENT, 'Unknown memory kind %d' % value)
    return _KINDS[value]


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


def _where(depth=2):
    """'file:line' of the caller @depth frames up."""
    try:
        frame = sys._getframe(depth)
    except ValueError:
        return '?'
    return '%s:%d' % (frame.f_code.co_filename, frame.f_lineno)


# --- element types ------------------------------------------------------------

_TYPESTR = re.compile(r'^([<>|=])?([biufc])(\d+)$')
_NAMES = {
    'bool': 'b1', 'int8': 'i1', 'int16': 'i2', 'int32': 'i4', 'int64': 'i8',
    'uint8': 'u1', 'uint16': 'u2', 'uint32': 'u4', 'uint64': 'u8',
    'float16': 'f2', 'float32': 'f4', 'float64': 'f8',
    'complex64': 'c8', 'complex128': 'c16',
}
_NATIVE = '<' if sys.byteorder == 'little' else '>'
# struct formats that memoryview.cast() takes (3.11: not 'e', no complex)
_FORMATS = {'b1': '?', 'i1': 'b', 'u1': 'B', 'i2': 'h', 'u2': 'H', 'i4': 'i',
            'u4': 'I', 'i8': 'q', 'u8': 'Q', 'f4': 'f', 'f8': 'd'}
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


# dtype-like -> (typestr, itemsize, DLPack code) of the ones seen; the
# extension module keeps the same for the fast paths.
_DTYPES = {}


def _hashable(value):
    try:
        hash(value)
    except TypeError:
        return False
    return True


_numpy_ready = []


def _dtype_entry(dtype):
    """(typestr, itemsize, DLPack code) of @dtype, remembered (for the fast
    paths too, where DLPack can carry it: native byte order, not bool)."""
    if not _numpy_ready and 'numpy' in sys.modules:
        _gi_ds.numpy_ready(sys.modules['numpy'].ndarray)
        _numpy_ready.append(True)
        _DTYPES.clear()     # those seen before go to the fast paths too
    typestr, itemsize, kind = _parse_dtype(dtype)
    entry = (typestr, itemsize, _DL_CODES[kind])
    if _hashable(dtype) and len(_DTYPES) < 256:
        _DTYPES[dtype] = entry
        if _numpy_ready:
            _gi_ds.dtype_code(dtype, sys.modules['numpy'].dtype(typestr), itemsize)
    return entry


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


def _cpu_error(kind, use):
    return _error(Ds.Error.INVALID_ARGUMENT, 'A %s block is not addressable by the CPU; %s'
                  % (kind.value_nick, use))


# --- exports -------------------------------------------------------------------

class BlockView(_gi_ds.View):
    """A typed, zero-copy view of a ``Ds.Block``'s memory: an export.

    Made by ``block.view(dtype, shape, offset)``. While a view (or anything
    made from it: a NumPy array, a memoryview, a consumer of its CUDA array
    interface or DLPack capsule) is alive, the block's scratchpad is not
    released: ``Scratchpad.release()`` and leaving ``with`` raise
    ``BufferError``. Drop the view and what was made from it (``del``) to
    release.

    A view speaks every protocol its memory kind allows:

    - host, pinned and managed memory: the NumPy array interface
      (``numpy.asarray(view)``), ``view.numpy()``, ``view.memoryview()``;
    - pinned, device and managed memory: ``__cuda_array_interface__``
      (version 3, with the scratchpad's stream), for CuPy, Numba, PyTorch;
    - all kinds: DLPack (``__dlpack__``, ``__dlpack_device__``): host and
      pinned memory as kDLCPU (``numpy.from_dlpack``, ``torch.from_dlpack``
      give CPU arrays), device and managed memory as kDLCUDA
      (``torch.from_dlpack``, ``cupy.from_dlpack``); ``dl_device=`` asks for
      kDLCUDAHost or kDLCUDA for pinned, kDLCUDAManaged or kDLCPU for
      managed memory.

    Only C-contiguous views are made; ``shape``, ``typestr``, ``itemsize``,
    ``nbytes``, ``kind`` and ``address`` describe it.
    """

    __slots__ = ('typestr', 'itemsize', '_block', '_offset', '__weakref__')

    def __init__(self, block: Block, dtype='u1', shape: int | tuple | None = None,
                 offset: int = 0, *, what: str = 'a Ds.BlockView', where: str | None = None) -> None:
        # Raises GLib.Error (Ds.Error.INVALID_ARGUMENT) for a block whose
        # scratchpad was released.
        self._init(block, block, dtype, shape, offset, what, where)

    def _init(self, source, block, dtype, shape, offset, what, where):
        # @source: @block, or the export of another view of it, which
        # keeps its memory past a release.
        export = _Export(source, what, where or _where())
        typestr, itemsize, kind = _parse_dtype(dtype)
        size = export.size
        offset = _count(offset, 'offset')
        if offset > size:
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
        super().__init__(export, offset, shape, _DL_CODES[kind], itemsize * 8,
                         typestr[0] in ('|', _NATIVE))
        self.typestr = typestr
        self.itemsize = itemsize
        self._block = block
        self._offset = offset

    def __repr__(self) -> str:
        return '<Ds.BlockView %s %s %r at 0x%x>' % (self.kind.value_nick, self.typestr,
                                                  self.shape, self.address)

    @property
    def kind(self) -> MemoryKind:
        """The kind of memory (a ``Ds.MemoryKind``)."""
        return _KINDS[self._kind]

    @property
    def block(self) -> Block:
        """The ``Ds.Block`` this view was made from."""
        return self._block

    def _again(self, what, where):
        """Another view of the same memory with an export of its own."""
        view = BlockView.__new__(BlockView)
        view._init(self._export, self._block, self.typestr, self.shape, self._offset,
                   what, where)
        return view

    def _stream(self) -> int | None:
        """The CUDA stream the scratchpad works in, as CAI/DLPack want it."""
        order = self._block.get_scratchpad().get_device_order()
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

    def __array__(self, dtype=None, copy=None) -> 'numpy.ndarray':
        """``numpy.asarray(view)``: zero-copy for host-visible kinds (through
        the array interface); a device view raises ``TypeError``."""
        if self.kind not in _HOST_VISIBLE:
            raise TypeError('a device block is not addressable by the CPU: copy it out '
                            'with block.tobytes(), or give it to a GPU array library '
                            '(__cuda_array_interface__, DLPack)')
        import numpy
        array = numpy.asarray(self)
        return array if dtype is None else array.astype(dtype, copy=False)

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

    def numpy(self) -> 'numpy.ndarray':
        """A NumPy array of this view (zero-copy, writable, an export of its
        own); host-visible kinds."""
        if self.kind not in _HOST_VISIBLE:
            raise _cpu_error(self.kind, 'use __cuda_array_interface__ or DLPack')
        import numpy
        return numpy.asarray(self._again('a NumPy array', _where()))

    def memoryview(self) -> memoryview:
        """A writable, zero-copy memoryview of this view (an export of its
        own); host-visible kinds.

        Typed (``format``/``shape``) where the struct module knows the type;
        float16 and complex views are typed through NumPy when it is there
        (Python 3.11's memoryview cannot cast to them), bytes otherwise.
        """
        return self._memoryview(_where())

    def _memoryview(self, where, own=None):
        if self.kind not in _HOST_VISIBLE:
            raise _cpu_error(self.kind, 'use read()/write(), __cuda_array_interface__ or DLPack')
        if own is None:
            own = self._again('a memoryview', where)
        if own.nbytes == 0:
            return memoryview(bytearray())
        array = (ctypes.c_ubyte * own.nbytes).from_address(own.address)
        array._ds_export = own
        view = memoryview(array).cast('B')
        if own.nbytes == 0 or self.typestr == '|u1':
            return view
        native = self.typestr[0] in ('|', _NATIVE)
        fmt = _FORMATS.get(self.typestr[1:])
        if fmt is not None and native:
            return view.cast(fmt, self.shape)
        np = sys.modules.get('numpy')
        if np is not None:
            return memoryview(np.frombuffer(view, self.typestr).reshape(self.shape))
        return view


# --- Ds.Block ------------------------------------------------------------------

_CAI_USE = ('a consumer such as cupy.asarray(), torch.as_tensor() or '
            'numba.cuda.as_cuda_array() keeps it, or a hasattr() probe read it')


@override
class Block(Ds.Block):
    """One scratch allocation: address, size, kind, copy-in/out, views.

    A block keeps its scratchpad alive and is valid until that scratchpad is
    released; afterwards every method that would touch the memory raises
    ``GLib.Error`` with ``Ds.Error.INVALID_ARGUMENT``. Zero-copy views
    (``memoryview()``, ``numpy()``, ``numpy.asarray(block)``, ``view()``,
    ``__cuda_array_interface__``, ``__dlpack__``) are exports: they keep the
    memory from being released.
    """

    def __repr__(self) -> str:
        return '<Ds.Block %s %d bytes%s>' % (
            self.get_kind().value_nick, self.get_size(),
            (' at 0x%x' % _block_get_address(self)) if self.is_valid() else ' (released)')

    def get_address(self) -> int:
        """The address as an int (0 for an empty block); raises
        ``InvalidArgumentError`` once the block is invalid."""
        address = _block_get_address(self)
        if address == 0 and not self.is_valid():
            raise _error(Ds.Error.INVALID_ARGUMENT, _RELEASED)
        return address

    @property
    def address(self) -> int:
        """The address as an int (``get_address()``)."""
        return self.get_address()

    @property
    def size(self) -> int:
        """The size in bytes (``get_size()``)."""
        return self.get_size()

    @property
    def nbytes(self) -> int:
        """The size in bytes, as NumPy calls it."""
        return self.get_size()

    @property
    def kind(self) -> MemoryKind:
        """The kind of memory (``get_kind()``)."""
        return self.get_kind()

    def __len__(self) -> int:
        """The size in bytes."""
        return self.get_size()

    def __bool__(self) -> bool:
        """A block is true even when it is empty (it is an object, not a
        container of items)."""
        return True

    def write(self, offset: int, data: bytes | bytearray | memoryview | GLib.Bytes) -> bool:
        """Copies ``data`` (any bytes-like object, or GLib.Bytes) in at ``offset``."""
        if type(offset) is not int or not 0 <= offset <= _GSIZE_MAX:
            offset = _count(offset, 'offset')
        if isinstance(data, _Bytes):
            try:
                return _block_write(self, offset, data)
            except _GError as e:
                raise _typed(e) from None
        done = _write(self, offset, data)
        if done is NotImplemented:      # not C-contiguous, or no buffer at all
            done = _write(self, offset, _as_bytes(data))
        return done

    def write_data(self, offset: int, data: bytes) -> bool:
        """Copies ``data`` (bytes-like) in at ``offset``; see ``write()``."""
        return self.write(offset, data)

    def read(self, offset: int, length: int) -> GLib.Bytes:
        """A copy of ``length`` bytes at ``offset`` as GLib.Bytes (every kind;
        ``tobytes()`` gives ``bytes``)."""
        try:
            return _block_read(self, _count(offset, 'offset'), _count(length, 'length'))
        except _GError as e:
            raise _typed(e) from None

    def tobytes(self, offset: int = 0, length: int | None = None) -> bytes:
        """A copy of the bytes from ``offset`` (to the end, or ``length`` of
        them) as ``bytes``, for every kind; a range outside the block is
        ``GLib.Error`` ``INVALID_ARGUMENT``."""
        if type(offset) is not int or not 0 <= offset <= _GSIZE_MAX:
            offset = _count(offset, 'offset')
        if length is None:
            length = max(self.get_size() - offset, 0)
        elif type(length) is not int or not 0 <= length <= _GSIZE_MAX:
            length = _count(length, 'length')
        return _read(self, offset, length)

    def fill(self, value: int) -> bool:
        """Sets every byte to ``value`` (0..255)."""
        value = _count(value, 'value')
        if value > 255:
            raise _error(Ds.Error.INVALID_ARGUMENT, 'Value %d is not a byte (0..255)' % value)
        try:
            return _block_fill(self, value)
        except _GError as e:
            raise _typed(e) from None

    def view(self, dtype='u1', shape: int | tuple | None = None,
             offset: int = 0) -> BlockView:
        """A typed zero-copy view (a ``Ds.BlockView``, an export).

        ``dtype`` is a NumPy dtype or a typestring (``'<f4'``, ``'u1'``);
        ``shape`` an int or a tuple (default: as many items as fit); the
        view starts ``offset`` bytes into the block.
        """
        return BlockView(self, dtype, shape, offset, where=_where())

    def numpy(self, dtype='u1', shape: int | tuple | None = None,
              offset: int = 0) -> 'numpy.ndarray':
        """A NumPy array of the memory (zero-copy, writable), for host,
        pinned and managed blocks. The array is an export: while it lives,
        the scratchpad cannot be released."""
        array = _numpy(self, dtype, shape, offset)
        if array is not NotImplemented:
            return array
        if _hashable(dtype) and (dtype not in _DTYPES or not _numpy_ready):
            _dtype_entry(dtype)         # the next call takes the fast path
        where = _where()
        if self.get_size() == 0:
            import numpy
            typestr, itemsize, _ = _parse_dtype(dtype)
            _count(offset, 'offset')
            return numpy.empty(_parse_shape(shape, itemsize, 0), typestr)
        view = BlockView(self, dtype, shape, offset, what='a NumPy array', where=where)
        if view.kind not in _HOST_VISIBLE:
            raise _cpu_error(view.kind, 'use __cuda_array_interface__ or DLPack')
        import numpy
        return numpy.asarray(view)

    def __array__(self, dtype=None, copy=None) -> 'numpy.ndarray':
        """``numpy.asarray(block)``: a zero-copy uint8 array of a host, pinned
        or managed block (an export, like ``numpy()``); a device block
        raises ``TypeError``."""
        kind = self.get_kind()
        if kind not in _HOST_VISIBLE:
            raise TypeError('a device block is not addressable by the CPU: copy it out '
                            'with block.tobytes(), or give it to a GPU array library '
                            '(__cuda_array_interface__, DLPack)')
        import numpy
        array = numpy.asarray(BlockView(self, what='a NumPy array (numpy.asarray(block))',
                                        where=_where()))
        return array if dtype is None else array.astype(dtype, copy=False)

    def memoryview(self) -> memoryview:
        """A writable, zero-copy memoryview of the bytes (host, pinned and
        managed blocks); an export, like ``numpy()``."""
        where = _where()
        view = BlockView(self, what='a memoryview', where=where)
        return view._memoryview(where, own=view)

    @property
    def __cuda_array_interface__(self) -> dict:
        """The CUDA array interface (v3, bytes) of a pinned, device or
        managed block.

        A consumer (CuPy, PyTorch, Numba) keeps the object it read this
        from, so reading it makes the block an export while the Block object
        lives. A release from a function where nothing but that function's
        own variables refers to the block (the consumer gone) does not
        count it, since the block itself checks that it is valid at every
        use. ``block.view()`` gives a consumer an object of its own.
        """
        kind = self.get_kind()
        if kind not in _DEVICE_VISIBLE:
            raise AttributeError('a %s block is not addressable by the GPU' % kind.value_nick)
        pin = self.__dict__.get('_ds_cai')
        if pin is None:
            pin = _Export(self, weakref.ref(self), _where())
            self.__dict__['_ds_cai'] = pin
        order = self.get_scratchpad().get_device_order()
        stream = None
        if order.is_device():
            stream = order.get_stream_handle() or 1
        return {'shape': (pin.size,), 'typestr': '|u1', 'data': (pin.address, False),
                'strides': None, 'version': 3, 'stream': stream}

    # Implemented in gi.overrides._gi_ds (installed over these at import).
    def __dlpack__(self, *, stream: int | None = None, max_version: tuple | None = None,
                   dl_device: tuple | None = None, copy: bool | None = None) -> object:
        """A DLPack capsule ("dltensor") of the block's bytes (uint8).

        The tensor holds an export of the block until the consumer calls its
        deleter (or the unconsumed capsule is collected). Host and pinned
        memory are on kDLCPU, device and managed memory on kDLCUDA;
        ``dl_device`` asks for kDLCUDAHost (3) or kDLCUDA for pinned memory,
        kDLCUDAManaged (13) or kDLCPU for managed memory. A GPU consumer's
        ``stream`` (None: the legacy default stream, -1: no ordering) is
        made to wait for the scratchpad's device order; for a CPU consumer
        of pinned or managed memory the host waits for it.
        """
        raise NotImplementedError

    def __dlpack_device__(self) -> tuple[int, int]:
        """(DLPack device type, device id) of the block's memory: (1, 0) for
        host and pinned memory, (2, device) for device and managed memory."""
        raise NotImplementedError


Block = override(Block)
_gi_ds.setup(Block, _error_from)
__all__ += ['Block', 'BlockView']


# --- Ds.Scratchpad --------------------------------------------------------------

_CO_OPTIMIZED = 0x0001
# From Python 3.13 (PEP 667) a function frame's f_locals is a view of its
# variables, not a snapshot kept on the frame that holds references too.
_F_LOCALS_IS_A_VIEW = sys.version_info >= (3, 13)


def _unpin_if_local(pin, frame):
    """Drops the CUDA-array-interface pin of the block @pin refers to (a
    weak reference) when nothing but variables of @frame, the frame that
    releases, refers to the block: a consumer that kept the block would be
    one more reference, and the block itself checks that it is valid at
    every use."""
    block = pin()
    if block is None or frame is None:
        return
    # A function's f_locals before 3.13: a snapshot kept on the frame.
    snapshot = frame.f_code.co_flags & _CO_OPTIMIZED and not _F_LOCALS_IS_A_VIEW
    namespace = frame.f_locals
    names = [name for name, value in namespace.items() if value is block]
    if not names:
        if snapshot:
            namespace.clear()
        return
    # Less getrefcount's argument and our variable, the references are the
    # frame's: each variable's once (a slot, a cell or a module's or class
    # body's dict), and once more in a snapshot.
    only_local = sys.getrefcount(block) - 2 == len(names) * (2 if snapshot else 1)
    if snapshot:
        # The snapshot must not keep anything alive past this release (it
        # is filled again at the next f_locals).
        namespace.clear()
    if only_local:
        del block.__dict__['_ds_cai']


def _describe_exports(n, exports, tensors):
    lines = []
    for e in exports:
        kind = _KINDS[e.kind].value_nick
        if isinstance(e.what, weakref.ref):
            lines.append('the Ds.Block of %d bytes of %s memory at 0x%x whose '
                         '__cuda_array_interface__ was read at %s: %s; drop what refers '
                         'to the block, or give consumers block.view()'
                         % (e.size, kind, e.address, e.where, _CAI_USE))
        else:
            lines.append('%s of %d bytes of %s memory at 0x%x, made at %s'
                         % (e.what or 'an export', e.size, kind, e.address, e.where))
    for t in tensors:
        where = (', made at %s:%d' % (t['file'], t['line'])) if t.get('file') else ''
        if t.get('what'):
            lines.append('%s of shape %r at 0x%x%s' % (t['what'], t['shape'], t['address'], where))
        else:
            lines.append('a DLPack tensor of shape %r at 0x%x on DLPack device %r: an '
                         'unconsumed capsule, or what a consumer made of it '
                         '(numpy.from_dlpack(), torch.from_dlpack(), ...)%s'
                         % (t['shape'], t['address'], t['device'], where))
    other = n - len(exports) - len(tensors)
    if other > 0:
        lines.append('%d export(s) made outside Python (ds_block_export() in C)' % other)
    return BufferError(
        'cannot release a Ds.Scratchpad strictly while %d export(s) of its blocks are '
        'alive; drop them first (del), or release without strict=True to let the memory '
        'follow them:\n  - %s' % (n, '\n  - '.join(lines)))


class _Props:
    """A scratchpad's ``props``: PyGObject's, with the check of a setting
    made too late."""

    __slots__ = ('_scratchpad', '_props')

    def __init__(self, scratchpad, props):
        object.__setattr__(self, '_scratchpad', scratchpad)
        object.__setattr__(self, '_props', props)

    def __getattr__(self, name):
        return getattr(self._props, name)

    def __setattr__(self, name, value):
        self._scratchpad._check_setting(name)
        setattr(self._props, name, value)

    def __dir__(self):
        return dir(self._props)


@override
class Scratchpad(Ds.Scratchpad):
    """Short-lived scratch memory of the four kinds, given back at once, in
    stream order, by ``release()``, at the end of ``with``, or when the
    scratchpad is finalized.

    ``with Ds.Scratchpad(device_order=order) as sp:`` releases at the end.
    Memory that live views of its blocks use (memoryviews, NumPy arrays,
    views, DLPack capsules, CUDA array interface consumers) follows them:
    it goes back when the last of them is gone (``get_held_by_exports()``);
    ``release(strict=True)`` refuses instead with a ``BufferError`` naming
    them. ``empty(shape, dtype, kind=...)`` makes typed arrays. A
    scratchpad takes no Python attributes. One scratchpad is used by one
    thread at a time.
    """

    def __setattr__(self, name: str, value) -> None:
        raise AttributeError(
            "Ds.Scratchpad takes no Python attributes ('%s'): one that refers to "
            "a block (or a view of one) would be a reference cycle through C "
            "that Python's garbage collector cannot break, keeping the "
            "scratchpad's memory forever. Keep such things in a dict or an "
            "object of your own." % name)

    # Settings: the properties (orders, initial sizes, resources,
    # max-block-size) change only while the scratchpad holds no
    # allocation; in C a later change is a critical, here BusyError.

    def _check_setting(self, name):
        if name.replace('_', '-') == 'keep-blocks':
            return          # may change at any time
        if any(_scratchpad_get_allocated(self, kind) for kind in _KINDS):
            raise _error(Ds.Error.BUSY,
                         'The %s property of a Ds.Scratchpad cannot change while it holds '
                         'allocations; set it before the first allocation or after a '
                         'release' % name.replace('_', '-'))

    @property
    def props(self):
        """The GObject properties; setting one while the scratchpad holds
        allocations raises ``Ds.BusyError`` (the value stays)."""
        return _Props(self, super().props)

    def set_property(self, name: str, value) -> None:
        """Sets a GObject property; ``Ds.BusyError`` while the scratchpad
        holds allocations (the value stays)."""
        self._check_setting(name)
        super().set_property(name, value)

    def set_max_block_size(self, size: int) -> None:
        """Sets ``max-block-size``; ``Ds.BusyError`` while the scratchpad
        holds allocations."""
        self._check_setting('max-block-size')
        _scratchpad_set_max_block_size(self, size)

    def set_resource(self, kind: MemoryKind, resource: MemoryResource | None) -> None:
        """Sets the resource of ``kind``; ``Ds.BusyError`` while the
        scratchpad holds allocations."""
        self._check_setting('resource')
        _scratchpad_set_resource(self, kind, resource)

    def __enter__(self) -> Scratchpad:
        """Returns the scratchpad; leaving ``with`` releases it."""
        return self

    def __exit__(self, exc_type, exc_value, traceback) -> bool:
        """Releases (see ``release()``): what live views of its blocks use
        follows them, everything else goes back now."""
        self._release(False, sys._getframe(1))
        return False

    def release(self, strict: bool = False) -> None:
        """Gives all memory back now, in stream order; the scratchpad stays
        usable. Memory that live views of its blocks use (NumPy arrays,
        memoryviews, DLPack tensors, CUDA array interface consumers)
        follows them: the upstream blocks holding it go back, in the same
        order, when the last view in each is gone
        (``get_held_by_exports()`` counts them). ``strict=True`` refuses
        instead: ``BufferError`` naming each live view and the line that
        made it, and nothing is released. ``BusyError`` if another
        thread is inside the scratchpad, or its own resource calls this."""
        self._release(strict, sys._getframe(1))

    def _release(self, strict, frame):
        if _scratchpad_get_n_exports(self):
            # A block whose CUDA array interface was read, that nothing but
            # the releasing frame's variables refers to, has no consumer.
            for pin in [e.what for e in _gi_ds.exports_of(self) if isinstance(e.what, weakref.ref)]:
                _unpin_if_local(pin, frame)
        try:
            n = _release(self, strict)
        except _GError as e:
            raise _failed(e)
        if n:
            raise _describe_exports(n, _gi_ds.exports_of(self), _gi_ds.tensors_of(self))
        if _pending:
            _raise_pending()

    def empty(self, shape: int | tuple, dtype=float, kind: MemoryKind = HOST,
              alignment: int = 0) -> 'numpy.ndarray | BlockView':
        """A new, uninitialised array of ``shape`` and ``dtype`` in scratch of
        ``kind`` (scratch is not zeroed): a NumPy array for host, pinned
        and managed memory, a ``Ds.BlockView`` (DLPack, CUDA array
        interface) for device memory. Like ``numpy.empty()``; the memory
        follows the array past a release. ``alignment`` 0 is the item size
        rounded up to 16, at least 64 bytes for arrays of 64 bytes or
        more."""
        array = _empty(self, shape, dtype, kind, alignment)
        if array is not NotImplemented:
            return array
        if type(shape) is int:
            shape = (shape,)
        entry = _DTYPES.get(dtype) if _hashable(dtype) else None
        if entry is None or not _numpy_ready:
            entry = _dtype_entry(dtype)
        typestr, itemsize, code = entry
        nbytes = itemsize
        try:
            for n in shape:
                nbytes *= n
        except TypeError:
            shape = _parse_shape(shape, itemsize, 0)
            nbytes = itemsize
            for n in shape:
                nbytes *= n
        if alignment == 0:
            alignment = 64 if nbytes >= 64 else 16
        if nbytes > 0 and type(kind) is _MemoryKind and (kind is HOST or kind is PINNED):
            array = _empty(self, shape, dtype, int(kind), alignment)
            if array is not NotImplemented:
                return array
        kind = _kind(kind)
        if nbytes == 0:
            if kind in _HOST_VISIBLE:
                import numpy
                return numpy.empty(shape, typestr)
        block = self.alloc(kind, max(nbytes, 1), alignment)
        if kind in _HOST_VISIBLE:
            return block.numpy(typestr, shape)
        return block.view(typestr, shape)

    def alloc(self, kind: MemoryKind, size: int, alignment: int = 0) -> Block | None:
        """Allocates ``size`` bytes of ``kind`` memory as a ``Ds.Block``
        (``None`` for size 0). ``alignment`` is a power of two, 0 for 16.
        Raises ``GLib.Error`` (Ds.Error domain; out of memory is also a
        ``MemoryError``), ``TypeError`` for a size that is not an int; when a
        Python upstream resource raised, its exception is the error's
        ``__cause__`` (a ``KeyboardInterrupt`` or ``SystemExit`` is raised
        as it is)."""
        # PyGObject truncates a float: check the types first. What it
        # refuses (an unknown kind, a negative size) is checked again to
        # give the errors C gives.
        if type(size) is not int or type(alignment) is not int:
            size, alignment = _count(size, 'size'), _count(alignment, 'alignment')
        try:
            block = _scratchpad_alloc(self, kind, size, alignment)
        except _GError as e:
            raise _failed(e)
        except (TypeError, ValueError, OverflowError):
            kind, size, alignment = (_kind(kind), _count(size, 'size'),
                                     _count(alignment, 'alignment'))
            try:
                block = _scratchpad_alloc(self, kind, size, alignment)
            except _GError as e:
                raise _failed(e)
        if _pending:
            _raise_pending()
        return block

    def to_device(self, data: bytes | bytearray | memoryview,
                  alignment: int = 0) -> Block | None:
        """Uploads a copy of ``data`` (bytes-like) into device scratch in the
        device order (DALI's ToGPU) and returns the device ``Ds.Block``."""
        data = _as_bytes(data)
        alignment = _count(alignment, 'alignment')
        try:
            block = _scratchpad_to_device(self, data, alignment)
        except _GError as e:
            raise _failed(e)
        if _pending:
            _raise_pending()
        return block

    def to_contiguous_device(self, arrays: list, alignment: int = 0
                             ) -> tuple[Block | None, list[Block | None]]:
        """Packs ``arrays`` (bytes-like objects) into one device block with one
        copy (DALI's ToContiguousGPU). Returns ``(block, blocks)``: the whole
        block and one block per array (``None`` for an empty one)."""
        data = [a if isinstance(a, _Bytes) else _Bytes.new(_as_bytes(a, 'arrays[%d]' % i))
                for i, a in enumerate(arrays)]
        alignment = _count(alignment, 'alignment')
        try:
            blocks = _scratchpad_to_contiguous_device(self, data, alignment)
        except _GError as e:
            raise _failed(e)
        if _pending:
            _raise_pending()
        return blocks


Scratchpad = override(Scratchpad)
__all__.append('Scratchpad')


# --- Ds.AccessOrder ---------------------------------------------------------------

def _order_for_handle(handle, device):
    try:
        order = _new_for_handle(handle, device)
    except TypeError:       # PyGObject: "constructor returned NULL"
        order = None
    if order is None:       # refused in C
        raise _error(Ds.Error.INVALID_ARGUMENT,
                     '0x%x is not the handle of a live CUDA stream' % handle)
    return order


def _stream_handle(stream):
    """(handle, device or -1) of a CUDA stream given as an int or an object."""
    device = -1
    if stream is None:
        return 0, device
    if isinstance(stream, bool):
        raise TypeError('a CUDA stream, not a bool')
    if isinstance(stream, int) or (not isinstance(stream, float) and
                                   hasattr(type(stream), '__index__')):
        handle = stream
    else:
        protocol = getattr(stream, '__cuda_stream__', None)
        get_handle = getattr(stream, 'get_handle', None)
        if isinstance(stream, Ds.AccessOrder):
            if not stream.is_device():
                raise TypeError('a host Ds.AccessOrder is not a CUDA stream')
            handle, device = stream.get_stream_handle(), stream.get_device()
        elif protocol is not None:
            value = protocol() if callable(protocol) else protocol
            version, handle = value
            if version != 0:
                raise TypeError('__cuda_stream__ version %r is not known (0 is)' % (version,))
        elif callable(get_handle) and type(stream).__module__.startswith('gi.'):
            # GstCuda.CudaStream, DsGst.Stream: their handle, alive as long
            # as the object (which the caller holds)
            handle = get_handle() or 0
            get_device = getattr(stream, 'get_context', None)
            context = get_device() if callable(get_device) else None
            value = getattr(getattr(context, 'props', None), 'cuda_device_id', None)
            if isinstance(value, int):
                device = value
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
    """Host order, or a CUDA stream on a device (``from_stream``).

    Orders compare by value (``==`` is ``equal()``) and hash alike when
    equal."""

    @classmethod
    def from_stream(cls, stream: object = None, device: int = -1) -> AccessOrder:
        """The order of a CUDA stream, best given as a stream object:
        ``GstCuda.CudaStream``, ``DsGst.Stream``, anything with
        ``__cuda_stream__`` (cuda.core), PyTorch's ``torch.cuda.Stream``
        (``.cuda_stream``), CuPy's ``Stream`` (``.ptr``), Numba's
        (``.handle``), or a device ``Ds.AccessOrder``. ``None`` or 0 is the
        legacy default stream, 2 the per-thread one. Any other int handle
        must be a live stream, as PyTorch and CuPy document theirs: it is
        a pointer the CUDA driver dereferences, and a handle of a
        destroyed stream or of memory that is no stream cannot be told
        apart from a live one. ``device`` -1 takes the stream object's
        device if it says, else the stream's own."""
        handle, stream_device = _stream_handle(stream)
        if device == -1:
            device = stream_device
        return _order_for_handle(handle, device)

    @classmethod
    def new_for_handle(cls, stream_handle: int, device: int) -> AccessOrder:
        """The order of a stream given as an int handle, which must be a
        live stream (see ``from_stream``)."""
        return _order_for_handle(operator.index(stream_handle), device)

    def __eq__(self, other) -> bool:
        """Whether both are the same order (``equal()``)."""
        if not isinstance(other, Ds.AccessOrder):
            return NotImplemented
        return self.equal(other)

    def __ne__(self, other) -> bool:
        """Whether the orders differ (``not equal()``)."""
        if not isinstance(other, Ds.AccessOrder):
            return NotImplemented
        return not self.equal(other)

    def __hash__(self) -> int:
        """Equal orders hash alike: by kind, stream handle and device."""
        if self.is_device():
            return hash(('stream', self.get_stream_handle(), self.get_device()))
        return hash(('host' if self.is_host() else 'unset',))

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


def _raised_at(exc):
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


_calls = threading.local()


class _Dispatch:
    """Calls the implementation of @name for @self's type, as C calls it
    (see _implementation ()); a call made from inside that one (a
    subclass calling its parent's method) runs the parent's @func."""

    __slots__ = ('key', 'active')

    def __init__(self, self_, name):
        self.key = (id(self_), name)
        active = getattr(_calls, 'active', None)
        if active is None:
            active = _calls.active = {}
        self.active = active

    def pick(self, self_, name, func):
        if self.active.get(self.key):
            return func
        return _implementation(self_, name)

    def __enter__(self):
        self.active[self.key] = self.active.get(self.key, 0) + 1
        return self

    def __exit__(self, *exc):
        n = self.active[self.key] - 1
        if n:
            self.active[self.key] = n
        else:
            del self.active[self.key]
        return False


def _call_vfunc(self, name, func, *args):
    dispatch = _Dispatch(self, name)
    impl = dispatch.pick(self, name, func)
    with dispatch:
        return impl(self, *args)


def _in_entry_point():
    """Whether a call the override made (Scratchpad.alloc, release, ...) is
    on this thread's stack: it raises what the resource raised."""
    frame = sys._getframe(2)
    while frame is not None:
        if frame.f_code in _ENTRY_POINTS:
            return True
        frame = frame.f_back
    return False


def _note(vfunc, exc, message):
    """Keeps what a resource's @vfunc raised for the entry point that
    called it; without one, a KeyboardInterrupt and the like is reported
    as unraisable (as Python does for __del__)."""
    if _in_entry_point():
        _pending[_get_ident()] = (vfunc, exc, message)
    elif not isinstance(exc, Exception):
        sys.unraisablehook(_Unraisable(exc, message))


class _Unraisable:
    """What sys.unraisablehook takes (its type is not importable)."""

    def __init__(self, exc, message):
        self.exc_type = type(exc)
        self.exc_value = exc
        self.exc_traceback = exc.__traceback__
        self.err_msg = 'Exception ignored in a Ds.MemoryResource: %s' % message
        self.object = None


def _wrap_get_kind(func):
    def do_get_kind(self):
        try:
            kind = _call_vfunc(self, 'do_get_kind', func)
            if type(kind) is not _MemoryKind:
                value = operator.index(kind)
                if not 0 <= value < len(_KINDS):
                    raise ValueError('%d is not a Ds.MemoryKind' % value)
                kind = _KINDS[value]
        except BaseException as e:
            message = ('%s.do_get_kind raised %s: %s%s; a resource that cannot say its '
                       'kind is not used' % (type(self).__qualname__, type(e).__name__, e,
                                             _raised_at(e)))
            self.__dict__['_ds_no_kind'] = message
            _note('do_get_kind', e, message)
            # PyGObject wants a kind; do_allocate refuses while this stands.
            return HOST
        self.__dict__.pop('_ds_no_kind', None)
        return kind
    return _wrapped(do_get_kind, func)


def _wrapped(wrapper, func):
    wrapper.__name__ = func.__name__
    wrapper.__qualname__ = func.__qualname__
    wrapper.__doc__ = func.__doc__
    wrapper.__wrapped__ = func
    return wrapper


# (id of the resource, address) -> the object that owns the memory a
# Python resource's do_allocate handed over, kept until do_deallocate.
_owners = {}


def _owned_memory(resource, name, owner, size, alignment):
    """The address of @size bytes aligned to @alignment inside the memory
    @owner owns (the buffer protocol, the CUDA array interface or DLPack),
    and what to keep alive with it."""
    where = '%s.%s' % (type(resource).__qualname__, name)
    try:
        kind = _implementation(resource, 'do_get_kind')(resource)
    except BaseException:
        kind = HOST
    keep = owner
    try:
        memory = _gi_ds.buffer_memory(owner)
    except BufferError as e:
        raise _error(Ds.Error.INVALID_ARGUMENT, '%s returned %s, whose buffer is not '
                     'writable and C-contiguous: %s' % (where, type(owner).__name__, e)) \
            from None
    cai = getattr(owner, '__cuda_array_interface__', None) if memory is None else None
    if memory is not None:
        if kind == DEVICE:
            raise _error(Ds.Error.INVALID_ARGUMENT,
                         '%s returned CPU memory (%s) for device memory'
                         % (where, type(owner).__name__))
        base, nbytes = memory
    elif cai is not None:
        if kind == HOST:
            raise _error(Ds.Error.INVALID_ARGUMENT,
                         '%s returned GPU memory (__cuda_array_interface__) for host memory'
                         % where)
        base, read_only = cai['data']
        if read_only or cai.get('strides') is not None:
            raise _error(Ds.Error.INVALID_ARGUMENT,
                         '%s returned read-only or strided GPU memory' % where)
        nbytes = int(cai['typestr'][2:])
        for n in cai['shape']:
            nbytes *= n
    elif hasattr(owner, '__dlpack__'):
        capsule = owner.__dlpack__()
        base, nbytes, device_type, _ = _gi_ds.dlpack_memory(capsule)
        cpu = device_type in (_gi_ds.kDLCPU, _gi_ds.kDLCUDAHost)
        if (kind == HOST and not cpu) or (kind == DEVICE and cpu):
            raise _error(Ds.Error.INVALID_ARGUMENT,
                         '%s returned DLPack memory of device type %d for %s memory'
                         % (where, device_type, kind.value_nick))
        keep = (owner, capsule)
    else:
        raise _error(Ds.Error.INVALID_ARGUMENT,
                     '%s returned %r (%s): return an object that owns the memory (the '
                     'buffer protocol, __cuda_array_interface__ or DLPack), or an int '
                     'address; raise an exception for a failure'
                     % (where, owner, type(owner).__name__))
    a = alignment or 16
    address = (base + a - 1) & ~(a - 1)
    if base == 0 or address + size > base + nbytes:
        raise _error(Ds.Error.OUT_OF_MEMORY,
                     '%s returned %d bytes at 0x%x: %d bytes aligned to %d do not fit in them '
                     '(return %d bytes or more)' % (where, nbytes, base, size, a, size + a - 1))
    return address, keep


def _wrap_allocate(name, func):
    def do_allocate(self, size, alignment, *args):
        no_kind = self.__dict__.get('_ds_no_kind')
        if no_kind is not None:
            raise _error(Ds.Error.INVALID_ARGUMENT, no_kind)
        try:
            address = _call_vfunc(self, name, func, size, alignment, *args)
        except _GError as e:
            raise _typed(e)
        except BaseException as e:
            message = '%s.%s raised %s: %s%s' % (type(self).__qualname__, name,
                                                 type(e).__name__, e, _raised_at(e))
            _note(name, e, message)
            raise _error(Ds.Error.OUT_OF_MEMORY, message) from None
        if type(address) is not int:
            if isinstance(address, (bool, float)) or not hasattr(type(address), '__index__') or \
                    getattr(address, 'shape', ()) != ():      # an array, not a number
                address, keep = _owned_memory(self, name, address, size, alignment)
                _owners[(id(self), address)] = keep
                return address
            address = operator.index(address)
        # A raw int: trusted to be memory the resource owns (README).
        if not 0 < address <= _GSIZE_MAX:
            raise _error(Ds.Error.INVALID_ARGUMENT,
                         '%s.%s returned %d, not an address (an int > 0); raise '
                         'an exception for a failure' % (type(self).__qualname__, name, address))
        if alignment and address % alignment:
            raise _error(Ds.Error.INVALID_ARGUMENT,
                         '%s.%s returned 0x%x, which is not aligned to %d'
                         % (type(self).__qualname__, name, address, alignment))
        return address
    return _wrapped(do_allocate, func)


def _wrap_deallocate(name, func):
    def do_deallocate(self, ptr, size, alignment, *args):
        try:
            _call_vfunc(self, name, func, ptr, size, alignment, *args)
        except Exception as e:
            w = LeakWarning('%s.%s raised %s: %s%s; the %d bytes at 0x%x were not '
                            'given back (leaked)' % (type(self).__qualname__, name,
                                                     type(e).__name__, e, _raised_at(e),
                                                     size, ptr))
            w.__cause__ = e
            # Pointed at the line that raised; every leak is reported.
            tb = traceback.extract_tb(e.__traceback__)
            frame = tb[-1] if tb else None
            warnings.warn_explicit(w, LeakWarning, frame.filename if frame else '<ds>',
                                   frame.lineno if frame else 0)
        except BaseException as e:
            _note(name, e, '%s.%s raised %s; the %d bytes at 0x%x were not given back '
                  '(leaked)' % (type(self).__qualname__, name, type(e).__name__, size, ptr))
        finally:
            # ds is done with the memory: its owner may go.
            _owners.pop((id(self), ptr), None)
    return _wrapped(do_deallocate, func)


_SIGNATURES = {
    'do_get_kind': 'do_get_kind(self)',
    'do_allocate': 'do_allocate(self, size, alignment)',
    'do_deallocate': 'do_deallocate(self, ptr, size, alignment)',
    'do_allocate_async': 'do_allocate_async(self, size, alignment, order)',
    'do_deallocate_async': 'do_deallocate_async(self, ptr, size, alignment, order)',
}


def _check_resource_class(cls):
    """Refuses a resource class a scratchpad could not use: C would call a
    method it does not have. PyGObject hooks up the do_* methods of the
    class body and those it inherits from other resource classes, not those
    of a plain mixin."""
    def defines(name):
        for klass in cls.__mro__:
            if klass.__module__.startswith('gi.') or not issubclass(klass, Ds.MemoryResource):
                continue
            if klass.__dict__.get(name) is not None:
                return True
        return False
    missing = [name for name in ('do_get_kind', 'do_allocate', 'do_deallocate')
               if not defines(name)]
    if defines('do_allocate_async') != defines('do_deallocate_async'):
        missing.append('do_deallocate_async' if defines('do_allocate_async')
                       else 'do_allocate_async')
    if missing:
        raise TypeError(
            'Ds.MemoryResource class %s must define %s: a scratchpad calls %s. (PyGObject '
            'does not see the do_* methods of a class that is not a Ds.MemoryResource: '
            'name a mixin\'s in the class body, as in do_deallocate = Mixin.do_deallocate.)'
            % (cls.__qualname__, ', '.join(_SIGNATURES[n] for n in missing),
               'them' if len(missing) > 1 else 'it'))


# (id of the resource, address) -> (resource, size, alignment) of what
# allocate() handed to Python and deallocate() has not taken back.
_handed_out = {}


def _handed_back(resource, ptr, size, alignment):
    ptr, size, alignment = (_count(ptr, 'ptr'), _count(size, 'size'),
                            _count(alignment, 'alignment'))
    key = (id(resource), ptr)
    entry = _handed_out.get(key)
    if entry is None:
        raise _error(Ds.Error.INVALID_ARGUMENT,
                     '0x%x was not handed out by allocate() of this %s, or was given back '
                     'already; nothing was deallocated' % (ptr, type(resource).__name__))
    if (entry[1], entry[2] or 16) != (size, alignment or 16):
        raise _error(Ds.Error.INVALID_ARGUMENT,
                     '0x%x was allocated with size %d and alignment %d, not %d and %d; '
                     'nothing was deallocated' % (ptr, entry[1], entry[2], size, alignment))
    del _handed_out[key]
    return ptr, size, alignment


@override
class MemoryResource(Ds.MemoryResource):
    """An upstream allocator of one memory kind.

    A Python class implements it with ``do_get_kind()``,
    ``do_allocate(size, alignment)`` (return the address as an int; raise
    ``GLib.Error`` or any exception on failure) and ``do_deallocate(ptr,
    size, alignment)`` (and, for a stream-ordered resource, both
    ``do_allocate_async`` and ``do_deallocate_async``); a class without
    them is refused with ``TypeError`` when it is defined. An exception
    from ``do_allocate`` becomes a ``GLib.Error`` that names it (and is
    chained as its ``__cause__`` by ``Scratchpad.alloc()``); a
    ``KeyboardInterrupt`` or ``SystemExit`` goes on out of the call that
    made the allocation; if ``do_get_kind`` raises, allocations from the
    resource fail; one from ``do_deallocate`` is reported as a
    ``Ds.LeakWarning``, since there is no caller to raise it to.

    Called from Python, ``deallocate()`` takes back only what
    ``allocate()`` of the same resource handed out, once, with its size and
    alignment; anything else is ``GLib.Error`` ``INVALID_ARGUMENT``.
    """

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if cls.__module__.startswith('gi.'):
            return      # an introspected resource (Ds.PoolResource, ...)
        _check_resource_class(cls)
        func = cls.__dict__.get('do_get_kind')
        if callable(func) and not hasattr(func, '__wrapped__'):
            setattr(cls, 'do_get_kind', _wrap_get_kind(func))
        for name in ('do_allocate', 'do_allocate_async'):
            func = cls.__dict__.get(name)
            if callable(func) and not hasattr(func, '__wrapped__'):
                setattr(cls, name, _wrap_allocate(name, func))
        for name in ('do_deallocate', 'do_deallocate_async'):
            func = cls.__dict__.get(name)
            if callable(func) and not hasattr(func, '__wrapped__'):
                setattr(cls, name, _wrap_deallocate(name, func))

    @staticmethod
    def get_default(kind: MemoryKind, device: int) -> MemoryResource:
        """The default resource of ``kind`` for ``device`` (-1: the current
        one); an unknown kind is ``GLib.Error`` ``INVALID_ARGUMENT``."""
        try:
            return _get_default(_kind(kind), device)
        except _GError as e:
            raise _failed(e)

    def allocate(self, size: int, alignment: int) -> int:
        """``size`` bytes aligned to ``alignment`` (a power of two, 0 for 16)
        from this resource, as an address; give them back with
        ``deallocate()``."""
        size, alignment = _count(size, 'size'), _count(alignment, 'alignment')
        try:
            address = _resource_allocate(self, size, alignment)
        except _GError as e:
            raise _failed(e)
        if _pending:
            _raise_pending()
        _handed_out[(id(self), address)] = (self, size, alignment)
        return address

    def allocate_async(self, size: int, alignment: int, order: AccessOrder) -> int:
        """Like ``allocate()``, in ``order`` (stream-ordered resources)."""
        size, alignment = _count(size, 'size'), _count(alignment, 'alignment')
        try:
            address = _resource_allocate_async(self, size, alignment, order)
        except _GError as e:
            raise _failed(e)
        if _pending:
            _raise_pending()
        _handed_out[(id(self), address)] = (self, size, alignment)
        return address

    def deallocate(self, ptr: int, size: int, alignment: int) -> None:
        """Gives back what ``allocate()`` handed out, with its size and
        alignment; anything else is refused (``GLib.Error``
        ``INVALID_ARGUMENT``) and nothing is freed."""
        _resource_deallocate(self, *_handed_back(self, ptr, size, alignment))
        if _pending:
            _raise_pending()

    def deallocate_async(self, ptr: int, size: int, alignment: int,
                         order: AccessOrder) -> bool:
        """Like ``deallocate()``, in ``order``. If waiting for ``order``
        fails (a broken device), the memory is not given back and
        ``GLib.Error`` is raised."""
        ptr, size, alignment = _handed_back(self, ptr, size, alignment)
        try:
            done = _resource_deallocate_async(self, ptr, size, alignment, order)
        except _GError as e:
            _handed_out[(id(self), ptr)] = (self, size, alignment)
            raise _failed(e)
        if _pending:
            _raise_pending()
        return done


MemoryResource = override(MemoryResource)
__all__.append('MemoryResource')


# --- Ds.KernelContext ------------------------------------------------------------------

@override
class KernelContext(Ds.KernelContext):
    """The order a piece of work runs on and an optional scratchpad."""

    def run(self, func, user_data=None) -> bool:
        """Runs ``func(context, user_data)`` with a scratchpad (a new one,
        released when it returns, if the context has none). What ``func``
        raises goes on out of ``run()``, as it was."""
        raised = []

        def call(context, data):
            try:
                return func(context, data)
            except BaseException as e:
                raised.append(e)
                if isinstance(e, _GError):
                    raise
                raise _error(Ds.Error.INVALID_ARGUMENT, '%s: %s' % (type(e).__name__, e)) \
                    from None
        try:
            ok = _kernel_context_run(self, call, user_data)
        except _GError as e:
            if raised:
                raised[0].__suppress_context__ = True
                raise raised[0]
            raise _failed(e)
        if _pending:
            _raise_pending()
        return ok


KernelContext = override(KernelContext)
__all__.append('KernelContext')


# The calls under which what a Python resource raises is raised again.
_ENTRY_POINTS = frozenset(f.__code__ for f in (
    Scratchpad._release, Scratchpad.alloc, Scratchpad.to_device,
    Scratchpad.to_contiguous_device, MemoryResource.allocate, MemoryResource.allocate_async,
    MemoryResource.deallocate, MemoryResource.deallocate_async, KernelContext.run))


# --- typed errors from every call that can fail ---------------------------------------
#
# The methods the override does not write itself raise the class of their
# error's code too (InvalidArgumentError, ...), as those it writes do.

def _typing_errors(func, name):
    def call(*args, **kwargs):
        try:
            return func(*args, **kwargs)
        except _GError as e:
            raise _failed(e)
    call.__name__ = call.__qualname__ = name
    call.__doc__ = getattr(func, '__doc__', None)
    call.__wrapped__ = func
    return call


def _type_errors():
    overridden = {'Block': Block, 'Scratchpad': Scratchpad, 'AccessOrder': AccessOrder,
                  'MemoryResource': MemoryResource, 'KernelContext': KernelContext}
    for info in gi.Repository.get_default().get_infos('Ds'):
        get_methods = getattr(info, 'get_methods', None)
        if get_methods is None:
            continue
        cls = getattr(Ds, info.get_name(), None)
        override_cls = overridden.get(info.get_name())
        if cls is None:
            continue
        for method in get_methods():
            name = method.get_name()
            if not method.can_throw_gerror() or name not in vars(cls):
                continue
            if override_cls is not None and name in vars(override_cls):
                continue
            func = getattr(cls, name)
            wrapper = _typing_errors(func, name)
            setattr(cls, name, wrapper if method.is_method() else staticmethod(wrapper))
    for name in dir(Ds):
        info = getattr(Ds, name, None)
        if callable(info) and hasattr(info, 'can_throw_gerror') and info.can_throw_gerror():
            setattr(Ds, name, _typing_errors(info, name))


_type_errors()


# --- what Python must not reach ----------------------------------------------------
#
# Dropping a boxed reference a wrapper still owns (unref, free) frees memory
# twice; an export made by hand pins a scratchpad with nothing to drop it;
# Ds.ScratchpadIface.alloc hands out a raw address with no export; the
# private fields of Ds.AccessOrder are writable through GI (a garbage
# stream). The override reaches exports through _gi_ds.

def _hide(cls, names):
    introspected = next(k for k in cls.__mro__ if k.__module__ == 'gi.repository.Ds')
    for name in names:
        if name in vars(introspected):
            delattr(introspected, name)


_hide(Block, ('ref', 'unref', 'export'))
_hide(AccessOrder, ('free', 'type', 'device', 'stream', 'stream_id', 'context'))
_hide(KernelContext, ('ref', 'unref'))
_hide(Ds.PoolStats, ('free',))
_hide(Ds.ScratchpadIface, ('alloc',))
