// bench-lifecycle.js: the binding lifecycle of bench-gi-lifecycle.c, in gjs
//
// Copyright 2026 The ds authors
// SPDX-License-Identifier: LGPL-2.1-or-later
//
// Usage: gjs bench-lifecycle.js N BATCHES; prints one JSON object per
// variant (see bench-gi-lifecycle.c): "documented" releases in finally;
// "without release()" leaves the scratchpads to the garbage collector (run
// last: it grows the process); "a plain GObject" is what gjs itself takes
// to make and drop one object; the allocation is sp.alloc(HOST, 64, 0)
// from a scratchpad released every 100. RSS "after" is before any forced
// GC.

imports.gi.versions.Ds = '1.0';
const { GLib, GObject, Ds } = imports.gi;
const System = imports.system;

const HOST = Ds.MemoryKind.HOST;
const hello = new Uint8Array([104, 101, 108, 108, 111]);

function rss() {
    const [, contents] = GLib.file_get_contents('/proc/self/statm');
    return parseInt(new TextDecoder().decode(contents).split(' ')[1]) * 4096;
}

function documented() {
    const sp = new Ds.Scratchpad();
    try {
        const block = sp.alloc(HOST, 4096, 64);
        block.write_data(0, hello);
        if (block.read(0, 5).toArray()[4] !== 111)
            throw new Error('read back wrong bytes');
    } finally {
        sp.release();
    }
}

function withoutRelease() {
    const sp = new Ds.Scratchpad();
    const block = sp.alloc(HOST, 4096, 64);
    block.write_data(0, hello);
    if (block.read(0, 5).toArray()[4] !== 111)
        throw new Error('read back wrong bytes');
}

function plainGObject() {
    const object = new GObject.Object();
    if (object === null)
        throw new Error('no object');
}

const ALLOCS_PER_RELEASE = 100;
const reused = new Ds.Scratchpad();
let count = 0;

function allocation() {
    reused.alloc(HOST, 64, 0);
    if (++count % ALLOCS_PER_RELEASE === 0)
        reused.release();
}

function reusedLifecycle() {
    try {
        const block = reused.alloc(HOST, 4096, 64);
        block.write_data(0, hello);
        if (block.read(0, 5).toArray()[4] !== 111)
            throw new Error('read back wrong bytes');
    } finally {
        reused.release();
    }
}

function run(what, name, lifecycle, n, batches) {
    for (let i = 0; i < 1000; i++)
        lifecycle();
    System.gc();
    const before = rss();
    const perBatch = Math.floor(n / batches);
    const ns = [];
    for (let b = 0; b < batches; b++) {
        const t0 = GLib.get_monotonic_time();
        for (let i = 0; i < perBatch; i++)
            lifecycle();
        ns.push((GLib.get_monotonic_time() - t0) * 1000 / perBatch);
    }
    const after = rss();
    System.gc();
    const collected = rss();
    ns.sort((a, b) => a - b);
    print(JSON.stringify({
        what, name, lifecycles: perBatch * batches, ns: ns[Math.floor(ns.length / 2)],
        rss_before: before, rss_after: after, rss_after_gc: collected,
    }));
}

const n = parseInt(ARGV[0] || '100000');
const batches = parseInt(ARGV[1] || '20');
run('lifecycle', 'gjs, documented path (release() in finally)', documented, n, batches);
run('lifecycle', 'gjs, reused scratchpad (release() per unit)', reusedLifecycle, n, batches);
run('lifecycle', 'gjs, a plain GObject made and dropped (no ds)', plainGObject, n, batches);
run('allocation', 'gjs, sp.alloc(HOST, 64, 0)', allocation, n, batches);
run('lifecycle', 'gjs, without release()', withoutRelease, n, batches);
