#!/usr/bin/env python3
"""report.py - merge kite_bench's and torch_baseline.py's JSON into one table.

    python3 bench/report.py --kite kite.json --torch torch.json [--md OUT.md]

Prints the table (kernel, shape, kite ms, GB/s, % of the copy bandwidth,
eager ms, torch.compile ms, kite / best torch, the correctness cross-check)
and saves it as markdown; then, over the sweep shapes, the geometric mean
of kite's time over torch.compile's and the worst ratio.
Either file may be missing or say "no GPU"; the table shows what there is.
"""

import argparse
import json
import os
import sys


def load(path):
    if not path or not os.path.exists(path):
        return None, f"{path or '(none)'}: missing"
    try:
        with open(path) as f:
            return json.load(f), None
    except Exception as e:
        return None, f"{path}: unreadable ({e})"


def ms(v):
    return f"{v:.3f}" if isinstance(v, (int, float)) else "-"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kite", required=True)
    ap.add_argument("--torch", required=True)
    ap.add_argument("--md", help="also save the table here (markdown)")
    args = ap.parse_args()

    kite, kerr = load(args.kite)
    torch, terr = load(args.torch)
    notes = [e for e in (kerr, terr) if e]
    for name, d in (("kite", kite), ("torch", torch)):
        if d is not None and not d.get("gpu", False):
            notes.append(f"{name}: no GPU ({d.get('reason', '')})")
        if d is not None and d.get("error"):
            notes.append(f"{name}: {d['error']}")

    kk = {k.get("key", k["name"]): k for k in (kite or {}).get("kernels", [])}
    tk = {k.get("key", k["name"]): k for k in (torch or {}).get("kernels", [])}
    names = list(kk) + [n for n in tk if n not in kk]

    header = ["kernel", "shape", "kite ms", "GB/s", "% copy", "eager ms", "compile ms",
              "kite/best torch", "side by side", "check", "kite config"]
    rows = []
    sweep = []  # kite ms / torch.compile ms over the sweep shapes
    side_ratios = []  # (row, kite / best torch timed side by side)
    for n in names:
        k, t = kk.get(n, {}), tk.get(n, {})
        kms = k.get("ms")
        gbps = f"{k['gbps']:.0f}" if "gbps" in k else "-"
        if k.get("tflops"):
            gbps += f" ({k['tflops']:.1f} TFLOP/s)"
        pct = f"{k['pct_copy']:.1f}" if "pct_copy" in k else "-"
        best = [v for v in (t.get("eager_ms"), t.get("compile_ms")) if isinstance(v, (int, float))]
        ratio = f"{kms / min(best):.2f}x" if kms and best else "-"
        # torch_baseline.py --kite-plans: kite's plan, eager and torch.compile
        # timed in interleaved rounds in one process.
        sbs = t.get("side_by_side") or {}
        sbs_best = [v for v in (sbs.get("eager_ms"), sbs.get("compile_ms")) if isinstance(v, (int, float))]
        side = "-"
        if isinstance(sbs.get("kite_ms"), (int, float)) and sbs_best:
            side = f"{sbs['kite_ms']:.3f} / {min(sbs_best):.3f} = {sbs['kite_ms'] / min(sbs_best):.2f}x"
            side_ratios.append((n, sbs["kite_ms"] / min(sbs_best)))
        elif sbs.get("error"):
            notes.append(f"{n}: side by side failed: {sbs['error'][:160]}")
        for key in ("eager_error", "compile_error"):
            if t.get(key):
                notes.append(f"torch {n} {key.split('_')[0]}: {t[key][:120]}")
        if k.get("error"):
            config = "FAILED: " + k["error"][:80]
        else:
            config = k.get("config", "-")
            if k.get("default_ms") is not None and config != "default":
                config += f" (default {k['default_ms']:.3f} ms)"
        shape = k.get("shape") or t.get("shape", "")
        dtype = k.get("dtype") or t.get("dtype")
        checks = []
        for what, c in (("kite", t.get("kite_vs_eager")), ("compile", t.get("compile_vs_eager"))):
            if c is None:
                continue
            if c.get("ok"):
                checks.append(f"{what} ok")
            else:
                checks.append(f"{what} WRONG")
                notes.append(f"{n}: {what} differs from eager: " + json.dumps(c)[:200])
        # The same code timed twice in one run should agree; say when not.
        for who, first, again in (("kite", kms, k.get("repeat_ms")),
                                  ("torch.compile", t.get("compile_ms"), t.get("compile_repeat_ms"))):
            if isinstance(first, (int, float)) and isinstance(again, (int, float)) and first > 0:
                if abs(again - first) > 0.2 * min(first, again):
                    notes.append(f"{n}: {who} timed {first:.3f} then {again:.3f} ms in this run "
                                 "(noisy; ratios on this row are uncertain)")
        if k.get("sweep") and kms and isinstance(t.get("compile_ms"), (int, float)):
            sweep.append(kms / t["compile_ms"])
        name = k.get("name") or t.get("name") or n
        rows.append([name, f"{dtype} {shape}" if dtype and dtype not in shape.split() else shape, ms(kms), gbps, pct,
                     ms(t.get("eager_ms")), ms(t.get("compile_ms")), ratio, side,
                     ", ".join(checks) or "-", config])

    rows = [[" ".join(str(c).split()).replace("|", "/") for c in r] for r in rows]
    notes = [" ".join(x.split()) for x in notes]
    lines = []
    dev = (kite or {}).get("device") or (torch or {}).get("device") or "no GPU"
    copy = (kite or {}).get("copy") or (torch or {}).get("copy")
    lines.append(f"Benchmarks on {dev}: CUDA events, median, L2 flushed before each run.")
    if copy:
        lines.append(f"Device-to-device copy (1 GiB, read + write): {copy['gbps']:.0f} GB/s "
                     f"({copy['ms']:.3f} ms); % copy = kite GB/s over it. "
                     f"kite/best torch < 1: kite is faster.")
    tc = (torch or {}).get("copy")
    if tc and copy is not tc:
        lines.append(f"(torch measured copy: {tc['gbps']:.0f} GB/s)")
    for note in notes:
        lines.append(f"note: {note}")
    lines.append("")
    widths = [max(len(str(r[i])) for r in [header] + rows) for i in range(len(header))]
    md = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    md += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    text = ["  ".join(str(c).ljust(w) for c, w in zip(header, widths))]
    text += ["  ".join(str(c).ljust(w) for c, w in zip(r, widths)) for r in rows]
    if sweep:
        geo = 1.0
        for r in sweep:
            geo *= r
        geo **= 1.0 / len(sweep)
        summary = (f"Sweeps ({len(sweep)} shapes): geometric mean of kite / torch.compile "
                   f"{geo:.3f}, worst {max(sweep):.2f}x.")
        text += ["", summary]
        md += ["", summary]

    if side_ratios:
        over = [f"{n} {r:.2f}x" for n, r in side_ratios if r > 1.0]
        summary = (f"Side by side (kite, eager and torch.compile in interleaved rounds, one process): "
                   f"{len(side_ratios)} rows, {len(over)} slower than the best of torch"
                   + (": " + "; ".join(over) if over else "") + ".")
        text += ["", summary]
        md += ["", summary]

    print("\n".join(lines + text))
    if args.md:
        with open(args.md, "w") as f:
            f.write("\n".join(lines + md) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
