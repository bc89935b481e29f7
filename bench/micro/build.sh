#!/usr/bin/env bash
# bench/micro/build.sh - builds row_kernels and sum_kernels into bundle/mb/ (after
# tools/gpu.sh bundle, which empties bundle/; carried to the
# GPU host with the bundle; run bundle/mb/row_kernels there). gen.cuh holds
# kite's generated kernels for the configs below, from `kite inspect`.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
kite="${KITE:-$root/build/bin/kite}"
out="$root/bundle/mb"
mkdir -p "$out"
gen="$out/gen.cuh"
emit() { # file kernel-name-in-mb config args...
  local file="$1" name="$2" config="$3"; shift 3
  "$kite" inspect "$root/examples/$file" "$@" --config "$config" --emit=cuda |
    sed "s/extern \"C\" __global__ void __launch_bounds__(\([0-9]*\)) kite_[a-z_]*(/extern \"C\" __global__ void __launch_bounds__(\1) $name(/" |
    grep -v '^#include\|^using namespace'
}
{
  echo "using namespace kite_device;"
  emit softmax.kite.cpp k_softmax '{"block_sizes":[1],"fast_math":true,"num_warps":8,"reduction_loops":[null]}' \
    --kernel softmax --arg 'x=bf16[8192,8192]'
  emit cross_entropy.kite.cpp k_ce1 '{"block_sizes":[1],"fast_math":true,"num_warps":4,"reduction_loops":[1024]}' \
    --arg 'x=bf16[8192,32768]' --arg 't=i64[8192]'
  emit cross_entropy.kite.cpp k_ce2 '{"block_sizes":[2],"fast_math":true,"inner_threads":64,"num_warps":4,"reduction_loops":[1024],"streaming":true}' \
    --arg 'x=bf16[8192,32768]' --arg 't=i64[8192]'
  emit add.kite.cpp k_add '{"block_sizes":[16,64],"num_warps":4}' --arg 'x=f32[1024,1024]' --arg 'y=f32[1024,1024]'
} > "$gen"
"$kite" inspect "$root/examples/softmax.kite.cpp" --kernel softmax --arg 'x=bf16[8192,8192]' \
  --config '{"block_sizes":[1],"fast_math":true,"num_warps":8,"reduction_loops":[null]}' --emit=ptx > "$out/softmax.ptx"
nvcc -O3 -std=c++17 -arch=sm_90a -I"$root/runtime/device" -I"$out" -diag-suppress 177,1556,1886 \
  -o "$out/row_kernels" "$root/bench/micro/row_kernels.cu" -L/usr/local/cuda/lib64/stubs -lcuda
echo "built $out/row_kernels"
{
  echo "using namespace kite_device;"
  x='x=f32[8192,8192]'
  emit sum.kite.cpp k_sum_a '{"block_sizes":[2],"num_warps":32,"reduction_loops":[2048],"streaming":true}' --arg "$x"
  emit sum.kite.cpp k_sum_b '{"block_sizes":[1],"num_warps":32,"reduction_loops":[2048],"streaming":true}' --arg "$x"
  emit sum.kite.cpp k_sum_c '{"block_sizes":[1],"num_warps":8,"reduction_loops":[null]}' --arg "$x"
  emit sum.kite.cpp k_sum_d '{"block_sizes":[1],"num_warps":16,"reduction_loops":[null],"streaming":true}' --arg "$x"
  emit sum.kite.cpp k_sum_e '{"block_sizes":[1],"num_warps":32,"reduction_loops":[null],"streaming":true}' --arg "$x"
} > "$out/gen_sum.cuh"
nvcc -O3 -std=c++17 -arch=sm_90a -I"$root/runtime/device" -I"$out" -diag-suppress 177,1556,1886 \
  -o "$out/sum_kernels" "$root/bench/micro/sum_kernels.cu"
echo "built $out/sum_kernels"
{
  echo "using namespace kite_device;"
  a=(--arg 'x=bf16[8192,8192]' --arg 'weight=bf16[8192]' --arg 'eps=f64')
  emit rmsnorm.kite.cpp k_rms_a '{"block_sizes":[1],"num_warps":16,"l2_hints":"keep_loads"}' "${a[@]}"
  emit rmsnorm.kite.cpp k_rms_b '{"block_sizes":[1],"num_warps":8,"l2_hints":"keep_loads","streaming":true}' "${a[@]}"
  emit rmsnorm.kite.cpp k_rms_c '{"block_sizes":[1],"num_warps":16,"l2_hints":"keep_loads","early_loads":true}' "${a[@]}"
  emit rmsnorm.kite.cpp k_rms_d '{"block_sizes":[1],"num_warps":16,"l2_hints":"keep_loads","early_loads":true}' "${a[@]}" |
    sed 's/__launch_bounds__(512)/__launch_bounds__(512, 4)/'
  emit rmsnorm.kite.cpp k_rms_e '{"block_sizes":[1],"num_warps":16}' "${a[@]}"
  emit rmsnorm.kite.cpp k_rms_f '{"block_sizes":[1],"num_warps":16,"l2_hints":"reuse"}' "${a[@]}"
  emit rmsnorm.kite.cpp k_rms_g '{"block_sizes":[1],"num_warps":8}' "${a[@]}"
} > "$out/gen_norm.cuh"
nvcc -O3 -std=c++17 -arch=sm_90a -I"$root/runtime/device" -I"$out" -diag-suppress 177,1556,1886 \
  -o "$out/norm_kernels" "$root/bench/micro/norm_kernels.cu"
echo "built $out/norm_kernels"
