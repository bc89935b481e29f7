#!/usr/bin/env python3
"""ab.py - configs of one kernel timed side by side with `kite bench`.

For each case (a kernel at one shape) every config is timed with
`kite bench --json` (median of --runs runs, L2 flushed before each), in
--rounds rounds that each time every config once, so drift hits all alike;
a config's time is its median over the rounds. Prints a table per case,
fastest first, with each config's ratio to the case's first config, and
writes JSON with every round's time.

    python3 bench/ab.py [--kite PATH] [--ir DIR] [--cases FILE.json]
                        [--rounds N] [--runs N] [--filter S] [--json PATH] [--dry]
                        [--timeout SECONDS]

--cases is a JSON list of {"name", "ir" (a file in --ir), "kernel"
(optional), "args": [...], "configs": [...]}; without it the built-in cases
below run (the A/B questions open for the memory-bound kernels). On a GPU
host with the bundle: python3 bundle/bench/ab.py --kite bundle/bin/kite
--ir bundle/ir.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys

X8K = ["x=bf16[8192,8192]"]
CASES = [
    {"name": "rmsnorm 8192x8192", "ir": "rmsnorm.mlir",
     "args": X8K + ["weight=bf16[8192]", "eps=f64"],
     "configs": [
         {"block_sizes": [1], "num_warps": 16, "l2_hints": "keep_loads"},
         {"block_sizes": [1], "num_warps": 16, "l2_hints": "keep_loads", "early_loads": True},
         {"block_sizes": [1], "num_warps": 32, "l2_hints": "keep_loads"},
         {"block_sizes": [1], "num_warps": 32, "l2_hints": "keep_loads", "early_loads": True},
         {"block_sizes": [2], "num_warps": 32, "l2_hints": "keep_loads", "early_loads": True},
     ]},
    {"name": "layernorm 8192x8192", "ir": "layernorm.mlir", "kernel": "layernorm",
     "args": X8K + ["weight=bf16[8192]", "bias=bf16[8192]", "eps=f64"],
     "configs": [
         {"block_sizes": [1], "num_warps": 8, "l2_hints": "keep_loads", "streaming": True},
         {"block_sizes": [1], "num_warps": 8, "l2_hints": "keep_loads", "streaming": True,
          "early_loads": True},
         {"block_sizes": [1], "num_warps": 16, "l2_hints": "keep_loads", "early_loads": True},
         {"block_sizes": [1], "num_warps": 32, "l2_hints": "keep_loads", "early_loads": True},
     ]},
    {"name": "cross_entropy 8192x32768", "ir": "cross_entropy.mlir",
     "args": ["logits=bf16[8192,32768]", "target=i64[8192]"],
     "configs": [
         {"block_sizes": [1], "fast_math": True, "num_warps": 4, "l2_hints": "reuse",
          "reduction_loops": [4096]},
         {"block_sizes": [1], "fast_math": True, "num_warps": 4, "l2_hints": "reuse",
          "reduction_loops": [4096], "early_loads": True},
     ]},
    {"name": "softmax 8192x8192", "ir": "softmax.mlir", "kernel": "softmax", "args": X8K,
     "configs": [
         {"block_sizes": [1], "fast_math": True, "num_warps": 16, "l2_hints": "keep_loads",
          "streaming": True},
         {"block_sizes": [1], "fast_math": True, "num_warps": 32, "l2_hints": "keep_loads",
          "streaming": True},
     ]},
]


def time_config(kite, ir, case, config, runs, dry=False, timeout=300):
    cmd = [kite, "bench", ir, "--json", "--runs", str(runs)]
    if dry:
        cmd = [kite, "inspect", ir, "--emit=ptx"]
    cmd += ["--config", json.dumps(config, separators=(",", ":"))]
    if case.get("kernel"):
        cmd += ["--kernel", case["kernel"]]
    for a in case["args"]:
        cmd += ["--arg", a]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"no result within {timeout:g} s (a launch that never ends?)")
    if p.returncode != 0:
        raise RuntimeError((p.stderr or p.stdout).strip().splitlines()[-1])
    return 0.0 if dry else json.loads(p.stdout)["ms"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--kite", default=os.path.join(here, "..", "bin", "kite"))
    ap.add_argument("--ir", default=os.path.join(here, "..", "ir"),
                    help="the directory of the examples' captured IR")
    ap.add_argument("--cases", help="a JSON file of cases (default: the built-in ones)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--filter", default="", help="only cases whose name contains this")
    ap.add_argument("--timeout", type=float, default=300,
                    help="seconds one `kite bench` may take (compile and runs) before its "
                         "config counts as failed")
    ap.add_argument("--json", help="write every round's times here")
    ap.add_argument("--dry", action="store_true",
                    help="compile every config to PTX instead of timing it (no GPU needed)")
    args = ap.parse_args()
    # Each case's table as soon as it is done, also into a pipe, so that a
    # run cut off by a time limit keeps what it has.
    sys.stdout.reconfigure(line_buffering=True)
    cases = CASES
    if args.cases:
        with open(args.cases) as f:
            cases = json.load(f)
    out = []
    failed = False
    for case in cases:
        if args.filter and args.filter not in case["name"]:
            continue
        ir = os.path.join(args.ir, case["ir"])
        times = [[] for _ in case["configs"]]
        errors = [None] * len(case["configs"])
        for _ in range(args.rounds):
            for i, config in enumerate(case["configs"]):
                if errors[i]:
                    continue
                try:
                    times[i].append(time_config(args.kite, ir, case, config, args.runs,
                                                args.dry, args.timeout))
                except (RuntimeError, ValueError, KeyError) as e:
                    errors[i] = str(e)
                    failed = True
        medians = [statistics.median(t) if t else None for t in times]
        base = medians[0]
        print(f"== {case['name']} (median of {args.rounds} rounds of {args.runs} runs, ms)")
        order = sorted(range(len(medians)),
                       key=lambda i: (medians[i] is None, medians[i] or 0))
        for i in order:
            config = json.dumps(case["configs"][i], separators=(",", ":"))
            if medians[i] is None:
                print(f"  FAILED   {config}: {errors[i]}")
                continue
            if args.dry:
                print(f"  compiles  {config}")
                continue
            ratio = f"{medians[i] / base:.3f}x" if base else "-"
            spread = f"{min(times[i]):.5f}-{max(times[i]):.5f}"
            print(f"  {medians[i]:.5f}  {ratio:>7}  ({spread})  {config}")
        sys.stdout.flush()
        out.append({"name": case["name"], "configs": case["configs"], "times": times,
                    "errors": errors})
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
