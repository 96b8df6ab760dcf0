#!/usr/bin/env python3
# gen-stub.py: writes gi-stubs/repository/Ds.pyi from the GIR and the override
#
# Copyright 2026 The ds authors
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Generates the type stub that editors and type checkers use for
`from gi.repository import Ds`: every class, method, virtual method (as
`do_*`), property (under `props`), enum, constant and function of the GIR as
PyGObject presents it, with the first paragraph of its documentation; then
the override's additions (gi/overrides/Ds.py), read with `ast`, with their
signatures and docstrings.

    python3 introspection/overrides/gen-stub.py BUILDDIR/src/Ds-1.0.gir \\
        introspection/overrides/gi/overrides/Ds.py > introspection/overrides/gi-stubs/repository/Ds.pyi

The stub is committed; the gi-python test `test_stub_parses_and_covers_the_api`
fails when it lacks anything the runtime module has.
"""

import ast
import keyword
import re
import sys
import textwrap
import xml.etree.ElementTree as ET

CORE = '{http://www.gtk.org/introspection/core/1.0}'
GLIBNS = '{http://www.gtk.org/introspection/glib/1.0}'

BASIC = {
    'gboolean': 'bool', 'gchar': 'int', 'guchar': 'int', 'gint': 'int', 'guint': 'int',
    'gshort': 'int', 'gushort': 'int', 'glong': 'int', 'gulong': 'int', 'gint8': 'int',
    'guint8': 'int', 'gint16': 'int', 'guint16': 'int', 'gint32': 'int', 'guint32': 'int',
    'gint64': 'int', 'guint64': 'int', 'gsize': 'int', 'gssize': 'int', 'goffset': 'int',
    'gintptr': 'int', 'guintptr': 'int', 'gfloat': 'float', 'gdouble': 'float',
    'utf8': 'str', 'filename': 'str', 'GType': 'GObject.GType', 'gpointer': 'object',
    'gconstpointer': 'object', 'none': 'None', 'GLib.Quark': 'int',
}


def tag(node):
    return node.tag.split('}')[1]


def doc(node):
    d = node.find(CORE + 'doc')
    if d is None or not d.text:
        return None
    first = d.text.strip().split('\n\n')[0]
    first = re.sub(r'\[(?:class|method|struct|iface|enum|func|ctor|property)@([\w.:-]+)\]', r'`\1`', first)
    first = re.sub(r'%([A-Z_]+)', r'\1', first)
    first = re.sub(r'@(\w+)', r'\1', first)
    return ' '.join(first.split())


def pytype(node, ns):
    """The Python type of a <type>/<array> child of @node."""
    arr = node.find(CORE + 'array')
    if arr is not None:
        inner = arr.find(CORE + 'type')
        name = arr.get('name')
        if inner is not None and inner.get('name') in ('guint8', 'gint8') and name is None:
            return 'bytes'
        elem = pytype(arr, ns) if inner is not None else 'object'
        return 'list[%s]' % elem
    t = node.find(CORE + 'type')
    if t is None:
        return 'object'
    name = t.get('name', 'none')
    if name in BASIC:
        return BASIC[name]
    if name == 'GLib.PtrArray' or name == 'GLib.List' or name == 'GLib.SList':
        return 'list[%s]' % pytype(t, ns)
    if '.' in name:
        return name
    return name


def params_of(callable_node, ns, skip_instance=True):
    params = callable_node.find(CORE + 'parameters')
    plist = [] if params is None else [p for p in params if tag(p) == 'parameter']
    hidden = set()
    for p in plist:
        arr = p.find(CORE + 'array')
        if arr is not None and arr.get('length') is not None:
            hidden.add(int(arr.get('length')))
        if p.get('destroy') is not None:
            hidden.add(int(p.get('destroy')))
    ret = callable_node.find(CORE + 'return-value')
    if ret is not None:
        arr = ret.find(CORE + 'array')
        if arr is not None and arr.get('length') is not None:
            hidden.add(int(arr.get('length')))
    ins, outs = [], []
    for i, p in enumerate(plist):
        if i in hidden:
            continue
        name = p.get('name')
        if keyword.iskeyword(name):
            name += '_'
        t = pytype(p, ns)
        if p.get('nullable') == '1' or p.get('allow-none') == '1':
            t += ' | None'
        if p.get('direction') == 'out':
            outs.append(t)
        else:
            ins.append('%s: %s' % (name, t))
            if p.get('direction') == 'inout':
                outs.append(t)
    rtype = 'None'
    if ret is not None:
        rtype = pytype(ret, ns)
        if ret.get('nullable') == '1' and rtype != 'None':
            rtype += ' | None'
    results = ([] if rtype == 'None' else [rtype]) + outs
    if not results:
        r = 'None'
    elif len(results) == 1:
        r = results[0]
    else:
        r = 'tuple[%s]' % ', '.join(results)
    return ins, r


def emit_def(out, indent, name, args, ret, text, decorator=None):
    if decorator:
        out.append('%s@%s' % (indent, decorator))
    out.append('%sdef %s(%s) -> %s:' % (indent, name, ', '.join(args), ret))
    if text:
        out.append('%s    """%s"""' % (indent, text.replace('"""', "'''").replace('\\', '\\\\')))
        out.append('%s    ...' % indent)
    else:
        out[-1] += ' ...'


def python_name(node):
    if node.get('introspectable') == '0' or node.get('shadowed-by'):
        return None
    return node.get('shadows') or node.get('name')


def emit_callables(out, node, ns, indent, cls_name):
    for child in node:
        kind = tag(child)
        name = python_name(child) if kind != 'virtual-method' else child.get('name')
        if kind not in ('method', 'constructor', 'function', 'virtual-method') or name is None:
            continue
        if kind == 'virtual-method' and child.get('introspectable') == '0':
            continue
        ins, ret = params_of(child, ns)
        if kind == 'method':
            emit_def(out, indent, name, ['self'] + ins, ret, doc(child))
        elif kind == 'virtual-method':
            emit_def(out, indent, 'do_' + name, ['self'] + ins, ret, doc(child))
        elif kind == 'constructor':
            emit_def(out, indent, name, ['cls'] + ins, cls_name, doc(child), 'classmethod')
        else:
            emit_def(out, indent, name, ins, ret, doc(child), 'staticmethod')


def emit_props(out, node, ns, indent, cls_name):
    props = [p for p in node if tag(p) == 'property']
    if not props:
        return
    out.append('%sclass _Props:' % indent)
    for p in props:
        t = pytype(p, ns)
        if tag(p.find(CORE + 'type') if p.find(CORE + 'type') is not None else p) and \
           t not in ('int', 'bool', 'float', 'str'):
            t += ' | None'
        out.append('%s    %s: %s' % (indent, p.get('name').replace('-', '_'), t))
    out.append('%sprops: _Props' % indent)


def gir_part(gir):
    root = ET.parse(gir).getroot()
    ns = root.find(CORE + 'namespace')
    out = []
    classes = {}
    for node in ns:
        kind = tag(node)
        name = node.get('name')
        if kind in ('enumeration', 'bitfield'):
            base = 'GObject.GFlags' if kind == 'bitfield' else 'GObject.GEnum'
            body = ['class %s(%s):' % (name, base)]
            if doc(node):
                body.append('    """%s"""' % doc(node))
            for m in node:
                if tag(m) == 'member':
                    body.append('    %s: %s' % (m.get('name').upper(), name))
            for f in node:
                if tag(f) == 'function' and python_name(f):
                    ins, ret = params_of(f, ns)
                    emit_def(body, '    ', python_name(f), ins, ret, doc(f), 'staticmethod')
            classes[name] = body
        elif kind == 'constant':
            out.append('%s: %s' % (name, pytype(node, ns)))
        elif kind == 'callback':
            ins, ret = params_of(node, ns)
            types = [a.split(': ', 1)[1] for a in ins]
            out.append('%s = Callable[[%s], %s]' % (name, ', '.join(types), ret))
        elif kind == 'function' and python_name(node):
            ins, ret = params_of(node, ns)
            body = []
            emit_def(body, '', python_name(node), ins, ret, doc(node))
            out.extend(body)
        elif kind in ('class', 'interface', 'record'):
            if node.get(GLIBNS + 'is-gtype-struct-for'):
                # The class and interface structs: there, but nothing to use.
                classes[name] = ['class %s:' % name, '    ...']
                continue
            if kind == 'class':
                bases = [node.get('parent', 'GObject.Object')]
                bases += [i.get('name') for i in node if tag(i) == 'implements']
            elif kind == 'interface':
                bases = ['GObject.GInterface']
            else:
                bases = ['GObject.GBoxed'] if node.get(GLIBNS + 'type-name') else []
            body = ['class %s(%s):' % (name, ', '.join(bases))]
            if doc(node):
                body.append('    """%s"""' % doc(node))
            if kind == 'record':
                for f in node:
                    if tag(f) == 'field' and f.get('private') != '1' and \
                       f.find(CORE + 'callback') is None:
                        body.append('    %s: %s' % (f.get('name'), pytype(f, ns)))
            emit_props(body, node, ns, '    ', name)
            emit_callables(body, node, ns, '    ', name)
            if len(body) == 1:
                body.append('    ...')
            classes[name] = body
    return out, classes


# What the override's native half (gi.overrides._gi_ds) gives a class that
# derives from one of its types.
NATIVE_BASES = {
    '_gi_ds.View': [
        '    address: int',
        '    nbytes: int',
        '    shape: tuple[int, ...]',
        '    def __dlpack__(self, *, stream: int | None = None, max_version: tuple | None = None,'
        ' dl_device: tuple | None = None, copy: bool | None = None) -> object:',
        '        """A DLPack capsule ("dltensor") of this view; see Ds.Block.__dlpack__."""',
        '    def __dlpack_device__(self) -> tuple[int, int]:',
        '        """(DLPack device type, device id) of the view\'s memory."""',
    ],
}


def hidden_names(tree):
    """{class: names} the override hides with _hide(Class, (names...))."""
    hidden = {}
    for node in tree.body:
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) and \
           ast.unparse(node.value.func) == '_hide':
            cls, names = node.value.args
            hidden.setdefault(ast.unparse(cls).split('.')[-1], set()).update(
                elt.value for elt in names.elts)
    return hidden


def drop(body, names):
    """@body (a class's lines) without the definitions of @names."""
    kept, skip = [], False
    for line in body:
        m = re.match(r'    (?:def (\w+)|@\w+|(\w+): )', line)
        if m and (m.group(1) or m.group(2)) in names:
            if kept and kept[-1].startswith('    @'):
                kept.pop()
            skip = True
            continue
        if skip and line.startswith('        '):
            continue
        skip = False
        kept.append(line)
    return kept


def override_part(path, classes):
    """Merges the override's classes into @classes; returns extra lines."""
    with open(path, encoding='utf-8') as f:
        tree = ast.parse(f.read(), path)
    for name, names in hidden_names(tree).items():
        if name in classes:
            classes[name][:] = drop(classes[name], names)
    extra = []
    for node in tree.body:
        if not isinstance(node, ast.ClassDef) or node.name.startswith('_'):
            continue
        members = []
        for item in node.body:
            if isinstance(item, ast.FunctionDef) and (not item.name.startswith('_') or
                                                      item.name.startswith('__') and
                                                      item.name not in ('__init_subclass__',)):
                args = ast.unparse(item.args)
                ret = ast.unparse(item.returns) if item.returns else 'None'
                decorators = [ast.unparse(d) for d in item.decorator_list]
                text = ast.get_docstring(item)
                text = ' '.join(text.split('\n\n')[0].split()) if text else None
                lines = []
                emit_def(lines, '    ', item.name, [args], ret, text,
                         decorators[0] if decorators else None)
                members.append((item.name, lines))
        text = ast.get_docstring(node)
        if node.name in classes:
            body = classes[node.name]
            # Drop the introspected definitions the override replaces.
            body[:] = drop(body, {n for n, _ in members})
            for _, lines in members:
                body.extend(lines)
        else:
            bases = [ast.unparse(b) for b in node.bases]
            native = [line for b in bases for line in NATIVE_BASES.get(b, [])]
            bases = ', '.join(b for b in bases if b not in NATIVE_BASES) or 'object'
            body = ['class %s(%s):' % (node.name, bases)]
            if text:
                body.append('    """%s"""' % ' '.join(text.split('\n\n')[0].split()))
            for item in node.body:
                if isinstance(item, ast.Assign) and any(
                        isinstance(t, ast.Name) and t.id == '__slots__' for t in item.targets):
                    for elt in item.value.elts:
                        field = elt.value
                        if not field.startswith('_'):
                            body.append('    %s: %s' % (field, {
                                'address': 'int', 'kind': 'MemoryKind', 'typestr': 'str',
                                'itemsize': 'int', 'shape': 'tuple[int, ...]',
                                'nbytes': 'int'}.get(field, 'object')))
            body.extend(native)
            for _, lines in members:
                body.extend(lines)
            if len(body) == 1 or (len(body) == 2 and text):
                body.append('    ...')
            extra.append(body)
    return extra


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    top, classes = gir_part(sys.argv[1])
    extra = override_part(sys.argv[2], classes)
    out = [
        '# Ds-1.0 for type checkers and editors: generated by',
        '# introspection/overrides/gen-stub.py from Ds-1.0.gir and gi/overrides/Ds.py.',
        '# Do not edit; regenerate (see the script).',
        '#',
        '# SPDX-License-Identifier: LGPL-2.1-or-later',
        '',
        'from typing import Any, Callable',
        '',
        'from gi.repository import GLib, GObject',
        '',
    ]
    out += top
    for body in list(classes.values()) + extra:
        out.append('')
        out.append('')
        out.extend(body)
    text = '\n'.join(out) + '\n'
    # NumPy is optional: its arrays are Any here.
    text = text.replace("'numpy.ndarray'", 'Any')
    ast.parse(text)
    sys.stdout.write(text)


if __name__ == '__main__':
    main()
