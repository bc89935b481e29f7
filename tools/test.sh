#!/usr/bin/env bash
# tools/test.sh - build kite and run every test that needs no GPU.
#
# Runs the lit suites (dialect, frontend, errors), the unit tests and the
# reference-mode tests of every example. GPU and performance tests are
# labelled `gpu` and `perf` and run on a GPU host (tools/gpu.sh; README, "On a GPU").
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/tools/build.sh"
build="${KITE_BUILD_DIR:-$root/build}"
cd "$build"
ctest --output-on-failure -j "${KITE_JOBS:-$(nproc)}" -LE 'gpu|perf' "$@"
