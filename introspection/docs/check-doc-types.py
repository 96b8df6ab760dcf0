#!/usr/bin/env python3
# check-doc-types.py: the API reference names only C types that exist
#
# Copyright 2026 The ds authors
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Scans the HTML that gi-docgen generated for identifiers that start with
the C prefix `Ds` and fails on any that is not a type of the GIR.

gi-docgen prefixes a type name it does not know with the namespace: a
`(type guintptr)` annotation came out as `Dsguintptr*`, a type that does not
exist. Every address in the API crosses as guint64 now; this keeps it so.

Usage: check-doc-types.py GIR [GIR...] DOCDIR

With several GIRs (DsGst's pages name Ds's types too), a name is known
when any of them has it.
"""

import os
import re
import sys
import xml.etree.ElementTree as ET

CORE = '{http://www.gtk.org/introspection/core/1.0}'
C = '{http://www.gtk.org/introspection/c/1.0}'
GLIB = '{http://www.gtk.org/introspection/glib/1.0}'

# An identifier that starts with the C prefix: DsBlock, DsScratchpadClass,
# but also the bogus Dsguintptr.
DS_IDENT = re.compile(r'(?<![A-Za-z0-9_])Ds[A-Za-z0-9_]+')
TAG = re.compile(r'<[^>]+>')


def known_types(gir):
    names = set()
    for node in ET.parse(gir).getroot().iter(CORE + 'namespace'):
        names.add(node.get('name'))
    for node in ET.parse(gir).getroot().iter():
        for attr in (C + 'type', GLIB + 'type-name', C + 'identifier'):
            value = node.get(attr)
            if value:
                names.add(value.strip('*').replace('const ', '').strip('*').strip())
    return names


def class_struct_quirks(gir):
    """The names gi-docgen's class page gives class structures: the
    namespace's name and the structure's (`struct {{ namespace.name }}{{
    class.class_name }}`), which is the C name only where the namespace's
    name is its C prefix. DsRecorder's prefix is `Ds`: its page says
    `struct DsRecorderRecorderClass` for DsRecorderClass."""
    quirks = {}
    for ns in ET.parse(gir).getroot().iter(CORE + 'namespace'):
        for cls in ns.iter(CORE + 'class'):
            struct = cls.get(GLIB + 'type-struct')
            if struct:
                quirks[ns.get('name') + struct] = cls.get(C + 'type', '') + 'Class'
    return quirks


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    girs, docdir = sys.argv[1:-1], sys.argv[-1]
    known = set()
    quirks = {}
    for gir in girs:
        known |= known_types(gir)
        quirks.update(class_struct_quirks(gir))
    bad = {}
    n_files = 0
    for dirpath, _, files in os.walk(docdir):
        for name in files:
            if not name.endswith('.html'):
                continue
            n_files += 1
            path = os.path.join(dirpath, name)
            with open(path, encoding='utf-8') as f:
                text = TAG.sub(' ', f.read())
            for ident in DS_IDENT.findall(text):
                if ident not in known and quirks.get(ident) in known:
                    continue
                if ident not in known:
                    bad.setdefault(ident, set()).add(os.path.relpath(path, docdir))
    print('%d HTML files, %d known C names' % (n_files, len(known)))
    if n_files == 0:
        print('FAIL: no HTML in %s' % docdir)
        return 1
    for ident, where in sorted(bad.items()):
        print('FAIL: %s is not a type of the GIR; in %s'
              % (ident, ', '.join(sorted(where)[:5]) + (' ...' if len(where) > 5 else '')))
    if not bad:
        print('OK: every Ds* name in the API reference exists')
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
