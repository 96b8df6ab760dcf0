#!/usr/bin/env python3
# ds-alloc-gpu-check.py: ds_alloc against PyTorch's and CuPy's own allocators
#
# Copyright 2026 The ds authors
# SPDX-License-Identifier: LGPL-2.1-or-later

"""Checks ds_alloc on a GPU machine that has PyTorch and CuPy, against their
own allocators, in alternating runs (each PyTorch run in a process of its
own, since the whole-process form must be chosen before the first CUDA
allocation):

  train    a small CNN, 30 SGD steps: the loss sequences must be bitwise
           identical; time per step; memory held (ds) against reserved
           (PyTorch) and the in-use peaks
  churn    4,000 random-size tensors on two streams, every sum checked;
           time per tensor; memory as above
  scoped   the same model, inference and training, inside
           ds_alloc.torch.scope (a MemPool over ds), alternating with
           PyTorch's allocator in one process; the memory given back when
           the scope ends
  gate     a tensor read on a second stream, held back by a gate (a sleep
           kernel), while its memory goes back to ds and is taken again on
           the first stream: the reader must see the right bytes with the
           reader registration (hand_off, add_reader), and does not without
  cupy     the churn with CuPy, its own pool against ds (each run in a
           process of its own)
  costs    what the churn's CUDA calls cost one by one: cudaMalloc and
           cudaFree of small and large blocks, an event record and query,
           a stream query, a ds allocate/deallocate pair through ctypes
  trace    the churn once more under PyTorch's own allocator with its
           memory history on: the sizes, streams and order of every
           allocation and free, written to churn-trace.json (what the pool
           simulation in tests/alloc replays); not timed
  memcheck compute-sanitizer --tool memcheck on a short whole-process run

Usage (libds-alloc's folder on LD_LIBRARY_PATH, ds_alloc on PYTHONPATH):

  ds-alloc-gpu-check.py [--out DIR] [--budget SECONDS] [--skip-memcheck] [--tight]
                        [--variant NAME=LIBDIR] [--only NAME...]

tests/alloc/make-gpu-bundle.sh BUILDDIR DIR packs it with the libraries it
needs for a machine without GLib; DIR/run.sh runs it there.

Logs go to DIR (default $OUT, else the current folder); a short table is
printed last. Exit status 0 when every check held.
"""

import argparse
import contextlib
import json
import os
import random
import shutil
import statistics
import struct
import subprocess
import sys
import time

MiB = 1 << 20
RESULT = "RESULT "
GATE_CYCLES = 400_000_000     # about 0.2 s on an H100


# --- workloads (in child processes) -----------------------------------------

def set_deterministic(torch):
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False
    torch.use_deterministic_algorithms(True, warn_only=True)


def train(torch, steps=30, batch=256, on_step=None, infer=False):
    nn = torch.nn
    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(64 * 8 * 8, 256), nn.ReLU(), nn.Linear(256, 10)).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    g = torch.Generator(device="cuda").manual_seed(1)
    losses, times = [], []
    for step in range(steps):
        t0 = time.perf_counter()
        x = torch.randn(batch, 3, 32, 32, device="cuda", generator=g)
        y = torch.randint(0, 10, (batch,), device="cuda", generator=g)
        if infer:
            with torch.no_grad():
                loss = torch.nn.functional.cross_entropy(model(x), y)
        else:
            loss = torch.nn.functional.cross_entropy(model(x), y)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
        losses.append(loss.item())
        times.append(time.perf_counter() - t0)
        if on_step:
            on_step()
    del model, opt
    # Bitwise: the float64 of each loss, as hex.
    return [struct.pack("<d", v).hex() for v in losses], times


def churn(torch, n=4000, seed=2, live=48, max_numel=2_000_000, on_tick=None):
    rng = random.Random(seed)
    streams = [torch.cuda.Stream(), torch.cuda.Stream()]
    sums, kept = [], []
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for i in range(n):
        numel = rng.randint(1, max_numel)
        v = rng.randint(1, 7)
        with torch.cuda.stream(streams[i % 2]):
            x = torch.full((numel,), float(v), device="cuda")
            y = x * 2 + 1
            sums.append((y.sum(dtype=torch.float64), numel * (2 * v + 1)))
            kept.append(x)
            if len(kept) > live:
                kept.pop(rng.randrange(len(kept)))
            del x, y
        if on_tick and i % 10 == 0:
            on_tick()
    torch.cuda.synchronize()
    elapsed = time.perf_counter() - t0
    wrong = sum(1 for s, want in sums if s.item() != want)
    del sums, kept
    if on_tick:
        on_tick()
    return {"n": n, "wrong": wrong, "us_per_tensor": elapsed / n * 1e6}


def gate(torch, ds_alloc, form, register, pool=None):
    """A tensor made on stream A is read on stream B behind a gate, then
    its memory goes back to ds and is taken again on A and overwritten.
    Returns whether B read the right bytes and whether the memory was
    taken again (without that the check proves nothing)."""
    import ds_alloc.torch as dst
    A = torch.cuda.current_stream()
    B = torch.cuda.Stream()
    n = 1 << 20
    out = torch.zeros(n, device="cuda")
    torch.cuda.synchronize()

    def in_ds():
        return dst.scope(pool) if form == "scoped" else contextlib.nullcontext()

    with in_ds():
        t = torch.full((n,), 7.0, device="cuda")
        first = t.data_ptr()
        B.wait_stream(A)
        with torch.cuda.stream(B):
            if hasattr(torch.cuda, "_sleep"):
                torch.cuda._sleep(GATE_CYCLES)
            else:
                m = torch.randn(4096, 4096, device="cuda")
                for _ in range(40):
                    m = m @ m / 4096
            out.copy_(t)
        if register == "hand_off":
            dst.hand_off(t, B)
        elif register == "reader":
            ds_alloc.add_reader(t.data_ptr(), B.cuda_stream, t.device.index)
        del t
    with in_ds():
        u = torch.full((n,), 9.0, device="cuda")
        reused = u.data_ptr() == first
        torch.cuda.synchronize()
        del u
    right = bool((out == 7.0).all().item())
    return {"right": right, "reused": reused}


def child_torch(mode, workload):
    import torch
    import ds_alloc
    import ds_alloc.torch as dst
    set_deterministic(torch)
    result = {"mode": mode, "workload": workload, "torch": torch.__version__}
    pool = None
    held = [0]

    def sample():
        # both sides pay for a reading
        if pool is not None:
            held[0] = max(held[0], pool.stats()["bytes_held"])
        else:
            torch.cuda.memory_reserved()

    if mode.startswith("process"):
        pool = ds_alloc.Pool(0)
        if mode == "process-tight":
            # A pool of one's own tuned through its public properties: cache
            # little, give back what is idle at once.
            pool.max_cached_size = 64 * MiB
            pool.release_threshold = 0
            pool.idle_timeout = 0
        dst.use_for_process(pool)
    torch.cuda.init()
    result["device"] = torch.cuda.get_device_name(0)
    if pool is None:
        torch.cuda.reset_peak_memory_stats()
    if workload == "churn" and pool is not None:
        # first, on a fresh pool: the block given back is the one taken again
        result["gate_none"] = gate(torch, ds_alloc, "process", "none")
        result["gate_hand_off"] = gate(torch, ds_alloc, "process", "hand_off")

    if pool is not None:
        ds_alloc.reset_peak_bytes()
    if workload == "train":
        losses, times = train(torch, on_step=sample)
        result["losses"] = losses
        result["ms_per_step"] = statistics.median(times[5:]) * 1e3
    elif workload == "churn":
        result.update(churn(torch, on_tick=sample))
    sample()
    if pool is not None:
        s = pool.stats()
        result["ds_held_peak"] = held[0]
        result["ds_in_use_peak"] = ds_alloc.peak_bytes()
        result["ds_demand_peak"] = s["peak_bytes_in_use"]
        result["ds_stats"] = s
    else:
        result["torch_reserved_peak"] = torch.cuda.max_memory_reserved()
        result["torch_allocated_peak"] = torch.cuda.max_memory_allocated()
    return result


def child_scoped():
    import torch
    import ds_alloc
    import ds_alloc.torch as dst
    set_deterministic(torch)
    result = {"mode": "scoped", "device": torch.cuda.get_device_name(0)}
    pool = ds_alloc.Pool(0)
    runs = []
    for rnd in range(2):
        for infer in (True, False):
            kind = "infer" if infer else "train"
            # PyTorch's own allocator
            torch.cuda.empty_cache()
            torch.cuda.reset_peak_memory_stats()
            losses, times = train(torch, infer=infer)
            torch.cuda.synchronize()
            runs.append({"form": "native", "kind": kind, "losses": losses,
                         "ms_per_step": statistics.median(times[5:]) * 1e3,
                         "reserved_peak": torch.cuda.max_memory_reserved(),
                         "allocated_peak": torch.cuda.max_memory_allocated(),
                         "reserved_after": torch.cuda.memory_reserved()})
            torch.cuda.empty_cache()
            # the same in a ds scope (backward runs on autograd's own
            # thread, which the scope does not cover)
            held = [0]
            reserved = [0]

            def sample():
                held[0] = max(held[0], pool.stats()["bytes_held"])
                reserved[0] = max(reserved[0], torch.cuda.memory_reserved())

            with dst.scope(pool):
                losses, times = train(torch, on_step=sample, infer=infer)
                sample()
                in_scope = pool.stats()
            after_exit = pool.stats()
            torch.cuda.synchronize()
            trimmed = pool.trim()
            after_trim = pool.stats()
            runs.append({"form": "scoped", "kind": kind, "losses": losses,
                         "ms_per_step": statistics.median(times[5:]) * 1e3,
                         "ds_held_peak": held[0], "torch_reserved_in_scope": reserved[0],
                         "ds_in_use_end_of_scope": in_scope["bytes_in_use"],
                         "ds_in_use_after_exit": after_exit["bytes_in_use"],
                         "ds_held_after_exit": after_exit["bytes_held"],
                         "ds_trimmed": trimmed,
                         "ds_held_after_trim": after_trim["bytes_held"],
                         "release_threshold": pool.release_threshold,
                         "torch_reserved_after_exit": torch.cuda.memory_reserved()})
    result["runs"] = runs
    for register in ("none", "reader", "hand_off"):
        result["gate_" + register] = gate(torch, ds_alloc, "scoped", register, pool)
    result["live_blocks_end"] = ds_alloc.live_blocks()
    return result


def cupy_churn(cp, n=2000, seed=3, live=48, max_numel=2_000_000, on_tick=None):
    rng = random.Random(seed)
    streams = [cp.cuda.Stream(non_blocking=True), cp.cuda.Stream(non_blocking=True)]
    sums, kept = [], []
    cp.cuda.Device().synchronize()
    t0 = time.perf_counter()
    for i in range(n):
        numel = rng.randint(1, max_numel)
        v = rng.randint(1, 7)
        with streams[i % 2]:
            x = cp.full((numel,), v, dtype=cp.float32)
            y = x * 2 + 1
            sums.append((y.sum(dtype=cp.float64), numel * (2 * v + 1)))
            kept.append(x)
            if len(kept) > live:
                kept.pop(rng.randrange(len(kept)))
            del x, y
        if on_tick and i % 10 == 0:
            on_tick()
    cp.cuda.Device().synchronize()
    elapsed = time.perf_counter() - t0
    wrong = sum(1 for s, want in sums if float(s.get()) != want)
    return {"n": n, "wrong": wrong, "us_per_array": elapsed / n * 1e6}


def stage(what):
    """Where a child is, on stderr (in the log if it dies)."""
    print("stage:", what, file=sys.stderr, flush=True)


def child_cupy(form):
    import cupy as cp
    import ds_alloc
    import ds_alloc.cupy as dsc
    result = {"mode": "cupy", "form": form, "cupy": cp.__version__}
    cp.cuda.Device(0).use()
    result["device"] = cp.cuda.runtime.getDeviceProperties(0)["name"].decode()
    cupy_pool = cp.get_default_memory_pool()
    stage("warm-up with CuPy's pool")
    cupy_churn(cp, n=200)        # kernels are compiled on first use
    cupy_pool.free_all_blocks()
    if form == "native":
        total = [0]

        def sample_cupy():
            total[0] = max(total[0], cupy_pool.total_bytes())

        stage("churn, CuPy's pool")
        r = cupy_churn(cp, on_tick=sample_cupy)
        r.update(held_peak=total[0], held_after=cupy_pool.total_bytes())
    else:
        pool = ds_alloc.Pool(0)
        held = [0]

        def sample_ds():
            held[0] = max(held[0], pool.stats()["bytes_held"])

        stage("churn, ds")
        with dsc.scope(pool):
            r = cupy_churn(cp, on_tick=sample_ds)
        stage("churn done")
        cp.cuda.Device().synchronize()
        s = pool.stats()
        r.update(held_peak=held[0], in_use_after=s["bytes_in_use"],
                 in_use_peak=s["peak_bytes_in_use"], ds_stats=s)
        result["live_blocks_end"] = ds_alloc.live_blocks()
    result.update(r)
    stage("result")
    return result


def child_costs():
    import ctypes
    import cupy as cp
    import ds_alloc
    from ds_alloc import _lib
    rt = cp.cuda.runtime
    cp.cuda.Device(0).use()
    out = {"mode": "costs", "device": rt.getDeviceProperties(0)["name"].decode()}

    def per_call(fn, n):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        return (time.perf_counter() - t0) / n * 1e6

    rt.free(rt.malloc(1 << 20))
    for size, n in ((256, 2000), (4 << 20, 100), (8 << 20, 100)):
        ptrs = []
        t0 = time.perf_counter()
        for _ in range(n):
            ptrs.append(rt.malloc(size))
        out["cudaMalloc_us_%d" % size] = (time.perf_counter() - t0) / n * 1e6
        t0 = time.perf_counter()
        for p in ptrs:
            rt.free(p)
        out["cudaFree_us_%d" % size] = (time.perf_counter() - t0) / n * 1e6
    s = cp.cuda.Stream(non_blocking=True)
    e = cp.cuda.Event(disable_timing=True)
    out["eventRecord_us"] = per_call(lambda: rt.eventRecord(e.ptr, s.ptr), 2000)
    out["eventQuery_us"] = per_call(lambda: rt.eventQuery(e.ptr), 2000)
    out["streamQuery_us"] = per_call(lambda: rt.streamQuery(s.ptr), 2000)
    lib = _lib._load()
    pool = ds_alloc.Pool(0)
    out["ctypes_call_us"] = per_call(lambda: lib.ds_alloc_get_n_blocks(), 5000)
    sp = ctypes.c_void_p(s.ptr)

    def pair():
        p = lib.ds_alloc_allocate(pool, 4096, 0, sp, None)
        lib.ds_alloc_deallocate(p, None)

    pair()
    out["ds_pair_4k_us"] = per_call(pair, 5000)
    out["ds_stats"] = pool.stats()
    s.synchronize()
    return out


def child_trace():
    """The churn under PyTorch's own allocator with its memory history:
    [action, size, stream index, address] per event, in order."""
    import torch
    torch.cuda.init()
    torch.cuda.memory._record_memory_history(max_entries=200_000, context=None,
                                             stacks="python")
    r = churn(torch)
    snap = torch.cuda.memory._snapshot()
    torch.cuda.memory._record_memory_history(enabled=None)
    trace = snap["device_traces"][0]
    streams = {}
    events = []
    for e in trace:
        if e["action"] not in ("alloc", "free_completed", "segment_alloc", "segment_free"):
            continue
        sid = streams.setdefault(e.get("stream", 0), len(streams))
        events.append([e["action"], e["size"], sid, e["addr"]])
    out = os.environ.get("DS_CHECK_OUT", ".")
    with open(os.path.join(out, "churn-trace.json"), "w") as f:
        json.dump({"torch": torch.__version__, "device": torch.cuda.get_device_name(0),
                   "reserved_peak": torch.cuda.max_memory_reserved(),
                   "allocated_peak": torch.cuda.max_memory_allocated(),
                   "events": events}, f)
    return {"mode": "trace", "n_events": len(events), "wrong": r["wrong"],
            "device": torch.cuda.get_device_name(0)}


def child_memcheck():
    import torch
    import ds_alloc
    import ds_alloc.torch as dst
    pool = ds_alloc.Pool(0)
    dst.use_for_process(pool)
    r = churn(torch, n=100, max_numel=200_000)
    g = gate(torch, ds_alloc, "process", "hand_off")
    out = {"mode": "memcheck", "churn_wrong": r["wrong"], "gate": g}
    try:
        import cupy as cp
        import ds_alloc.cupy as dsc
        with dsc.scope(pool):
            out["cupy_wrong"] = cupy_churn(cp, n=100, max_numel=200_000)["wrong"]
    except ImportError:
        out["cupy_wrong"] = None
    return out


def run_child(name):
    import faulthandler
    faulthandler.enable(all_threads=True)
    if name == "scoped":
        r = child_scoped()
    elif name.startswith("cupy:"):
        r = child_cupy(name.split(":")[1])
    elif name == "trace":
        r = child_trace()
    elif name == "costs":
        r = child_costs()
    elif name == "memcheck":
        r = child_memcheck()
    else:
        mode, workload = name.split(":")
        r = child_torch(mode, workload)
    print(RESULT + json.dumps(r), flush=True)


# --- the driver ------------------------------------------------------------

def spawn(args, out_dir, name, log, timeout, prefix=()):
    """Runs child @name; a name "MODE@VARIANT:WORKLOAD" runs MODE:WORKLOAD
    with the libraries of that --variant first on LD_LIBRARY_PATH."""
    child, variant = name, None
    if "@" in name:
        mode, workload = name.split(":")
        mode, variant = mode.split("@")
        child = mode + ":" + workload
    cmd = list(prefix) + [sys.executable, os.path.abspath(__file__), "--child", child]
    t0 = time.time()
    try:
        env = dict(os.environ, PYTHONFAULTHANDLER="1", DS_CHECK_OUT=os.path.abspath(out_dir))
        if variant:
            env["LD_LIBRARY_PATH"] = args.variants[variant] + ":" + env.get("LD_LIBRARY_PATH", "")
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
        text, rc = p.stdout + p.stderr, p.returncode
    except subprocess.TimeoutExpired as e:
        text = (e.stdout or b"").decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        text += "\nTIMEOUT after %d s" % timeout
        rc = 124
    log.write("=== %s (rc %d, %.1f s): %s\n%s\n" % (name, rc, time.time() - t0, " ".join(cmd), text))
    log.flush()
    for line in text.splitlines():
        if line.startswith(RESULT):
            r = json.loads(line[len(RESULT):])
            r["rc"] = rc
            r["output_tail"] = text[-2000:] if rc else ""
            return r
    return {"rc": rc, "error": text[-3000:]}


def fmt_mib(b):
    return "%.0f MiB" % (b / MiB) if b is not None else "-"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--child")
    ap.add_argument("--out", default=os.environ.get("OUT", "."))
    ap.add_argument("--skip-memcheck", action="store_true")
    ap.add_argument("--budget", type=float, default=280,
                    help="seconds for everything; children that no longer fit are skipped")
    ap.add_argument("--tight", action="store_true",
                    help="also run the whole-process forms on a pool tuned to cache little")
    ap.add_argument("--variant", action="append", default=[], metavar="NAME=LIBDIR",
                    help="also run the whole-process churn and training with the libraries "
                    "in LIBDIR (another libds, say) first on LD_LIBRARY_PATH, in the same "
                    "alternation")
    ap.add_argument("--only", nargs="*", help="run only these children (e.g. cupy "
                    "native:churn process:churn)")
    args = ap.parse_args()
    args.variants = dict(v.split("=", 1) for v in args.variant)
    if args.child:
        run_child(args.child)
        return 0

    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    os.environ["PYTHONUNBUFFERED"] = "1"
    os.makedirs(args.out, exist_ok=True)
    log = open(os.path.join(args.out, "ds-alloc-gpu.log"), "w")
    results = {}
    order = []
    for rnd in range(2):          # alternating: PyTorch's own, then ds
        for workload in ("train", "churn"):
            for mode in ["native", "process"] + ["process@" + v for v in args.variants]:
                order.append("%s:%s" % (mode, workload))
    if args.tight:
        order += ["process-tight:train", "process-tight:churn"]
    order += ["scoped"]
    order += ["cupy:native", "cupy:ds"] * 2
    order += ["costs"]
    if args.only:
        order = [n for n in order if n in args.only or n.split(":")[0] in args.only]
    start = time.time()
    log.write("variants: %s\n" % args.variants)

    def left():
        return args.budget - (time.time() - start)

    for name in order:
        if left() < 80:           # what memcheck and one more child need
            print("skipped", name, "(out of time)", flush=True)
            continue
        results.setdefault(name, []).append(spawn(args, args.out, name, log, 60))
        print("done", name, "rc", results[name][-1]["rc"],
              "%.0f s" % (time.time() - start), flush=True)

    if not args.skip_memcheck and shutil.which("compute-sanitizer") and \
       (not args.only or "memcheck" in args.only):
        mc_log = os.path.join(args.out, "memcheck.log")
        r = spawn(args, args.out, "memcheck", log, min(60, left()),
                  prefix=["compute-sanitizer", "--tool", "memcheck", "--error-exitcode", "1",
                          "--print-limit", "20", "--log-file", mc_log])
        results["memcheck"] = [r]
        print("done memcheck rc", r["rc"], "%.0f s" % (time.time() - start), flush=True)
    if (not args.only or "trace" in args.only) and left() > 25:
        results["trace"] = [spawn(args, args.out, "trace", log, left() - 5)]
        print("done trace rc", results["trace"][-1]["rc"], flush=True)
    with open(os.path.join(args.out, "ds-alloc-gpu.json"), "w") as f:
        json.dump(results, f, indent=1)

    # --- the table ---
    ok = True
    lines = []

    def row(*cells):
        lines.append(" | ".join(str(c) for c in cells))

    def get(name, i=None):
        rs = [r for r in results.get(name, []) if "error" not in r]
        return rs if i is None else (rs[i] if i < len(rs) else None)

    dev = next((r.get("device") for rs in results.values() for r in rs if r.get("device")), "?")
    row("card", dev)
    nat_t, ds_t = get("native:train"), get("process:train")
    if nat_t and ds_t:
        ref = nat_t[0]["losses"]
        same = all(r["losses"] == ref for r in nat_t + ds_t + get("process-tight:train"))
        ok &= same
        row("train 30 steps: losses bitwise identical (all runs)", same)
        row("train ms/step native | ds process (per run)",
            " ".join("%.2f" % r["ms_per_step"] for r in nat_t), "|",
            " ".join("%.2f" % r["ms_per_step"] for r in ds_t))
        row("train memory: torch reserved peak | ds held peak | ratio",
            fmt_mib(nat_t[0]["torch_reserved_peak"]), fmt_mib(ds_t[0]["ds_held_peak"]),
            "%.2f" % (ds_t[0]["ds_held_peak"] / max(1, nat_t[0]["torch_reserved_peak"])))
        row("train in-use peak: torch allocated | ds handed out | ds pool demand (with pending)",
            fmt_mib(nat_t[0]["torch_allocated_peak"]), fmt_mib(ds_t[0]["ds_in_use_peak"]),
            fmt_mib(ds_t[0].get("ds_demand_peak")))
    else:
        ok = False
        row("train", "FAILED (see log)")
    tt = get("process-tight:train", 0)
    if tt:
        row("train ds tight pool: ms/step | held peak | ratio to torch reserved",
            "%.2f" % tt["ms_per_step"], fmt_mib(tt["ds_held_peak"]),
            "%.2f" % (tt["ds_held_peak"] / max(1, nat_t[0]["torch_reserved_peak"])) if nat_t else "-")
    nat_c, ds_c = get("native:churn"), get("process:churn")
    if nat_c and ds_c:
        wrong = sum(r["wrong"] for r in nat_c + ds_c)
        ok &= wrong == 0
        row("churn 4000 tensors, 2 streams: wrong sums (all runs)", wrong)
        row("churn us/tensor native | ds process",
            " ".join("%.1f" % r["us_per_tensor"] for r in nat_c), "|",
            " ".join("%.1f" % r["us_per_tensor"] for r in ds_c))
        row("churn memory: torch reserved peak (per run) | ds held peak (per run) | ratio "
            "(worst)",
            " ".join(fmt_mib(r["torch_reserved_peak"]) for r in nat_c), "|",
            " ".join(fmt_mib(r["ds_held_peak"]) for r in ds_c), "|",
            "%.2f" % (max(r["ds_held_peak"] for r in ds_c) /
                      max(1, min(r["torch_reserved_peak"] for r in nat_c))))
        row("churn in-use peak: torch allocated | ds handed out | ds pool demand (with pending)",
            fmt_mib(nat_c[0]["torch_allocated_peak"]), fmt_mib(ds_c[0]["ds_in_use_peak"]),
            fmt_mib(ds_c[0].get("ds_demand_peak")))
        for r in ds_c:
            st = r["ds_stats"]
            row("churn ds pool: upstream allocations | deallocations | hits | events "
                "recorded | event queries | stream waits | bytes pending at end",
                st["upstream_allocations"], st["upstream_deallocations"], st["cache_hits"],
                st["events_recorded"], st["event_queries"], st["stream_waits"],
                fmt_mib(st["bytes_pending"]))
        g0, g1 = ds_c[0].get("gate_none"), ds_c[0].get("gate_hand_off")
        row("gate, whole process: right bytes without | with hand_off (memory taken again)",
            g0, "|", g1)
        ok &= bool(g1 and g1["right"])
    else:
        ok = False
        row("churn", "FAILED (see log)")
    for v in args.variants:
        vt, vc = get("process@%s:train" % v), get("process@%s:churn" % v)
        if vt and nat_t:
            same = all(r["losses"] == nat_t[0]["losses"] for r in vt)
            ok &= same
            row("[%s] train: losses bitwise identical | ms/step | held peak | ratio to torch "
                "reserved" % v, same, " ".join("%.2f" % r["ms_per_step"] for r in vt),
                " ".join(fmt_mib(r["ds_held_peak"]) for r in vt),
                "%.2f" % (max(r["ds_held_peak"] for r in vt) /
                          max(1, min(r["torch_reserved_peak"] for r in nat_t))))
        if vc and nat_c:
            wrong = sum(r["wrong"] for r in vc)
            ok &= wrong == 0
            row("[%s] churn: wrong sums | us/tensor | held peak | ratio to torch reserved (worst) "
                "| handed-out peak | upstream allocations" % v, wrong,
                " ".join("%.1f" % r["us_per_tensor"] for r in vc),
                " ".join(fmt_mib(r["ds_held_peak"]) for r in vc),
                "%.2f" % (max(r["ds_held_peak"] for r in vc) /
                          max(1, min(r["torch_reserved_peak"] for r in nat_c))),
                fmt_mib(vc[0]["ds_in_use_peak"]),
                " ".join(str(r["ds_stats"]["upstream_allocations"]) for r in vc))
        if not vc or not vt:
            row("[%s]" % v, "FAILED (see log)")
            ok = False
    tc = get("process-tight:churn", 0)
    if tc:
        row("churn ds tight pool: us/tensor | held peak | wrong",
            "%.1f" % tc["us_per_tensor"], fmt_mib(tc["ds_held_peak"]), tc["wrong"])
    sc = get("scoped", 0)
    if sc:
        runs = sc["runs"]
        for kind in ("infer", "train"):
            nat = [r for r in runs if r["form"] == "native" and r["kind"] == kind]
            scp = [r for r in runs if r["form"] == "scoped" and r["kind"] == kind]
            same = all(r["losses"] == nat[0]["losses"] for r in nat + scp)
            ok &= same
            row("scoped %s: losses bitwise identical to native" % kind, same)
            row("scoped %s ms/step native | scoped" % kind,
                " ".join("%.2f" % r["ms_per_step"] for r in nat), "|",
                " ".join("%.2f" % r["ms_per_step"] for r in scp))
            row("scoped %s memory: torch reserved peak (native) | ds held peak (scope) | ratio"
                % kind, fmt_mib(nat[0]["reserved_peak"]), fmt_mib(scp[0]["ds_held_peak"]),
                "%.2f" % (scp[0]["ds_held_peak"] / max(1, nat[0]["reserved_peak"])))
            row("scoped %s given back: torch reserved after native run | ds in use after "
                "scope | ds held after scope | after trim" % kind,
                fmt_mib(nat[0]["reserved_after"]), fmt_mib(scp[0]["ds_in_use_after_exit"]),
                fmt_mib(scp[0]["ds_held_after_exit"]), fmt_mib(scp[0]["ds_held_after_trim"]))
            ok &= scp[0]["ds_in_use_after_exit"] == 0
        row("gate, scoped: none | add_reader | hand_off",
            sc["gate_none"], "|", sc["gate_reader"], "|", sc["gate_hand_off"])
        ok &= sc["gate_reader"]["right"] and sc["gate_hand_off"]["right"]
    else:
        ok = False
        row("scoped", "FAILED (see log)")
    cn, cd = get("cupy:native"), get("cupy:ds")
    if cn and cd:
        wrong = sum(r["wrong"] for r in cn + cd)
        ok &= wrong == 0
        row("cupy churn 2000 arrays, 2 streams: wrong sums (all runs)", wrong)
        row("cupy us/array native | ds",
            " ".join("%.1f" % r["us_per_array"] for r in cn), "|",
            " ".join("%.1f" % r["us_per_array"] for r in cd))
        row("cupy memory: cupy pool peak | ds held peak | ds in-use peak",
            fmt_mib(cn[0]["held_peak"]), fmt_mib(cd[0]["held_peak"]),
            fmt_mib(cd[0]["in_use_peak"]))
        row("cupy ds: in use after the scope | live blocks at the end",
            fmt_mib(cd[0]["in_use_after"]), cd[0]["live_blocks_end"])
    else:
        ok = False
        row("cupy", "FAILED (see log): rc %s" % [r["rc"] for r in
                                                 results.get("cupy:native", []) +
                                                 results.get("cupy:ds", [])])
    co = get("costs", 0)
    if co:
        row("CUDA call costs, us: " + ", ".join(
            "%s %.1f" % (k, v) for k, v in co.items() if k.endswith("_us") or "_us_" in k))
    tr = get("trace", 0)
    if tr:
        row("churn trace (PyTorch's allocator): events | wrong", tr["n_events"], tr["wrong"])
    mc = results.get("memcheck", [None])[0]
    if mc is not None:
        row("compute-sanitizer memcheck (rc, 0 = no error)", mc["rc"],
            "churn wrong %s, gate %s, cupy wrong %s" % (mc.get("churn_wrong"), mc.get("gate"),
                                                      mc.get("cupy_wrong")))
        ok &= mc["rc"] == 0
    print("\n".join(lines))
    with open(os.path.join(args.out, "ds-alloc-gpu-table.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
