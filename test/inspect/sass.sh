#!/usr/bin/env bash
# sass.sh KITE IR_DIR - what the machine code of the Hopper kernels must
# hold, read from `kite inspect --emit=sass` (sm_90a; needs nvdisasm or
# cuobjdump, which tools/setup.sh installs; without either the test is
# skipped, exit 77):
#   - attention and causal attention (default configs, head dims 64 and
#     128): the second product's A operand from registers (`HGMMA ... R, R,
#     gdesc`), TMA copies (`UTMALDG`), register reallocation (`USETMAXREG`);
#   - the products (matmul's main loop, its loop as kernel code, FP8):
#     `HGMMA` (FP8: `QGMMA`) from shared memory and `UTMALDG`;
#   - `--emit=resources`' machine-code counts agree (attention);
#   - a clustered product and clustered attention: multicast copies, and
#     no GPU-scope memory fence (`MEMBAR.ALL.GPU`) before a computing warp's
#     arrival on the other program's mbarrier (`SYNCS.ARRIVE...RED`): a
#     fence there costs every K step.
set -u
kite="$1" ir="$2"
failed=0 checks=0
gemm='"tensor_cores":true,"wgmma":true,"warp_specialize":true,"generic_mainloop":true'
attn='"tensor_cores":true,"wgmma":true,"fast_math":true,"warp_specialize":true,"overlap_products":true,"block_sizes":[1,128,128],"num_warps":12,"num_stages":2,"pingpong":true'

sass() { # file kernel config args...
  local file="$1" kernel="$2" config="$3"
  shift 3
  local cfg=()
  [ -n "$config" ] && cfg=(--config "$config")
  "$kite" inspect "$ir/$file.mlir" --kernel "$kernel" --arg "$@" "${cfg[@]}" --emit=sass 2>&1
}

# expect NAME TEXT REGEX...: each extended regex matches a line of TEXT.
expect() {
  local name="$1" text="$2"
  shift 2
  local re
  for re in "$@"; do
    checks=$((checks + 1))
    if ! grep -qE -- "$re" <<<"$text"; then
      echo "FAIL $name: no line matches /$re/"; failed=$((failed + 1))
    fi
  done
}

probe=$(sass matmul matmul "" 'x=bf16[256,256]' 'y=bf16[256,256]')
if grep -q "nvdisasm or cuobjdump" <<<"$probe"; then
  echo "SKIP: $(grep -m1 "nvdisasm or cuobjdump" <<<"$probe")"
  exit 77
fi

for d in 64 128; do
  for k in attention causal_attention; do
    out=$(sass "$k" "$k" "" "q=bf16[32,1024,$d]" "k=bf16[32,1024,$d]" "v=bf16[32,1024,$d]")
    expect "$k D$d" "$out" 'HGMMA\.[0-9x]+\.F32\.BF16 R[0-9]+, R[0-9]+, gdesc' 'UTMALDG' 'USETMAXREG'
  done
done

# --emit=resources counts the same in its "machine code" row.
out=$("$kite" inspect "$ir/attention.mlir" --kernel attention --arg 'q=bf16[32,1024,128]' \
  'k=bf16[32,1024,128]' 'v=bf16[32,1024,128]' --emit=resources 2>&1)
expect "attention --emit=resources" "$out" \
  '^machine code +[0-9]+ instructions: [0-9]+ warpgroup MMAs \([1-9][0-9]* with A from registers\), [0-9]+ TMA copies.*setmaxnreg [0-9]+ and [0-9]+, no local memory, no GPU-scope fences$'

out=$(sass matmul matmul "" 'x=bf16[4096,4096]' 'y=bf16[4096,4096]')
expect "matmul" "$out" 'HGMMA\.[0-9x]+\.F32\.BF16 R[0-9]+, gdesc' 'UTMALDG'
out=$(sass matmul matmul "{\"block_sizes\":[128,256,64],\"num_warps\":12,\"num_stages\":4,$gemm}" \
  'x=bf16[4096,4096]' 'y=bf16[4096,4096]')
expect "matmul, generic_mainloop" "$out" 'HGMMA\.[0-9x]+\.F32\.BF16 R[0-9]+, gdesc' 'UTMALDG' 'USETMAXREG'
out=$(sass scaled_matmul scaled_matmul "" 'x=e4m3[4096,4096]' 'w=e4m3[4096,4096]' \
  'scale_x=f32:1' 'scale_w=f32:1')
expect "scaled_matmul e4m3" "$out" 'QGMMA\.[0-9x]+\.F32\.E4M3\.E4M3' 'UTMALDG'

out=$(sass matmul matmul "{\"block_sizes\":[128,256,64],\"num_warps\":12,\"num_stages\":4,$gemm,\"pid_type\":\"persistent_interleaved\",\"cluster_size\":2}" \
  'x=bf16[4096,4096]' 'y=bf16[4096,4096]')
expect "matmul, cluster_size 2" "$out" 'UTMALDG.*MULTICAST' 'SYNCS\.ARRIVE\.TRANS64\.RED'
# unfenced NAME TEXT: no remote arrival within the few instructions after a
# MEMBAR.ALL.GPU (predicated or not).
unfenced() {
  checks=$((checks + 1))
  local fenced
  fenced=$(awk '/MEMBAR\.ALL\.GPU/ { fence = NR } /SYNCS\.ARRIVE\.TRANS64\.RED/ && fence && NR - fence < 8 { n++ } END { print n + 0 }' <<<"$2")
  if [ "$fenced" -ne 0 ]; then
    echo "FAIL $1: $fenced remote arrivals follow a MEMBAR.ALL.GPU"; failed=$((failed + 1))
  fi
}
unfenced "matmul, cluster_size 2" "$out"
out=$(sass attention attention "{$attn,\"cluster_size\":2}" \
  'q=bf16[32,1024,128]' 'k=bf16[32,1024,128]' 'v=bf16[32,1024,128]')
expect "attention, cluster_size 2" "$out" 'UTMALDG.*MULTICAST' 'SYNCS\.ARRIVE\.TRANS64\.RED'
unfenced "attention, cluster_size 2" "$out"

echo "$checks checks, $failed failed"
[ $failed -eq 0 ]
