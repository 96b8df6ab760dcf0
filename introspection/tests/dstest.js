// dstest.js: what the gjs tests share (TAP, assertions, subprocesses)
//
// Copyright 2026 The ds authors
// SPDX-License-Identifier: LGPL-2.1-or-later
//
// Imported with imports.searchPath.unshift(DIR); const T = imports.dstest;
// The tests run with GI_TYPELIB_PATH and LD_LIBRARY_PATH set to the build
// tree; a subprocess inherits them.

/* exported GLib, Ds, check, todo, done, assert, assertDsError, runGjs, dir */

imports.gi.versions.GLib = '2.0';
imports.gi.versions.GObject = '2.0';
imports.gi.versions.Ds = '1.0';
var {GLib, Ds} = imports.gi;

let number = 0;
let failed = 0;

print('TAP version 13');

function report(ok, name, directive, error) {
    number++;
    print(`${ok ? 'ok' : 'not ok'} ${number} - ${name}${directive ? ` # ${directive}` : ''}`);
    if (error)
        for (const line of `${error}\n${error.stack || ''}`.split('\n'))
            print(`# ${line}`);
}

// A case: passes, fails, or skips when it returns a string (the reason).
function check(name, fn) {
    try {
        const skip = fn();
        report(true, name, typeof skip === 'string' ? `SKIP ${skip}` : '');
    } catch (e) {
        failed++;
        report(false, name, '', e);
    }
}

// A case that waits for a change elsewhere (TAP TODO): "not ok # TODO" while
// it fails (meson: EXPECTEDFAIL), "ok # TODO" once it passes (UNEXPECTEDPASS,
// which fails the test until the todo is lifted).
function todo(name, reason, fn) {
    try {
        fn();
        failed++;
        report(true, name, `TODO ${reason}: it passes now, lift the todo`);
    } catch (e) {
        report(false, name, `TODO ${reason}`, e);
    }
}

function done() {
    print(`1..${number}`);
    if (failed > 0)
        imports.system.exit(1);
}

function assert(cond, what) {
    if (!cond)
        throw new Error(`assertion failed: ${what}`);
}

function assertDsError(fn, code, what) {
    try {
        fn();
    } catch (e) {
        assert(e instanceof GLib.Error, `${what}: a GLib.Error, got ${e}`);
        assert(e.matches(Ds.error_quark(), code),
            `${what}: Ds.Error ${code}, got ${e.domain}/${e.code}: ${e.message}`);
        return e;
    }
    throw new Error(`${what}: no error`);
}

// Runs @code in a new gjs with Ds imported (as Ds, GLib, GObject, HOST);
// returns {status (the exit code, or -signal), stdout, stderr}.
function runGjs(code) {
    const prelude = "imports.gi.versions.Ds = '1.0';\n" +
        'const {GLib, GObject, Ds} = imports.gi;\n' +
        'const HOST = Ds.MemoryKind.HOST;\n';
    const [, out, err, wait] = GLib.spawn_sync(null, ['gjs', '-c', prelude + code], null,
        GLib.SpawnFlags.SEARCH_PATH, null);
    const decoder = new TextDecoder();
    let status = 0;
    if (GLib.WIFEXITED ? GLib.WIFEXITED(wait) : (wait & 0x7f) === 0)
        status = (wait >> 8) & 0xff;
    else
        status = -(wait & 0x7f);
    return {status, stdout: decoder.decode(out), stderr: decoder.decode(err)};
}

// The folder of the test scripts.
var dir = GLib.path_get_dirname(imports.system.programPath);
