#!/usr/bin/env python3
# run-snippets.py: every Python and gjs snippet of the docs, run as written
#
# Copyright 2026 The ds authors
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Runs every ```python and ```js block of the given Markdown files, each as
a file of its own, the way the README says: `meson devenv -C BUILDDIR` and
a python3 that has PyGObject (under -X dev), or gjs. A block that does not
import gi itself gets the page's imports first (`import gi`,
`gi.require_version('Ds', '1.0')`, `from gi.repository import Ds`; in gjs
`const {Ds} = imports.gi`). Then every `meson devenv -C build-ds -w . ...`
line of the ```sh blocks runs from the source folder, with BUILDDIR for
build-ds. The environment is cleaned of GI_TYPELIB_PATH, LD_LIBRARY_PATH
and PYTHONPATH first: only meson devenv may provide them.

One TAP line per snippet: it fails on a non-zero exit or anything on
stderr but PyGObject's own -X dev warning; one that imports a GPU library
that is not there (cupy, torch, numba, and ds_alloc, which meson devenv
does not provide) is skipped, with that reason.

    run-snippets.py --builddir BUILDDIR --srcdir SRCDIR [--meson M]
        [--python P] [--gjs G] FILE.md...
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
OPTIONAL = ('cupy', 'torch', 'numba', 'ds_alloc')
PY_PRELUDE = "import gi\ngi.require_version('Ds', '1.0')\nfrom gi.repository import Ds\n"
JS_PRELUDE = "imports.gi.versions.Ds = '1.0';\nconst {Ds} = imports.gi;\n"


def blocks(path):
    with open(path, encoding='utf-8') as f:
        text = f.read()
    for m in re.finditer(r'^```(python|js|sh)\n(.*?)^```', text, re.M | re.S):
        line = text.count('\n', 0, m.start()) + 1
        yield m.group(1), m.group(2), line


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--meson', default='meson')
    ap.add_argument('--builddir', required=True)
    ap.add_argument('--srcdir', required=True)
    ap.add_argument('--python', default='/usr/bin/python3')
    ap.add_argument('--gjs', default='')
    ap.add_argument('files', nargs='+')
    args = ap.parse_args()

    builddir = os.path.abspath(args.builddir)
    env = {k: v for k, v in os.environ.items()
           if k not in ('GI_TYPELIB_PATH', 'LD_LIBRARY_PATH', 'PYTHONPATH',
                        'MESON_DEVENV', 'MESON_PROJECT_NAME')}
    env['PYTHONDONTWRITEBYTECODE'] = '1'
    cases = []
    for path in args.files:
        name = os.path.relpath(path, args.srcdir)
        for lang, code, line in blocks(path):
            if lang == 'sh':
                for cmd in code.splitlines():
                    if cmd.startswith('meson devenv -C build-ds -w . '):
                        cases.append(('%s:%d sh' % (name, line), 'sh', cmd))
            else:
                cases.append(('%s:%d %s' % (name, line, lang), lang, code))

    print('TAP version 13')
    print('1..%d' % len(cases))
    failed = 0
    with tempfile.TemporaryDirectory(prefix='ds-snippets-') as tmp:
        for n, (title, lang, code) in enumerate(cases, 1):
            if lang == 'python':
                if not re.search(r'^import gi$', code, re.M):
                    code = PY_PRELUDE + code
                file = os.path.join(tmp, 'snippet%d.py' % n)
                cmd = [args.meson, 'devenv', '-C', builddir, '--workdir', tmp,
                       args.python, '-X', 'dev', file]
            elif lang == 'js':
                if not args.gjs:
                    print('ok %d - %s # SKIP gjs is not installed' % (n, title))
                    continue
                if 'imports.gi.versions.Ds' not in code:
                    code = JS_PRELUDE + code
                file = os.path.join(tmp, 'snippet%d.js' % n)
                cmd = [args.meson, 'devenv', '-C', builddir, '--workdir', tmp, args.gjs, file]
            else:
                words = code.split()
                words[3] = builddir                    # -C build-ds
                words[5] = args.srcdir                 # -w .
                if words[6] == 'gjs' and not args.gjs:
                    print('ok %d - %s # SKIP gjs is not installed' % (n, title))
                    continue
                file = None
                cmd = [args.meson] + words[1:]
            if file is not None:
                with open(file, 'w', encoding='utf-8') as f:
                    f.write(code)
            r = subprocess.run(cmd, env=env, capture_output=True, text=True,
                               cwd=args.srcdir, timeout=120)
            stderr = [l for l in r.stderr.splitlines() if not KNOWN_STDERR.match(l)]
            missing = re.search(r"ModuleNotFoundError: No module named '(\w+)'", r.stderr)
            if r.returncode != 0 and missing and missing.group(1) in OPTIONAL:
                print('ok %d - %s # SKIP %s is not installed' % (n, title, missing.group(1)))
                continue
            ok = r.returncode == 0 and not stderr
            print('%s %d - %s' % ('ok' if ok else 'not ok', n, title))
            for l in code.rstrip('\n').split('\n'):
                print('#   | ' + l)
            for l in r.stdout.splitlines():
                print('#   > ' + l)
            for l in stderr:
                print('#   stderr: ' + l)
            if not ok:
                print('#   exit %d' % r.returncode)
                failed += 1
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
