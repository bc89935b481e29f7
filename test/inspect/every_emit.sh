#!/usr/bin/env bash
# every_emit.sh KITE IR_DIR - `kite inspect --emit=E` for every stage E on
# every example kernel (their captured IR), with shapes that are not
# multiples of the default tiles. Each must succeed and print something;
# `sass` must either print SASS or say which tool is missing. Measured
# times need a GPU; without one, `roofline` says so and still prints the
# bytes and FLOPs.
set -u
kite="$1" ir="$2"
emits="ir specialized passes lowered cuda ptx config-space config resources roofline"
# file kernel args...
cases=(
  "add add x=f32[1000,1000] y=f32[1000,1000]"
  "attention attention q=bf16[4,100,64] k=bf16[4,100,64] v=bf16[4,100,64]"
  "bmm bmm a=bf16[3,100,64] b=bf16[3,64,72]"
  "cross_entropy cross_entropy logits=bf16[64,1000] target=i64[64]"
  "embedding embedding ids=i64[100] weight=bf16[1000,256]"
  "exp exp_kernel x=f32[1000,7]"
  "layernorm layernorm x=bf16[100,1000] weight=bf16[1000] bias=bf16[1000] eps=f64:1e-5"
  "long_sum long_sum x=f32[100,5000]"
  "matmul matmul x=bf16[500,300] y=bf16[300,200]"
  "matmul_bias_relu matmul_bias_relu x=bf16[500,256] y=bf16[256,200] bias=bf16[200]"
  "rmsnorm rmsnorm x=bf16[100,1000] weight=bf16[1000] eps=f64:1e-6"
  "softmax softmax x=bf16[100,1000]"
  "softmax softmax_two_pass x=bf16[100,1000]"
  "sum sum_kernel x=f32[100,1000]"
  "swiglu swiglu a=bf16[100,1000] b=bf16[100,1000]"
  "welford welford x=bf16[100,1000] weight=bf16[1000] bias=bf16[1000] eps=f64:1e-5"
)
failed=0 runs=0
for c in "${cases[@]}"; do
  read -r file kernel args <<<"$c"
  for e in $emits sass; do
    runs=$((runs + 1))
    # shellcheck disable=SC2086
    out=$("$kite" inspect "$ir/$file.mlir" --kernel "$kernel" --arg $args --emit="$e" 2>&1)
    rc=$?
    if [ "$e" = sass ] && [ $rc -ne 0 ]; then
      # No nvdisasm/cuobjdump: the error must say so.
      if ! grep -q "nvdisasm or cuobjdump" <<<"$out"; then
        echo "FAIL $kernel --emit=sass: $out" | head -3; failed=$((failed + 1))
      fi
      continue
    fi
    if [ $rc -ne 0 ] || [ -z "$out" ]; then
      echo "FAIL $kernel --emit=$e (exit $rc):"; echo "$out" | head -5; failed=$((failed + 1))
    fi
  done
done
echo "$runs inspections, $failed failed"
[ $failed -eq 0 ]
