// Ds-1.0 from JavaScript through GObject-Introspection (gjs): a smoke test.
//
// Copyright 2026 The ds authors
// SPDX-License-Identifier: LGPL-2.1-or-later
//
// Run by meson (suite 'gi') with GI_TYPELIB_PATH and LD_LIBRARY_PATH set to
// the build tree. Prints TAP. gjs sees a gpointer return as null, so
// addresses come through Ds.Block.get_address() (a Number) and data moves
// through GLib.Bytes <-> Uint8Array with read()/write().

imports.searchPath.unshift(imports.gi.GLib.path_get_dirname(imports.system.programPath));
const T = imports.dstest;
const {GLib, Ds, check, assert, assertDsError} = T;
const {GObject} = imports.gi;
const HOST = Ds.MemoryKind.HOST;

function bytesEqual(a, b) {
    if (a.length !== b.length)
        return false;
    for (let i = 0; i < a.length; i++) {
        if (a[i] !== b[i])
            return false;
    }
    return true;
}


check('enums', () => {
    assert(Ds.MemoryKind.HOST === 0 && Ds.MemoryKind.PINNED === 1 &&
           Ds.MemoryKind.DEVICE === 2 && Ds.MemoryKind.MANAGED === 3, 'kind values');
    assert(Ds.Error.INVALID_ARGUMENT === 0 && Ds.Error.NO_DEVICE === 2, 'error codes');
});

check('construct with properties', () => {
    const order = Ds.AccessOrder.new_for_handle(0, -1);
    const sp = new Ds.Scratchpad({device_order: order, initial_size_host: 1 << 20});
    assert(sp.initial_size_host === 1 << 20, 'initial-size-host');
    assert(sp.initial_size_pinned === 65536, 'initial-size-pinned default');
    assert(sp.get_device_order().equal(order), 'device-order');
    assert(sp.get_n_blocks(Ds.MemoryKind.HOST) === 0, 'construction allocates nothing');
});

check('alloc (ds_scratchpad_alloc_block), write/read, fill, release', () => {
    const sp = Ds.Scratchpad.new(null);
    const block = sp.alloc(Ds.MemoryKind.HOST, 1000, 64);
    assert(block.get_size() === 1000, 'size');
    assert(block.get_kind() === Ds.MemoryKind.HOST, 'kind');
    const address = block.get_address();
    assert(typeof address === 'number' && address !== 0 && address % 64 === 0,
        `address ${address}`);

    const data = new Uint8Array(300);
    for (let i = 0; i < data.length; i++)
        data[i] = (i * 7) & 0xff;
    assert(block.write(5, new GLib.Bytes(data)), 'write');
    const back = block.read(5, data.length).toArray();
    assert(bytesEqual(back, data), 'read what was written');

    assert(block.fill(0xab), 'fill');
    const filled = block.read(0, 1000).toArray();
    assert(filled.every(b => b === 0xab), 'fill reached every byte');

    assert(sp.get_n_blocks(Ds.MemoryKind.HOST) === 1, 'one block');
    assert(sp.get_reserved(Ds.MemoryKind.HOST) === 65536, 'one 64 KiB block');
    assert(sp.get_allocated(Ds.MemoryKind.HOST) === 1008,
        `1000 bytes at the block's start take 1008: ${sp.get_allocated(Ds.MemoryKind.HOST)}`);

    sp.release();
    assert(!block.is_valid(), 'block invalid after release');
    assert(sp.get_reserved(Ds.MemoryKind.HOST) === 0, 'nothing reserved after release');
    const again = sp.alloc(Ds.MemoryKind.HOST, 16, 0);
    assert(again.is_valid(), 'usable after release');
});

check('keep-blocks: the block stays, views of it do not', () => {
    const sp = new Ds.Scratchpad({keep_blocks: true});
    assert(sp.keep_blocks === true && sp.get_keep_blocks(), 'keep-blocks set');
    const block = sp.alloc(Ds.MemoryKind.HOST, 100, 0);
    const address = block.get_address();
    sp.release();
    assert(!block.is_valid(), 'block invalid after release');
    assert(sp.get_n_blocks(Ds.MemoryKind.HOST) === 1, 'the block stayed');
    assert(sp.get_allocated(Ds.MemoryKind.HOST) === 0, 'nothing allocated');
    let threw = false;
    try {
        block.read(0, 1);
    } catch (e) {
        threw = e.matches(Ds.Error, Ds.Error.INVALID_ARGUMENT);
    }
    assert(threw, 'reading the old view is Ds.Error.INVALID_ARGUMENT');
    const again = sp.alloc(Ds.MemoryKind.HOST, 100, 0);
    assert(again.get_address() === address, 'the next unit bumps in the kept block');
    sp.set_keep_blocks(false);
    sp.release();
    assert(sp.get_n_blocks(Ds.MemoryKind.HOST) === 0, 'everything back with keep-blocks off');
});

check('bad input gives Ds.Error.INVALID_ARGUMENT', () => {
    const sp = new Ds.Scratchpad();
    const e = assertDsError(() => sp.alloc(Ds.MemoryKind.HOST, 16, 3),
        Ds.Error.INVALID_ARGUMENT, 'alignment 3');
    assert(e.message.length > 0, 'a message');
    // gjs checks enum values itself; whatever reaches C must come back as
    // Ds.Error.INVALID_ARGUMENT, never crash.
    try {
        sp.alloc(7, 16, 0);
        throw new Error('unknown kind 7 was accepted');
    } catch (err) {
        if (err instanceof GLib.Error) {
            assert(err.matches(Ds.error_quark(), Ds.Error.INVALID_ARGUMENT),
                `unknown kind 7: ${err.message}`);
        } else {
            assert(/not a valid value/.test(`${err}`), `unknown kind 7: ${err}`);
        }
    }
    assert(sp.get_n_blocks(Ds.MemoryKind.HOST) === 0, 'nothing set up');
});

check('GPU kinds', () => {
    const sp = new Ds.Scratchpad();
    let block;
    try {
        block = sp.alloc(Ds.MemoryKind.DEVICE, 4096, 0);
    } catch (e) {
        assert(e.matches(Ds.error_quark(), Ds.Error.NO_DEVICE) ||
               e.matches(Ds.error_quark(), Ds.Error.NOT_SUPPORTED),
        `NO_DEVICE or NOT_SUPPORTED, got ${e.code}: ${e.message}`);
        return `no usable GPU: ${e.message}`;
    }
    const data = new Uint8Array(4096).map((_, i) => i & 0xff);
    block.write(0, new GLib.Bytes(data));
    assert(bytesEqual(block.read(0, 4096).toArray(), data), 'device round trip');
    sp.release();
    return undefined;
});

check('write_data takes a Uint8Array', () => {
    const sp = new Ds.Scratchpad();
    const block = sp.alloc(HOST, 16, 0);
    assert(block.write_data(3, new Uint8Array([7, 8, 9])), 'write_data');
    assert(bytesEqual(block.read(3, 3).toArray(), [7, 8, 9]), 'read back');
    assertDsError(() => block.write_data(15, new Uint8Array([1, 2])),
        Ds.Error.INVALID_ARGUMENT, 'out of range');
    sp.release();
});

check('an invalid block: Ds.Error everywhere, no address', () => {
    const sp = new Ds.Scratchpad();
    const block = sp.alloc(HOST, 64, 0);
    assert(block.get_address() !== 0, 'an address while valid');
    sp.release();
    assert(!block.is_valid(), 'invalid after release');
    assert(block.get_address() === 0, `no address after release, got ${block.get_address()}`);
    for (const [name, fn] of [
        ['read', () => block.read(0, 1)],
        ['write', () => block.write(0, new GLib.Bytes(new Uint8Array([1])))],
        ['write_data', () => block.write_data(0, new Uint8Array([1]))],
        ['fill', () => block.fill(0)]]) {
        const e = assertDsError(fn, Ds.Error.INVALID_ARGUMENT, name);
        assert(/released/.test(e.message), `${name}: ${e.message}`);
    }
    assert(sp.get_n_exports() === 0, 'no export');
});

check('to_device and to_contiguous_device return blocks', () => {
    const sp = Ds.Scratchpad.new(Ds.AccessOrder.new_for_handle(0, -1));
    const data = new Uint8Array(100).map((_, i) => i);
    let block;
    try {
        block = sp.to_device(data, 0);
    } catch (e) {
        assert(e.matches(Ds.error_quark(), Ds.Error.NO_DEVICE) ||
               e.matches(Ds.error_quark(), Ds.Error.NOT_SUPPORTED),
        `NO_DEVICE or NOT_SUPPORTED, got ${e.code}: ${e.message}`);
        assertDsError(() => sp.to_contiguous_device([new GLib.Bytes(data)], 0),
            e.code, 'to_contiguous_device without a device');
        return `no usable GPU: ${e.message}`;
    }
    assert(block.get_kind() === Ds.MemoryKind.DEVICE, 'a device block');
    assert(bytesEqual(block.read(0, 100).toArray(), data), 'uploaded');
    const [whole, blocks] = sp.to_contiguous_device(
        [new GLib.Bytes(data.subarray(0, 3)), new GLib.Bytes(data.subarray(3, 8))], 256);
    assert(whole.get_size() === 256 + 5, `whole block size ${whole.get_size()}`);
    assert(blocks.length === 2 && blocks[1].get_address() === whole.get_address() + 256,
        'one block per array');
    sp.release();
    return undefined;
});

// A resource in JavaScript: it forwards to the default host pool, so the
// addresses it hands C are Numbers that came from C.
const ForwardingResource = GObject.registerClass({
    Implements: [Ds.MemoryResource],
}, class ForwardingResource extends GObject.Object {
    _init(kind = HOST) {
        super._init();
        this._kind = kind;
        this._upstream = Ds.MemoryResource.get_default(HOST, -1);
        this.live = 0;
    }

    vfunc_get_kind() {
        return this._kind;
    }

    vfunc_allocate(size, alignment) {
        this.live++;
        return this._upstream.allocate(size, alignment);
    }

    vfunc_deallocate(ptr, size, alignment) {
        this.live--;
        this._upstream.deallocate(ptr, size, alignment);
    }
});

check('a JavaScript Ds.MemoryResource (addresses as Numbers)', () => {
    const res = new ForwardingResource();
    const sp = new Ds.Scratchpad({host_resource: res});
    assert(sp.host_resource === res, 'host-resource reads back');
    const block = sp.alloc(HOST, 1000, 64);
    assert(res.live === 1 && block.get_address() % 64 === 0, 'one block, aligned');
    block.write_data(0, new Uint8Array([42]));
    assert(block.read(0, 1).toArray()[0] === 42, 'the memory works');
    sp.release();
    assert(res.live === 0, 'given back by release()');
});

check('a resource of the wrong kind: INVALID_ARGUMENT at the first allocation', () => {
    const res = new ForwardingResource(Ds.MemoryKind.PINNED);
    const sp = new Ds.Scratchpad({host_resource: res});
    const e = assertDsError(() => sp.alloc(HOST, 16, 0), Ds.Error.INVALID_ARGUMENT,
        'pinned resource as host-resource');
    assert(/host-resource/.test(e.message) && /pinned/.test(e.message), e.message);
    assert(res.live === 0, 'never called');
});

// Whether a GPU answers: a made-up stream handle is a pointer that a real
// CUDA driver dereferences, so the cases that make one run only without.
function gpuAnswers() {
    try {
        new Ds.Scratchpad().alloc(Ds.MemoryKind.DEVICE, 16, 0);
        return true;
    } catch (e) {
        return false;
    }
}

check('properties read back what is in effect', () => {
    if (gpuAnswers())
        return 'a made-up stream handle would crash the CUDA driver';
    // A made-up handle: memory of this process (a block's), but no stream.
    const memory = new Ds.Scratchpad().alloc(HOST, 64, 0);
    const order = Ds.AccessOrder.new_for_handle(memory.get_address(), 0);
    const sp = new Ds.Scratchpad({device_order: order});
    assert(sp.pinned_dealloc_order.equal(order), 'pinned-dealloc-order: the device order');
    assert(sp.managed_dealloc_order.equal(order), 'managed-dealloc-order: the device order');
    assert(sp.host_resource === Ds.MemoryResource.get_default(HOST, -1),
        'host-resource: the default');
});

check('release() gives the memory back at once', () => {
    // gjs does not know how much native memory a scratchpad holds, so it
    // collects dropped ones late: release() (in finally) is the way.
    const sp = new Ds.Scratchpad();
    try {
        sp.alloc(HOST, 100000, 0);
        assert(sp.get_reserved(HOST) >= 100000, 'reserved');
    } finally {
        sp.release();
    }
    assert(sp.get_reserved(HOST) === 0, 'nothing reserved');
    assert(sp.get_n_exports() === 0, 'gjs makes no exports');
});

check('KernelContext.run releases its scratchpad although JS still holds it', () => {
    const ctx = Ds.KernelContext.new(Ds.AccessOrder.new_host(), null);
    let kept = null;
    assert(ctx.run(context => {
        kept = context.get_scratchpad();
        kept.alloc(HOST, 4096, 0);
        return true;
    }), 'run');
    assert(kept !== null && kept.get_reserved(HOST) === 0, 'released at return');
});

T.done();
