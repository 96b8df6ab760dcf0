#!/usr/bin/env python3
# overrides-dir.py: where a --prefix install puts the PyGObject override
#
# Copyright 2026 The ds authors
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Prints the gi/overrides folder under PREFIX that this python searches:
its site folder inside PREFIX (/usr/local/lib/python3.X/dist-packages on
Debian for /usr/local, /usr/lib/python3/dist-packages for /usr), else the
posix_prefix scheme's (PREFIX/lib/python3.X/site-packages, which a user
puts on PYTHONPATH). PyGObject finds an override in any gi/overrides
folder on sys.path, so an install stays inside its prefix.

    overrides-dir.py PREFIX
"""

import os
import site
import sys
import sysconfig


def main():
    prefix = os.path.abspath(sys.argv[1])
    for folder in site.getsitepackages():
        rel = os.path.relpath(folder, prefix)
        if rel.startswith('lib'):
            print(os.path.join(folder, 'gi', 'overrides'))
            return 0
    folder = sysconfig.get_path('purelib', 'posix_prefix',
                                {'base': prefix, 'platbase': prefix})
    print(os.path.join(folder, 'gi', 'overrides'))
    return 0


if __name__ == '__main__':
    sys.exit(main())
