#!/usr/bin/python3
# Ds.Recorder from Python: a memory timeline of a pool and a scratchpad,
# written as the documented CSV, and watches as Python callables.
#
# Copyright 2026 The ds authors
# SPDX-License-Identifier: LGPL-2.1-or-later

import csv
import gc
import os
import sys
import tempfile
import threading
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from dstest import *  # noqa: E402,F401,F403
from dstest import GLib, Ds  # noqa: E402

import tap  # noqa: E402

COLUMNS = ['time', 'event', 'source', 'id', 'kind', 'device', 'count', 'bytes',
           'held', 'in_use', 'pending', 'peak', 'pool', 'label']


def read_recording(path):
    """The rows of a recording (comment lines left out), as dicts."""
    with open(path, newline='') as f:
        first = f.readline()
        lines = [line for line in f if not line.startswith('#')]
    reader = csv.DictReader(lines)
    return first, reader.fieldnames, list(reader)


class TestRecorder(DsTestCase):
    def setUp(self):
        self.pool = Ds.PoolResource.new(Ds.HostMemoryResource.new())
        self.sp = Ds.Scratchpad(host_resource=self.pool)

    def test_properties(self):
        rec = Ds.Recorder.new(128)
        self.assertEqual(rec.props.capacity, 128)
        self.assertEqual(rec.props.interval, Ds.RECORDER_DEFAULT_INTERVAL)
        self.assertIsNone(rec.props.file)
        self.assertFalse(rec.props.running)
        rec = Ds.Recorder(file='/tmp/x.csv')
        self.assertEqual(rec.get_file(), '/tmp/x.csv')
        self.assertEqual(rec.get_capacity(), Ds.RECORDER_DEFAULT_CAPACITY)

    def test_timeline_csv(self):
        rec = Ds.Recorder.new(1024)
        rec.set_interval(0)
        rec.start()
        try:
            self.assertEqual(Ds.Recorder.dup_running(), rec)
            for _ in range(3):
                self.sp.alloc(HOST, 1000)
                self.sp.release()
            rec.mark('done, "really"')
            self.pool.trim()
        finally:
            rec.stop()
        self.assertIsNone(Ds.Recorder.dup_running())

        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, 'rec.csv')
            self.assertTrue(rec.write(path))
            first, fields, rows = read_recording(path)
        self.assertEqual(first, '# ds memory recording, format 1\n')
        self.assertEqual(fields, COLUMNS)
        self.assertEqual(len(rows), rec.props.n_samples)

        times = [float(r['time']) for r in rows]
        self.assertEqual(times, sorted(times))
        events = [r['event'] for r in rows if r['source'] == 'pool' and r['label'] != 'default']
        for e in ('upstream-alloc', 'miss', 'hit', 'free', 'trim', 'sample'):
            self.assertIn(e, events)
        marks = [r for r in rows if r['event'] == 'mark']
        self.assertEqual([m['label'] for m in marks], ['done, "really"'])
        trim = [r for r in rows if r['event'] == 'trim'][-1]
        self.assertEqual(int(trim['held']), 0)
        self.assertEqual(int(trim['bytes']), 64 * KiB)
        self.assertEqual(trim['kind'], 'host')
        blocks = [r for r in rows if r['source'] == 'scratchpad' and r['event'] == 'block']
        self.assertEqual(blocks[0]['pool'], trim['id'])

    def test_watch(self):
        rec = Ds.Recorder.new(64)
        seen = []
        lock = threading.Lock()

        def watch(recorder, sample):
            with lock:
                seen.append((sample.event, sample.source, sample.bytes, sample.kind))

        wid = rec.add_watch(watch)
        rec.start()
        try:
            self.sp.alloc(HOST, 100)
            self.sp.release()
        finally:
            rec.stop()
        rec.remove_watch(wid)
        self.assertIn((Ds.RecorderEvent.BLOCK, Ds.RecorderSource.SCRATCHPAD, 64 * KiB, HOST), seen)
        self.assertIn((Ds.RecorderEvent.RELEASE, Ds.RecorderSource.SCRATCHPAD, 64 * KiB, HOST), seen)

    def test_export_hold(self):
        # A release that meets a live view keeps the block the view uses:
        # the recording and the watches see it kept and given back.
        try:
            import numpy as np
        except ImportError:
            self.skipTest('NumPy is not installed (python3-numpy)')
        rec = Ds.Recorder.new(256)
        rec.set_interval(0)
        seen = []

        def watch(recorder, sample):
            if sample.source == Ds.RecorderSource.SCRATCHPAD:
                seen.append((sample.event, sample.kind, sample.bytes, sample.held))

        wid = rec.add_watch(watch)
        rec.start()
        try:
            view = self.sp.empty((256,), np.uint8)
            self.sp.alloc(HOST, 1 * MiB)        # a block of its own, no view
            reserved = self.sp.get_reserved(HOST)
            self.sp.release()                   # the with-block's release
            held = self.sp.get_held_by_exports(HOST)
            self.assertGreater(held, 0)
            del view
            gc.collect()
            self.assertEqual(self.sp.get_held_by_exports(HOST), 0)
        finally:
            rec.stop()
        rec.remove_watch(wid)
        hold = (Ds.RecorderEvent.EXPORT_HOLD, HOST, held, held)
        back = (Ds.RecorderEvent.EXPORT_RETURN, HOST, held, 0)
        self.assertIn(hold, seen)
        self.assertIn(back, seen)
        self.assertLess(seen.index(hold), seen.index(back))
        # The release gave the rest back at once.
        released = [s for s in seen if s[0] == Ds.RecorderEvent.RELEASE]
        self.assertEqual([s[2] for s in released], [reserved - held])

        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, 'rec.csv')
            self.assertTrue(rec.write(path))
            _, _, rows = read_recording(path)
        rows = [r for r in rows if r['event'] in ('export-hold', 'export-return')]
        self.assertEqual([(r['event'], r['source'], r['kind'], int(r['bytes']), int(r['held']))
                          for r in rows],
                         [('export-hold', 'scratchpad', 'host', held, held),
                          ('export-return', 'scratchpad', 'host', held, 0)])
        self.assertEqual(rows[0]['id'], rows[1]['id'])
        self.assertEqual(rows[0]['pool'], rows[1]['pool'])

    def test_one_at_a_time(self):
        a, b = Ds.Recorder.new(16), Ds.Recorder.new(16)
        a.start()
        try:
            self.assertRaisesDsError(Ds.Error.BUSY, b.start)
        finally:
            a.stop()

    def test_file_error(self):
        rec = Ds.Recorder.new_for_file('/nonexistent/dir/rec.csv', 16)
        with self.assertRaises(GLib.Error) as cm:
            rec.start()
        self.assertTrue(cm.exception.matches(GLib.file_error_quark(), GLib.FileError.NOENT))


if __name__ == '__main__':
    tap.main()
