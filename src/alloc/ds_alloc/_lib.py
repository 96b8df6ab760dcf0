# _lib.py: libds-alloc and libds through ctypes
#
# Copyright 2026 The ds authors
# SPDX-License-Identifier: LGPL-2.1-or-later

"""The C side of ds_alloc: libds-alloc (and the libds it loads), reached
through ctypes, so that neither PyGObject nor a compiler is needed.
Nothing is loaded before the first call that needs it."""

import contextlib
import ctypes
import threading

__all__ = ["DsAllocError", "Pool", "default_pool", "allocate", "deallocate",
           "add_reader", "live_blocks", "peak_bytes", "reset_peak_bytes", "using_pool",
           "set_process_pool", "trim_defaults", "library_path"]

SONAME = "libds-alloc-1.0.so.1"
ALIGNMENT = 256
_MEMORY_KIND_DEVICE = 2
_ERROR_NAMES = ("INVALID_ARGUMENT", "NOT_SUPPORTED", "NO_DEVICE", "OUT_OF_MEMORY",
                "CUDA", "DISPOSED", "BUSY")


class DsAllocError(RuntimeError):
    """A failure in ds or in the loading of libds-alloc.

    ``code`` is the name of the DsError code (``"NO_DEVICE"``,
    ``"OUT_OF_MEMORY"``, ``"INVALID_ARGUMENT"``, ``"CUDA"``, ...), or
    ``"NOT_FOUND"`` when libds-alloc cannot be loaded.
    """

    def __init__(self, message, code=None):
        super().__init__(message)
        self.code = code


class _GError(ctypes.Structure):
    _fields_ = [("domain", ctypes.c_uint32), ("code", ctypes.c_int),
                ("message", ctypes.c_char_p)]


_STAT_NAMES = ("upstream_allocations", "upstream_deallocations", "cache_hits",
               "cache_misses", "events_recorded", "events_created", "event_queries",
               "stream_waits", "event_waits", "bytes_held", "bytes_cached",
               "bytes_in_use", "peak_bytes_in_use", "n_cached_blocks", "bytes_pending",
               "refused_deallocations", "idle_releases")


class _PoolStats(ctypes.Structure):
    _fields_ = [(n, ctypes.c_uint64) for n in _STAT_NAMES] + \
               [("_ds_reserved", ctypes.c_uint64 * 5)]


_ERR = ctypes.POINTER(ctypes.POINTER(_GError))
_P = ctypes.c_void_p

_PROTOTYPES = {
    # libds-alloc
    "ds_alloc_allocate": (_P, [_P, ctypes.c_size_t, ctypes.c_int, _P, _ERR]),
    "ds_alloc_deallocate": (ctypes.c_int, [_P, _ERR]),
    "ds_alloc_add_reader": (ctypes.c_int, [_P, ctypes.c_int, _P, _ERR]),
    "ds_alloc_push_resource": (ctypes.c_int, [_P, _ERR]),
    "ds_alloc_pop_resource": (None, []),
    "ds_alloc_set_resource": (ctypes.c_int, [ctypes.c_int, _P, _ERR]),
    "ds_alloc_get_n_blocks": (ctypes.c_uint, []),
    "ds_alloc_get_bytes": (ctypes.c_uint64, []),
    "ds_alloc_get_peak_bytes": (ctypes.c_uint64, []),
    "ds_alloc_reset_peak_bytes": (None, []),
    # libds
    "ds_error_quark": (ctypes.c_uint32, []),
    "ds_memory_resource_get_default": (_P, [ctypes.c_int, ctypes.c_int, _ERR]),
    "ds_memory_resource_trim_defaults": (ctypes.c_uint64, []),
    "ds_access_order_new_for_handle": (_P, [ctypes.c_uint64, ctypes.c_int]),
    "ds_access_order_free": (None, [_P]),
    "ds_device_memory_resource_new": (_P, [ctypes.c_int]),
    "ds_pool_resource_new": (_P, [_P]),
    "ds_pool_resource_get_type": (ctypes.c_size_t, []),
    "ds_pool_resource_get_stats": (None, [_P, ctypes.POINTER(_PoolStats)]),
    "ds_pool_resource_trim": (ctypes.c_uint64, [_P]),
    "ds_pool_resource_get_release_threshold": (ctypes.c_uint64, [_P]),
    "ds_pool_resource_set_release_threshold": (None, [_P, ctypes.c_uint64]),
    "ds_pool_resource_get_max_cached_size": (ctypes.c_uint64, [_P]),
    "ds_pool_resource_set_max_cached_size": (None, [_P, ctypes.c_uint64]),
    "ds_pool_resource_get_idle_timeout": (ctypes.c_uint, [_P]),
    "ds_pool_resource_set_idle_timeout": (None, [_P, ctypes.c_uint]),
    # GLib and GObject, which libds loads
    "g_error_free": (None, [ctypes.POINTER(_GError)]),
    "g_object_ref": (_P, [_P]),
    "g_object_unref": (None, [_P]),
    "g_type_check_instance_is_a": (ctypes.c_int, [_P, ctypes.c_size_t]),
}

_load_lock = threading.Lock()
_lib = None
_lib_path = None


def _candidates():
    try:
        from . import _config
        yield _config.LIBRARY
    except ImportError:
        pass
    yield SONAME


def _load():
    global _lib, _lib_path
    with _load_lock:
        if _lib is not None:
            return _lib
        tried = []
        for path in _candidates():
            try:
                lib = ctypes.CDLL(path)
            except OSError as e:
                tried.append("%s (%s)" % (path, e))
                continue
            for name, (restype, argtypes) in _PROTOTYPES.items():
                fn = getattr(lib, name)
                fn.restype = restype
                fn.argtypes = argtypes
            _lib, _lib_path = lib, path
            return lib
        raise DsAllocError("libds-alloc cannot be loaded; tried: " + "; ".join(tried) +
                           ". Install ds, or put the folder of " + SONAME +
                           " in LD_LIBRARY_PATH", "NOT_FOUND")


def library_path():
    """The file name libds-alloc was loaded from (what
    ``CUDAPluggableAllocator`` takes)."""
    _load()
    return _lib_path


def _call(fn, *args):
    err = ctypes.POINTER(_GError)()
    result = fn(*args, ctypes.byref(err))
    if err:
        e = err.contents
        message = e.message.decode("utf-8", "replace")
        code = e.code
        ds_domain = e.domain == _lib.ds_error_quark()
        _lib.g_error_free(err)
        name = _ERROR_NAMES[code] if ds_domain and 0 <= code < len(_ERROR_NAMES) else None
        raise DsAllocError(message, name)
    return result


def _handle(value, name):
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    for attr in ("ptr", "cuda_stream", "handle"):
        v = getattr(value, attr, None)
        if isinstance(v, int):
            return v
    raise TypeError("%s must be an int handle or an object with .ptr, .cuda_stream or "
                    ".handle, not %s" % (name, type(value).__name__))


def _stream(value):
    """A stream handle as an int. It must be a live stream, as in every CUDA
    binding (the driver dereferences it); one that the driver refuses is a
    ValueError."""
    handle = _handle(value, "stream")
    if handle is None:
        return None
    if handle < 0 or handle >= 1 << 64:
        raise ValueError("stream handle %r is out of range" % (handle,))
    if handle > 2:
        lib = _load()
        order = lib.ds_access_order_new_for_handle(handle, -1)
        if not order:
            raise ValueError("0x%x is not the handle of a CUDA stream" % handle)
        lib.ds_access_order_free(order)
    return handle


class Pool:
    """A ds pool of device memory (a ``DsPoolResource`` over the raw device
    resource), for a budget of its own. Its properties are the pool's:

    - ``release_threshold``: bytes it may hold without giving any back on
      its own;
    - ``max_cached_size``: bytes it may cache at most;
    - ``idle_timeout``: milliseconds a cached block must go unused before
      the pool may give it back (above the threshold).

    ``Pool.default(device)`` is ds's default device pool, shared with every
    ds user of the process.
    """

    def __init__(self, device=0, *, release_threshold=None, max_cached_size=None,
                 idle_timeout=None, _pointer=None):
        lib = _load()
        if _pointer is None:
            if not isinstance(device, int) or device < 0:
                raise ValueError("device must be a CUDA device index (>= 0), not %r" % (device,))
            raw = lib.ds_device_memory_resource_new(device)
            _pointer = lib.ds_pool_resource_new(raw)
            lib.g_object_unref(raw)
        self._pointer = _pointer
        self.device = device
        if release_threshold is not None:
            self.release_threshold = release_threshold
        if max_cached_size is not None:
            self.max_cached_size = max_cached_size
        if idle_timeout is not None:
            self.idle_timeout = idle_timeout

    @classmethod
    def default(cls, device=0):
        """ds's default device pool of ``device``: raises DsAllocError
        (``NO_DEVICE``) without a driver or device."""
        lib = _load()
        pointer = _call(lib.ds_memory_resource_get_default, _MEMORY_KIND_DEVICE, device)
        if not lib.g_type_check_instance_is_a(pointer, lib.ds_pool_resource_get_type()):
            raise DsAllocError("the default device resource of device %d is not a "
                               "DsPoolResource" % device, "NOT_SUPPORTED")
        return cls(device, _pointer=lib.g_object_ref(pointer))

    @property
    def _as_parameter_(self):
        return ctypes.c_void_p(self._pointer)

    def __del__(self):
        pointer, self._pointer = getattr(self, "_pointer", None), None
        if pointer and _lib is not None:
            _lib.g_object_unref(pointer)

    def _get(self, name):
        return getattr(_lib, "ds_pool_resource_get_" + name)(self)

    def _set(self, name, value):
        if not isinstance(value, int) or value < 0:
            raise ValueError("%s must be an int >= 0, not %r" % (name, value))
        getattr(_lib, "ds_pool_resource_set_" + name)(self, value)

    release_threshold = property(lambda self: self._get("release_threshold"),
                                 lambda self, v: self._set("release_threshold", v))
    max_cached_size = property(lambda self: self._get("max_cached_size"),
                               lambda self, v: self._set("max_cached_size", v))
    idle_timeout = property(lambda self: self._get("idle_timeout"),
                            lambda self, v: self._set("idle_timeout", v))

    def stats(self):
        """The pool's statistics (``DsPoolStats``) as a dict: ``bytes_held``,
        ``bytes_in_use``, ``peak_bytes_in_use``, ``bytes_cached``,
        ``bytes_pending``, the counts of upstream calls and events, ..."""
        s = _PoolStats()
        _lib.ds_pool_resource_get_stats(self, ctypes.byref(s))
        return {n: getattr(s, n) for n in _STAT_NAMES}

    def trim(self):
        """Gives every cached block that no stream work uses any more back
        upstream; returns the bytes given back."""
        return _lib.ds_pool_resource_trim(self)


def trim_defaults():
    """Gives the cached memory of ds's default pools back upstream (what
    ``Pool.trim()`` does for one pool); returns the bytes given back."""
    return _load().ds_memory_resource_trim_defaults()


def default_pool(device=0):
    """Same as ``Pool.default(device)``."""
    return Pool.default(device)


def allocate(size, stream=None, device=-1, pool=None):
    """Takes ``size`` bytes of device memory usable by work on ``stream``
    (a ``cudaStream_t`` as an int, or an object with ``.ptr`` or
    ``.cuda_stream``; None: the legacy default stream) from ``pool`` (None:
    the pool pushed on this thread, else the one set for the device, else
    ds's default). Returns the address as an int."""
    if not isinstance(size, int) or size < 0:
        raise ValueError("size must be an int >= 0, not %r" % (size,))
    if not isinstance(device, int) or device < -1:
        raise ValueError("device must be -1 or a device index, not %r" % (device,))
    lib = _load()
    return _call(lib.ds_alloc_allocate, pool, size, device, _stream(stream))


def deallocate(ptr):
    """Gives a block from allocate() back in the order of the stream it
    was taken on, after its readers."""
    lib = _load()
    _call(lib.ds_alloc_deallocate, _handle(ptr, "ptr"))


def add_reader(ptr, stream, device=-1):
    """Registers ``stream`` as a reader of the block that holds ``ptr``:
    the block goes back only after the work queued on ``stream`` so far.
    Call it after queuing the reads."""
    if not isinstance(device, int) or device < -1:
        raise ValueError("device must be -1 or a device index, not %r" % (device,))
    lib = _load()
    _call(lib.ds_alloc_add_reader, _handle(ptr, "ptr"), device, _stream(stream))


def live_blocks():
    """(blocks, bytes) handed out by libds-alloc and not given back yet."""
    lib = _load()
    return lib.ds_alloc_get_n_blocks(), lib.ds_alloc_get_bytes()


def peak_bytes():
    """The peak of the bytes handed out by libds-alloc and not given back
    (what a framework had in use from ds), since the process started or
    the last reset_peak_bytes()."""
    return _load().ds_alloc_get_peak_bytes()


def reset_peak_bytes():
    """Starts peak_bytes() again from the bytes in use now."""
    _load().ds_alloc_reset_peak_bytes()


@contextlib.contextmanager
def using_pool(pool):
    """Within the block, requests of this thread that name no pool
    (PyTorch's through ds_torch_alloc) come from ``pool`` (None: ds's
    default device pool)."""
    lib = _load()
    _call(lib.ds_alloc_push_resource, pool)
    try:
        yield pool
    finally:
        lib.ds_alloc_pop_resource()


def set_process_pool(device, pool):
    """Makes ``pool`` serve the requests for ``device`` that name none, on
    threads that pushed none (the whole-process form)."""
    lib = _load()
    _call(lib.ds_alloc_set_resource, device, pool)
