// RUN: kite-opt %s --kite-specialize="kernel=rmsnorm args='x=bf16[8,1000] weight=bf16[1000] eps=f64'" --kite-apply-config="config='{\"block_sizes\": [2], \"reduction_loops\": [256], \"l2_hints\": \"reuse\"}'" --kite-reduction-loops --kite-cache-hints | FileCheck %s
// RUN: kite-opt %s --kite-specialize="kernel=rmsnorm args='x=bf16[8,1000] weight=bf16[1000] eps=f64'" --kite-apply-config="config='{\"block_sizes\": [2], \"l2_hints\": \"reuse\"}'" --kite-reduction-loops --kite-cache-hints | FileCheck %s --check-prefix=WHOLE
// RUN: kite-opt %s --kite-specialize="kernel=rmsnorm args='x=bf16[8,1000] weight=bf16[1000] eps=f64'" --kite-apply-config="config='{\"block_sizes\": [2], \"reduction_loops\": [256], \"l2_hints\": \"keep_loads\"}'" --kite-reduction-loops --kite-cache-hints | FileCheck %s --check-prefix=KEEP
// RUN: kite-opt %s --kite-specialize="kernel=rmsnorm args='x=bf16[8,1000] weight=bf16[1000] eps=f64'" --kite-apply-config="config='{\"block_sizes\": [2], \"reduction_loops\": [256]}'" --kite-reduction-loops --kite-cache-hints | FileCheck %s --check-prefix=NONE
// RUN: kite-opt %s --kite-specialize="kernel=cross_entropy args='logits=bf16[8,1000] target=i64[8]'" --kite-apply-config="config='{\"block_sizes\": [2], \"reduction_loops\": [256], \"l2_hints\": \"reuse\"}'" --kite-reduction-loops --kite-cache-hints | FileCheck %s --check-prefix=GATHER

// RMS norm looped over chunks of 256: the first pass's loads of the row are
// read again by the second pass (evict_last), the second pass's are the last
// read (evict_first); the weight, read by every program, is evict_last.
// CHECK-LABEL: func.func @rmsnorm
// CHECK: kite.tile_for
// CHECK: kite.load %arg0[{{.*}}] {kite.cache = "evict_last"}
// CHECK: kite.reduce sum
// CHECK: kite.tile_for
// CHECK-DAG: kite.load %arg0[{{.*}}] {kite.cache = "evict_first"}
// CHECK-DAG: kite.load %arg1[{{.*}}] {kite.cache = "evict_last"}
// CHECK: kite.store

// The whole row in registers: one read of the row (no hint), the weight's
// evict_last.
// WHOLE-LABEL: func.func @rmsnorm
// WHOLE: kite.load %arg0[%{{.*}}, all] :
// WHOLE: kite.load %arg1[all] {kite.cache = "evict_last"}

// keep_loads: every load evict_last.
// KEEP-LABEL: func.func @rmsnorm
// KEEP: kite.load %arg0[{{.*}}] {kite.cache = "evict_last"}
// KEEP: kite.load %arg0[{{.*}}] {kite.cache = "evict_last"}
// KEEP: kite.load %arg1[{{.*}}] {kite.cache = "evict_last"}

// Without l2_hints nothing is marked.
// NONE-LABEL: func.func @rmsnorm
// NONE-NOT: kite.cache

// Reads of the same tensor at other elements are not a reuse: cross-entropy
// reads its row's chunks once and one gathered element per row, and the
// target's load depends on the program: no hints.
// GATHER-LABEL: func.func @cross_entropy
// GATHER: kite.load %arg0
// GATHER-NOT: kite.cache
// GATHER: return
func.func @rmsnorm(%arg0: !kite.tensor<*x?> {kite.name = "x"}, %arg1: !kite.tensor<*x?> {kite.name = "weight"}, %arg2: f64 {kite.name = "eps"}) -> !kite.tensor<*x?> attributes {kite.kernel} {
  %0 = kite.empty_like %arg0 : !kite.tensor<*x?> -> !kite.tensor<*x?>
  %1 = kite.size %arg0[0] : !kite.tensor<*x?>
  %c0_i64 = arith.constant 0 : i64
  %2 = kite.block_size 0 extent %1 : i64
  kite.tile_for (%arg3) = (%c0_i64) to (%1) block (%2) {
    %3 = kite.load %arg0[%arg3, all] : !kite.tensor<*x?>[!kite.span] -> !kite.tile<*x?>
    %4 = kite.dtype_const f32
    %5 = kite.cast %3, %4 : !kite.tile<*x?> -> !kite.tile<*xf32>
    %6 = kite.binary mul %5, %5 : !kite.tile<*xf32>, !kite.tile<*xf32> -> !kite.tile<*xf32>
    %7 = kite.reduce mean %6 {dim = 1 : i64, keepdim} : !kite.tile<*xf32> -> !kite.tile<*xf32>
    %8 = kite.binary add %7, %arg2 : !kite.tile<*xf32>, f64 -> !kite.tile<*xf32>
    %9 = kite.unary rsqrt %8 : !kite.tile<*xf32> -> !kite.tile<*xf32>
    %10 = kite.binary mul %5, %9 : !kite.tile<*xf32>, !kite.tile<*xf32> -> !kite.tile<*xf32>
    %11 = kite.load %arg1[all] : !kite.tensor<*x?> -> !kite.tile<*x?>
    %12 = kite.dtype_const f32
    %13 = kite.cast %11, %12 : !kite.tile<*x?> -> !kite.tile<*xf32>
    %14 = kite.binary mul %10, %13 : !kite.tile<*xf32>, !kite.tile<*xf32> -> !kite.tile<*xf32>
    kite.store %14, %0[%arg3, all] : !kite.tile<*xf32>, !kite.tensor<*x?>[!kite.span]
  }
  return %0 : !kite.tensor<*x?>
}

func.func @cross_entropy(%arg0: !kite.tensor<*x?> {kite.name = "logits"}, %arg1: !kite.tensor<*x?> {kite.name = "target"}) -> !kite.tensor<?xf32> attributes {kite.kernel} {
  %0 = kite.size %arg0[0] : !kite.tensor<*x?>
  %1 = kite.dtype_const f32
  %2 = kite.empty [%0], %1 : !kite.tensor<?xf32>
  %c0_i64 = arith.constant 0 : i64
  %3 = kite.block_size 0 extent %0 : i64
  kite.tile_for (%arg2) = (%c0_i64) to (%0) block (%3) {
    %4 = kite.load %arg0[%arg2, all] : !kite.tensor<*x?>[!kite.span] -> !kite.tile<*x?>
    %5 = kite.dtype_const f32
    %6 = kite.cast %4, %5 : !kite.tile<*x?> -> !kite.tile<*xf32>
    %7 = kite.reduce amax %6 {dim = 1 : i64} : !kite.tile<*xf32> -> !kite.tile<*xf32>
    %8 = kite.unsqueeze %7 {dim = 1 : i64} : !kite.tile<*xf32> -> !kite.tile<*xf32>
    %9 = kite.binary sub %6, %8 : !kite.tile<*xf32>, !kite.tile<*xf32> -> !kite.tile<*xf32>
    %10 = kite.unary exp %9 : !kite.tile<*xf32> -> !kite.tile<*xf32>
    %11 = kite.reduce sum %10 {dim = 1 : i64} : !kite.tile<*xf32> -> !kite.tile<*xf32>
    %12 = kite.unary log %11 : !kite.tile<*xf32> -> !kite.tile<*xf32>
    %13 = kite.binary add %7, %12 : !kite.tile<*xf32>, !kite.tile<*xf32> -> !kite.tile<*xf32>
    %14 = kite.span_index %arg2 : !kite.tile<?xi64>
    %15 = kite.load %arg1[%arg2] : !kite.tensor<*x?>[!kite.span] -> !kite.tile<*x?>
    %16 = kite.load %arg0[%14, %15] : !kite.tensor<*x?>[!kite.tile<?xi64>, !kite.tile<*x?>] -> !kite.tile<*x?>
    %17 = kite.dtype_const f32
    %18 = kite.cast %16, %17 : !kite.tile<*x?> -> !kite.tile<*xf32>
    %19 = kite.binary sub %13, %18 : !kite.tile<*xf32>, !kite.tile<*xf32> -> !kite.tile<*xf32>
    kite.store %19, %2[%arg2] : !kite.tile<*xf32>, !kite.tensor<?xf32>[!kite.span]
  }
  return %2 : !kite.tensor<?xf32>
}
