// Scripts that used to crash gjs, each in a process of its own.
//
// Copyright 2026 The ds authors
// SPDX-License-Identifier: LGPL-2.1-or-later
//
// Every case runs in a new gjs and must exit normally with what the README's
// "Errors" table promises. gjs has no override: the cases that need the C
// library to check its callers are TODO until it does (the report of issue
// 43 lists the changes). Prints TAP.

imports.searchPath.unshift(imports.gi.GLib.path_get_dirname(imports.system.programPath));
const T = imports.dstest;

const RESOURCE = (body) => `
    const R = GObject.registerClass({Implements: [Ds.MemoryResource]},
        class R extends GObject.Object {
            _init() { super._init(); this.up = Ds.MemoryResource.get_default(HOST, -1); }
            vfunc_get_kind() { return HOST; }
            ${body}
        });
    const sp = new Ds.Scratchpad({host_resource: new R()});
    try {
        sp.alloc(HOST, 100, 0);
        print('allocated');
    } catch (e) {
        print(e.matches(Ds.error_quark(), Ds.Error.INVALID_ARGUMENT) ? 'INVALID_ARGUMENT' : \`\${e}\`);
    }
    sp.release();
    print('released');`;

function exitsWith(code, stdout, {critical = false} = {}) {
    const r = T.runGjs(code);
    T.assert(r.status === 0, `exit ${r.status}:\n${r.stdout}${r.stderr}`);
    for (const line of [].concat(stdout))
        T.assert(r.stdout.includes(line), `"${line}" in:\n${r.stdout}${r.stderr}`);
    T.assert(critical === r.stderr.includes('Ds-CRITICAL'),
        `${critical ? 'a' : 'no'} Ds-CRITICAL in:\n${r.stderr}`);
}

T.check('a resource without vfunc_deallocate: INVALID_ARGUMENT, no crash at release()', () =>
    exitsWith(RESOURCE('vfunc_allocate(s, a) { return this.up.allocate(s, a); }'),
        ['INVALID_ARGUMENT', 'released']));

T.check('a resource without vfunc_allocate: INVALID_ARGUMENT, no crash at alloc()', () =>
    exitsWith(RESOURCE('vfunc_deallocate(p, s, a) { this.up.deallocate(p, s, a); }'),
        ['INVALID_ARGUMENT', 'released']));

T.check('a resource with only vfunc_allocate_async: INVALID_ARGUMENT', () =>
    exitsWith(RESOURCE('vfunc_allocate_async(s, a, o) { return this.up.allocate(s, a); }'),
        ['INVALID_ARGUMENT', 'released']));

T.check('a complete resource in JavaScript works', () =>
    exitsWith(RESOURCE(`vfunc_allocate(s, a) { return this.up.allocate(s, a); }
                        vfunc_deallocate(p, s, a) { this.up.deallocate(p, s, a); }`),
    ['allocated', 'released']));

T.check('a raw resource given a pointer it did not hand out: a critical, no crash', () =>
    exitsWith(`Ds.HostMemoryResource.new().deallocate(0x1234, 16, 16); print('done');`,
        'done', {critical: true}));

T.check('a raw resource given a pointer twice: a critical, no abort', () =>
    exitsWith(`const res = Ds.HostMemoryResource.new();
               const a = res.allocate(64, 16);
               res.deallocate(a, 64, 16);
               res.deallocate(a, 64, 16);
               print('done');`, 'done', {critical: true}));

T.check('a pool given a pointer twice: a critical, no crash', () =>
    exitsWith(`const pool = Ds.PoolResource.new(Ds.HostMemoryResource.new());
               const a = pool.allocate(64, 16);
               pool.deallocate(a, 64, 16);
               pool.deallocate(a, 64, 16);
               print('done');`, 'done', {critical: true}));

T.check('block.export() is not there: release() logs no critical', () =>
    exitsWith(`const sp = new Ds.Scratchpad();
               const block = sp.alloc(HOST, 64, 0);
               if (block.export !== undefined)
                   block.export();
               sp.release();
               print(\`exports \${sp.get_n_exports()} reserved \${sp.get_reserved(HOST)}\`);`,
    'exports 0 reserved 0'));

T.check('unref, free: not there to free twice', () =>
    exitsWith(`const sp = new Ds.Scratchpad();
               const block = sp.alloc(HOST, 64, 0);
               const order = Ds.AccessOrder.new_host();
               print([block.unref, block.ref, order.free].every(f => f === undefined) ?
                   'not there' : 'there');`, 'not there'));

T.check('the private fields of an order cannot be reached', () =>
    exitsWith(`const order = Ds.AccessOrder.new_host();
               try {
                   order.stream = 5;
               } catch (e) {
               }
               print(order.is_host() && order.get_stream_handle() === 0 ? 'unchanged' : 'changed');`,
        'unchanged'));

T.done();
