#!/usr/bin/env python3
# check-gst-inspect.py: gst-inspect-1.0 ELEMENT must succeed, print no
# GLib/GStreamer warning or critical, and show the words given.
#
# Copyright 2026 The ds authors
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Usage: check-gst-inspect.py GST_INSPECT ELEMENT [WORD...]"""

import subprocess
import sys


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    inspect, element, expected = sys.argv[1], sys.argv[2], sys.argv[3:]
    res = subprocess.run([inspect, element], capture_output=True, text=True)
    print(res.stdout)
    print(res.stderr, file=sys.stderr)
    failures = []
    if res.returncode != 0:
        failures.append('%s %s exited with %d' % (inspect, element, res.returncode))
    for word in ('CRITICAL', 'WARNING', 'ERROR'):
        if word in res.stderr:
            failures.append('%s on stderr' % word)
    for word in expected:
        if word not in res.stdout:
            failures.append('%r missing from the output' % word)
    for f in failures:
        print('FAIL: ' + f)
    if not failures:
        print('OK: %s is clean and shows %s' % (element, ', '.join(expected) or 'itself'))
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
