#!/usr/bin/python3
# gi-consumer.py: the consumer uses ds through GI, from the subproject's build
#
# Copyright 2026 The ds authors
# SPDX-License-Identifier: LGPL-2.1-or-later

import os
import sys

import gi

gi.require_version("Ds", "1.0")
from gi.repository import Ds, GLib  # noqa: E402

root = os.path.realpath(os.environ["DS_CONSUMER_BUILD_ROOT"])
typelib = os.path.realpath(gi.Repository.get_default().get_typelib_path("Ds"))
print("Ds-1.0 typelib:", typelib)
if not typelib.startswith(root + os.sep):
    sys.exit("FAIL: Ds-1.0 was not loaded from the subproject build (%s)" % root)

pad = Ds.Scratchpad.new(None)
block = pad.alloc(Ds.MemoryKind.HOST, 64, 16)
assert block.get_size() == 64
assert block.get_kind() == Ds.MemoryKind.HOST
assert block.get_address() % 16 == 0
block.write(0, GLib.Bytes.new(b"consumer"))
assert block.read(0, 8).get_data() == b"consumer"
del block

try:
    pad.alloc(Ds.MemoryKind.DEVICE, 4096, 0)
    print("device block: allocated")
except GLib.Error as e:
    assert e.matches(Ds.error_quark(), Ds.Error.NO_DEVICE) or \
        e.matches(Ds.error_quark(), Ds.Error.NOT_SUPPORTED), e
    print("device block: not here (%s), accepted" % e.message)

pad.release()
print("Ds from Python through the subproject: ok")
