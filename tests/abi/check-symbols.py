#!/usr/bin/env python3
# check-symbols.py: the exported symbols of libds (and libds-recorder) must be
# exactly ds.symbols (ds-recorder.symbols)
#
# Copyright 2026 The ds authors
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Compare the dynamic symbols a ds library defines with its list (libds-1.0.so:
tests/abi/ds.symbols, libds-recorder-1.0.so: tests/abi/ds-recorder.symbols).

Fails when
  - the library exports any symbol that does not start with "ds_" (apart
    from the few the linker itself defines, listed in LINKER_SYMBOLS), or
  - the exported set differs from ds.symbols in either direction.

Adding a public function is a deliberate change: regenerate the list with
    python3 tests/abi/check-symbols.py --update \\
        --symbols tests/abi/ds.symbols BUILDDIR/src/libds-1.0.so
review the diff, bump the middle component of libversion in meson.build
(new API), and commit both. Removing or changing a symbol is an ABI break:
bump soversion (see tests/abi/README.md).
"""

import argparse
import os
import subprocess
import sys

# Where each list's library is in a build tree.
RELATIVE = {"ds.symbols": "src/libds-1.0.so",
            "ds-recorder.symbols": "src/recorder/libds-recorder-1.0.so"}

# Defined by the GNU linker in every shared object, not by us.
LINKER_SYMBOLS = {"_init", "_fini", "_edata", "_end", "__bss_start"}

HEADER = """\
# Exported symbols of {library}, one per line, sorted (LC_ALL=C).
# Checked by the abi-symbols tests (tests/abi/check-symbols.py); a
# difference fails it. Regenerate deliberately with
#   python3 tests/abi/check-symbols.py --update \\
#       --symbols tests/abi/{symbols} BUILDDIR/{path}
# and follow the soversion/libversion rules in tests/abi/README.md.
"""


def exported(nm, library):
    out = subprocess.run([nm, "-D", "--defined-only", library],
                         check=True, capture_output=True, text=True).stdout
    symbols = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) < 2:
            continue
        name, kind = parts[-1], parts[-2]
        # Strip a symbol version (name@VER / name@@VER), should one appear.
        name = name.split("@", 1)[0]
        symbols[name] = kind
    return symbols


def read_list(path):
    with open(path, encoding="utf-8") as f:
        return {line.strip() for line in f
                if line.strip() and not line.lstrip().startswith("#")}


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nm", default="nm")
    ap.add_argument("--symbols", required=True, help="the expected list")
    ap.add_argument("--update", action="store_true",
                    help="rewrite the list from the library instead of checking")
    ap.add_argument("library")
    args = ap.parse_args()

    symbols = exported(args.nm, args.library)
    ours = {n: k for n, k in symbols.items() if n not in LINKER_SYMBOLS}
    foreign = sorted(n for n in ours if not n.startswith("ds_"))
    kinds = {}
    for k in ours.values():
        kinds[k] = kinds.get(k, 0) + 1
    print("%s: %d exported symbols (%s)" % (
        args.library, len(ours),
        ", ".join("%s: %d" % kv for kv in sorted(kinds.items()))))

    if foreign:
        print("FAIL: symbols outside the ds_ namespace are exported "
              "(hide them: static, or no DS_AVAILABLE_IN_* on a private "
              "function; the library builds with -fvisibility=hidden):")
        for n in foreign:
            print("  %s %s" % (ours[n], n))
        return 1

    if args.update:
        with open(args.symbols, "w", encoding="utf-8") as f:
            f.write(HEADER.format(library=os.path.basename(args.library).split(".so")[0] + ".so",
                                  symbols=os.path.basename(args.symbols),
                                  path=RELATIVE.get(os.path.basename(args.symbols),
                                                    os.path.basename(args.library))))
            for n in sorted(ours):
                f.write(n + "\n")
        print("wrote %d symbols to %s" % (len(ours), args.symbols))
        return 0

    expected = read_list(args.symbols)
    added = sorted(set(ours) - expected)
    removed = sorted(expected - set(ours))
    if not added and not removed:
        print("OK: the exported symbols match %s (%d)" % (args.symbols, len(expected)))
        return 0

    if added:
        print("FAIL: %d symbol(s) exported but not in %s (new API?):"
              % (len(added), args.symbols))
        for n in added:
            print("  + %s %s" % (ours[n], n))
    if removed:
        print("FAIL: %d symbol(s) in %s no longer exported (an ABI break):"
              % (len(removed), args.symbols))
        for n in removed:
            print("  - %s" % n)
    print()
    print("If this change is deliberate, update the list and the version:")
    print("  python3 tests/abi/check-symbols.py --update --symbols %s %s"
          % (args.symbols, args.library))
    print("then bump libversion's middle component for added symbols, or")
    print("soversion for removed ones (tests/abi/README.md), and commit both.")
    return 1


if __name__ == "__main__":
    sys.exit(main())
