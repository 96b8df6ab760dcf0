#!/usr/bin/env python3
# check-needed.py: no CUDA library in what a shared object needs or exports
#
# Copyright 2026 The ds authors
# SPDX-License-Identifier: LGPL-2.1-or-later
"""check-needed.py FILE...

For each ELF shared object (libds, libds-gst, the example plugin), reads
its dynamic section and symbol table (a small ELF64 reader: no readelf
needed) and fails when

  - a NEEDED entry names the CUDA runtime (libcudart.so.N) or the driver
    (libcuda.so.N): ds links the static runtime, which opens the driver
    itself, so that it loads on any machine and uses whatever driver is
    there (NVIDIA's default for nvcc, and how gst-plugins-bad's CUDA
    library loads libcuda);
  - it exports a symbol of the CUDA runtime (cuda*, __cuda*, __cudart*):
    the static runtime must stay inside the library that links it, or it
    would stand in for an application's own runtime.

Prints the NEEDED entries of each file.
"""

import re
import struct
import sys

FORBIDDEN_NEEDED = re.compile(r"^libcuda(rt)?\.so(\.|$)")
FORBIDDEN_EXPORT = re.compile(r"^(cuda|__cuda|__cudart)")

SHT_DYNSYM = 11
SHT_DYNAMIC = 6
DT_NULL, DT_NEEDED = 0, 1
STB_GLOBAL, STB_WEAK = 1, 2
STV_DEFAULT, STV_PROTECTED = 0, 3
SHN_UNDEF = 0


def read_elf(path):
    """Returns (needed, exported) of the ELF64 little-endian file PATH."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise ValueError("%s: not a 64-bit little-endian ELF file" % path)
    (e_shoff,) = struct.unpack_from("<Q", data, 0x28)
    e_shentsize, e_shnum = struct.unpack_from("<HH", data, 0x3A)
    sections = []
    for i in range(e_shnum):
        (name, stype, flags, addr, offset, size, link, info, align,
         entsize) = struct.unpack_from("<IIQQQQIIQQ", data, e_shoff + i * e_shentsize)
        sections.append((stype, offset, size, link, entsize))

    def string(table, index):
        _, offset, _, _, _ = sections[table]
        end = data.index(b"\0", offset + index)
        return data[offset + index:end].decode("utf-8", "replace")

    needed, exported = [], []
    for stype, offset, size, link, entsize in sections:
        if stype == SHT_DYNAMIC:
            for pos in range(offset, offset + size, entsize or 16):
                tag, val = struct.unpack_from("<qQ", data, pos)
                if tag == DT_NULL:
                    break
                if tag == DT_NEEDED:
                    needed.append(string(link, val))
        elif stype == SHT_DYNSYM:
            for pos in range(offset + (entsize or 24), offset + size, entsize or 24):
                st_name, st_info, st_other, st_shndx = struct.unpack_from("<IBBH", data, pos)
                bind, vis = st_info >> 4, st_other & 3
                if (st_shndx != SHN_UNDEF and bind in (STB_GLOBAL, STB_WEAK)
                        and vis in (STV_DEFAULT, STV_PROTECTED)):
                    exported.append(string(link, st_name))
    return needed, exported


def main(argv):
    if len(argv) < 2:
        print(__doc__)
        return 2
    failures = []
    for path in argv[1:]:
        needed, exported = read_elf(path)
        print("%s: NEEDED %s; %d symbols exported" % (path, ", ".join(needed), len(exported)))
        for lib in needed:
            if FORBIDDEN_NEEDED.match(lib):
                failures.append("%s needs %s" % (path, lib))
        leaked = sorted(s for s in exported if FORBIDDEN_EXPORT.match(s))
        if leaked:
            failures.append("%s exports %d CUDA runtime symbols (%s%s)"
                            % (path, len(leaked), ", ".join(leaked[:5]),
                               ", ..." if len(leaked) > 5 else ""))
    for f in failures:
        print("FAIL: " + f)
    if not failures:
        print("OK: no CUDA library needed, no CUDA runtime symbol exported")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
