#!/usr/bin/env python3
# expect-report.py: run a program that a sanitizer must catch
#
# Copyright 2026 The ds authors
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Usage: expect-report.py PATTERN [PATTERN...] -- PROGRAM [ARG...]
#
# Runs PROGRAM and passes (exit 0) only when it exits non-zero and every
# PATTERN (a regular expression) appears in its output: the sanitizer did
# report the deliberate bug, and where. Anything else fails, with the
# output shown, so that a sanitizer that went quiet is noticed.

import re
import subprocess
import sys

args = sys.argv[1:]
if '--' not in args:
    sys.exit('usage: expect-report.py PATTERN... -- PROGRAM [ARG...]')
cut = args.index('--')
patterns, command = args[:cut], args[cut + 1:]

proc = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                      text=True, errors='replace')
out = proc.stdout
missing = [p for p in patterns if not re.search(p, out)]
print(out[-20000:])
if proc.returncode == 0:
    print('expect-report: FAIL: the program exited 0; the sanitizer reported nothing')
    sys.exit(1)
if missing:
    print('expect-report: FAIL: exit %d, but not found in the output: %s'
          % (proc.returncode, ', '.join(missing)))
    sys.exit(1)
print('expect-report: ok: exit %d, the report names %s'
      % (proc.returncode, ', '.join(patterns)))
