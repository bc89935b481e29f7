#!/usr/bin/env bash
# tools/gpu.sh - kite's GPU command.
#
#   tools/gpu.sh bundle     build a self-contained bundle in bundle/ (fully
#                           static LLVM/MLIR/Clang; needs this machine's LLVM)
#   tools/gpu.sh run [OUT]  on a GPU host: run the GPU tests, compute-sanitizer
#                           and the benchmarks from bundle/, logs and JSON to OUT
#                           (KITE_SKIP_BENCH=1: no benchmarks; KITE_BENCH_TUNE=quick
#                           or quick,full: kite_bench autotunes each kernel)
#   tools/gpu.sh bench [OUT]  on a GPU host: the benchmarks only
#                           (KITE_BENCH_FILTER=S: only kernels whose name and
#                           shape contain S)
#   tools/gpu.sh tune-table [OUT]  on a GPU host: `kite autotune` at --effort
#                           quick and full for GPU.md's kernels and matmul
#                           4096^3, each from an empty cache, both winners
#                           re-timed back to back (OUT/tune.txt)
#   tools/gpu.sh            both, on a GPU host that can also build
#
# The bundle holds stripped binaries only (no object files), packed into
# bundle/bin.tar.gz (unpacked on first use; what travels to a GPU host is
# limited to 64 MiB), the `kite` CLI among them, and the examples' captured
# IR in bundle/ir/ (the CLI takes .mlir files, so the GPU host needs no C++
# toolchain). The GPU host needs its CUDA driver and NVRTC, nothing else.
# The test summary ends with a line `N passed, M failed`.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bundle="$root/bundle"

build_bundle() {
  "$root/tools/setup.sh"
  local build="$root/build-gpu"
  if [ ! -f "$build/build.ninja" ]; then
    cmake -G Ninja -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DKITE_STATIC=ON \
      -DCMAKE_EXE_LINKER_FLAGS="-static-libstdc++ -static-libgcc"
  fi
  local tools="kite runtime_gpu_test examples_gpu_test launch_gpu_test autotune_gpu_test kite_bench"
  cmake --build "$build" -j "${KITE_JOBS:-$(nproc)}" --target $tools
  rm -rf "$bundle"
  mkdir -p "$bundle/bin" "$bundle/ir"
  for b in $tools; do
    cp "$build/bin/$b" "$bundle/bin/"
    strip "$bundle/bin/$b"
  done
  # With source locations relative to the repository root (where the GPU
  # command runs), for #line directives, sanitizer reports and Nsight's
  # source view.
  for f in "$root"/examples/*.kite.cpp; do
    (cd "$root" && "$build/bin/kite" compile "examples/$(basename "$f")" --emit=ir \
      --debug-locations -o "$bundle/ir/$(basename "$f" .kite.cpp).mlir")
  done
  tar czf "$bundle/bin.tar.gz" -C "$bundle" bin
  rm -rf "$bundle/bin"
  mkdir -p "$bundle/bench"
  cp "$root"/bench/*.py "$bundle/bench/"
  cp "$root/tools/gpu.sh" "$bundle/gpu.sh"
  du -sh "$bundle"
}

# The benchmarks: kite_bench, the PyTorch baseline, and the merged table
# (bench.txt, bench.md). A failure here is reported, never fatal: the test
# summary still comes last.
run_bench() {
  local bin="$1" out="$2"
  local benchdir
  benchdir="$(dirname "$bin")/bench"
  [ -d "$benchdir" ] || benchdir="$root/bench"
  local limit="${KITE_BENCH_TIMEOUT:-1200}" ok=0 rc=0
  echo "== benchmarks (kite_bench, torch_baseline.py; logs in $out/bench_*.log)"
  rm -f "$out/bench_kite.json" "$out/bench_torch.json" "$out/bench.txt" "$out/bench.md"
  if [ -x "$bin/kite_bench" ]; then
    local tune=() filter=()
    [ -n "${KITE_BENCH_TUNE:-}" ] && tune=(--tune "$KITE_BENCH_TUNE")
    [ -n "${KITE_BENCH_FILTER:-}" ] && filter=(--filter "$KITE_BENCH_FILTER")
    rm -rf "$out/samples"; mkdir -p "$out/samples"
    timeout "$limit" "$bin/kite_bench" --json "$out/bench_kite.json" --samples "$out/samples" "${tune[@]}" \
      "${filter[@]}" > "$out/bench_kite.log" 2>&1 ||
      { rc=$?; ok=1; echo "kite_bench: FAILED (exit $rc); tail of bench_kite.log:"; tail -5 "$out/bench_kite.log"; }
  else
    ok=1; echo "kite_bench: not in $bin"
  fi
  if [ -f "$benchdir/torch_baseline.py" ]; then
    TORCHINDUCTOR_CACHE_DIR="$out/inductor-cache" timeout "$limit" \
      python3 "$benchdir/torch_baseline.py" --json "$out/bench_torch.json" \
      --check-against "$out/bench_kite.json" "${filter[@]}" > "$out/bench_torch.log" 2>&1 ||
      { rc=$?; ok=1; echo "torch_baseline.py: FAILED (exit $rc); tail of bench_torch.log:"; tail -5 "$out/bench_torch.log"; }
    python3 "$benchdir/report.py" --kite "$out/bench_kite.json" --torch "$out/bench_torch.json" \
      --md "$out/bench.md" > "$out/bench.txt" 2>&1 ||
      { ok=1; echo "report.py: FAILED"; cat "$out/bench.txt"; }
  else
    ok=1; echo "bench/*.py: not in $benchdir"
  fi
  return $ok
}

# The bundle's bin/, unpacked from bin.tar.gz on first use; from inside
# the bundle (bundle/gpu.sh) the bundle is $root.
bundle_bin() {
  local b="$bundle"
  [ -f "$b/bin.tar.gz" ] || [ -d "$b/bin" ] || b="$root"
  if [ ! -d "$b/bin" ] && [ -f "$b/bin.tar.gz" ]; then
    tar xzf "$b/bin.tar.gz" -C "$b"
  fi
  echo "$b/bin"
}

run_bundle() {
  local out="${1:-$root/gpu-out}"
  mkdir -p "$out"
  local bin
  bin="$(bundle_bin)"
  local passed=0 failed=0
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv | tee "$out/gpu.txt" || true
  # Each test binary runs in shards, in parallel (NVRTC compiles dominate).
  local shards="${KITE_GPU_SHARDS:-8}"
  for t in runtime_gpu_test launch_gpu_test examples_gpu_test autotune_gpu_test; do
    echo "== $t ($shards shards)"
    local pids=()
    for ((i = 0; i < shards; i++)); do
      GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i KITE_CACHE_DIR="$out/cache" \
        "$bin/$t" --gtest_output="json:$out/$t.$i.json" > "$out/$t.$i.log" 2>&1 &
      pids+=($!)
    done
    local crashed=0
    for ((i = 0; i < shards; i++)); do
      # A shard that failed without reporting a failed test crashed.
      if ! wait "${pids[$i]}" && ! grep -q '^\[  FAILED  \]' "$out/$t.$i.log"; then
        crashed=$((crashed + 1)); echo "shard $i of $t crashed:"; tail -5 "$out/$t.$i.log"
      fi
    done
    failed=$((failed + crashed))
    cat "$out/$t".*.log > "$out/$t.log"
    grep -E '^\[ +(OK|FAILED) +\]|Failure|error:' "$out/$t.log" | head -150
    local p f
    p=$(grep -c '^\[       OK \]' "$out/$t.log" || true)
    f=$(grep -cE '^\[  FAILED  \].* \([0-9]+ ms\)$' "$out/$t.log" || true)
    passed=$((passed + p)); failed=$((failed + f))
  done
  if command -v compute-sanitizer >/dev/null; then
    echo "== compute-sanitizer memcheck (every example, default config)"
    local mpids=()
    for ((i = 0; i < shards; i++)); do
      GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i KITE_SANITIZE_DEFAULT_ONLY=1 \
        compute-sanitizer --tool memcheck --print-limit 20 \
        "$bin/examples_gpu_test" --gtest_filter='*MatchesReferenceOnGpu*' \
        > "$out/memcheck.$i.log" 2>&1 &
      mpids+=($!)
    done
    local bad=0
    for p in "${mpids[@]}"; do wait "$p" || bad=1; done
    cat "$out"/memcheck.*.log > "$out/memcheck.log"
    grep "ERROR SUMMARY" "$out/memcheck.log" | sort | uniq -c
    if [ $bad -eq 0 ] && ! grep "ERROR SUMMARY" "$out/memcheck.log" | grep -vq " 0 errors"; then
      passed=$((passed + 1)); echo "memcheck: clean"
    else
      failed=$((failed + 1)); echo "memcheck: FAILED (see memcheck.log)"
      grep -m 20 -E "Invalid|ERROR|at 0x" "$out/memcheck.log" || true
    fi
  fi
  if [ "${KITE_SKIP_BENCH:-0}" != 1 ]; then
    run_bench "$bin" "$out" || echo "benchmarks: incomplete (see $out/bench_*.log)"
    if [ -f "$out/bench.txt" ]; then cat "$out/bench.txt"; fi
  fi
  echo "$passed passed, $failed failed" | tee "$out/summary.txt"
  [ "$failed" -eq 0 ]
}

# Issue 4's table: for each kernel, `kite autotune --effort quick` and
# `--effort full`, each from an empty cache (KITE_TUNE_FILTER=S: only
# kernels whose name contains S). The tuners' own best times come from
# different processes, so both winners are timed again back to back with
# `kite bench` (100 runs, L2 flushed); quick/full compares those.
run_tune_table() {
  local bin="$1" out="$2" ir="$3"
  mkdir -p "$out"
  local cases=(
    "softmax softmax x=bf16[8192,8192]"
    "layernorm layernorm x=bf16[8192,8192] weight=bf16[8192] bias=bf16[8192] eps=f64:1e-5"
    "rmsnorm rmsnorm x=bf16[8192,8192] weight=bf16[8192] eps=f64:1e-6"
    "sum sum_kernel x=f32[8192,8192]"
    "cross_entropy cross_entropy logits=bf16[8192,32768] target=i64[8192]"
    "matmul matmul x=bf16[4096,4096] y=bf16[4096,4096]"
  )
  local rows="$out/tune-rows.jsonl"
  rm -f "$rows"
  for c in "${cases[@]}"; do
    local file kernel args
    read -r file kernel args <<<"$c"
    if [ -n "${KITE_TUNE_FILTER:-}" ] && [[ "$kernel" != *"$KITE_TUNE_FILTER"* ]]; then continue; fi
    local fill=()
    [ "$kernel" = cross_entropy ] && fill=(--fill target=0..32768)
    local effort
    for effort in quick full; do
      rm -rf "$out/cache-$kernel-$effort"
      # shellcheck disable=SC2086
      KITE_CACHE_DIR="$out/cache-$kernel-$effort" timeout 400 "$bin/kite" autotune \
        "$ir/$file.mlir" --kernel "$kernel" --arg $args "${fill[@]}" --effort "$effort" \
        --json "$out/tune-$kernel-$effort.json" > "$out/tune-$kernel-$effort.log" 2>&1 ||
        echo "kite autotune $kernel --effort $effort: FAILED (see $out/tune-$kernel-$effort.log)"
    done
    for effort in quick full; do
      local config
      config=$(python3 -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1]))["config"]))' \
        "$out/tune-$kernel-$effort.json" 2>/dev/null) || continue
      # shellcheck disable=SC2086
      "$bin/kite" bench "$ir/$file.mlir" --kernel "$kernel" --arg $args "${fill[@]}" \
        --config "$config" --runs 100 --json > "$out/bench-$kernel-$effort.json" 2>&1 || true
    done
    python3 - "$out" "$kernel" >> "$rows" <<'PY'
import json, sys
out, k = sys.argv[1:]
row = {"kernel": k}
for e in ("quick", "full"):
    try:
        t = json.load(open(f"{out}/tune-{k}-{e}.json"))
        row[e] = {"seconds": t["seconds"], "tried": t["tried"], "tuner_ms": t["ms"]}
    except Exception as ex:
        row[e] = {"error": str(ex)}
        continue
    try:
        row[e]["ms"] = json.load(open(f"{out}/bench-{k}-{e}.json"))["ms"]
    except Exception:
        pass
print(json.dumps(row))
PY
  done
  python3 - "$rows" > "$out/tune.txt" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
print(f"{'kernel':<14} {'quick s':>8} {'configs':>8} {'quick ms':>9} {'full s':>8} {'configs':>8} {'full ms':>9} {'quick/full':>10}")
for r in rows:
    q, f = r.get("quick", {}), r.get("full", {})
    def g(d, key, fmt):
        return format(d[key], fmt) if key in d else "-"
    ratio = f"{q['ms'] / f['ms']:.3f}" if "ms" in q and "ms" in f and f["ms"] > 0 else "-"
    print(f"{r['kernel']:<14} {g(q, 'seconds', '.1f'):>8} {g(q, 'tried', 'd'):>8} {g(q, 'ms', '.4f'):>9} "
          f"{g(f, 'seconds', '.1f'):>8} {g(f, 'tried', 'd'):>8} {g(f, 'ms', '.4f'):>9} {ratio:>10}")
print("quick/full: the quick winner's time over the full winner's, timed back to back (100 runs, L2 flushed).")
PY
  cat "$out/tune.txt"
}

case "${1:-all}" in
  bundle) build_bundle ;;
  run) shift; run_bundle "$@" ;;
  bench)
    out="${2:-$root/gpu-out}"; mkdir -p "$out"
    bin="$(bundle_bin)"
    run_bench "$bin" "$out" || echo "benchmarks: incomplete (see $out/bench_*.log)"
    [ -f "$out/bench.txt" ] && cat "$out/bench.txt" ;;
  tune-table)
    out="${2:-$root/gpu-out}/tune"
    bin="$(bundle_bin)"
    ir="$bundle/ir"
    [ -d "$ir" ] || ir="$root/ir"
    run_tune_table "$bin" "$out" "$ir" ;;
  all) build_bundle; run_bundle "${2:-}" ;;
  *) echo "usage: tools/gpu.sh [bundle|run [OUT]|bench [OUT]|tune-table [OUT]]" >&2; exit 2 ;;
esac
