#!/usr/bin/env python3
# check-guide.py: the guide's code is the template's code
#
# Copyright 2026 The ds authors
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Usage: check-guide.py GUIDE.md SOURCE.c...

Every ```c block of GUIDE.md must appear, line for line, in one SOURCE.c,
unless the line before it is `<!-- not from the template -->`: the guide
quotes the template elements, which are built and tested, so a change to
one without the other fails here.
"""

import sys

MARK = '<!-- not from the template -->'


def blocks(text):
    lines = text.split('\n')
    i = 0
    while i < len(lines):
        if lines[i].strip() == '```c':
            marked = i > 0 and lines[i - 1].strip() == MARK
            j = i + 1
            while j < len(lines) and lines[j].strip() != '```':
                j += 1
            yield i + 1, marked, '\n'.join(lines[i + 1:j])
            i = j
        i += 1


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    guide = open(sys.argv[1], encoding='utf-8').read()
    sources = [open(p, encoding='utf-8').read() for p in sys.argv[2:]]
    failures = 0
    checked = 0
    for line, marked, code in blocks(guide):
        if marked:
            continue
        checked += 1
        if not any(code in source for source in sources):
            print('FAIL: the block at %s:%d is not in %s' % (sys.argv[1], line, ' or '.join(sys.argv[2:])))
            failures += 1
    print('%d blocks checked against %s' % (checked, ', '.join(sys.argv[2:])))
    if checked == 0:
        print('FAIL: no block to check')
        return 1
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
