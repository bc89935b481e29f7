#!/usr/bin/env bash
# tools/setup.sh - install what kite needs to build, with apt; idempotent.
#
# A second run finds every package present and does nothing. Run as root or
# with sudo available. Set KITE_SKIP_SETUP=1 to skip (e.g. on a host that
# builds with its own toolchain).
#
# Where neither nvdisasm nor cuobjdump is installed (a CUDA toolkit without
# its binary utilities), it also installs NVIDIA's nvdisasm wheel from PyPI
# into /opt/kite/nvdisasm, linked from /usr/local/bin, so that `kite
# inspect --emit=sass` and the SASS test (test/inspect/sass.sh) work
# without a GPU. That step is optional: without PyPI it says so and goes on.
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

have_disassembler() {
  command -v nvdisasm >/dev/null || command -v cuobjdump >/dev/null ||
    compgen -G "/usr/local/cuda*/bin/nvdisasm" >/dev/null || compgen -G "/usr/local/cuda*/bin/cuobjdump" >/dev/null
}

if [ ${#missing[@]} -eq 0 ] && have_disassembler; then
  exit 0
fi

sudo=""
if [ "$(id -u)" != 0 ]; then
  if command -v sudo >/dev/null; then
    sudo=sudo
  elif [ ${#missing[@]} -gt 0 ]; then
    echo "kite setup: need root or sudo to install: ${missing[*]}" >&2; exit 1
  else
    echo "kite setup: no root or sudo to install nvdisasm; kite inspect --emit=sass will say it is" \
      "missing, and the SASS test is skipped" >&2
    exit 0
  fi
fi

if [ ${#missing[@]} -gt 0 ]; then
  echo "kite setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

if ! have_disassembler; then
  echo "kite setup: installing nvdisasm (PyPI: nvidia-cuda-nvdisasm) for kite inspect --emit=sass"
  dir=/opt/kite/nvdisasm
  if $sudo python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore --no-deps --upgrade \
       --target "$dir" 'nvidia-cuda-nvdisasm>=13,<14' &&
     tool=$(find "$dir" -type f -name nvdisasm | head -1) && [ -n "$tool" ]; then
    $sudo chmod +x "$tool"
    $sudo ln -sf "$tool" /usr/local/bin/nvdisasm
  else
    echo "kite setup: could not install nvdisasm; kite inspect --emit=sass will say it is missing," \
      "and the SASS test is skipped" >&2
  fi
fi
