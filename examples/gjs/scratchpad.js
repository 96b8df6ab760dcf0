// scratchpad.js: ds from JavaScript (gjs)
//
// Copyright 2026 The ds authors
// SPDX-License-Identifier: LGPL-2.1-or-later
//
// Run from the source folder with `meson devenv -C build-ds -w . gjs
// examples/gjs/scratchpad.js`, or as the test ds-gjs-scratchpad.
//
// gjs has no zero-copy path: data goes in with write_data(Uint8Array) and
// out with read().toArray(). gjs does not know how much native memory a
// scratchpad holds, so a dropped one is collected late: release it in
// `finally`. KernelContext.run() does that for you.

imports.gi.versions.Ds = '1.0';
const { GLib, Ds } = imports.gi;

const HOST = Ds.MemoryKind.HOST;

// 1. The documented path: allocate, use, release in finally.
const sp = new Ds.Scratchpad({initial_size_host: 1 << 20});
try {
    const block = sp.alloc(HOST, 4096, 64);
    block.write_data(0, new TextEncoder().encode('hello from gjs'));
    const text = new TextDecoder().decode(block.read(0, 14).toArray());
    print(`host block at 0x${block.get_address().toString(16)}: "${text}"`);
    print(`reserved: ${sp.get_reserved(HOST)} bytes`);
} finally {
    sp.release();
}
print(`after release(): ${sp.get_reserved(HOST)} bytes reserved`);

// 2. A scoped scratchpad: KernelContext.run() makes one for the call and
//    releases it when the function returns.
const context = Ds.KernelContext.new(Ds.AccessOrder.new_for_handle(0, -1), null);
context.run(ctx => {
    const scratch = ctx.get_scratchpad();
    const block = scratch.alloc(HOST, 256, 0);
    block.fill(0x2a);
    print(`in run(): first byte ${block.read(0, 1).toArray()[0]}`);
    return true;
});

// 3. The GPU kinds, or why not.
const gpu = Ds.Scratchpad.new(Ds.AccessOrder.new_for_handle(0, -1));
try {
    const device = gpu.to_device(new Uint8Array([1, 2, 3, 4]), 0);
    print(`device block of ${device.get_size()} bytes: ${device.read(0, 4).toArray()}`);
} catch (e) {
    if (!(e instanceof GLib.Error))
        throw e;
    print(`no GPU here: ${e.message}`);
} finally {
    gpu.release();
}
