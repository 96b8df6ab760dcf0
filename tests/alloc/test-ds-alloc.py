#!/usr/bin/env python3
# test-ds-alloc.py: the ds_alloc package without PyGObject (TAP)
#
# Copyright 2026 The ds authors
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Runs with any python3 and libds-alloc on LD_LIBRARY_PATH (meson test sets
# it): the package imports without PyTorch, CuPy or a CUDA driver, and each
# refusal is a clear exception. The parts that need PyTorch or CuPy skip,
# with the reason, where they are missing; the GPU behaviour is checked by
# ds-alloc-gpu-check.py on a GPU machine.

import importlib.util
import os
import subprocess
import sys
import traceback
import unittest


def has_module(name):
    return importlib.util.find_spec(name) is not None


class TestPackage(unittest.TestCase):
    def test_import_loads_nothing(self):
        # Importing the package and its framework modules neither needs
        # PyTorch/CuPy nor loads libds-alloc, even where it is missing.
        code = ("import sys, ds_alloc, ds_alloc.torch, ds_alloc.cupy, ds_alloc._lib as l\n"
                "assert l._lib is None\n"
                "assert 'torch' not in sys.modules and 'cupy' not in sys.modules\n"
                "try:\n"
                "    ds_alloc.live_blocks()\n"
                "except ds_alloc.DsAllocError as e:\n"
                "    assert e.code == 'NOT_FOUND', e.code\n"
                "    assert 'libds-alloc' in str(e) and 'LD_LIBRARY_PATH' in str(e), str(e)\n"
                "    print('refused')\n"
                "else:\n"
                "    print('installed')\n")
        env = dict(os.environ, LD_LIBRARY_PATH="")
        r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                           text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        # "installed": a libds-alloc installed system-wide was found.
        self.assertIn(r.stdout.strip(), ("refused", "installed"))

    def test_library_path(self):
        import ds_alloc
        self.assertIn("libds-alloc-1.0.so", ds_alloc.library_path())
        self.assertEqual(ds_alloc.live_blocks(), (0, 0))
        ds_alloc.reset_peak_bytes()
        self.assertEqual(ds_alloc.peak_bytes(), 0)
        self.assertEqual(ds_alloc.ALIGNMENT, 256)


class TestNoDevice(unittest.TestCase):
    def setUp(self):
        import ds_alloc
        try:
            ptr = ds_alloc.allocate(256, device=0)
        except ds_alloc.DsAllocError:
            return
        ds_alloc.deallocate(ptr)
        self.skipTest("a CUDA device is usable here")

    def test_integer_stream_not_dereferenced(self):
        # An integer stream handle must be a live stream, as in every CUDA
        # binding (the driver dereferences it). Without a driver nothing
        # touches it: the allocation is refused for want of a device.
        import ds_alloc
        with self.assertRaises(ds_alloc.DsAllocError) as cm:
            ds_alloc.allocate(16, stream=0x10)
        self.assertIn(cm.exception.code, ("NO_DEVICE", "NOT_SUPPORTED"))

    def test_allocate_refused(self):
        import ds_alloc
        with self.assertRaises(ds_alloc.DsAllocError) as cm:
            ds_alloc.allocate(1 << 20, device=0)
        self.assertIn(cm.exception.code, ("NO_DEVICE", "NOT_SUPPORTED"))
        self.assertTrue(str(cm.exception))
        self.assertEqual(ds_alloc.live_blocks(), (0, 0))

    def test_default_pool_refused(self):
        import ds_alloc
        with self.assertRaises(ds_alloc.DsAllocError) as cm:
            ds_alloc.default_pool(0)
        self.assertIn(cm.exception.code, ("NO_DEVICE", "NOT_SUPPORTED"))

    def test_own_pool(self):
        # A pool of one's own is made without touching CUDA; its
        # properties are the DsPoolResource's.
        import ds_alloc
        pool = ds_alloc.Pool(0, release_threshold=1 << 20, idle_timeout=100,
                             max_cached_size=64 << 20)
        self.assertEqual(pool.release_threshold, 1 << 20)
        self.assertEqual(pool.idle_timeout, 100)
        self.assertEqual(pool.max_cached_size, 64 << 20)
        stats = pool.stats()
        self.assertEqual(stats["bytes_held"], 0)
        self.assertEqual(stats["bytes_in_use"], 0)
        self.assertEqual(pool.trim(), 0)
        self.assertEqual(ds_alloc.trim_defaults(), 0)
        with self.assertRaises(ds_alloc.DsAllocError) as cm:
            ds_alloc.allocate(4096, device=0, pool=pool)
        self.assertIn(cm.exception.code, ("NO_DEVICE", "NOT_SUPPORTED"))
        with ds_alloc.using_pool(pool):
            with self.assertRaises(ds_alloc.DsAllocError):
                ds_alloc.allocate(4096, device=0)
        with self.assertRaises(ValueError):
            pool.idle_timeout = -1
        with self.assertRaises(ValueError):
            ds_alloc.Pool(-1)


class TestBadInput(unittest.TestCase):
    def test_foreign_addresses(self):
        import ds_alloc
        for fn, says in ((lambda: ds_alloc.deallocate(0x1000), "ds_alloc_allocate"),
                         (lambda: ds_alloc.add_reader(0x1000, 0, 0), "libds-alloc")):
            with self.assertRaises(ds_alloc.DsAllocError) as cm:
                fn()
            self.assertEqual(cm.exception.code, "INVALID_ARGUMENT")
            self.assertIn(says, str(cm.exception))

    def test_types(self):
        import ds_alloc
        with self.assertRaises(ValueError):
            ds_alloc.allocate(-1)
        with self.assertRaises(ValueError):
            ds_alloc.allocate(16, device=-2)
        with self.assertRaises(TypeError):
            ds_alloc.allocate(16, stream="stream")
        with self.assertRaises(TypeError):
            ds_alloc.deallocate(1.5)
        with self.assertRaises(ValueError):
            ds_alloc.allocate(16, stream=-1)

class TestFrameworks(unittest.TestCase):
    def test_torch_absent(self):
        if has_module("torch"):
            self.skipTest("PyTorch is installed: its absence is not seen")
        import ds_alloc.torch
        for fn in (ds_alloc.torch.allocator, ds_alloc.torch.scope().__enter__,
                   ds_alloc.torch.use_for_process):
            with self.assertRaises(ImportError) as cm:
                fn()
            self.assertIn("PyTorch", str(cm.exception))

    def test_torch_without_device(self):
        if not has_module("torch"):
            self.skipTest("PyTorch is not installed")
        import torch
        import ds_alloc.torch
        if torch.cuda.is_available():
            self.skipTest("PyTorch sees a CUDA device")
        with self.assertRaises(ds_alloc.torch.DsAllocError) as cm:
            ds_alloc.torch.scope().__enter__()
        self.assertEqual(cm.exception.code, "NO_DEVICE")

    def test_cupy_absent(self):
        if has_module("cupy"):
            self.skipTest("CuPy is installed: its absence is not seen")
        import ds_alloc.cupy
        with self.assertRaises(ImportError) as cm:
            ds_alloc.cupy.allocator()
        self.assertIn("CuPy", str(cm.exception))


def main():
    tests = unittest.defaultTestLoader.loadTestsFromModule(sys.modules[__name__])
    flat = []

    def walk(suite):
        for t in suite:
            if isinstance(t, unittest.TestSuite):
                walk(t)
            else:
                flat.append(t)

    walk(tests)
    print("1..%d" % len(flat), flush=True)
    failed = 0
    for i, test in enumerate(flat, 1):
        result = unittest.TestResult()
        test.run(result)
        name = test.id().split(".", 1)[-1]
        if result.skipped:
            print("ok %d - %s # SKIP %s" % (i, name, result.skipped[0][1]), flush=True)
        elif result.failures or result.errors:
            failed += 1
            print("not ok %d - %s" % (i, name), flush=True)
            for _, text in result.failures + result.errors:
                for line in text.splitlines():
                    print("# " + line, flush=True)
        else:
            print("ok %d - %s" % (i, name), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Exception:
        traceback.print_exc()
        print("Bail out! the test program failed", flush=True)
        sys.exit(1)
