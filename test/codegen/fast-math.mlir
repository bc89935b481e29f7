// fast_math: exp on f32 goes through __expf (the hardware's approximate
// exp2); without it, k_exp (expf). The config space offers it only to
// kernels that compute exp.
// RUN: kite inspect %kite_src/examples/softmax.kite.cpp --kernel softmax --arg 'x=bf16[64,1000]' --config '{"fast_math":true}' --emit=cuda | FileCheck %s --check-prefix=FAST
// FAST: "fast_math":true
// FAST: __expf(
// FAST-NOT: k_exp(
// RUN: kite inspect %kite_src/examples/softmax.kite.cpp --kernel softmax --arg 'x=bf16[64,1000]' --emit=cuda | FileCheck %s --check-prefix=EXACT
// EXACT-NOT: fast_math
// EXACT: k_exp(
// EXACT-NOT: __expf(
// RUN: kite inspect %kite_src/examples/softmax.kite.cpp --kernel softmax --arg 'x=bf16[64,1000]' --emit=config-space | FileCheck %s --check-prefix=SPACE
// SPACE: "fast_math":false
// SPACE: "key":"fast_math","values":[false,true]
// RUN: kite inspect %kite_src/examples/rmsnorm.kite.cpp --kernel rmsnorm --arg 'x=bf16[64,1000]' --arg 'weight=bf16[1000]' --arg eps=f64 --emit=config-space | FileCheck %s --check-prefix=NOEXP
// NOEXP-NOT: fast_math
// RUN: not kite inspect %kite_src/examples/softmax.kite.cpp --kernel softmax --arg 'x=bf16[64,1000]' --config '{"fast_math":1}' --emit=cuda 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: config key 'fast_math' has the wrong type: 1
// exp2 on f32 with fast_math is the hardware's ex2 alone (results below
// 2^-126 flushed to zero); without it, k_exp2 (exp2f). Attention's scaled
// scores leave their max (kite canonicalization), so the scale and the
// subtraction of the max are one expression.
// RUN: kite inspect %kite_src/examples/attention.kite.cpp --kernel attention --arg 'q=bf16[2,128,64]' --arg 'k=bf16[2,128,64]' --arg 'v=bf16[2,128,64]' --config '{"fast_math":true}' --emit=cuda | FileCheck %s --check-prefix=EXP2FAST
// EXP2FAST: k_exp2_ftz(
// EXP2FAST-NOT: k_exp2(
// RUN: kite inspect %kite_src/examples/attention.kite.cpp --kernel attention --arg 'q=bf16[2,128,64]' --arg 'k=bf16[2,128,64]' --arg 'v=bf16[2,128,64]' --config '{"fast_math":false}' --emit=cuda | FileCheck %s --check-prefix=EXP2
// EXP2: k_exp2(
// EXP2-NOT: k_exp2_ftz(
// Where the key-loop producer is the default (sm_90a), so is fast_math, as
// SDPA's kernels and Triton's tl.exp compute exp; before sm_90a it is not.
// RUN: kite inspect %kite_src/examples/attention.kite.cpp --kernel attention --arg 'q=bf16[2,128,64]' --arg 'k=bf16[2,128,64]' --arg 'v=bf16[2,128,64]' --emit=cuda | FileCheck %s --check-prefix=EXP2DEF
// EXP2DEF: "fast_math":true
// EXP2DEF: k_exp2_ftz(
// RUN: kite inspect %kite_src/examples/attention.kite.cpp --kernel attention --arg 'q=bf16[2,128,64]' --arg 'k=bf16[2,128,64]' --arg 'v=bf16[2,128,64]' --arch sm_80 --emit=cuda | FileCheck %s --check-prefix=EXP2SM80
// EXP2SM80-NOT: "fast_math"
// EXP2SM80: k_exp2(
// RUN: kite inspect %kite_src/examples/attention.kite.cpp --kernel attention --arg 'q=bf16[2,128,64]' --arg 'k=bf16[2,128,64]' --arg 'v=bf16[2,128,64]' --emit=config-space | FileCheck %s --check-prefix=EXP2SPACE
// EXP2SPACE: "fast_math":true
// EXP2SPACE: {"default":1,"doc":"exp on f32 {{.*}}","key":"fast_math","values":[false,true]}
