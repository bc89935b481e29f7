#!/usr/bin/env bash
# tools/setup.sh - install what kite needs to build, with apt; idempotent.
#
# A second run finds every package present and does nothing. Run as root or
# with sudo available. Set KITE_SKIP_SETUP=1 to skip (e.g. on a host that
# builds with its own toolchain).
set -euo pipefail
[ "${KITE_SKIP_SETUP:-0}" = 1 ] && exit 0

packages=(
  cmake ninja-build g++ python3
  llvm-19-dev libclang-19-dev libclang-cpp19-dev clang-19
  libmlir-19-dev mlir-19-tools llvm-19-tools
  libfmt-dev libzstd-dev zlib1g-dev
  nlohmann-json3-dev libcli11-dev libdlpack-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  chromium  # renders `kite inspect --html` in the tests
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "kite setup: installing ${missing[*]}"
sudo=""
if [ "$(id -u)" != 0 ]; then
  command -v sudo >/dev/null || { echo "kite setup: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  sudo=sudo
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
