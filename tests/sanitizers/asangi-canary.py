#!/usr/bin/python3
# asangi-canary.py: a deliberate use after free inside libds, from Python
#
# Copyright 2026 The ds authors
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The test asangi-canary (suite asangi, GCC ASan builds with introspection)
# runs this through expect-report.py under the asangi setup and passes only
# when AddressSanitizer reports a heap-use-after-free in
# ds_access_order_is_host: proof that the python of the gi tests has the
# sanitizer runtime preloaded, that the libds it loads through
# GObject-Introspection is the instrumented one, and that a report fails
# the process. No binding can reach freed memory this way (that is what
# the gi tests check); ctypes is used to make it happen on purpose.

import ctypes

import gi

gi.require_version('Ds', '1.0')
from gi.repository import Ds  # noqa: E402

# Loads libds the way every gi test does.
Ds.AccessOrder.new_host()

libds = ctypes.CDLL('libds-1.0.so.1')    # the copy GI loaded
libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
libc.malloc.argtypes = [ctypes.c_size_t]
libc.free.argtypes = [ctypes.c_void_p]
libds.ds_access_order_init_host.argtypes = [ctypes.c_void_p]
libds.ds_access_order_is_host.argtypes = [ctypes.c_void_p]

order = libc.malloc(256)                  # larger than a DsAccessOrder
libds.ds_access_order_init_host(order)
libc.free(order)
print('is_host after free:', libds.ds_access_order_is_host(order))
