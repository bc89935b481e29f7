#!/usr/bin/env bash
# tools/fuzz.sh - build kite's libFuzzer targets and run each for a budget.
#
#   tools/fuzz.sh [--seconds S] [--runs N] [--jobs J] [--timeout T] [TARGET...]
#
# Builds test/fuzz/ into $KITE_BUILD_DIR (default build-fuzz) with clang-19,
# AddressSanitizer, UndefinedBehaviorSanitizer and libFuzzer's coverage
# instrumentation (-DKITE_SANITIZE=address,undefined -DKITE_FUZZ=ON), then
# runs each target (default: all of capture ir config args cache) for S
# seconds (default 600) or N inputs (default 1000000), whichever comes first,
# J targets at a time (default 2), starting from its checked-in corpus and
# regressions. An input that takes more than T seconds (default 60) is a
# hang. Prints the executions per target and fails if any target crashed,
# hung, ran out of memory or reported a sanitizer error; the input that did
# it is saved as $KITE_BUILD_DIR/fuzz-out/<target>/crash-* (or timeout-*,
# oom-*, leak-*): minimize it (-minimize_crash=1), fix the bug and check it
# in under test/fuzz/regressions/<target>/, which every build replays
# (ctest -L fuzz). New inputs the run finds stay in the build tree.
#
# Environment: KITE_BUILD_DIR, KITE_JOBS (build jobs, default 2),
# KITE_CMAKE_ARGS (extra configure arguments). docs/testing.md has more.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${KITE_BUILD_DIR:-$root/build-fuzz}"
seconds=600
runs=1000000
jobs=2
timeout=60
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    --jobs) jobs="$2"; shift 2 ;;
    --timeout) timeout="$2"; shift 2 ;;
    -h|--help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "fuzz.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done
[ ${#targets[@]} -eq 0 ] && targets=(capture ir config args cache)

# libFuzzer and the sanitizer runtimes for clang-19 (Debian: libclang-rt-19-dev).
"$root/tools/setup.sh"
if [ ! -f /usr/lib/llvm-19/lib/clang/19/lib/linux/libclang_rt.fuzzer-x86_64.a ]; then
  echo "fuzz.sh: installing libclang-rt-19-dev (libFuzzer, ASan and UBSan for clang-19)"
  sudo=""
  [ "$(id -u)" != 0 ] && sudo=sudo
  $sudo apt-get install -y libclang-rt-19-dev
fi

# A build tree configured from another checkout would fuzz that one's code.
if [ -f "$build/CMakeCache.txt" ] &&
   ! grep -qx "CMAKE_HOME_DIRECTORY:INTERNAL=$root" "$build/CMakeCache.txt"; then
  echo "fuzz.sh: $build was configured from another source tree; configuring it afresh"
  rm -rf "$build"
fi
if [ ! -f "$build/build.ninja" ]; then
  CC=clang-19 CXX=clang++-19 cmake -G Ninja -S "$root" -B "$build" \
    -DCMAKE_BUILD_TYPE=Release \
    "-DCMAKE_CXX_FLAGS_RELEASE=-O1 -gline-tables-only -DNDEBUG" \
    "-DCMAKE_C_FLAGS_RELEASE=-O1 -gline-tables-only -DNDEBUG" \
    -DKITE_SANITIZE=address,undefined -DKITE_FUZZ=ON ${KITE_CMAKE_ARGS:-}
fi
build_targets=()
for t in "${targets[@]}"; do build_targets+=("kite-fuzz-$t"); done
nice -n 10 cmake --build "$build" -j "${KITE_JOBS:-2}" --target "${build_targets[@]}"

# Leaks are checked: kite's compiler frees what it allocates per input, and
# LLVM's global singletons stay reachable, so LeakSanitizer does not report
# them. test/fuzz/lsan.supp (empty but for comments) is where a reviewed
# exception would go.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:detect_stack_use_after_return=1:strict_string_checks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
export LSAN_OPTIONS="${LSAN_OPTIONS:-suppressions=$root/test/fuzz/lsan.supp}"

out="$build/fuzz-out"
mkdir -p "$out"
run_one() {
  local t="$1" dir="$out/$1"
  rm -rf "$dir/artifacts"
  mkdir -p "$dir/corpus" "$dir/artifacts"
  # The seeds: test/fuzz/corpus/<t>/, or the build's gathered copy of the
  # project's kernel files (capture; test/fuzz/CMakeLists.txt).
  local inputs=("$root/test/fuzz/corpus/$t")
  [ -d "$build/test/fuzz/seeds/$t" ] && inputs=("$build/test/fuzz/seeds/$t")
  [ -d "$root/test/fuzz/regressions/$t" ] && inputs+=("$root/test/fuzz/regressions/$t")
  local dict=()
  [ -f "$root/test/fuzz/$t.dict" ] && dict=("-dict=$root/test/fuzz/$t.dict")
  local status=0
  (cd "$dir" && "$build/bin/kite-fuzz-$t" -max_total_time="$seconds" -runs="$runs" \
      -timeout="$timeout" -rss_limit_mb=4096 -max_len=65536 -print_final_stats=1 \
      -artifact_prefix="$dir/artifacts/" "${dict[@]}" \
      "$dir/corpus" "${inputs[@]}") >"$dir/log" 2>&1 || status=$?
  echo "$status" >"$dir/status"
}

pids=()
for t in "${targets[@]}"; do
  echo "fuzz.sh: running $t (${seconds}s or $runs inputs; log in $out/$t/log)"
  run_one "$t" &
  pids+=($!)
  if [ ${#pids[@]} -ge "$jobs" ]; then
    wait "${pids[0]}"
    pids=("${pids[@]:1}")
  fi
done
for p in "${pids[@]}"; do wait "$p"; done

failed=0
printf '\n%-10s %12s %8s  %s\n' target executions exec/s result
for t in "${targets[@]}"; do
  dir="$out/$t"
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$dir/log" | grep -o '[0-9]*$' || true)
  rate=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$dir/log" | grep -o '[0-9]*$' || true)
  status=$(cat "$dir/status")
  found=$(ls "$dir/artifacts" 2>/dev/null | tr '\n' ' ')
  result=ok
  if [ "$status" != 0 ] || [ -n "$found" ] || grep -q "ERROR: \(AddressSanitizer\|LeakSanitizer\|libFuzzer\)\|runtime error:" "$dir/log"; then
    result="FAILED (exit $status) ${found:-}"
    failed=1
  fi
  printf '%-10s %12s %8s  %s\n' "$t" "${execs:-?}" "${rate:-?}" "$result"
done
if [ "$failed" != 0 ]; then
  echo "fuzz.sh: failures; see $out/<target>/log and the inputs in $out/<target>/artifacts/" >&2
  exit 1
fi
