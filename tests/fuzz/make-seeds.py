#!/usr/bin/env python3
# make-seeds.py: write the seed corpus (tests/fuzz/corpus) for ds-fuzz
#
# Copyright 2026 The ds authors
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Each seed is a small program in ds-fuzz.c's byte code: a flags byte
# (bit 0: the pool's upstream is stream-ordered, bit 1: the direct one),
# then opcodes with their operands. Keep the opcode numbers in step with
# the OP_ enum of ds-fuzz.c. Run it after adding an operation:
#   tests/fuzz/make-seeds.py tests/fuzz/corpus

import os
import struct
import sys

(SP_NEW, SP_ALLOC, SP_RELEASE, SP_UNREF, SP_GETTERS, POOL_ALLOC, POOL_FREE,
 POOL_TRIM, POOL_STATS, POOL_MAX_CACHED, BLOCK_NEW, BLOCK_IO, BLOCK_EXPORT,
 BLOCK_UNREF, ORDERS, BAD_INPUT, RAW_HOST) = range(17)


def u16(v):
    return struct.pack('<H', v)


def size(shape, v):
    return bytes([shape]) + u16(v)


def sp_new(slot, how, resource, initial=0):
    return bytes([SP_NEW, slot, how, resource]) + u16(initial)


def sp_alloc(slot, how, shape, v, align):
    return bytes([SP_ALLOC, slot, how]) + size(shape, v) + bytes([align])


def pool_alloc(async_, shape, v, align):
    return bytes([POOL_ALLOC, async_]) + size(shape, v) + bytes([align])


seeds = {
    # one scratchpad per resource, a few lifecycles
    'lifecycles': bytes([0]) + b''.join(
        sp_new(s, s, s) for s in range(3)) + b''.join(
        sp_alloc(s, k % 4, k % 8, 100 * k + 1, k % 14) for k in range(12) for s in range(3))
        + bytes([SP_RELEASE, 0, SP_RELEASE, 1, SP_GETTERS, 2, SP_UNREF, 2]),
    # growth past the first block, on the pool
    'growth': bytes([1]) + sp_new(0, 1, 1, 16) + b''.join(
        sp_alloc(0, 0, 6, 4000 + k, 5) for k in range(20)) + bytes([POOL_STATS, SP_RELEASE, 0, POOL_TRIM]),
    # the pool directly, sync and async, trim and the cache bound
    'pool': bytes([3]) + b''.join(
        pool_alloc(k & 1, k % 8, 300 * k + 7, k % 13) for k in range(16)) + b''.join(
        bytes([POOL_FREE, k, k & 1]) for k in range(10)) + bytes(
        [POOL_MAX_CACHED, 12, POOL_TRIM, POOL_STATS, POOL_MAX_CACHED, 0]),
    # blocks: write, read, fill, export, release with blocks alive
    'blocks': bytes([0]) + sp_new(0, 2, 1, 64) + b''.join(
        bytes([BLOCK_NEW, 0]) + size(k % 6, 50 + k) + bytes([k % 8]) for k in range(4)) + b''.join(
        bytes([BLOCK_IO, k, k % 3]) + u16(k) + u16(10 + k) for k in range(9)) + bytes(
        [BLOCK_EXPORT, 1, BLOCK_UNREF, 4, SP_RELEASE, 0]) + bytes([BLOCK_IO, 0, 0]) + u16(0) + u16(1)
        + bytes([BLOCK_EXPORT, 0, SP_UNREF, 0, BLOCK_UNREF, 0]),
    # blocks outliving their slot's reference
    'orphans': bytes([2]) + sp_new(1, 0, 2) + bytes([BLOCK_NEW, 1]) + size(0, 33) + bytes([3])
        + bytes([SP_UNREF, 1, BLOCK_IO, 0, 2]) + u16(5) + u16(5) + sp_new(1, 0, 0)
        + sp_alloc(1, 0, 4, 700, 4),
    # bad arguments: every case of op_bad_input
    'bad-input': bytes([0]) + sp_new(0, 0, 0) + sp_alloc(0, 0, 0, 1, 0) + b''.join(
        bytes([BAD_INPUT, k, 0, k * 3, k]) for k in range(6)) + bytes([SP_GETTERS, 0]),
    # orders and the raw host resource
    'orders-raw': bytes([0]) + bytes([ORDERS]) + u16(0x1234) + b''.join(
        bytes([RAW_HOST]) + size(k, 1000 * k + 1) + bytes([k]) for k in range(8)),
    # everything at once, interleaved
    'mixed': bytes([1]) + sp_new(0, 1, 1, 2) + sp_new(1, 2, 0, 0) + sp_new(2, 0, 2)
        + b''.join(sp_alloc(k % 3, k % 4, k % 8, 37 * k, k % 14)
                   + pool_alloc(k & 1, k % 5, 11 * k, k % 9)
                   + bytes([BLOCK_NEW, k % 3]) + size(1, k) + bytes([4])
                   + bytes([POOL_FREE, k, 1, SP_GETTERS, k % 3])
                   + (bytes([SP_RELEASE, k % 3]) if k % 5 == 4 else b'')
                   for k in range(15))
        + bytes([POOL_TRIM, SP_UNREF, 1, POOL_STATS]),
}

out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), 'corpus')
os.makedirs(out, exist_ok=True)
for name, data in seeds.items():
    with open(os.path.join(out, name), 'wb') as f:
        f.write(data)
    print('%s: %d bytes' % (name, len(data)))
