#!/usr/bin/env python3
"""torch_baseline.py - kite_bench's kernels in PyTorch eager and torch.compile.

The same kernels, shapes and dtypes as bench/bench_examples.cpp, timed the
same way: CUDA events, warm-up first (which also compiles for torch.compile),
then the median of many runs, each after an L2 flush (a 256 MiB fill, then
the L2's persisting lines reset, outside the timed interval). Unlike
kite_bench, whose launches cost the host a few microseconds, well inside
the flush's 0.07 ms, the GPU first spins long enough for the host to queue
every run, so that torch.compile's per-call host cost is never timed.
Writes JSON for bench/report.py.

Attention rows run eager only: scaled_dot_product_attention is one library
call, and torch.compile runs the same flash kernel.

Correctness, each against the other: torch.compile's output is compared with
eager's on the benchmark inputs, and with --check-against (kite_bench's JSON
written with --samples) eager runs on the rows kite_bench saved and is
compared with kite's output for those rows.

Side by side: with --kite-plans (kite_bench --plans' directory) and
--kite-lib (libkite_c.so), each row's fastest kite plan is launched from
this process through kite/c_api.h, and kite, eager and torch.compile are
timed in interleaved rounds (each round times each of them, starting with
the next one in turn; each one's time is its median over the rounds). The
card slows as it heats under tensor-core work, so times taken minutes apart
in two processes compare the card's states as much as the kernels; these
are the ratios to read.

    python3 bench/torch_baseline.py [--json PATH] [--runs N] [--warmup N]
                                    [--filter S] [--no-compile]
                                    [--check-against KITE_JSON]
                                    [--kite-plans DIR --kite-lib PATH]

Without torch or without a GPU it says so, writes {"gpu": false, ...} and
exits 0.
"""

import argparse
import json
import statistics
import sys
import time
import traceback


class KitePlans:
    """kite_bench --plans' plans, launched through libkite_c.so (kite/c_api.h)
    on inputs made here from each plan's argument specs."""

    def __init__(self, lib_path, plans_dir, torch, torch_dtypes, dev, generator):
        import ctypes
        import glob
        import os
        if not lib_path:
            raise RuntimeError("--kite-plans needs --kite-lib (libkite_c.so)")
        self.ct, self.torch, self.dtypes, self.dev, self.g = ctypes, torch, torch_dtypes, dev, generator
        lib = ctypes.CDLL(lib_path)
        lib.kite_plan_read.restype = ctypes.c_void_p
        lib.kite_plan_read.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t]
        lib.kite_plan_args_json.restype = ctypes.c_char_p
        lib.kite_plan_args_json.argtypes = [ctypes.c_void_p]
        lib.kite_plan_free.restype = None
        lib.kite_plan_free.argtypes = [ctypes.c_void_p]
        lib.kite_plan_run.restype = ctypes.c_int
        lib.kite_plan_run.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_uint64, ctypes.c_int,
                                      ctypes.POINTER(ctypes.c_uint64), ctypes.POINTER(ctypes.c_double),
                                      ctypes.c_void_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_size_t]
        self.lib = lib
        self.rows = {}
        for path in glob.glob(os.path.join(plans_dir, "*.json")):
            with open(path) as f:
                row = json.load(f)
            self.rows[row["key"]] = row

    def launcher(self, key):
        """A function that launches the row's plan once (on torch's current
        stream), or None if kite_bench wrote no plan for the row."""
        row = self.rows.get(key)
        if row is None:
            return None
        ct, torch = self.ct, self.torch
        err = ct.create_string_buffer(1024)
        plan = self.lib.kite_plan_read(row["plan"].encode(), err, len(err))
        if not plan:
            raise RuntimeError(err.value.decode())
        specs = json.loads(self.lib.kite_plan_args_json(plan))
        given = {a["name"]: a for a in row["args"]}
        n = len(specs)
        tensors, scalars = (ct.c_uint64 * n)(), (ct.c_double * n)()
        held = []
        for i, spec in enumerate(specs):
            extra = given.get(spec["name"], {})
            if not spec["tensor"]:
                value = spec["value"] if spec["value"] is not None else extra.get("value")
                if value is None:
                    raise RuntimeError(f"{key}: no value for scalar '{spec['name']}'")
                scalars[i] = float(value)
                continue
            dt = self.dtypes[spec["dtype"]]
            sizes = spec["sizes"]
            if dt.is_floating_point:
                t = torch.randn(sizes, device=self.dev, dtype=torch.float32, generator=self.g).to(dt)
            else:
                lo, hi = extra.get("int_range", [0, 2])
                t = torch.randint(lo, hi, sizes, device=self.dev, generator=self.g).to(dt)
            held.append(t)
            tensors[i] = t.data_ptr()
        device = torch.cuda.current_device()
        run = self.lib.kite_plan_run

        def launch():
            stream = torch.cuda.current_stream().cuda_stream
            if run(plan, device, stream, n, tensors, scalars, None, 0, err, len(err)) != 0:
                raise RuntimeError(err.value.decode())

        launch.held = held  # the inputs live as long as the launcher
        launch.close = lambda: self.lib.kite_plan_free(plan)
        return launch


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json", help="write the results here")
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--filter", default="",
                    help="comma-separated; only kernels whose 'name shape' contains one, "
                         "and none of those written -S")
    ap.add_argument("--no-compile", action="store_true", help="eager only")
    ap.add_argument("--check-against", help="kite_bench's JSON with samples (--samples)")
    ap.add_argument("--kite-plans", help="kite_bench --plans' directory: time kite beside torch")
    ap.add_argument("--kite-lib", help="libkite_c.so (kite/c_api.h), for --kite-plans")
    ap.add_argument("--rounds", type=int, default=5, help="interleaved rounds (--kite-plans)")
    ap.add_argument("--energy", action="store_true",
                    help="with --kite-plans: also each contender's energy a call (NVML)")
    args = ap.parse_args()

    def selected(key):
        """kite_bench's --filter: a plain term must match (if there is one), no -term may."""
        terms = [t for t in args.filter.split(",") if t]
        plain = [t for t in terms if not t.startswith("-")]
        if any(len(t) > 1 and t[1:] in key for t in terms if t.startswith("-")):
            return False
        return not plain or any(t in key for t in plain)

    def write(out):
        if args.json:
            with open(args.json, "w") as f:
                json.dump(out, f, indent=2)
                f.write("\n")

    try:
        import torch
        import torch.nn.functional as F
    except Exception as e:  # no torch here
        print(f"torch_baseline: PyTorch is not available ({e}); nothing measured.")
        write({"gpu": False, "reason": f"no torch: {e}", "kernels": []})
        return 0
    if not torch.cuda.is_available():
        print("torch_baseline: no CUDA GPU; nothing measured.")
        write({"gpu": False, "reason": "torch.cuda.is_available() is False", "kernels": []})
        return 0

    dev = torch.device("cuda")
    bf16, f32 = torch.bfloat16, torch.float32
    flush = torch.empty(256 << 20, dtype=torch.int8, device=dev)
    # As kite's harness flushes: the fill, then the L2's persisting lines
    # reset (lines loaded with an evict_last hint outlive the fill), in
    # stream order on the context torch made current.
    import ctypes
    reset_l2 = ctypes.CDLL("libcuda.so.1").cuCtxResetPersistingL2Cache
    torch.cuda.synchronize()
    if (rc := reset_l2()) != 0:
        raise RuntimeError(f"cuCtxResetPersistingL2Cache failed with CUresult {rc}")

    def time_ms(fn, warmup, runs):
        for _ in range(warmup):
            fn()
        torch.cuda.synchronize()
        starts = [torch.cuda.Event(enable_timing=True) for _ in range(runs)]
        stops = [torch.cuda.Event(enable_timing=True) for _ in range(runs)]
        # The GPU first spins for ~0.15 ms a run, time enough for the host
        # to queue every run, so that no run's interval includes the host's
        # dispatch: torch.compile's wrapper costs tens of microseconds a
        # call, more than a small kernel runs. Timed is the GPU's work alone.
        torch.cuda._sleep(int(runs * 3e5))
        for i in range(runs):
            flush.fill_(i & 0x7F)
            reset_l2()
            starts[i].record()
            fn()
            stops[i].record()
        torch.cuda.synchronize()
        return statistics.median(s.elapsed_time(e) for s, e in zip(starts, stops))

    # The board's energy counter (NVML, millijoules since the driver
    # loaded), if the driver has one: a contender's energy a call, from
    # back-to-back calls over about half a second, shows which of two
    # kernels at the same speed draws more power, and so slows more when the
    # card runs at its power limit.
    energy_mj = None
    try:
        nvml = ctypes.CDLL("libnvidia-ml.so.1")
        handle = ctypes.c_void_p()
        if nvml.nvmlInit_v2() == 0 and nvml.nvmlDeviceGetHandleByIndex_v2(
                torch.cuda.current_device(), ctypes.byref(handle)) == 0:
            counter = ctypes.c_ulonglong()

            def energy_mj():
                if nvml.nvmlDeviceGetTotalEnergyConsumption(handle, ctypes.byref(counter)) != 0:
                    raise RuntimeError("nvmlDeviceGetTotalEnergyConsumption failed")
                return counter.value
            energy_mj()
    except Exception:
        energy_mj = None

    def energy_per_call(fn, ms):
        """(millijoules a call, mean watts, busy fraction) of `fn` (about `ms`
        long, its time in the interleaved rounds) over back-to-back calls
        for about 1 s (no L2 flushes), or None without a counter. The busy
        fraction is calls x ms over the window's wall time: well below 1,
        the calls are bound by their launches and the energy a call counts
        the card idling between them. (NVML's counter moves in steps of tens
        of milliseconds: over 0.5 s a 0.18 ms product came out at 914 W on a
        700 W card.)"""
        if energy_mj is None:
            return None
        calls = max(10, int(1000 / max(ms, 1e-3)))
        for _ in range(3):
            fn()
        torch.cuda.synchronize()
        e0, t0 = energy_mj(), time.perf_counter()
        for _ in range(calls):
            fn()
        torch.cuda.synchronize()
        e1, wall = energy_mj(), time.perf_counter() - t0
        return ((e1 - e0) / calls, (e1 - e0) / 1000 / wall, calls * ms / 1000 / wall)

    # The copy bandwidth, as kite_bench measures it (1 GiB, read + write).
    nbytes = 1 << 30
    src = torch.zeros(nbytes, dtype=torch.int8, device=dev)
    dst = torch.empty_like(src)
    copy_ms = time_ms(lambda: dst.copy_(src), 5, max(args.runs, 50))
    copy_gbps = 2 * nbytes / (copy_ms * 1e-3) / 1e9
    del src, dst
    print(f"{'copy d2d':14} {'1 GiB':18} {copy_ms:9.3f} ms {copy_gbps:8.0f} GB/s")

    N, M, V, MM = 8192, 8192, 32768, 4096
    g = torch.Generator(device=dev)
    g.manual_seed(0)

    def randn(*shape, dtype):
        return torch.randn(*shape, device=dev, dtype=dtype, generator=g)

    # name -> (shape text, make inputs, function). The functions are what a
    # PyTorch user writes; torch.compile compiles the same function.
    def rmsnorm(x, w, eps):
        return F.rms_norm(x, (x.shape[-1],), w, eps)

    def cross_entropy(logits, target):
        # bf16 logits, per-row losses (kite returns them in f32).
        return F.cross_entropy(logits, target, reduction="none")

    def attention(q, k, v, causal=False):
        # kite's q, k, v are [B*H, S, D]; SDPA takes [B, H, S, D] (GPU.md's
        # B4 H32; the cross-check's 4 slices as B1 H4).
        bh, s, d = q.shape
        h = 32 if bh % 32 == 0 else bh
        view = lambda t: t.view(bh // h, h, s, d)
        return F.scaled_dot_product_attention(view(q), view(k), view(v),
                                              is_causal=causal).view(bh, s, d)

    fns = {
        "add": lambda x, y: x + y,
        "softmax": lambda x: torch.softmax(x, dim=1),
        "layernorm": lambda x, w, b: F.layer_norm(x, (x.shape[-1],), w, b, 1e-5),
        "rmsnorm": lambda x, w: rmsnorm(x, w, 1e-6),
        "sum": lambda x: x.sum(dim=1),
        "cross_entropy": cross_entropy,
        "matmul": lambda x, y: x @ y,
        "matmul_bias_relu": lambda x, y, b: torch.relu(torch.addmm(b, x, y)),
        "matmul_epilogue": lambda x, y, b, r: F.gelu(torch.addmm(b, x, y)) * 0.5 + r,
        "bmm": lambda a, b: torch.bmm(a, b),
        "linear": lambda x, w, b: torch.nn.functional.linear(x, w, b),
        "attention": attention,
        "causal_attention": lambda q, k, v: attention(q, k, v, causal=True),
        "cumsum": lambda x: torch.cumsum(x, dim=1),
        "cumsum_f32": lambda x: torch.cumsum(x.float(), dim=1).to(x.dtype),
        # Values only (kite's first output), for the cross-checks.
        "cummax": lambda x: torch.cummax(x, dim=1).values,
        "dropout": lambda x: F.dropout(x, 0.1, training=True),
        "histogram": lambda x: torch.bincount(x, minlength=256),
        # Values only (both compute the indices too), for the cross-checks.
        "sort": lambda x: torch.sort(x, dim=1, descending=True).values,
    }

    def product_bench(name, m, n, k, batch=1):
        """(name, shape text, make inputs, function), as kite_bench's productBench."""
        if name == "bmm":
            return (name, f"{batch}x{m}x{n}x{k}",
                    lambda: (randn(batch, m, k, dtype=bf16), randn(batch, k, n, dtype=bf16)), fns[name])
        if name == "matmul_bias_relu":
            return (name, f"{m}x{n}x{k}",
                    lambda: (randn(m, k, dtype=bf16), randn(k, n, dtype=bf16), randn(n, dtype=bf16)),
                    fns[name])
        if name == "linear":
            return (name, f"{m}x{n}x{k}",
                    lambda: (randn(m, k, dtype=bf16), randn(n, k, dtype=bf16), randn(n, dtype=bf16)),
                    fns[name])
        if name == "matmul_epilogue":
            return (name, f"{m}x{n}x{k}",
                    lambda: (randn(m, k, dtype=bf16), randn(k, n, dtype=bf16), randn(n, dtype=bf16),
                             randn(m, n, dtype=bf16)),
                    fns[name])
        return (name, f"{m}x{n}x{k}", lambda: (randn(m, k, dtype=bf16), randn(k, n, dtype=bf16)), fns[name])

    e4m3 = torch.float8_e4m3fn
    scale_x = torch.tensor(0.5, device=dev, dtype=f32)
    scale_w = torch.tensor(0.25, device=dev, dtype=f32)

    def scaled_product_bench(m, n, k):
        """As kite_bench's scaledProductBench: x [M, K] and w [N, K] in e4m3,
        torch._scaled_mm with w^T (column-major) and per-tensor scales."""
        fn = lambda x, w: torch._scaled_mm(x, w.t(), scale_a=scale_x, scale_b=scale_w,
                                           out_dtype=bf16)
        return ("scaled_matmul", f"{m}x{n}x{k}",
                lambda: (randn(m, k, dtype=f32).to(e4m3), randn(n, k, dtype=f32).to(e4m3)), fn)

    def attention_bench(b, h, s, d, causal=False, dt=bf16):
        """(name, shape text, make inputs, function), as kite_bench's attentionBench."""
        name = "causal_attention" if causal else "attention"
        prefix = "f16 " if dt == torch.float16 else ""
        return (name, f"{prefix}B{b} H{h} S{s} D{d}",
                lambda: tuple(randn(b * h, s, d, dtype=dt) for _ in range(3)), fns[name])

    def row_bench(name, n, m):
        """(name, shape text, make inputs, function), as kite_bench's rowBench."""
        shape = f"{n}x{m}"
        if name == "add":
            make = lambda: (randn(n, m, dtype=f32), randn(n, m, dtype=f32))
        elif name == "sum":
            make = lambda: (randn(n, m, dtype=f32),)
        elif name == "softmax":
            make = lambda: (randn(n, m, dtype=bf16),)
        elif name == "layernorm":
            shape += " (+w, b)"
            make = lambda: (randn(n, m, dtype=bf16), randn(m, dtype=bf16), randn(m, dtype=bf16))
        elif name == "rmsnorm":
            shape += " (+w)"
            make = lambda: (randn(n, m, dtype=bf16), randn(m, dtype=bf16))
        else:  # cross_entropy
            make = lambda: (randn(n, m, dtype=bf16),
                            torch.randint(0, m, (n,), device=dev, dtype=torch.int64, generator=g))
        return (name, shape, make, fns[name])

    # GPU.md's table, then the sweeps (bench/bench_examples.cpp's order).
    benches = [row_bench(k, N, V if k == "cross_entropy" else M)
               for k in ("add", "softmax", "layernorm", "rmsnorm", "sum", "cross_entropy")]
    benches.append(product_bench("matmul", MM, MM, MM))
    benches += [row_bench("softmax", 4096, m) for m in (1024, 4096, 16384, 65536)]
    benches += [row_bench(k, 16384, m) for k in ("layernorm", "rmsnorm") for m in (768, 4096, 12288)]
    benches += [row_bench("cross_entropy", 4096, m) for m in (32000, 128256)]
    benches += [row_bench("add", 1024, 1024), row_bench("add", 16384, 16384)]
    # Rows that are not 16-byte multiples (no vector access).
    benches += [row_bench("add", 8192, 8191), row_bench("softmax", 8192, 4097)]
    benches += [product_bench("matmul", *s) for s in ((8192, 8192, 8192), (4097, 4095, 4096),
                                                       (16384, 1024, 4096), (1024, 16384, 8192),
                                                       (128, 8192, 8192))]
    benches += [product_bench("matmul_bias_relu", 4096, 4096, 4096),
                product_bench("matmul_epilogue", 4096, 4096, 4096),
                product_bench("bmm", 1024, 1024, 1024, 64),
                product_bench("linear", 4096, 4096, 4096),
                product_bench("linear", 8192, 8192, 8192)]
    benches.append(scaled_product_bench(8192, 8192, 8192))
    benches.append(attention_bench(4, 32, 4096, 128))
    benches.append(attention_bench(4, 32, 4096, 128, causal=True))
    # Issue 22's attention sweep (bench_examples.cpp's order).
    for dt in (bf16, torch.float16):
        for d in (64, 128):
            for b, s in ((4, 1024), (4, 4096), (4, 16384), (1, 32768)):
                for causal in (False, True):
                    if not (dt == bf16 and d == 128 and s == 4096):
                        benches.append(attention_bench(b, 32, s, d, causal, dt))
    # Issue 25's operations (bench_examples.cpp's scanBench, dropoutBench).
    benches += [("cumsum", f"{n}x{m}", (lambda n=n, m=m: (randn(n, m, dtype=bf16),)), fns["cumsum"])
                for n, m in ((8192, 8192), (4096, 32000))]
    benches += [("cumsum", f"{n}x{m} f32", (lambda n=n, m=m: (randn(n, m, dtype=f32),)), fns["cumsum"])
                for n, m in ((8192, 8192), (4096, 32000))]
    benches.append(("cummax", "8192x8192", lambda: (randn(8192, 8192, dtype=bf16),), fns["cummax"]))
    benches.append(("dropout", "8192x8192", lambda: (randn(8192, 8192, dtype=bf16),), fns["dropout"]))
    for n, m in ((8192, 8192), (4096, 32000)):
        for dt, dname in ((bf16, "bf16"), (f32, "f32")):
            benches.append(("sort", f"{n}x{m} {dname}", (lambda n=n, m=m, dt=dt: (randn(n, m, dtype=dt),)),
                            fns["sort"]))
            for k in (8, 64):
                benches.append(("topk", f"{n}x{m} {dname} k{k}",
                                (lambda n=n, m=m, dt=dt: (randn(n, m, dtype=dt),)),
                                (lambda x, k=k: torch.topk(x, k, dim=1).values)))
    benches.append(("index_add", f"{1 << 18}x128 into 4096",
                    lambda: (torch.randint(0, 4096, (1 << 18,), device=dev, generator=g),
                             randn(1 << 18, 128, dtype=f32)),
                    lambda idx, src: torch.zeros(4096, src.shape[1], device=dev,
                                                 dtype=src.dtype).index_add_(0, idx, src)))
    benches.append(("histogram", f"{16 << 20} into 256",
                    lambda: (torch.randint(0, 256, (16 << 20,), device=dev, dtype=torch.int32,
                                           generator=g),), fns["histogram"]))

    samples = {}
    if args.check_against:
        try:
            with open(args.check_against) as f:
                for k in json.load(f).get("kernels", []):
                    if "sample" in k:
                        samples[k.get("key", k["name"])] = k["sample"]
        except Exception as e:
            print(f"torch_baseline: cannot read {args.check_against} ({e}); no cross-check")

    out = {
        "gpu": True,
        "device": torch.cuda.get_device_name(),
        "torch": torch.__version__,
        "runs": args.runs,
        "warmup": args.warmup,
        "copy": {"bytes": nbytes, "ms": copy_ms, "gbps": copy_gbps},
        "kernels": [],
    }
    dtypes = {"add": "f32", "sum": "f32", "histogram": "i32", "index_add": "f32",
              "scaled_matmul": "e4m3"}
    torch_dtypes = {"bf16": bf16, "f16": torch.float16, "f32": f32, "f64": torch.float64,
                    "i8": torch.int8, "i32": torch.int32, "i64": torch.int64, "bool": torch.bool,
                    "e4m3": torch.float8_e4m3fn, "e5m2": torch.float8_e5m2}

    kite = None
    if args.kite_plans:
        try:
            kite = KitePlans(args.kite_lib, args.kite_plans, torch, torch_dtypes, dev, g)
        except Exception as e:
            print(f"torch_baseline: cannot time kite's plans ({type(e).__name__}: {e}); "
                  "no side-by-side times")

    def compare(got, want):
        """Max abs error of `got` against `want`, within the coarser dtype's tolerance."""
        coarse = any(t in (got.dtype, want.dtype) for t in (torch.bfloat16, torch.float16))
        atol, rtol = (2e-2, 2e-2) if coarse else (1e-3, 1e-3)
        if not got.is_floating_point() and not want.is_floating_point():
            atol, rtol = 0, 0  # counts and positions: exact
        g64, w64 = got.double(), want.double()
        if g64.shape != w64.shape:
            return {"ok": False, "error": f"shape {list(g64.shape)} vs {list(w64.shape)}"}
        err = (g64 - w64).abs()
        bad = int((err > atol + rtol * w64.abs()).sum())
        return {"ok": bad == 0, "max_abs_err": float(err.max()) if err.numel() else 0.0,
                "bad": bad, "n": err.numel(), "atol": atol, "rtol": rtol}

    def check_sample(sample, fn):
        """Runs `fn` on kite_bench's saved input rows; compares with kite's rows."""
        with open(sample["file"], "rb") as f:
            blob = f.read()

        def tensor(e):
            dt = torch_dtypes[e["dtype"]]
            n = 1
            for d in e["shape"]:
                n *= d
            size = n * torch.empty((), dtype=dt).element_size()
            t = torch.frombuffer(bytearray(blob[e["offset"]:e["offset"] + size]), dtype=dt)
            return t.reshape(e["shape"]).to(dev)

        ins = [tensor(e) for e in sample["inputs"] if "scalar" not in e]
        return compare(tensor(sample["output"]), fn(*ins))

    for name, shape, make, fn in benches:
        key = f"{name} {shape}"
        if not selected(key):
            continue
        k = {"name": name, "key": key, "dtype": dtypes.get(name, "bf16"), "shape": shape}
        inputs = None
        try:
            inputs = make()
            torch.cuda.synchronize()
            once = time_ms(lambda: fn(*inputs), 1, 1)
            slow = once > 10.0
            w, r = (2, min(args.runs, 50)) if slow else (args.warmup, args.runs)
            k["eager_ms"] = time_ms(lambda: fn(*inputs), w, r)
        except Exception as e:
            k["eager_error"] = f"{type(e).__name__}: {e}"[:300]
        # SDPA is one library call, which torch.compile leaves to the same
        # flash kernel: compiling it for the attention sweep's 32 rows would
        # only spend the device's time.
        eager_only = name in ("attention", "causal_attention")
        if not args.no_compile and not eager_only:
            try:
                cfn = torch.compile(fn, dynamic=False)
                t0 = time.time()
                for _ in range(3):  # compiles, then warm
                    cfn(*inputs)
                torch.cuda.synchronize()
                k["compile_s"] = time.time() - t0
                k["compile_ms"] = time_ms(lambda: cfn(*inputs), args.warmup, args.runs)
                # Timed again: the same code twice shows the run's noise
                # (small shapes, where per-call host cost shows, move most).
                k["compile_repeat_ms"] = time_ms(lambda: cfn(*inputs), args.warmup, args.runs)
                k["compile_vs_eager"] = compare(cfn(*inputs), fn(*inputs))
            except Exception as e:
                k["compile_error"] = f"{type(e).__name__}: {e}"[:300]
                traceback.print_exc()
        if kite is not None and inputs is not None and "eager_ms" in k:
            try:
                launch = kite.launcher(key)
                if launch is not None:
                    contenders = {"kite": launch, "eager": lambda: fn(*inputs)}
                    if "compile_ms" in k:
                        contenders["compile"] = lambda: cfn(*inputs)
                    slow = k["eager_ms"] > 10.0
                    per_round = max(5, (min(args.runs, 50) if slow else args.runs) // args.rounds)
                    times = {who: [] for who in contenders}
                    # Each round starts with the next contender, so that none is
                    # always timed right after another's (the card's state then).
                    order = list(contenders)
                    for r in range(args.rounds):
                        for who in order[r % len(order):] + order[:r % len(order)]:
                            times[who].append(time_ms(contenders[who], 2, per_round))
                    k["side_by_side"] = {f"{who}_ms": statistics.median(t) for who, t in times.items()}
                    if args.energy:
                        for who in order:
                            e = energy_per_call(contenders[who], k["side_by_side"][f"{who}_ms"])
                            if e is not None:
                                k["side_by_side"][f"{who}_mj"] = e[0]
                                k["side_by_side"][f"{who}_watts"] = e[1]
                                k["side_by_side"][f"{who}_busy"] = e[2]
                    k["side_by_side"]["rounds"] = args.rounds
                    k["side_by_side"]["runs_per_round"] = per_round
                    torch.cuda.synchronize()
                    launch.close()
            except Exception as e:
                k["side_by_side"] = {"error": f"{type(e).__name__}: {e}"[:300]}
        if key in samples:
            try:
                # bf16 cumsum: eager's running sums differ from f32 ones by
                # more than bf16's tolerance (and torch.compile's from
                # eager's); kite is checked against sums in f32.
                ref = fns["cumsum_f32"] if name == "cumsum" else fn
                k["kite_vs_eager"] = check_sample(samples[key], ref)
            except Exception as e:
                k["kite_vs_eager"] = {"ok": False, "error": f"{type(e).__name__}: {e}"[:300]}
        em, cm = k.get("eager_ms"), k.get("compile_ms")
        fmt = lambda v: f"{v:9.3f}" if v is not None else "      n/a"
        sbs = k.get("side_by_side", {})
        line = f"{name:14} {shape:18} eager {fmt(em)} ms  compile {fmt(cm)} ms"
        if "kite_ms" in sbs:
            line += ("  side by side: kite " + fmt(sbs["kite_ms"]) + " eager " + fmt(sbs.get("eager_ms"))
                     + " compile " + fmt(sbs.get("compile_ms")))
        if "kite_mj" in sbs:
            line += "  mJ a call (W, busy): " + " ".join(
                f"{w} {sbs[w + '_mj']:.1f} ({sbs[w + '_watts']:.0f} W, {sbs[w + '_busy']:.2f})"
                for w in ("kite", "eager", "compile") if w + "_mj" in sbs)
        print(line, flush=True)
        out["kernels"].append(k)
        inputs = None
        torch.cuda.empty_cache()
    write(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
