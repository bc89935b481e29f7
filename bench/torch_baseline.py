#!/usr/bin/env python3
"""torch_baseline.py - kite_bench's kernels in PyTorch eager and torch.compile.

The same kernels, shapes and dtypes as bench/bench_examples.cpp, timed the
same way: CUDA events, warm-up first (which also compiles for torch.compile),
then the median of many runs, each after an L2 flush (a 256 MiB fill outside
the timed interval). Writes JSON for bench/report.py.

    python3 bench/torch_baseline.py [--json PATH] [--runs N] [--warmup N]
                                    [--filter S] [--no-compile]

Without torch or without a GPU it says so, writes {"gpu": false, ...} and
exits 0.
"""

import argparse
import json
import statistics
import sys
import time
import traceback


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json", help="write the results here")
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--filter", default="", help="only kernels whose name contains this")
    ap.add_argument("--no-compile", action="store_true", help="eager only")
    args = ap.parse_args()

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

    def time_ms(fn, warmup, runs):
        for _ in range(warmup):
            fn()
        torch.cuda.synchronize()
        starts = [torch.cuda.Event(enable_timing=True) for _ in range(runs)]
        stops = [torch.cuda.Event(enable_timing=True) for _ in range(runs)]
        for i in range(runs):
            flush.fill_(i & 0x7F)
            starts[i].record()
            fn()
            stops[i].record()
        torch.cuda.synchronize()
        return statistics.median(s.elapsed_time(e) for s, e in zip(starts, stops))

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

    benches = [
        ("add", "8192x8192", lambda: (randn(N, M, dtype=f32), randn(N, M, dtype=f32)),
         lambda x, y: x + y),
        ("softmax", "8192x8192", lambda: (randn(N, M, dtype=bf16),),
         lambda x: torch.softmax(x, dim=1)),
        ("layernorm", "8192x8192 (+w, b)",
         lambda: (randn(N, M, dtype=bf16), randn(M, dtype=bf16), randn(M, dtype=bf16)),
         lambda x, w, b: F.layer_norm(x, (x.shape[-1],), w, b, 1e-5)),
        ("rmsnorm", "8192x8192 (+w)", lambda: (randn(N, M, dtype=bf16), randn(M, dtype=bf16)),
         lambda x, w: rmsnorm(x, w, 1e-6)),
        ("sum", "8192x8192", lambda: (randn(N, M, dtype=f32),), lambda x: x.sum(dim=1)),
        ("cross_entropy", "8192x32768",
         lambda: (randn(N, V, dtype=bf16),
                  torch.randint(0, V, (N,), device=dev, dtype=torch.int64, generator=g)),
         cross_entropy),
        ("matmul", "4096x4096x4096", lambda: (randn(MM, MM, dtype=bf16), randn(MM, MM, dtype=bf16)),
         lambda x, y: x @ y),
    ]

    out = {
        "gpu": True,
        "device": torch.cuda.get_device_name(),
        "torch": torch.__version__,
        "runs": args.runs,
        "warmup": args.warmup,
        "copy": {"bytes": nbytes, "ms": copy_ms, "gbps": copy_gbps},
        "kernels": [],
    }
    dtypes = {"add": "f32", "sum": "f32"}
    for name, shape, make, fn in benches:
        if args.filter and args.filter not in name:
            continue
        k = {"name": name, "dtype": dtypes.get(name, "bf16"), "shape": shape}
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
        if not args.no_compile:
            try:
                cfn = torch.compile(fn, dynamic=False)
                t0 = time.time()
                for _ in range(3):  # compiles, then warm
                    cfn(*inputs)
                torch.cuda.synchronize()
                k["compile_s"] = time.time() - t0
                k["compile_ms"] = time_ms(lambda: cfn(*inputs), args.warmup, args.runs)
            except Exception as e:
                k["compile_error"] = f"{type(e).__name__}: {e}"[:300]
                traceback.print_exc()
        em, cm = k.get("eager_ms"), k.get("compile_ms")
        fmt = lambda v: f"{v:9.3f}" if v is not None else "      n/a"
        print(f"{name:14} {shape:18} eager {fmt(em)} ms  compile {fmt(cm)} ms", flush=True)
        out["kernels"].append(k)
        inputs = None
        torch.cuda.empty_cache()
    write(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
