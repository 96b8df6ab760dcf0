// The README's "Errors" table, gjs column: every row, tried.
//
// Copyright 2026 The ds authors
// SPDX-License-Identifier: LGPL-2.1-or-later
//
// The gjs twin of test-errors.py: reads the table from README.md, makes one
// case per row and checks what the gjs cell's first clause says the misuse
// gets (`GLib.Error` with the codes it names, an exception class such as
// `Error`, `null`, "critical logged", "works" or "not reachable"). A row
// without a case, or a case without a row, fails. Prints TAP.

imports.searchPath.unshift(GLib_dirname());
const T = imports.dstest;
const {GLib, Ds} = T;
const {GObject} = imports.gi;
const HOST = Ds.MemoryKind.HOST;

function GLib_dirname() {
    return imports.gi.GLib.path_get_dirname(imports.system.programPath);
}

function readTable(column) {
    const [, bytes] = GLib.file_get_contents(`${T.dir}/../../README.md`);
    const text = new TextDecoder().decode(bytes);
    const section = text.split('\n## Errors\n')[1].split('\n## ')[0];
    const rows = section.split('\n').filter(l => l.startsWith('|'));
    const cells = line => line.trim().replace(/^\||\|$/g, '').split('|').map(c => c.trim());
    const header = cells(rows[0]);
    const index = header.indexOf(column);
    return rows.slice(2).map(line => {
        const c = cells(line);
        T.assert(c.length === header.length, `a cell holds a "|": ${line}`);
        return [c[0], c[index]];
    });
}

function expectation(cell) {
    const clause = cell.split(/[;:(]/)[0];
    if (clause.startsWith('works'))
        return {what: 'works'};
    if (clause.startsWith('not reachable'))
        return {what: 'not reachable'};
    if (clause.startsWith('critical logged'))
        return {what: 'critical'};
    const tokens = [...clause.matchAll(/`([^`]+)`/g)].map(m => m[1]);
    T.assert(tokens.length > 0, `no outcome in ${cell}`);
    if (tokens[0] === 'GLib.Error')
        return {what: 'GLib.Error', codes: tokens.slice(1).filter(t => /^[A-Z_]+$/.test(t))};
    if (tokens[0] === 'null' || tokens[0] === 'None')
        return {what: 'returns null'};
    return {what: 'raises', names: tokens};
}

const NOT_REACHABLE = {what: 'not reachable'};
const CRITICAL = {what: 'critical'};

function attempt(fn) {
    try {
        return {what: 'returned', value: fn()};
    } catch (e) {
        return {what: 'raised', value: e};
    }
}

function criticalIn(code) {
    const r = T.runGjs(code);
    if (r.status === 0 && r.stderr.includes('Ds-CRITICAL') && r.stdout.includes('value stays'))
        return CRITICAL;
    return {what: `exit ${r.status}`, value: r.stdout + r.stderr};
}

function errorName(e) {
    for (const [name, code] of Object.entries(Ds.Error)) {
        if (typeof code === 'number' && e.matches(Ds.error_quark(), code))
            return name;
    }
    return null;
}

function matches(expected, seen) {
    switch (expected.what) {
    case 'GLib.Error':
        return seen.what === 'raised' && seen.value instanceof GLib.Error &&
            errorName(seen.value) !== null &&
            (expected.codes.length === 0 || expected.codes.includes(errorName(seen.value)));
    case 'raises':
        return seen.what === 'raised' && !(seen.value instanceof GLib.Error) &&
            expected.names.includes(seen.value.constructor.name);
    case 'returns null':
        return seen.what === 'returned' && seen.value === null;
    case 'works':
        return seen.what === 'returned';
    default:
        return seen === (expected.what === 'critical' ? CRITICAL : NOT_REACHABLE);
    }
}

// A resource in JavaScript that forwards to the default host pool, with
// hooks for the cases.
const Forwarding = GObject.registerClass({
    Implements: [Ds.MemoryResource],
}, class Forwarding extends GObject.Object {
    _init(hooks = {}) {
        super._init();
        this._hooks = hooks;
        this._upstream = Ds.MemoryResource.get_default(HOST, -1);
    }

    vfunc_get_kind() {
        return this._hooks.getKind ? this._hooks.getKind() : (this._hooks.kind ?? HOST);
    }

    vfunc_allocate(size, alignment) {
        if (this._hooks.allocate)
            return this._hooks.allocate(size, alignment);
        return this._upstream.allocate(size, alignment);
    }

    vfunc_deallocate(ptr, size, alignment) {
        if (this._hooks.deallocate)
            this._hooks.deallocate(ptr, size, alignment);
        else
            this._upstream.deallocate(ptr, size, alignment);
    }
});

function gpuMissing() {
    try {
        new Ds.Scratchpad().alloc(Ds.MemoryKind.DEVICE, 16, 0);
        return false;
    } catch (e) {
        return true;
    }
}

const CASES = [
    ['size 0', () => attempt(() => new Ds.Scratchpad().alloc(HOST, 0, 0))],
    ['a size that overflows once padded', () => attempt(() => new Ds.Scratchpad().alloc(HOST, 2n ** 64n - 2n, 0))],
    ['no upstream can give', () => attempt(() => new Ds.Scratchpad().alloc(HOST, 2 ** 50, 0))],
    ['not a power of two', () => attempt(() => new Ds.Scratchpad().alloc(HOST, 16, 3))],
    ['an unknown kind (`(DsMemoryKind) 42`', () => {
        const seen = attempt(() => new Ds.Scratchpad().alloc(42, 16, 0));
        const other = attempt(() => Ds.MemoryResource.get_default(4, -1));
        T.assert(other.what === 'raised' && !(other.value instanceof GLib.Error), `${other.value}`);
        return seen;
    }],
    ['a negative size', () => {
        const block = new Ds.Scratchpad().alloc(HOST, 64, 0);
        T.assert(attempt(() => block.read(-1, 2)).what === 'raised', 'read(-1, 2)');
        return attempt(() => new Ds.Scratchpad().alloc(HOST, -1, 0));
    }],
    ['that is not an integer', () => attempt(() => {
        const sp = new Ds.Scratchpad();
        T.assert(sp.alloc(HOST, 16.7, 0).get_size() === 16, '16.7 is 16');
        T.assert(sp.alloc(HOST, '16', 0).get_size() === 16, "'16' is 16");
    })],
    ['`n × size` overflows', () =>
        Ds.Scratchpad.prototype.alloc_array === undefined ? NOT_REACHABLE : {what: 'reachable'}],
    ['a resource of another kind', () =>
        attempt(() => new Ds.Scratchpad({host_resource: new Forwarding({kind: Ds.MemoryKind.PINNED})})
            .alloc(HOST, 16, 0))],
    ['a resource without `allocate`', () => {
        // Each shape in a process of its own: without the check in C the
        // scratchpad calls a NULL vfunc.
        for (const [what, body] of [
            ['no vfunc_allocate', 'vfunc_deallocate(p, s, a) {}'],
            ['no vfunc_deallocate', 'vfunc_allocate(s, a) { return this.up.allocate(s, a); }'],
        ]) {
            const r = T.runGjs(`
                const R = GObject.registerClass({Implements: [Ds.MemoryResource]},
                    class R extends GObject.Object {
                        _init() { super._init(); this.up = Ds.MemoryResource.get_default(HOST, -1); }
                        vfunc_get_kind() { return HOST; }
                        ${body}
                    });
                const sp = new Ds.Scratchpad({host_resource: new R()});
                try {
                    sp.alloc(HOST, 16, 0);
                    sp.release();
                    print('no error');
                } catch (e) {
                    print(e.matches(Ds.error_quark(), Ds.Error.INVALID_ARGUMENT) ? 'INVALID_ARGUMENT' : e);
                }`);
            if (r.status !== 0 || !r.stdout.includes('INVALID_ARGUMENT'))
                return {what: `${what}: exit ${r.status}`, value: r.stdout + r.stderr};
        }
        return {what: 'raised', value: new GLib.Error(Ds.error_quark(), Ds.Error.INVALID_ARGUMENT, 'in a subprocess')};
    }],
    ['a GPU kind without a driver', () => {
        if (!gpuMissing())
            return 'a GPU is present: the GPU kinds work';
        return attempt(() => new Ds.Scratchpad().alloc(Ds.MemoryKind.DEVICE, 16, 0));
    }],
    ['the upstream fails', () => attempt(() => new Ds.Scratchpad({
        host_resource: new Forwarding({allocate: () => {
            throw new Error('the test pool is full');
        }}),
    }).alloc(HOST, 16, 0))],
    ['raises `KeyboardInterrupt`', () => NOT_REACHABLE],
    ['`do_get_kind` raises', () => {
        // gjs logs the exception (to stderr) and returns 0, host.
        const r = T.runGjs(`
            const R = GObject.registerClass({Implements: [Ds.MemoryResource]},
                class R extends GObject.Object {
                    _init() { super._init(); this.up = Ds.MemoryResource.get_default(HOST, -1); }
                    vfunc_get_kind() { throw new Error('which kind?'); }
                    vfunc_allocate(s, a) { return this.up.allocate(s, a); }
                    vfunc_deallocate(p, s, a) { this.up.deallocate(p, s, a); }
                });
            const sp = new Ds.Scratchpad({host_resource: new R()});
            print(sp.alloc(HOST, 16, 0).get_size());
            sp.release();`);
        return r.status === 0 && r.stdout.trim() === '16' ? {what: 'returned'} : {what: 'failed', value: r};
    }],
    ['`do_deallocate` raises', () => {
        const r = T.runGjs(`
            const R = GObject.registerClass({Implements: [Ds.MemoryResource]},
                class R extends GObject.Object {
                    _init() { super._init(); this.up = Ds.MemoryResource.get_default(HOST, -1); }
                    vfunc_get_kind() { return HOST; }
                    vfunc_allocate(s, a) { return this.up.allocate(s, a); }
                    vfunc_deallocate(p, s, a) { throw new Error('cannot take it back'); }
                });
            const sp = new Ds.Scratchpad({host_resource: new R()});
            sp.alloc(HOST, 16, 0);
            sp.release();
            print('released');`);
        return r.status === 0 && r.stdout.includes('released') ? {what: 'returned'} : {what: 'failed', value: r};
    }],
    ['returns no memory', () => attempt(() => new Ds.Scratchpad({
        host_resource: new Forwarding({allocate: () => 'abc'}),
    }).alloc(HOST, 16, 0))],
    ['a block range outside the block', () => attempt(() => new Ds.Scratchpad().alloc(HOST, 64, 0).read(100, 0))],
    ['a `fill()` value', () => attempt(() => new Ds.Scratchpad().alloc(HOST, 64, 0).fill(256))],
    ['a zero-copy view the CPU cannot address', () =>
        Ds.Block.prototype.memoryview === undefined ? NOT_REACHABLE : {what: 'reachable'}],
    ['a DLPack request', () =>
        Ds.Block.prototype.__dlpack__ === undefined ? NOT_REACHABLE : {what: 'reachable'}],
    ['after `g_object_run_dispose()`', () => {
        // In a process of its own: gjs complains about the disposed wrapper.
        const r = T.runGjs(`
            const sp = new Ds.Scratchpad();
            sp.run_dispose();
            try {
                sp.alloc(HOST, 16, 0);
            } catch (e) {
                print(e.matches(Ds.error_quark(), Ds.Error.DISPOSED) ? 'DISPOSED' : e);
            }`);
        if (r.status !== 0 || !r.stdout.includes('DISPOSED'))
            return {what: `exit ${r.status}`, value: r.stdout + r.stderr};
        return {what: 'raised', value: new GLib.Error(Ds.error_quark(), Ds.Error.DISPOSED, 'in a subprocess')};
    }],
    ['a setting (orders', () => criticalIn(`
        const sp = new Ds.Scratchpad();
        sp.alloc(HOST, 16, 0);
        sp.initial_size_host = 1 << 20;
        if (sp.initial_size_host === 65536)
            print('value stays');`)],
    ['`release` while exports', () =>
        Ds.Block.prototype.export === undefined ? NOT_REACHABLE : {what: 'reachable: Ds.Block.export'}],
    ['calls back into the scratchpad it serves', () => {
        const sp = new Ds.Scratchpad();
        sp.host_resource = new Forwarding({allocate: () => sp.alloc(HOST, 16, 0).get_address()});
        const seen = attempt(() => sp.alloc(HOST, 16, 0));
        T.assert(seen.what === 'raised' && seen.value.message.length < 300, `${seen.value}`);
        return seen;
    }],
    ['disposes the scratchpad it serves', () => {
        // In a process of its own: gjs complains about the disposed wrapper.
        const r = T.runGjs(`
            const up = Ds.MemoryResource.get_default(HOST, -1);
            const sp = new Ds.Scratchpad();
            const R = GObject.registerClass({Implements: [Ds.MemoryResource]},
                class R extends GObject.Object {
                    vfunc_get_kind() { return HOST; }
                    vfunc_allocate(s, a) { sp.run_dispose(); return up.allocate(s, a); }
                    vfunc_deallocate(p, s, a) { up.deallocate(p, s, a); }
                });
            sp.host_resource = new R();
            try {
                sp.alloc(HOST, 16, 0);
            } catch (e) {
                print(e.matches(Ds.error_quark(), Ds.Error.DISPOSED) ? 'DISPOSED' : e);
            }
            sp.release();`);
        if (r.status !== 0 || !r.stdout.includes('DISPOSED'))
            return {what: `exit ${r.status}`, value: r.stdout + r.stderr};
        return {what: 'raised', value: new GLib.Error(Ds.error_quark(), Ds.Error.DISPOSED, 'in a subprocess')};
    }],
    ['used by two threads at once', () => NOT_REACHABLE],
    ['`ref`, `unref`, `free` or `export`', () => {
        const reachable = [
            ['Block.ref', Ds.Block.prototype.ref], ['Block.unref', Ds.Block.prototype.unref],
            ['Block.export', Ds.Block.prototype.export], ['AccessOrder.free', Ds.AccessOrder.prototype.free],
            ['KernelContext.ref', Ds.KernelContext.prototype.ref],
            ['KernelContext.unref', Ds.KernelContext.prototype.unref],
            ['PoolStats.free', Ds.PoolStats.prototype.free],
            ['ScratchpadIface.alloc', Ds.ScratchpadIface.prototype.alloc],
            ['AccessOrder.stream', Ds.AccessOrder.new_host().stream],
        ].filter(([, v]) => v !== undefined).map(([name]) => name);
        return reachable.length === 0 ? NOT_REACHABLE : {what: 'reachable', value: reachable};
    }],
    ['`NULL` or a wrong object', () => attempt(() => Ds.Scratchpad.prototype.get_reserved.call(null, HOST))],
    ['`*error` already set', () => NOT_REACHABLE],
    ['given back to a `DsPoolResource` twice', () => criticalIn(`
        const pool = Ds.PoolResource.new(Ds.HostMemoryResource.new());
        const a = pool.allocate(64, 16);
        pool.deallocate(a, 64, 16);
        pool.deallocate(a, 64, 16);
        if (pool.get_stats().refused_deallocations === 1)
            print('value stays');`)],
    ['given to a raw resource', () => criticalIn(`
        const res = Ds.HostMemoryResource.new();
        res.deallocate(0x1234, 16, 16);
        const a = res.allocate(64, 16);
        res.deallocate(a, 64, 16);
        res.deallocate(a, 64, 16);
        print('value stays');`)],
    ['points at no memory of the process', () => {
        if (!gpuMissing())
            return 'a GPU is present: the driver would dereference the handle';
        const order = Ds.AccessOrder.new_for_handle(0x1000, 0);
        T.assert(order.get_stream_handle() === 0x1000, 'the order keeps the handle');
        try {
            order.synchronize();
        } catch (e) {
            T.assert(['NO_DEVICE', 'NOT_SUPPORTED'].includes(errorName(e)), `device work: ${e}`);
            return {what: 'returned', value: order};
        }
        return {what: 'no error from device work without a driver'};
    }],
];

const table = readTable('gjs');

T.check('every row has a case, every case a row', () => {
    for (const [key] of CASES) {
        T.assert(table.filter(([misuse]) => misuse.includes(key)).length === 1,
            `the case ${key} names no single row`);
    }
    for (const [misuse] of table) {
        T.assert(CASES.filter(([key]) => misuse.includes(key)).length === 1,
            `a row without a case: ${misuse}`);
    }
});

for (const [key, fn, reason] of CASES) {
    const rows = table.filter(([misuse]) => misuse.includes(key));
    if (rows.length !== 1)
        continue;
    const cell = rows[0][1];
    const run = () => {
        const expected = expectation(cell);
        const seen = fn();
        if (typeof seen === 'string')
            return seen;    // skipped, with the reason
        T.assert(matches(expected, seen),
            `the README says ${cell} (${JSON.stringify(expected)}); the case saw ` +
            `${seen.what}: ${seen.value}`);
        return undefined;
    };
    if (reason)
        T.todo(`row: ${key}`, reason, run);
    else
        T.check(`row: ${key}`, run);
}

T.done();
