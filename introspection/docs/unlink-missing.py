#!/usr/bin/env python3
# unlink-missing.py: copy guide pages, turning links to absent API into code
#
# Copyright 2026 The ds authors
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Copies Markdown pages for gi-docgen, replacing every link such as
[struct@DsGst.Stream] or [method@DsGst.Stream.new_scratchpad] whose
namespace is the GIR's but whose type or function the GIR lacks with the
name as code (`DsGst.Stream.new_scratchpad`).

A build of ds-gst without GStreamer's CUDA library has no DsGst.Stream;
the guide still describes it (saying that it needs gstreamer-cuda), and
gi-docgen's --fatal-warnings would otherwise stop on every such link.

Usage: unlink-missing.py GIR OUTDIR PAGE.md...
"""

import os
import re
import sys
import xml.etree.ElementTree as ET

CORE = '{http://www.gtk.org/introspection/core/1.0}'
LINK = re.compile(r'\[(?P<kind>[a-z_]+)@(?P<target>[A-Za-z0-9_.]+)\]')


def gir_names(path):
    ns = ET.parse(path).getroot().find(CORE + 'namespace')
    return ns.get('name'), {child.get('name') for child in ns if child.get('name')}


def main(argv):
    if len(argv) < 4:
        sys.stderr.write(__doc__)
        return 2
    namespace, names = gir_names(argv[1])

    def replace(match):
        parts = match.group('target').split('.')
        if len(parts) >= 2 and parts[0] == namespace and parts[1] not in names:
            return '`%s`' % match.group('target')
        return match.group(0)

    for page in argv[3:]:
        with open(page, encoding='utf-8') as f:
            text = f.read()
        with open(os.path.join(argv[2], os.path.basename(page)), 'w', encoding='utf-8') as f:
            f.write(LINK.sub(replace, text))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
