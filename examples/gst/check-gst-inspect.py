#!/usr/bin/env python3
# check-gst-inspect.py: gst-inspect-1.0 ELEMENT must succeed, print no
# GLib/GStreamer warning or critical, and show the element's properties.
#
# Copyright 2026 The ds authors
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Usage: check-gst-inspect.py GST_INSPECT ELEMENT"""

import subprocess
import sys

EXPECTED = ['device-id', 'scratch-mode', 'statistics', 'post-messages',
            'frames-processed', 'scratch-time', 'last-scratch-time',
            'last-process-time', 'release-before-wait', 'keep-blocks', 'ds-reuse', 'ds-new', 'ds-meta',
            'cuda-malloc', 'preallocated', 'GRAY8', 'I420', 'NV12']


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    inspect, element = sys.argv[1:]
    res = subprocess.run([inspect, element], capture_output=True, text=True)
    print(res.stdout)
    print(res.stderr, file=sys.stderr)
    failures = []
    if res.returncode != 0:
        failures.append('%s %s exited with %d' % (inspect, element, res.returncode))
    for word in ('CRITICAL', 'WARNING', 'ERROR'):
        if word in res.stderr:
            failures.append('%s on stderr' % word)
    for word in EXPECTED:
        if word not in res.stdout:
            failures.append('%r missing from the output' % word)
    for f in failures:
        print('FAIL: ' + f)
    if not failures:
        print('OK: %s is clean and shows every property' % element)
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
