// RUN: kite-opt %s --split-input-file --kite-specialize="args='x=bf16[1000,4097]'" | FileCheck %s

// Sizes fold to constants, tensor types become static and tile types are
// inferred: PyTorch promotion and keepdim reductions.
// CHECK-LABEL: func.func @softmax
// CHECK-SAME: !kite.tensor<1000x4097xbf16> {kite.align = 16 : i64, kite.name = "x", kite.strides = array<i64: 4097, 1>}) -> !kite.tensor<1000x4097xbf16>
func.func @softmax(%x: !kite.tensor<*x?> {kite.name = "x"}) -> !kite.tensor<*x?> attributes {kite.kernel} {
  %out = kite.empty_like %x : !kite.tensor<*x?> -> !kite.tensor<*x?>
  // CHECK-DAG: %[[N:.*]] = arith.constant 1000 : i64
  %n = kite.size %x[0] : !kite.tensor<*x?>
  %c0 = arith.constant 0 : i64
  // CHECK: kite.block_size 0 extent %[[N]]
  %bs = kite.block_size 0 extent %n : i64
  %f32 = kite.dtype_const f32
  kite.tile_for (%tn) = (%c0) to (%n) block (%bs) {
    // CHECK: kite.load {{.*}} -> !kite.tile<?x4097xbf16>
    %row0 = kite.load %x[%tn, all] : !kite.tensor<*x?>[!kite.span] -> !kite.tile<*x?>
    // CHECK: kite.cast {{.*}} -> !kite.tile<?x4097xf32>
    %row = kite.cast %row0, %f32 : !kite.tile<*x?> -> !kite.tile<*xf32>
    // CHECK: kite.reduce amax {{.*}} -> !kite.tile<?x1xf32>
    %m = kite.reduce amax %row {dim = 1 : i64, keepdim} : !kite.tile<*xf32> -> !kite.tile<*xf32>
    // CHECK: kite.binary sub {{.*}} : !kite.tile<?x4097xf32>, !kite.tile<?x1xf32> -> !kite.tile<?x4097xf32>
    %d = kite.binary sub %row, %m : !kite.tile<*xf32>, !kite.tile<*xf32> -> !kite.tile<*xf32>
    // Weak scalars: bf16 tile * f32 scalar stays bf16; integer division is true division.
    %two = arith.constant 2.0 : f32
    // CHECK: kite.binary mul {{.*}} : !kite.tile<?x4097xbf16>, f32 -> !kite.tile<?x4097xbf16>
    %w = kite.binary mul %row0, %two : !kite.tile<*x?>, f32 -> !kite.tile<*x?>
    %idx = kite.span_index %tn : !kite.tile<?xi64>
    // CHECK: kite.binary div {{.*}} -> !kite.tile<?xf32>
    %q = kite.binary div %idx, %n : !kite.tile<?xi64>, i64 -> !kite.tile<*x?>
    // CHECK: kite.reduce sum {{.*}} -> !kite.tile<i64>
    %s = kite.reduce sum %idx {dim = 0 : i64} : !kite.tile<?xi64> -> !kite.tile<*x?>
    // CHECK: kite.reduce argmax {{.*}} -> !kite.tile<?xi64>
    %a = kite.reduce argmax %row {dim = -1 : i64} : !kite.tile<*xf32> -> !kite.tile<*x?>
    kite.store %d, %out[%tn, all] : !kite.tile<*xf32>, !kite.tensor<*x?>[!kite.span]
    kite.store %w, %out[%tn, all] : !kite.tile<*x?>, !kite.tensor<*x?>[!kite.span]
    kite.store %q, %out[%tn, %c0] : !kite.tile<*x?>, !kite.tensor<*x?>[!kite.span, i64]
    kite.store %s, %out[%c0, %c0] : !kite.tile<*x?>, !kite.tensor<*x?>[i64, i64]
    kite.store %a, %out[%tn, %c0] : !kite.tile<*x?>, !kite.tensor<*x?>[!kite.span, i64]
  }
  return %out : !kite.tensor<*x?>
}

// -----

// A matmul: dot of 16-bit inputs gives f32, addmm keeps the accumulator's dtype.
// CHECK-LABEL: func.func @matmul
func.func @matmul(%x: !kite.tensor<*x?> {kite.name = "x"}) attributes {kite.kernel} {
  %m = kite.size %x[0] : !kite.tensor<*x?>
  %k = kite.size %x[-1] : !kite.tensor<*x?>
  %dt = kite.dtype_of %x : !kite.tensor<*x?>
  // CHECK: kite.empty [{{.*}}], {{.*}} : !kite.tensor<1000x4097xbf16>
  %out = kite.empty [%m, %k], %dt : !kite.tensor<?x?x?>
  %c0 = arith.constant 0 : i64
  %c16 = arith.constant 16 : i64
  %zero = arith.constant 0.0 : f32
  %f32 = kite.dtype_const f32
  kite.tile_for (%tm, %tn) = (%c0, %c0) to (%m, %k) block (%c16, %c16) {
    // CHECK: kite.full {{.*}} -> !kite.tile<16x16xf32>
    %acc = kite.full [%tm, %tn], %zero, %f32 : [!kite.span, !kite.span], f32 -> !kite.tile<?x?xf32>
    %a = kite.load %x[%tm, %tn] : !kite.tensor<*x?>[!kite.span, !kite.span] -> !kite.tile<*x?>
    // CHECK: kite.dot {{.*}} -> !kite.tile<16x16xf32>
    %d = kite.dot %a, %a : !kite.tile<*x?>, !kite.tile<*x?> -> !kite.tile<*x?>
    // CHECK: kite.addmm {{.*}} -> !kite.tile<16x16xf32>
    %r = kite.addmm %acc, %a, %a : !kite.tile<?x?xf32>, !kite.tile<*x?>, !kite.tile<*x?> -> !kite.tile<*x?>
    // CHECK: kite.transpose {{.*}} -> !kite.tile<16x16xbf16>
    %t = kite.transpose %a {dim0 = 0 : i64, dim1 = 1 : i64} : !kite.tile<*x?> -> !kite.tile<*x?>
    // CHECK: kite.unsqueeze {{.*}} -> !kite.tile<16x1x16xbf16>
    %u = kite.unsqueeze %a {dim = 1 : i64} : !kite.tile<*x?> -> !kite.tile<*x?>
    kite.store %r, %out[%tm, %tn] : !kite.tile<*x?>, !kite.tensor<?x?x?>[!kite.span, !kite.span]
    kite.store %d, %out[%tm, %tn] : !kite.tile<*x?>, !kite.tensor<?x?x?>[!kite.span, !kite.span]
    kite.store %t, %out[%tm, %tn] : !kite.tile<*x?>, !kite.tensor<?x?x?>[!kite.span, !kite.span]
    %us = kite.squeeze %u {dim = 1 : i64} : !kite.tile<*x?> -> !kite.tile<*x?>
    kite.store %us, %out[%tm, %tn] : !kite.tile<*x?>, !kite.tensor<?x?x?>[!kite.span, !kite.span]
  }
  return
}
