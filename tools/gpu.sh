#!/usr/bin/env bash
# tools/gpu.sh - kite's GPU command.
#
#   tools/gpu.sh bundle     build a self-contained bundle in bundle/ (fully
#                           static LLVM/MLIR/Clang; needs this machine's LLVM)
#   tools/gpu.sh run [OUT]  on a GPU host: run the GPU tests (but the
#                           compile-only sweeps CI runs; KITE_GPU_ALL_TESTS=1:
#                           those too), the differential
#                           tester, compute-sanitizer (memcheck, racecheck,
#                           synccheck, initcheck) and the benchmarks from bundle/,
#                           logs and JSON to OUT (KITE_GPU_STEPS="tests difftest
#                           sanitize bench" picks steps; KITE_SKIP_BENCH=1: no
#                           benchmarks; KITE_BENCH_TUNE=quick or quick,full:
#                           kite_bench autotunes each kernel; KITE_SANITIZERS:
#                           the tools to run; KITE_DIFFTEST_BUDGET: seconds)
#   tools/gpu.sh bench [OUT]  on a GPU host: the benchmarks only
#                           (KITE_BENCH_FILTER=S[,S...]: only kernels whose name
#                           and shape contain an S; -S: none that contain S, e.g.
#                           -S16384,-S32768 for all but the long attention rows;
#                           KITE_BENCH_ENERGY=1: also the energy a call of kite,
#                           eager and torch.compile side by side, from NVML)
#   tools/gpu.sh tune-table [OUT]  on a GPU host: `kite autotune` at --effort
#                           quick and full for GPU.md's kernels and matmul
#                           4096^3, each from an empty cache, both winners
#                           re-timed back to back (OUT/tune.txt)
#   tools/gpu.sh shapes [OUT]  on a GPU host: static against dynamic-shapes
#                           plans of add, rmsnorm, softmax, matmul and attention
#                           (OUT/shapes/shapes.md); KITE_SHAPES_TUNED=1: also
#                           both tuned, and at untuned sizes (shapes-tuned.md;
#                           KITE_SHAPES_TUNED=RE: the rows whose label matches)
#   tools/gpu.sh shapes-tuned [OUT]  the tuned part of `shapes` alone
#   tools/gpu.sh roundtrip [OUT]  on a GPU host: kite autotune --dynamic-shapes
#                           over ranges of softmax, matmul and attention, a
#                           cache export, and a fresh process that runs the
#                           serving sweeps from it without compiling
#   tools/gpu.sh timeline [OUT]  on a GPU host: `kite bench --timeline` of
#                           attention and causal attention (four configs;
#                           S1024, S4096; KITE_TIMELINE_SEQS picks; head dim
#                           128, KITE_TIMELINE_DIMS picks) beside
#                           SDPA, and of bmm 64x1024^3 and matmul 4096^3
#                           (OUT/timeline/timeline.txt)
#   tools/gpu.sh            both, on a GPU host that can also build
#
# The bundle holds stripped binaries only (no object files), packed into
# bundle/bin.tar.gz (unpacked on first use; what travels to a GPU host is
# limited to 64 MiB), the `kite` CLI among them, and the examples' captured
# IR in bundle/ir/ (the CLI takes .mlir files, so the GPU host needs no C++
# toolchain). The GPU host needs its CUDA driver and NVRTC, nothing else.
# The test summary ends with a line `N passed, M failed`, after one line each
# for the differential tester and each compute-sanitizer tool.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bundle="$root/bundle"

build_bundle() {
  "$root/tools/setup.sh"
  local build="$root/build-gpu"
  local generator=(-G Ninja)
  [ -f "$build/build.ninja" ] && generator=()
  # libkite_c.so is loaded into the GPU host's Python (torch_baseline.py):
  # its C++ runtime is linked in, as the executables' is.
  cmake "${generator[@]}" -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DKITE_STATIC=ON \
    -DCMAKE_EXE_LINKER_FLAGS="-static-libstdc++ -static-libgcc" \
    -DCMAKE_SHARED_LINKER_FLAGS="-static-libstdc++ -static-libgcc" > /dev/null
  local tools="kite runtime_gpu_test examples_gpu_test launch_gpu_test autotune_gpu_test kite_bench difftest"
  cmake --build "$build" -j "${KITE_JOBS:-$(nproc)}" --target $tools kite_c
  rm -rf "$bundle"
  mkdir -p "$bundle/bin" "$bundle/ir"
  for b in $tools libkite_c.so; do
    cp "$build/bin/$b" "$bundle/bin/"
    strip --strip-unneeded "$bundle/bin/$b"
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
    # --filter=S: argparse would take an S that starts with '-' for an option.
    [ -n "${KITE_BENCH_FILTER:-}" ] && filter=("--filter=$KITE_BENCH_FILTER")
    rm -rf "$out/samples" "$out/plans"; mkdir -p "$out/samples"
    timeout "$limit" "$bin/kite_bench" --json "$out/bench_kite.json" --samples "$out/samples" \
      --plans "$out/plans" "${tune[@]}" \
      "${filter[@]}" > "$out/bench_kite.log" 2>&1 ||
      { rc=$?; ok=1; echo "kite_bench: FAILED (exit $rc); tail of bench_kite.log:"; tail -5 "$out/bench_kite.log"; }
  else
    ok=1; echo "kite_bench: not in $bin"
  fi
  if [ -f "$benchdir/torch_baseline.py" ]; then
    # KITE_BENCH_ENERGY=1: also each contender's energy a call (about 1.5 s a row).
    local energy=()
    [ "${KITE_BENCH_ENERGY:-0}" = 1 ] && energy=(--energy)
    TORCHINDUCTOR_CACHE_DIR="$out/inductor-cache" timeout "$limit" \
      python3 "$benchdir/torch_baseline.py" --json "$out/bench_torch.json" \
      --check-against "$out/bench_kite.json" --kite-plans "$out/plans" --kite-lib "$bin/libkite_c.so" \
      "${filter[@]}" "${energy[@]}" > "$out/bench_torch.log" 2>&1 ||
      { rc=$?; ok=1; echo "torch_baseline.py: FAILED (exit $rc); tail of bench_torch.log:"; tail -5 "$out/bench_torch.log"; }
    python3 "$benchdir/report.py" --kite "$out/bench_kite.json" --torch "$out/bench_torch.json" \
      --md "$out/bench.md" > "$out/bench.txt" 2>&1 ||
      { ok=1; echo "report.py: FAILED"; cat "$out/bench.txt"; }
  else
    ok=1; echo "bench/*.py: not in $benchdir"
  fi
  return $ok
}

# The differential tester (test/difftest): every generated kernel at random
# sizes under random configs against reference mode, compiles on every
# core. Its summary line ("difftest: N pairs compared, M mismatches, ...")
# joins the final summary; each mismatch or failure line in difftest.log
# carries the command that reproduces it.
run_difftest() {
  local bin="$1" out="$2" rc=0 line
  echo "== difftest (random kernels vs reference mode; log in $out/difftest.log)"
  if [ ! -x "$bin/difftest" ]; then
    echo "difftest: not in $bin"; summary+=("difftest: not in the bundle"); return 1
  fi
  # shellcheck disable=SC2086
  KITE_CACHE_DIR="$out/cache" timeout "${KITE_DIFFTEST_TIMEOUT:-900}" "$bin/difftest" \
    --jobs="$(nproc)" --time-budget="${KITE_DIFFTEST_BUDGET:-280}" ${KITE_DIFFTEST_ARGS:-} \
    > "$out/difftest.log" 2>&1 || rc=$?
  grep -E -A1 '^difftest: (MISMATCH|FAILURE)' "$out/difftest.log" | head -60 || true
  line=$(grep -E '^difftest: [0-9]+ pairs compared' "$out/difftest.log" | tail -1 || true)
  [ -n "$line" ] || line="difftest: no summary (exit $rc, killed or crashed; see difftest.log)"
  echo "$line"
  summary+=("$line")
  return $rc
}

# Examples and tuned (non-default) configs that fit at these shapes, for
# `kite bench` under compute-sanitizer: "file kernel args | config | config".
sanitize_cases=(
  'add add x=f32[1000,129] y=f32[1000,129] | {"block_sizes":[8,32],"num_warps":2} | {"block_sizes":[8,32],"pid_type":"persistent_interleaved"}'
  'exp exp_kernel x=bf16[1000,3] | {"block_sizes":[256]} | {"block_sizes":[1024],"num_warps":8}'
  'softmax softmax x=bf16[37,1000] | {"block_sizes":[2],"num_warps":2,"reduction_loops":[64]} | {"block_sizes":[4],"num_warps":4,"inner_threads":32,"fast_math":true}'
  'softmax softmax_two_pass x=f32[19,1000] | {"block_sizes":[2,256],"num_warps":2} | {"block_sizes":[4,32],"num_warps":8}'
  'layernorm layernorm x=bf16[13,1000] weight=bf16[1000] bias=bf16[1000] eps=f64:1e-5 | {"block_sizes":[4],"num_warps":8,"reduction_loops":[512]} | {"block_sizes":[2],"num_warps":4,"early_loads":true}'
  'layernorm layer_norm x=bf16[13,1000] weight=bf16[1000] bias=bf16[1000] eps=f64:1e-5 | {"block_sizes":[4],"num_warps":4,"reduction_loops":[256],"l2_hints":"keep_loads","streaming":true} | {"block_sizes":[1],"num_warps":8,"l2_hints":"keep_loads","streaming":true,"min_programs_per_sm":4}'
  'rmsnorm rmsnorm x=bf16[13,1000] weight=bf16[1000] eps=f64:1e-6 | {"block_sizes":[1],"reduction_loops":[256]} | {"block_sizes":[2],"num_warps":1,"inner_threads":16,"reduction_loops":[256]}'
  'sum sum_kernel x=f32[21,1000] | {"block_sizes":[4],"num_warps":2,"reduction_loops":[512]} | {"block_sizes":[8],"num_warps":4,"inner_threads":16}'
  'long_sum long_sum x=f32[21,1000] | {"block_sizes":[2,256],"num_warps":2} | {"block_sizes":[4,32],"num_warps":8}'
  'cross_entropy cross_entropy logits=bf16[17,1000] target=i64[17] --fill target=0..1000 | {"block_sizes":[1],"num_warps":16,"reduction_loops":[512],"fast_math":true} | {"block_sizes":[2],"num_warps":8,"early_loads":true}'
  'embedding embedding ids=i64[1000] weight=f32[1000,33] --fill ids=0..1000 | {"block_sizes":[16,16],"num_warps":2} | {"block_sizes":[64,32],"num_warps":8}'
  'swiglu swiglu a=bf16[1000,67] b=bf16[1000,67] | {"block_sizes":[8,32],"num_warps":2} | {"block_sizes":[16,128],"num_warps":8}'
  'matmul matmul x=bf16[300,264] y=bf16[264,136] | {"block_sizes":[64,64,64],"num_warps":4,"num_stages":4,"tensor_cores":true} | {"block_sizes":[128,128,64],"num_warps":8,"num_stages":4,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"indexing":"tma"} | {"block_sizes":[32,64,8],"num_warps":2}'
  'matmul matmul x=bf16[300,203] y=bf16[203,301] | {"block_sizes":[128,256,64],"num_warps":12,"num_stages":4,"tensor_cores":true,"wgmma":true,"warp_specialize":true} | {"block_sizes":[64,64,64],"num_warps":4,"num_stages":3,"tensor_cores":true,"wgmma":true} | {"block_sizes":[128,128,32],"num_warps":8,"num_stages":3,"tensor_cores":true}'
  'matmul_bias_relu matmul_bias_relu x=bf16[300,264] y=bf16[264,136] bias=bf16[136] | {"block_sizes":[128,256,64],"num_warps":12,"num_stages":4,"tensor_cores":true,"wgmma":true,"warp_specialize":true} | {"block_sizes":[32,64,16],"num_warps":2,"tensor_cores":true}'
  'bmm bmm a=bf16[3,129,136] b=bf16[3,136,72] | {"block_sizes":[1,64,32,32],"num_warps":4,"num_stages":3,"tensor_cores":true} | {"block_sizes":[1,128,64,64],"num_warps":8,"num_stages":3,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"indexing":"tma"}'
  'attention attention q=bf16[3,129,32] k=bf16[3,129,32] v=bf16[3,129,32] | {"block_sizes":[1,32,64],"num_warps":8,"tensor_cores":true,"early_loads":true} | {"block_sizes":[1,16,64],"tensor_cores":true,"inner_threads":2}'
  'attention attention q=bf16[2,300,128] k=bf16[2,300,128] v=bf16[2,300,128] | {"block_sizes":[1,128,128],"num_warps":12,"num_stages":2,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"overlap_products":true,"pingpong":true} | {"block_sizes":[1,64,128],"num_warps":8,"num_stages":1,"tensor_cores":true,"wgmma":true,"warp_specialize":true} | {"block_sizes":[1,128,128],"num_warps":12,"num_stages":2,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"overlap_products":true,"pingpong":true,"bulk_stores":true}'
  'causal_attention causal_attention q=bf16[2,300,128] k=bf16[2,300,128] v=bf16[2,300,128] | {"block_sizes":[1,128,128],"num_warps":12,"num_stages":2,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"overlap_products":true,"pingpong":true}'
  'causal_attention causal_attention q=bf16[2,512,64] k=bf16[2,512,64] v=bf16[2,512,64] | {"block_sizes":[1,128,128],"num_warps":12,"num_stages":2,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"overlap_products":true,"pingpong":true} | {"block_sizes":[1,128,128],"num_warps":12,"num_stages":2,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"overlap_products":true,"pingpong":true,"pid_type":"persistent_dynamic"}'
  'causal_attention causal_attention q=bf16[2,300,64] k=bf16[2,300,64] v=bf16[2,300,64] | {"block_sizes":[1,64,64],"num_warps":8,"num_stages":3,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"overlap_products":true,"min_programs_per_sm":3} | {"block_sizes":[1,64,64],"num_warps":8,"num_stages":2,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"overlap_products":true,"min_programs_per_sm":2}'
  'matmul matmul x=bf16[384,264] y=bf16[264,256] | {"block_sizes":[128,128,64],"generic_mainloop":true,"indexing":"tma","num_stages":3,"num_warps":12,"pid_type":"persistent_interleaved","tensor_cores":true,"warp_specialize":true,"wgmma":true,"bulk_stores":true}'
  'matmul matmul x=bf16[300,264] y=bf16[264,256] | {"block_sizes":[128,128,64],"generic_mainloop":true,"indexing":"tma","num_stages":3,"num_warps":12,"pid_type":"persistent_interleaved","tensor_cores":true,"warp_specialize":true,"wgmma":true,"cluster_size":2}'
  'attention attention q=bf16[2,256,128] k=bf16[2,256,128] v=bf16[2,256,128] | {"block_sizes":[1,128,128],"num_warps":12,"num_stages":2,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"overlap_products":true,"pingpong":true,"cluster_size":2}'
  'matmul matmul x=bf16[300,264] y=bf16[264,11520] | {"block_sizes":[128,128,64],"generic_mainloop":true,"indexing":"tma","num_stages":4,"num_warps":12,"pid_type":"persistent_interleaved","tensor_cores":true,"warp_specialize":true,"wgmma":true,"stream_k":true}'
  'mlp mlp x=bf16[300,128] w1=bf16[128,296] w2=bf16[296,128] | {"block_sizes":[128,128],"num_warps":12,"num_stages":2,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"overlap_products":true,"pingpong":true}'
  'welford welford x=bf16[11,1000] weight=bf16[1000] bias=bf16[1000] eps=f64:1e-5 | {"block_sizes":[2,256,128],"num_warps":2} | {"block_sizes":[4,32,16],"num_warps":8}'
)

# Runs each sanitize_cases config once through `kite bench` under one
# compute-sanitizer tool, one after another; fails if any run failed.
sanitize_tuned() {
  local bin="$1" ir="$2" tool="$3" bad=0 c api=()
  # `kite bench` measures the copy bandwidth (for the roofline) by copying
  # a fresh, uninitialized 1 GiB buffer; initcheck reports that host-API
  # copy once per 32 bytes, which floods the log and outlasts any budget.
  # Its kernel-side checks stay on. (The bench's reference run poisons its
  # outputs first, like the tuner's checked runs: initcheck does not count
  # the writes of bulk copies (`bulk_stores`) as initializing, and reported
  # the check's reads of such outputs as uninitialized: docs/testing.md.)
  [ "$tool" = initcheck ] && api=(--check-api-memory-access no)
  for c in "${sanitize_cases[@]}"; do
    local head="${c%% | *}" rest="${c#* | }" file kernel args config
    read -r file kernel args <<<"$head"
    while [ -n "$rest" ]; do
      config="${rest%% | *}"
      if [ "$config" = "$rest" ]; then rest=""; else rest="${rest#* | }"; fi
      echo "== $kernel $config"
      # shellcheck disable=SC2086
      timeout 600 compute-sanitizer --tool "$tool" --print-limit 20 "${api[@]}" \
        "$bin/kite" bench "$ir/$file.mlir" --kernel "$kernel" --arg $args --config "$config" --runs 1 ||
        { echo "kite bench $kernel: FAILED under $tool (exit $?)"; bad=1; }
    done
  done
  return $bad
}

# The errors compute-sanitizer reported in a log: the sum of its summaries
# ("ERROR SUMMARY: N errors"; racecheck's "RACECHECK SUMMARY: H hazards
# displayed (N errors, W warnings)" where it prints no ERROR SUMMARY).
sanitizer_errors() {
  local n=0 v
  for v in $(grep -oE 'ERROR SUMMARY: [0-9]+ error' "$1" | grep -oE '[0-9]+'); do n=$((n + v)); done
  if ! grep -q 'ERROR SUMMARY' "$1"; then
    for v in $(grep -oE 'RACECHECK SUMMARY: .*\([0-9]+ error' "$1" | grep -oE '\([0-9]+' | tr -d '('); do
      n=$((n + v))
    done
  fi
  echo "$n"
}

# compute-sanitizer's memcheck, racecheck, synccheck and initcheck over every
# example: examples_gpu_test's GPU cases at the default config (in shards),
# beside `kite bench` of each example under the tuned configs above. Each
# tool's result (clean, or its error count) joins the final summary.
run_sanitizers() {
  local bin="$1" out="$2" shards="$3" ir="$4" tool
  if ! command -v compute-sanitizer >/dev/null; then
    echo "compute-sanitizer: not found"; summary+=("compute-sanitizer: not found"); failed=$((failed + 1))
    return
  fi
  for tool in ${KITE_SANITIZERS:-memcheck racecheck synccheck initcheck}; do
    echo "== compute-sanitizer $tool (every example: default config; tuned configs through kite bench)"
    rm -f "$out/$tool".*.log
    local pids=() i p crashed=0 errors line
    for ((i = 0; i < shards; i++)); do
      GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i KITE_SANITIZE_DEFAULT_ONLY=1 \
        KITE_CACHE_DIR="$out/cache" timeout 1800 compute-sanitizer --tool "$tool" --print-limit 20 \
        "$bin/examples_gpu_test" --gtest_filter='*MatchesReferenceOnGpu*' \
        > "$out/$tool.$i.log" 2>&1 &
      pids+=($!)
    done
    KITE_CACHE_DIR="$out/cache" sanitize_tuned "$bin" "$ir" "$tool" > "$out/$tool.tuned.log" 2>&1 &
    pids+=($!)
    for p in "${pids[@]}"; do wait "$p" || crashed=$((crashed + 1)); done
    cat "$out/$tool".[0-9]*.log "$out/$tool.tuned.log" > "$out/$tool.log"
    grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$out/$tool.log" | sort | uniq -c
    errors=$(sanitizer_errors "$out/$tool.log")
    if [ "$errors" -eq 0 ] && [ $crashed -eq 0 ]; then
      passed=$((passed + 1)); line="$tool: clean"
    else
      failed=$((failed + 1)); line="$tool: $errors errors, $crashed failed runs (see $tool.log)"
      # The first reports, each after the run it came from (a test's
      # "[ RUN" line or a tuned case's "== kernel config" line): only a few
      # of $out's files come back from a device call, so say it here.
      awk '/^\[ RUN|^== /{head = $0; next}
           /ERROR SUMMARY: 0 errors|RACECHECK SUMMARY: 0 hazards/{next}
           /Invalid|Race|Barrier|Uninitialized|ERROR|FAILED|at 0x|^=+ +at |Device Frame/ {
             if (head != "") { print head; head = "" }
             print; if (++n >= 30) exit }' "$out/$tool.log" || true
    fi
    echo "$line"
    summary+=("$line")
  done
}

# The bundle's bin/, unpacked from bin.tar.gz on first use; from inside
# the bundle (bundle/gpu.sh) the bundle is $root.
# The examples' captured IR: the bundle's, else a checkout's ir/.
bundle_ir() {
  if [ -d "$bundle/ir" ]; then echo "$bundle/ir"; else echo "$root/ir"; fi
}

bundle_bin() {
  local b="$bundle"
  [ -f "$b/bin.tar.gz" ] || [ -d "$b/bin" ] || b="$root"
  if [ ! -d "$b/bin" ] && [ -f "$b/bin.tar.gz" ]; then
    tar xzf "$b/bin.tar.gz" -C "$b"
  fi
  echo "$b/bin"
}

# Whether KITE_GPU_STEPS (default: all of them) names step $1.
has_step() {
  [[ " ${KITE_GPU_STEPS:-tests difftest sanitize bench} " == *" $1 "* ]]
}

run_bundle() {
  local out="${1:-$root/gpu-out}"
  mkdir -p "$out"
  local bin
  bin="$(bundle_bin)"
  local passed=0 failed=0
  summary=()
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv | tee "$out/gpu.txt" || true
  # Each test binary runs in shards, in parallel (NVRTC compiles dominate).
  local shards="${KITE_GPU_SHARDS:-8}"
  local tests="runtime_gpu_test launch_gpu_test examples_gpu_test autotune_gpu_test"
  has_step tests || tests=""
  # The compile-only sweeps of examples_gpu_test (NVRTC for sm_90a, no GPU:
  # about 1000 CPU-seconds) run in CI's `codegen` label on every commit; here
  # they would only take device time (KITE_GPU_ALL_TESTS=1 runs them too).
  local cpu_only="*CompilesUnderTwentyConfigs*:*CompilesWithDynamicShapes*"
  for t in $tests; do
    echo "== $t ($shards shards)"
    local pids=() filter=()
    if [ "$t" = examples_gpu_test ] && [ "${KITE_GPU_ALL_TESTS:-0}" != 1 ]; then
      filter=(--gtest_filter="-$cpu_only")
    fi
    for ((i = 0; i < shards; i++)); do
      GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i KITE_CACHE_DIR="$out/cache" \
        "$bin/$t" "${filter[@]}" --gtest_output="json:$out/$t.$i.json" > "$out/$t.$i.log" 2>&1 &
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
    grep -E '^\[ +(OK|FAILED) +\]|Failure|error:' "$out/$t.log" | head -150 || true # (head closes the pipe early)
    # Past the first 150 lines too: every failed test, and what failed.
    if grep -qE '^\[  FAILED  \].* \([0-9]+ ms\)$' "$out/$t.log"; then
      echo "-- $t: failed tests"
      grep -E '^\[  FAILED  \].* \([0-9]+ ms\)$' "$out/$t.log"
      grep -A8 ': Failure$' "$out/$t.log" | head -80 || true
    fi
    local p f
    p=$(grep -c '^\[       OK \]' "$out/$t.log" || true)
    f=$(grep -cE '^\[  FAILED  \].* \([0-9]+ ms\)$' "$out/$t.log" || true)
    passed=$((passed + p)); failed=$((failed + f))
  done
  if has_step difftest; then
    if run_difftest "$bin" "$out"; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
  fi
  if has_step sanitize; then
    local ir
    ir="$(bundle_ir)"
    run_sanitizers "$bin" "$out" "$shards" "$ir"
  fi
  if has_step bench && [ "${KITE_SKIP_BENCH:-0}" != 1 ]; then
    run_bench "$bin" "$out" || echo "benchmarks: incomplete (see $out/bench_*.log)"
    if [ -f "$out/bench.txt" ]; then cat "$out/bench.txt"; fi
  fi
  echo "== summary"
  : > "$out/summary.txt"
  local s
  for s in "${summary[@]}"; do echo "$s" | tee -a "$out/summary.txt"; done
  echo "$passed passed, $failed failed" | tee -a "$out/summary.txt"
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
    "attention attention q=bf16[128,4096,128] k=bf16[128,4096,128] v=bf16[128,4096,128]"
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

# Static against dynamic-shapes plans (kite bench with and without
# --dynamic-shapes, default configs, back to back): OUT/shapes.md.
# A kernel's static and dynamic-shapes plans timed back to back (kite bench,
# median of 200 runs, configs from KITE_CACHE_DIR's entries or the
# defaults): prints "static ms | dynamic ms | dynamic / static".
bench_pair() { # bin log ir file kernel args...
  local bin=$1 log=$2 ir=$3 file=$4 kernel=$5; shift 5
  local a=(); for x in "$@"; do a+=(--arg "$x"); done
  ms() { "$bin/kite" bench "$@" --runs 200 --json 2>>"$log" |
           python3 -c 'import json,sys; print("%.4f" % json.load(sys.stdin)["ms"])' 2>/dev/null || echo ERR; }
  local s d
  s=$(ms "$ir/$file.mlir" --kernel "$kernel" "${a[@]}")
  d=$(ms "$ir/$file.mlir" --kernel "$kernel" "${a[@]}" --dynamic-shapes)
  echo "$s | $d | $(python3 -c "print('%.3f' % ($d / $s))" 2>/dev/null || echo -)"
}

run_shapes_table() {
  local bin="$1" out="$2" ir="$3"
  mkdir -p "$out"
  row() { # label file kernel args...
    local label=$1; shift
    echo "| $label | $(bench_pair "$bin" "$out/shapes.log" "$ir" "$@") |"
  }
  {
    echo "| row | static ms | dynamic ms | dynamic / static |"
    echo "|---|---|---|---|"
    row "add bf16 8192x8192" add add "x=bf16[8192,8192]" "y=bf16[8192,8192]"
    row "add bf16 4097x4096" add add "x=bf16[4097,4096]" "y=bf16[4097,4096]"
    row "rmsnorm bf16 8192x4096" rmsnorm rmsnorm "x=bf16[8192,4096]" "weight=bf16[4096]" "eps=f64"
    row "rmsnorm bf16 1000x4096" rmsnorm rmsnorm "x=bf16[1000,4096]" "weight=bf16[4096]" "eps=f64"
    row "softmax bf16 8192x8192" softmax softmax "x=bf16[8192,8192]"
    row "softmax bf16 4097x8192" softmax softmax "x=bf16[4097,8192]"
    row "softmax bf16 4096x5000" softmax softmax "x=bf16[4096,5000]"
    row "attention bf16 32x4096x128" attention attention "q=bf16[32,4096,128]" "k=bf16[32,4096,128]" "v=bf16[32,4096,128]"
    row "attention bf16 32x1000x128" attention attention "q=bf16[32,1000,128]" "k=bf16[32,1000,128]" "v=bf16[32,1000,128]"
    row "causal bf16 32x4096x128" causal_attention causal_attention "q=bf16[32,4096,128]" "k=bf16[32,4096,128]" "v=bf16[32,4096,128]"
    row "matmul bf16 4096^3" matmul matmul "x=bf16[4096,4096]" "y=bf16[4096,4096]"
    row "matmul bf16 8192^3" matmul matmul "x=bf16[8192,8192]" "y=bf16[8192,8192]"
    row "matmul bf16 1000x4096x4096" matmul matmul "x=bf16[1000,4096]" "y=bf16[4096,4096]"
    row "matmul bf16 128x4096x4096" matmul matmul "x=bf16[128,4096]" "y=bf16[4096,4096]"
  } | tee "$out/shapes.md"
}

# Tuned plans: `kite autotune --effort quick` of a static plan and of a
# dynamic-shapes plan at each tuned shape, then both winners timed back to
# back; and at an untuned size, the dynamic plan with its class's winner
# (tuned at the shape before it) against the static plan tuned for that
# size: OUT/shapes-tuned.md.
run_shapes_tuned() {
  local bin="$1" out="$2" ir="$3"
  mkdir -p "$out"
  local cache="$out/tuned-cache"
  rm -rf "$cache"
  tune() { # file kernel args... (then --dynamic-shapes or not)
    local file=$1 kernel=$2; shift 2
    KITE_CACHE_DIR="$cache" timeout 150 "$bin/kite" autotune "$ir/$file.mlir" --kernel "$kernel" \
      "$@" --effort quick --budget 25 >>"$out/shapes-tuned.log" 2>&1 || echo "autotune $kernel $*: FAILED" >>"$out/shapes-tuned.log"
  }
  row() { # mode(tuned|between) label file kernel args...
    local mode=$1 label=$2 file=$3 kernel=$4; shift 4
    # KITE_SHAPES_TUNED=RE (not 1): only rows whose label matches RE.
    if [ "${KITE_SHAPES_TUNED}" != 1 ] && [[ ! "$label" =~ $KITE_SHAPES_TUNED ]]; then return; fi
    local a=(); for x in "$@"; do a+=(--arg "$x"); done
    tune "$file" "$kernel" "${a[@]}"
    [ "$mode" = tuned ] && tune "$file" "$kernel" "${a[@]}" --dynamic-shapes
    echo "| $label | $mode | $(KITE_CACHE_DIR="$cache" bench_pair "$bin" "$out/shapes-tuned.log" "$ir" "$file" "$kernel" "$@") |"
  }
  {
    echo "| row | size | static tuned ms | dynamic ms | dynamic / static |"
    echo "|---|---|---|---|---|"
    row tuned "softmax bf16 8192x8192" softmax softmax "x=bf16[8192,8192]"
    row between "softmax bf16 8192x6000" softmax softmax "x=bf16[8192,6000]"
    row tuned "rmsnorm bf16 8192x4096" rmsnorm rmsnorm "x=bf16[8192,4096]" "weight=bf16[4096]" "eps=f64"
    row between "rmsnorm bf16 3000x4096" rmsnorm rmsnorm "x=bf16[3000,4096]" "weight=bf16[4096]" "eps=f64"
    row tuned "matmul bf16 128x4096x4096" matmul matmul "x=bf16[128,4096]" "y=bf16[4096,4096]"
    row between "matmul bf16 100x4096x4096" matmul matmul "x=bf16[100,4096]" "y=bf16[4096,4096]"
    row tuned "matmul bf16 4096^3" matmul matmul "x=bf16[4096,4096]" "y=bf16[4096,4096]"
    row between "matmul bf16 3000x4096x4096" matmul matmul "x=bf16[3000,4096]" "y=bf16[4096,4096]"
    row tuned "attention bf16 32x4096x128" attention attention "q=bf16[32,4096,128]" "k=bf16[32,4096,128]" "v=bf16[32,4096,128]"
    row between "attention bf16 32x3000x128" attention attention "q=bf16[32,3000,128]" "k=bf16[32,3000,128]" "v=bf16[32,3000,128]"
  } | tee "$out/shapes-tuned.md"
  rm -rf "$cache"
}

# The offline path for dynamic shapes: `kite autotune --dynamic-shapes` over
# ranges (softmax's rows 1..8192, matmul's M 1..4096, attention's length
# 1..8192: every class they hold), `kite cache export`, then a fresh process
# (autotune_gpu_test's bundle child) that loads the bundle and runs the
# serving sweeps: it must compile nothing (OUT/roundtrip.txt).
# KITE_ROUNDTRIP_EFFORT: none (the default configs, timed) or quick.
run_roundtrip() {
  local bin="$1" out="$2" ir="$3"
  local effort="${KITE_ROUNDTRIP_EFFORT:-none}"
  mkdir -p "$out"
  local cache="$out/roundtrip-cache" empty="$out/roundtrip-empty"
  rm -rf "$cache" "$empty"
  mkdir -p "$empty"
  tune() { KITE_CACHE_DIR="$cache" "$bin/kite" autotune "$@" --dynamic-shapes --effort "$effort" \
             >>"$out/roundtrip.log" 2>&1 || echo "kite autotune $*: FAILED"; }
  tune "$ir/softmax.mlir" --kernel softmax --arg "x=bf16[2,1..8192]"
  tune "$ir/matmul.mlir" --kernel matmul --arg "x=bf16[1..4096,4096]" --arg "y=bf16[4096,4096]"
  tune "$ir/attention.mlir" --kernel attention --arg "q=bf16[2,1..8192,64]" \
    --arg "k=bf16[2,1..8192,64]" --arg "v=bf16[2,1..8192,64]"
  KITE_CACHE_DIR="$cache" "$bin/kite" cache ls > "$out/roundtrip-entries.txt" 2>&1
  KITE_CACHE_DIR="$cache" "$bin/kite" cache export -o "$out/roundtrip.kitebundle" >>"$out/roundtrip.log" 2>&1
  {
    echo "kite autotune --effort $effort: $(grep -c . "$out/roundtrip-entries.txt") entries"
    grep -E "shapes, [0-9]+ to tune" "$out/roundtrip.log"
    "$bin/autotune_gpu_test" --dynamic-bundle-child "$out/roundtrip.kitebundle" "$empty" 2>&1 | tail -1
  } | tee "$out/roundtrip.txt"
  rm -rf "$cache" "$empty" "$out/roundtrip.kitebundle"
}

# Where attention's programs spend their cycles: `kite bench --timeline` of
# the attention rows against SDPA (causal and not, S1024 and S4096) under
# four configs, beside SDPA's times from the same session
# (OUT/timeline.txt).
run_timeline() {
  local bin="$1" out="$2" ir="$3"
  mkdir -p "$out"
  # Two computing warpgroups taking turns: flat, persistent, and flat with
  # programs in groups of 16 heads (causal: the longest query tiles of a
  # group first, so that the last wave is its shortest); and two programs
  # an SM with one computing warpgroup each.
  local pp='{"block_sizes":[1,128,128],"num_warps":12,"tensor_cores":true,"wgmma":true,"num_stages":2,"warp_specialize":true,"overlap_products":true,"pingpong":true,"fast_math":true'
  local configs=("$pp}" "$pp,\"pid_type\":\"persistent_interleaved\"}" "$pp,\"l2_groupings\":[16]}"
    '{"block_sizes":[1,64,64],"num_warps":8,"tensor_cores":true,"wgmma":true,"num_stages":2,"warp_specialize":true,"overlap_products":true,"fast_math":true,"min_programs_per_sm":2}')
  {
    local s d ex c
    for d in ${KITE_TIMELINE_DIMS:-128}; do
      for s in ${KITE_TIMELINE_SEQS:-1024 4096}; do
        for ex in attention causal_attention; do
          for c in "${configs[@]}"; do
            echo "== $ex B4 H32 S$s D$d bf16, $c"
            timeout 120 "$bin/kite" bench "$ir/$ex.mlir" --kernel "$ex" \
              --arg "q=bf16[128,$s,$d]" "k=bf16[128,$s,$d]" "v=bf16[128,$s,$d]" \
              --config "$c" --runs 20 --timeline 2>&1 || echo "kite bench $ex S$s D$d: FAILED"
          done
        done
      done
    done
    # Products whose programs have few K steps (issue 24's bmm row) and
    # many: a program's start, end and the gap between programs.
    local p
    for p in "bmm bmm a=bf16[64,1024,1024] b=bf16[64,1024,1024]" \
             "matmul matmul x=bf16[4096,4096] y=bf16[4096,4096]"; do
      local file kernel args
      read -r file kernel args <<<"$p"
      echo "== $kernel $args (default config)"
      # shellcheck disable=SC2086
      timeout 120 "$bin/kite" bench "$ir/$file.mlir" --kernel "$kernel" --arg $args --runs 20 \
        --timeline 2>&1 || echo "kite bench $kernel: FAILED"
    done
    local benchdir
    benchdir="$(dirname "$bin")/bench"
    [ -d "$benchdir" ] || benchdir="$root/bench"
    echo "== SDPA (torch_baseline.py --no-compile)"
    local rows=()
    for d in ${KITE_TIMELINE_DIMS:-128}; do
      for s in ${KITE_TIMELINE_SEQS:-1024 4096}; do rows+=("attention B4 H32 S$s D$d"); done
    done
    timeout 120 python3 "$benchdir/torch_baseline.py" --no-compile --runs 20 \
      --filter "$(IFS=,; echo "${rows[*]}")" 2>&1 | grep -v '^$' ||
      echo "torch_baseline.py: FAILED"
  } | tee "$out/timeline.txt"
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
    ir="$(bundle_ir)"
    run_tune_table "$bin" "$out" "$ir" ;;
  shapes)
    out="${2:-$root/gpu-out}/shapes"
    bin="$(bundle_bin)"
    ir="$(bundle_ir)"
    run_shapes_table "$bin" "$out" "$ir"
    [ -n "${KITE_SHAPES_TUNED:-}" ] && run_shapes_tuned "$bin" "$out" "$ir"
    true ;;
  shapes-tuned)
    out="${2:-$root/gpu-out}/shapes"
    KITE_SHAPES_TUNED="${KITE_SHAPES_TUNED:-1}" run_shapes_tuned "$(bundle_bin)" "$out" "$(bundle_ir)" ;;
  timeline)
    out="${2:-$root/gpu-out}/timeline"
    bin="$(bundle_bin)"
    ir="$(bundle_ir)"
    run_timeline "$bin" "$out" "$ir" ;;
  all) build_bundle; run_bundle "${2:-}" ;;
  roundtrip)
    out="${2:-$root/gpu-out}/roundtrip"
    bin="$(bundle_bin)"
    ir="$(bundle_ir)"
    run_roundtrip "$bin" "$out" "$ir" ;;
  *) echo "usage: tools/gpu.sh [bundle|run [OUT]|bench [OUT]|tune-table [OUT]|shapes [OUT]|shapes-tuned [OUT]|roundtrip [OUT]|timeline [OUT]]" >&2; exit 2 ;;
esac
