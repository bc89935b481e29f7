#!/usr/bin/env bash
# tools/build.sh - set up (idempotent), configure and build kite in build/.
#
# Environment: KITE_BUILD_DIR (default build), KITE_BUILD_TYPE (Release),
# KITE_JOBS (all cores), KITE_CMAKE_ARGS (extra configure arguments).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/tools/setup.sh"
build="${KITE_BUILD_DIR:-$root/build}"
jobs="${KITE_JOBS:-$(nproc)}"
if [ ! -f "$build/build.ninja" ]; then
  cmake -G Ninja -S "$root" -B "$build" \
    -DCMAKE_BUILD_TYPE="${KITE_BUILD_TYPE:-Release}" ${KITE_CMAKE_ARGS:-}
fi
cmake --build "$build" -j "$jobs"
