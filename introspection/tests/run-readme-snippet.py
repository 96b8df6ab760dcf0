#!/usr/bin/env python3
# run-readme-snippet.py: the README's Python snippet, verbatim, in meson devenv
#
# Copyright 2026 The ds authors
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Takes the first ```python block of README.md and runs it, unchanged, the
way the README says: `meson devenv -C BUILDDIR` and a python3 that has
PyGObject, under -X dev. The environment is cleaned of GI_TYPELIB_PATH,
LD_LIBRARY_PATH and PYTHONPATH first, so the typelib, libds and the Ds
override must all come from meson devenv (without meson.add_devenv,
`with Ds.Scratchpad()` would fail there with "does not support the context
manager protocol").

Prints the session (the snippet and what it printed) and fails on a
non-zero exit or anything on stderr but PyGObject's own -X dev warning.
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile

# PyGObject 3.42 itself triggers this under -X dev; it is not ours.
KNOWN_STDERR = re.compile(
    r"^<frozen importlib\._bootstrap>:\d+: ImportWarning: DynamicImporter\.exec_module\(\) "
    r"not found; falling back to load_module\(\)$")


def snippet(readme):
    with open(readme, encoding='utf-8') as f:
        text = f.read()
    m = re.search(r'^```python\n(.*?)^```', text, re.M | re.S)
    if not m:
        raise SystemExit('FAIL: no ```python block in ' + readme)
    return m.group(1)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--meson', default='meson')
    ap.add_argument('--builddir', required=True)
    ap.add_argument('--readme', required=True)
    ap.add_argument('--python', default='/usr/bin/python3')
    args = ap.parse_args()

    code = snippet(args.readme)
    env = {k: v for k, v in os.environ.items()
           if k not in ('GI_TYPELIB_PATH', 'LD_LIBRARY_PATH', 'PYTHONPATH',
                        'MESON_DEVENV', 'MESON_PROJECT_NAME')}
    env['PYTHONDONTWRITEBYTECODE'] = '1'
    with tempfile.TemporaryDirectory(prefix='ds-readme-') as tmp:
        path = os.path.join(tmp, 'readme_snippet.py')
        with open(path, 'w', encoding='utf-8') as f:
            f.write(code)
        cmd = [args.meson, 'devenv', '-C', os.path.abspath(args.builddir), '--workdir', tmp,
               args.python, '-X', 'dev', path]
        r = subprocess.run(cmd, env=env, capture_output=True, text=True)

    print('$ meson devenv -C %s %s -X dev readme_snippet.py' % (args.builddir, args.python))
    print('--- %s (the first ```python block, run as a file) ---' % os.path.basename(args.readme))
    for i, line in enumerate(code.rstrip('\n').split('\n'), 1):
        print('%3d  %s' % (i, line))
    print('--- what it printed ---')
    sys.stdout.write(r.stdout)
    stderr = [l for l in r.stderr.splitlines() if not KNOWN_STDERR.match(l)]
    for line in stderr:
        print('stderr: ' + line)
    if r.returncode != 0:
        print('FAIL: the README snippet exited with %d in meson devenv' % r.returncode)
        return 1
    if stderr:
        print('FAIL: the README snippet wrote to stderr')
        return 1
    print('OK: the README snippet runs in meson devenv')
    return 0


if __name__ == '__main__':
    sys.exit(main())
