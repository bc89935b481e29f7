// RUN: kite-opt %s --kite-specialize="kernel=rmsnorm args='x=bf16[8,1000] weight=bf16[1000] eps=f64'" --kite-apply-config="config='{\"block_sizes\": [2], \"early_loads\": true}'" --kite-early-loads | FileCheck %s
// RUN: kite-opt %s --kite-specialize="kernel=rmsnorm args='x=bf16[8,1000] weight=bf16[1000] eps=f64'" --kite-apply-config="config='{\"block_sizes\": [2]}'" --kite-early-loads | FileCheck %s --check-prefix=OFF
// RUN: kite-opt %s --kite-specialize="kernel=cross_entropy args='logits=bf16[8,1000] target=i64[8]'" --kite-apply-config="config='{\"block_sizes\": [2], \"early_loads\": true}'" --kite-early-loads | FileCheck %s --check-prefix=GATHER
// RUN: kite-opt %s --kite-specialize="kernel=pick args='x=f32[8,64] w=f32[64]'" --kite-apply-config="config='{\"block_sizes\": [2], \"early_loads\": true}'" --kite-early-loads | FileCheck %s --check-prefix=PICK
// RUN: kite-opt %s --kite-specialize="kernel=readback args='x=f32[8,64]'" --kite-apply-config="config='{\"block_sizes\": [2], \"early_loads\": true}'" --kite-early-loads | FileCheck %s --check-prefix=WRITTEN

// RMS norm: the weight's load moves above the row's reduction.
// CHECK-LABEL: func.func @rmsnorm
// CHECK: kite.tile_for
// CHECK-NEXT: kite.load %arg0
// CHECK-NEXT: kite.load %arg1[all]
// CHECK: kite.reduce mean
// CHECK-NOT: kite.load
// CHECK: kite.store

// Without early_loads in the config nothing moves.
// OFF-LABEL: func.func @rmsnorm
// OFF: kite.load %arg0
// OFF: kite.reduce mean
// OFF: kite.load %arg1[all]

// Cross-entropy: the target's load, the row indices it needs (a pure op)
// and the gather that reads the target's logit all move above both
// reductions, in their order.
// GATHER-LABEL: func.func @cross_entropy
// GATHER: kite.tile_for
// GATHER-NEXT: %[[ROWS:.*]] = kite.span_index
// GATHER-NEXT: kite.load %arg0[%{{.*}}, all]
// GATHER-NEXT: %[[T:.*]] = kite.load %arg1
// GATHER-NEXT: kite.load %arg0[%[[ROWS]], %[[T]]]
// GATHER: kite.reduce amax
// GATHER: kite.reduce sum
// GATHER-NOT: kite.load

// A load indexed by a reduction's result waits for it, and the reduction
// does not move up with it (only cheap index arithmetic does): amax and
// argmax keep their order.
// PICK-LABEL: func.func @pick
// PICK: kite.reduce amax
// PICK-NEXT: kite.reduce argmax
// PICK-NEXT: kite.load %arg1

// A load of what the program stored (here through a view of the output)
// stays after the store, but moves above the reduction after it.
// WRITTEN-LABEL: func.func @readback
// WRITTEN: kite.load %arg0
// WRITTEN-NEXT: kite.store
// WRITTEN-NEXT: kite.load %[[VIEW:[0-9]+]]
// WRITTEN-NEXT: kite.reduce sum

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

func.func @readback(%arg0: !kite.tensor<*x?> {kite.name = "x"}) -> !kite.tensor<*x?> attributes {kite.kernel} {
  %0 = kite.empty_like %arg0 : !kite.tensor<*x?> -> !kite.tensor<*x?>
  %1 = kite.size %arg0[0] : !kite.tensor<*x?>
  %2 = kite.size %arg0[1] : !kite.tensor<*x?>
  %3 = kite.tensor_reshape %0 [%1, %2] view : !kite.tensor<*x?> -> !kite.tensor<?x?x?>
  %c0_i64 = arith.constant 0 : i64
  %4 = kite.block_size 0 extent %1 : i64
  kite.tile_for (%arg1) = (%c0_i64) to (%1) block (%4) {
    %5 = kite.load %arg0[%arg1, all] : !kite.tensor<*x?>[!kite.span] -> !kite.tile<*x?>
    kite.store %5, %0[%arg1, all] : !kite.tile<*x?>, !kite.tensor<*x?>[!kite.span]
    %6 = kite.reduce sum %5 {dim = 1 : i64, keepdim} : !kite.tile<*x?> -> !kite.tile<*x?>
    %7 = kite.load %3[%arg1, all] : !kite.tensor<?x?x?>[!kite.span] -> !kite.tile<*x?>
    %8 = kite.binary add %7, %6 : !kite.tile<*x?>, !kite.tile<*x?> -> !kite.tile<*x?>
    kite.store %8, %0[%arg1, all] : !kite.tile<*x?>, !kite.tensor<*x?>[!kite.span]
  }
  return %0 : !kite.tensor<*x?>
}

func.func @pick(%arg0: !kite.tensor<*x?> {kite.name = "x"}, %arg1: !kite.tensor<*x?> {kite.name = "w"}) -> !kite.tensor<?xf32> attributes {kite.kernel} {
  %0 = kite.size %arg0[0] : !kite.tensor<*x?>
  %1 = kite.dtype_const f32
  %2 = kite.empty [%0], %1 : !kite.tensor<?xf32>
  %c0_i64 = arith.constant 0 : i64
  %3 = kite.block_size 0 extent %0 : i64
  kite.tile_for (%arg2) = (%c0_i64) to (%0) block (%3) {
    %4 = kite.load %arg0[%arg2, all] : !kite.tensor<*x?>[!kite.span] -> !kite.tile<*x?>
    %5 = kite.reduce amax %4 {dim = 1 : i64} : !kite.tile<*x?> -> !kite.tile<*x?>
    %6 = kite.reduce argmax %4 {dim = 1 : i64} : !kite.tile<*x?> -> !kite.tile<?xi64>
    %7 = kite.load %arg1[%6] : !kite.tensor<*x?>[!kite.tile<?xi64>] -> !kite.tile<*x?>
    %8 = kite.binary add %5, %7 : !kite.tile<*x?>, !kite.tile<*x?> -> !kite.tile<*x?>
    kite.store %8, %2[%arg2] : !kite.tile<*x?>, !kite.tensor<?xf32>[!kite.span]
  }
  return %2 : !kite.tensor<?xf32>
}
