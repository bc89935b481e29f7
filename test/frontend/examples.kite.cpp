// Every example captures, and its IR re-parses and verifies with kite-opt.
//
// RUN: kite compile %kite_src/examples/add.kite.cpp --emit=ir | kite-opt | FileCheck %s --check-prefix=ADD
// RUN: kite compile %kite_src/examples/attention.kite.cpp --emit=ir | kite-opt | FileCheck %s --check-prefix=ATTENTION
// RUN: kite compile %kite_src/examples/bmm.kite.cpp --emit=ir | kite-opt | FileCheck %s --check-prefix=BMM
// RUN: kite compile %kite_src/examples/cross_entropy.kite.cpp --emit=ir | kite-opt | FileCheck %s --check-prefix=CROSS-ENTROPY
// RUN: kite compile %kite_src/examples/embedding.kite.cpp --emit=ir | kite-opt | FileCheck %s --check-prefix=EMBEDDING
// RUN: kite compile %kite_src/examples/exp.kite.cpp --emit=ir | kite-opt | FileCheck %s --check-prefix=EXP
// RUN: kite compile %kite_src/examples/layernorm.kite.cpp --emit=ir | kite-opt | FileCheck %s --check-prefix=LAYERNORM
// RUN: kite compile %kite_src/examples/long_sum.kite.cpp --emit=ir | kite-opt | FileCheck %s --check-prefix=LONG-SUM
// RUN: kite compile %kite_src/examples/matmul.kite.cpp --emit=ir | kite-opt | FileCheck %s --check-prefix=MATMUL
// RUN: kite compile %kite_src/examples/matmul_bias_relu.kite.cpp --emit=ir | kite-opt | FileCheck %s --check-prefix=MATMUL-BIAS-RELU
// RUN: kite compile %kite_src/examples/rmsnorm.kite.cpp --emit=ir | kite-opt | FileCheck %s --check-prefix=RMSNORM
// RUN: kite compile %kite_src/examples/softmax.kite.cpp --emit=ir | kite-opt | FileCheck %s --check-prefix=SOFTMAX
// RUN: kite compile %kite_src/examples/sum.kite.cpp --emit=ir | kite-opt | FileCheck %s --check-prefix=SUM
// RUN: kite compile %kite_src/examples/swiglu.kite.cpp --emit=ir | kite-opt | FileCheck %s --check-prefix=SWIGLU
// RUN: kite compile %kite_src/examples/welford.kite.cpp --emit=ir | kite-opt | FileCheck %s --check-prefix=WELFORD
//
// ADD-LABEL: func.func @add(
// ADD: kite.tile_for
// ATTENTION-LABEL: func.func @attention(
// ATTENTION: kite.tile_for
// BMM-LABEL: func.func @bmm(
// BMM: kite.tile_for
// CROSS-ENTROPY-LABEL: func.func @cross_entropy(
// CROSS-ENTROPY: kite.tile_for
// EMBEDDING-LABEL: func.func @embedding(
// EMBEDDING: kite.tile_for
// EXP-LABEL: func.func @exp_kernel(
// EXP: kite.tile_for
// LAYERNORM-LABEL: func.func @layer_norm(
// LAYERNORM: kite.tile_for
// LAYERNORM-LABEL: func.func @layernorm(
// LAYERNORM: kite.tile_for
// LONG-SUM-LABEL: func.func @long_sum(
// LONG-SUM: kite.tile_for
// MATMUL-LABEL: func.func @matmul(
// MATMUL: kite.tile_for
// MATMUL-BIAS-RELU-LABEL: func.func @matmul_bias_relu(
// MATMUL-BIAS-RELU: kite.tile_for
// RMSNORM-LABEL: func.func @rmsnorm(
// RMSNORM: kite.tile_for
// SOFTMAX-LABEL: func.func @softmax(
// SOFTMAX-LABEL: func.func @softmax_two_pass(
// SOFTMAX: kite.tile_for
// SUM-LABEL: func.func @sum_kernel(
// SUM: kite.tile_for
// SWIGLU-LABEL: func.func @swiglu(
// SWIGLU: kite.tile_for
// WELFORD-LABEL: func.func @welford(
// WELFORD: kite.tile_for
