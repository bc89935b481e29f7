#!/usr/bin/env bash
# tools/demo.sh - kite's main job on this machine: capture every example into
# the kite dialect, show the IR, check that it round-trips, and run each
# example in reference mode against an independent implementation.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/tools/build.sh"
build="${KITE_BUILD_DIR:-$root/build}"
kite="$build/bin/kite"
opt="$build/bin/kite-opt"

section() { printf '\n\033[1m== %s ==\033[0m\n' "$*"; }

section "softmax.kite.cpp"
sed -n '/KITE_KERNEL Tensor softmax(/,/^}/p' "$root/examples/softmax.kite.cpp"
section "captured IR: kite compile examples/softmax.kite.cpp --kernel softmax --emit=ir"
"$kite" compile "$root/examples/softmax.kite.cpp" --kernel softmax --emit=ir

section "capture and round-trip every example"
status=0
for f in "$root"/examples/*.kite.cpp; do
  name="$(basename "$f")"
  if ir="$("$kite" compile "$f" --emit=ir 2>&1)" && printf '%s\n' "$ir" | "$opt" >/dev/null 2>&1; then
    kernels=$(printf '%s\n' "$ir" | grep -c 'attributes {kite.kernel' || true)
    ops=$(printf '%s\n' "$ir" | grep -c ' = \| kite\.' || true)
    printf '  %-26s ok   %d kernel(s), %4d lines of IR\n' "$name" "$kernels" "$ops"
  else
    printf '  %-26s FAILED\n%s\n' "$name" "$ir"
    status=1
  fi
done

section "lowered to CUDA: kite-opt --kite-lower=\"args='x=bf16[4096,4096]'\" --kite-print-cuda"
"$kite" compile "$root/examples/softmax.kite.cpp" --kernel softmax --emit=ir |
  "$opt" --kite-lower="args='x=bf16[4096,4096]'" --kite-print-cuda -o /dev/null

section "NVRTC: every example's CUDA compiles for sm_90a under 20 configs"
"$build/bin/examples_gpu_test" --gtest_filter='*CompilesUnderTwentyConfigs*' --gtest_brief=1 || status=1

if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then
  section "GPU: every example against reference mode"
  "$build/bin/examples_gpu_test" --gtest_filter='*MatchesReferenceOnGpu*' --gtest_brief=1 || status=1
fi

section "reference mode: every example against a plain-loop implementation"
(cd "$build" && ctest -L reference -j "$(nproc)" --output-on-failure) || status=1
exit $status
