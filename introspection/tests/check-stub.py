#!/usr/bin/env python3
# check-stub.py: the committed Ds.pyi is what gen-stub.py makes now
#
# Copyright 2026 The ds authors
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Usage: check-stub.py GEN-STUB.PY GIR OVERRIDE.PY STUB.PYI

Runs the generator on the GIR of this build and the override and compares
the result with the committed stub, docstrings left out (a reworded doc
comment does not make the stub wrong; a changed signature does); prints a
diff and how to regenerate when they differ."""

import difflib
import subprocess
import sys


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    gen, gir, override, stub = sys.argv[1:]
    fresh = subprocess.run([sys.executable, gen, gir, override], check=True,
                           capture_output=True, text=True).stdout
    with open(stub, encoding='utf-8') as f:
        committed = f.read()
    fresh, committed = (''.join(l for l in text.splitlines(True)
                                if not l.lstrip().startswith('"""'))
                        for text in (fresh, committed))
    if fresh == committed:
        print('OK: %s is up to date (%d lines)' % (stub, committed.count('\n')))
        return 0
    sys.stdout.writelines(difflib.unified_diff(committed.splitlines(True), fresh.splitlines(True),
                                               stub, 'generated'))
    print('FAIL: the type stub is stale; regenerate it:\n  python3 %s %s %s > %s'
          % (gen, gir, override, stub))
    return 1


if __name__ == '__main__':
    sys.exit(main())
