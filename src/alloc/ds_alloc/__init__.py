# ds_alloc: framework temporaries from ds
#
# Copyright 2026 The ds authors
# SPDX-License-Identifier: LGPL-2.1-or-later

"""PyTorch's and CuPy's device temporaries from ds's stream-ordered pools,
given back in stream order when the work is done: one memory budget for a
pipeline. ``ds_alloc.torch`` and ``ds_alloc.cupy`` hold the framework
forms; this module holds the pools and the raw calls. It needs libds-alloc
(installed with ds) and nothing else: no PyGObject, and PyTorch or CuPy
only for their own modules. Importing it loads nothing; the first call
that needs libds-alloc loads it, or raises DsAllocError (code
``NOT_FOUND``)."""

from ._lib import (DsAllocError, Pool, default_pool, allocate, deallocate, add_reader,
                   live_blocks, peak_bytes, reset_peak_bytes, using_pool, set_process_pool,
                   trim_defaults, library_path, ALIGNMENT)

__all__ = ["DsAllocError", "Pool", "default_pool", "allocate", "deallocate", "add_reader",
           "live_blocks", "peak_bytes", "reset_peak_bytes", "using_pool", "set_process_pool",
           "trim_defaults", "library_path", "ALIGNMENT"]
