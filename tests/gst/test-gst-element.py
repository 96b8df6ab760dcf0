#!/usr/bin/python3
# dslumastats and DsGst-1.0 from Python (PyGObject + gst-python).
#
# Copyright 2026 The ds authors
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Run by meson (suite 'gi') with GI_TYPELIB_PATH, LD_LIBRARY_PATH and
# GST_PLUGIN_PATH set to the build tree. Prints TAP. Runs the element's
# pipeline through Gst.parse_launch and checks every statistics message
# against a reference computed here from the same frames; without a CUDA
# device the element fails with "No CUDA device" and that case skips with
# the element's own message.

import os
import sys
import threading

sys.path.insert(0, os.environ.get('DS_TAP_DIR', os.path.dirname(os.path.abspath(__file__))))

import gi  # noqa: E402

gi.require_version('GLib', '2.0')
gi.require_version('Gst', '1.0')
gi.require_version('Ds', '1.0')
gi.require_version('DsGst', '1.0')
from gi.repository import GLib, Gst, Ds, DsGst  # noqa: E402

import tap  # noqa: E402
import unittest  # noqa: E402

N_FRAMES = 30
WIDTH, HEIGHT = 64, 48


def luma_reference(data):
    """Histogram, min, max and sum of a tightly packed GRAY8 frame."""
    hist = [0] * 256
    for v in data:
        hist[v] += 1
    return hist, min(data), max(data), sum(data)


class TestElement(unittest.TestCase):
    def test_registered(self):
        factory = Gst.ElementFactory.find('dslumastats')
        self.assertIsNotNone(factory)
        element = factory.create(None)
        self.assertEqual(element.get_property('cuda-device-id'), -1)
        element.set_property('cuda-device-id', 0)
        self.assertEqual(element.get_property('cuda-device-id'), 0)

    def test_pipeline_messages(self):
        pipeline = Gst.parse_launch(
            'videotestsrc num-buffers=%d pattern=snow '
            '! video/x-raw,format=GRAY8,width=%d,height=%d,framerate=30/1 '
            '! dslumastats name=stats ! appsink name=sink emit-signals=true sync=false'
            % (N_FRAMES, WIDTH, HEIGHT))
        refs = []
        lock = threading.Lock()

        def on_sample(sink):
            sample = sink.emit('pull-sample')
            buf = sample.get_buffer()
            ok, info = buf.map(Gst.MapFlags.READ)
            self.assertTrue(ok)
            try:
                data = bytes(info.data)
            finally:
                buf.unmap(info)
            self.assertEqual(len(data), WIDTH * HEIGHT)
            with lock:
                refs.append(luma_reference(data))
            return Gst.FlowReturn.OK

        pipeline.get_by_name('sink').connect('new-sample', on_sample)
        bus = pipeline.get_bus()
        pipeline.set_state(Gst.State.PLAYING)
        stats = []
        skip = None
        try:
            while True:
                msg = bus.timed_pop_filtered(60 * Gst.SECOND,
                                             Gst.MessageType.ERROR | Gst.MessageType.EOS |
                                             Gst.MessageType.ELEMENT)
                self.assertIsNotNone(msg, 'the pipeline hangs')
                if msg.type == Gst.MessageType.ERROR:
                    err, debug = msg.parse_error()
                    if (err.matches(Gst.ResourceError.quark(), Gst.ResourceError.NOT_FOUND)
                            and err.message.startswith('No CUDA device')):
                        skip = err.message
                        break
                    self.fail('%s: %s (%s)' % (msg.src.get_name(), err.message, debug))
                if msg.type == Gst.MessageType.EOS:
                    break
                s = msg.get_structure()
                if s is not None and s.get_name() == 'ds-luma-stats':
                    ok, frame = s.get_uint64('frame')
                    self.assertTrue(ok)
                    ok, total = s.get_uint64('sum')
                    self.assertTrue(ok)
                    stats.append((frame, list(s.get_value('histogram')),
                                  s.get_uint('min')[1], s.get_uint('max')[1], total,
                                  s.get_double('mean')[1]))
        finally:
            pipeline.set_state(Gst.State.NULL)
        if skip is not None:
            self.skipTest(skip)

        self.assertEqual(len(stats), N_FRAMES)
        self.assertEqual(len(refs), N_FRAMES)
        for i, (frame, hist, mn, mx, total, mean) in enumerate(stats):
            ref_hist, ref_min, ref_max, ref_sum = refs[i]
            self.assertEqual(frame, i)
            self.assertEqual(hist, ref_hist, 'frame %d histogram' % i)
            self.assertEqual((mn, mx, total), (ref_min, ref_max, ref_sum), 'frame %d' % i)
            self.assertEqual(mean, ref_sum / (WIDTH * HEIGHT))


class TestScratchMeta(unittest.TestCase):
    def test_meta_from_python(self):
        info = DsGst.scratch_meta_get_info()
        self.assertIsNotNone(info)
        sp = Ds.Scratchpad()
        block = sp.alloc(Ds.MemoryKind.HOST, 64, 0)
        self.assertTrue(block.is_valid())
        buf = Gst.Buffer.new_allocate(None, 16, None)
        meta = DsGst.buffer_add_scratch_meta(buf, sp)
        self.assertIsNotNone(meta)
        got = DsGst.buffer_get_scratch_meta(buf, 0)
        self.assertIsNotNone(got)
        self.assertEqual(got.scratchpad, sp)
        self.assertIsNone(DsGst.buffer_get_scratch_meta(buf, GLib.quark_from_string('other')))

    def test_consumer_api(self):
        sp = Ds.Scratchpad()
        sp.alloc(Ds.MemoryKind.HOST, 64, 0)
        buf = Gst.Buffer.new_allocate(None, 16, None)
        DsGst.buffer_add_scratch_meta(buf, sp)
        meta = DsGst.buffer_get_scratch_meta(buf, 0)
        host = Ds.AccessOrder.new_host()
        # Host scratch: no producer order; a host consumer waits for
        # nothing and needs no registration.
        self.assertIsNone(meta.get_order())
        self.assertTrue(meta.wait(host))
        self.assertTrue(meta.add_reader(host))


if __name__ == '__main__':
    Gst.init(None)
    tap.main()
