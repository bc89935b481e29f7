// RUN: kite-opt %s --split-input-file --verify-diagnostics --kite-specialize="args='x=f32[256,128] y=f32[64,192] n=i64'" --kite-check-bounds | FileCheck %s

// `add` with a y smaller than x: y's rows are read past its end.
func.func @add(%x: !kite.tensor<*x?> {kite.name = "x"}, %y: !kite.tensor<*x?> {kite.name = "y"},
               %n: i64 {kite.name = "n"}) attributes {kite.kernel} {
  %c0 = arith.constant 0 : i64
  %m = kite.size %x[0] : !kite.tensor<*x?>
  %k = kite.size %x[1] : !kite.tensor<*x?>
  %b0 = kite.block_size 0 extent %m : i64
  %b1 = kite.block_size 1 extent %k : i64
  kite.tile_for (%tm, %tn) = (%c0, %c0) to (%m, %k) block (%b0, %b1) {
    %a = kite.load %x[%tm, %tn] : !kite.tensor<*x?>[!kite.span, !kite.span] -> !kite.tile<*x?>
    // expected-error @+1 {{the tiles of [0, 256) are out of range for dimension 0 of size 64 of 'y' (f32[64,192]) in kernel 'add'}}
    %b = kite.load %y[%tm, %tn] : !kite.tensor<*x?>[!kite.span, !kite.span] -> !kite.tile<*x?>
    %s = kite.binary add %a, %b : !kite.tile<*x?>, !kite.tile<*x?> -> !kite.tile<*x?>
    kite.store %s, %x[%tm, %tn] : !kite.tile<*x?>, !kite.tensor<*x?>[!kite.span, !kite.span]
  }
  return
}

// -----

// A constant index past the end.
func.func @scalar(%x: !kite.tensor<*x?> {kite.name = "x"}, %y: !kite.tensor<*x?> {kite.name = "y"},
                  %n: i64 {kite.name = "n"}) attributes {kite.kernel} {
  %c0 = arith.constant 0 : i64
  %c300 = arith.constant 300 : i64
  %c128 = arith.constant 128 : i64
  %b = kite.block_size 0 extent %c128 : i64
  kite.tile_for (%t) = (%c0) to (%c128) block (%b) {
    // expected-error @+1 {{index 300 is out of range for dimension 0 of size 256 of 'x' (f32[256,128]) in kernel 'scalar'}}
    %a = kite.load %x[%c300, %t] : !kite.tensor<*x?>[i64, !kite.span] -> !kite.tile<*x?>
    kite.store %a, %y[%c0, %t] : !kite.tile<*x?>, !kite.tensor<*x?>[i64, !kite.span]
  }
  return
}

// -----

// Proven, masked at run time, and lenient under a mask.
// CHECK-LABEL: func.func @mixed
func.func @mixed(%x: !kite.tensor<*x?> {kite.name = "x"}, %y: !kite.tensor<*x?> {kite.name = "y"},
                 %n: i64 {kite.name = "n"}) attributes {kite.kernel} {
  %c0 = arith.constant 0 : i64
  %c1 = arith.constant 1 : i64
  %c64 = arith.constant 64 : i64
  %c256 = arith.constant 256 : i64
  %b0 = kite.block_size 0 extent %c64 : i64
  %b1 = kite.block_size 1 extent %c256 : i64
  kite.tile_for (%tr) = (%c0) to (%c64) block (%b0) {
    // Rows 0..63 of y and x: in bounds.
    // CHECK: kite.load %{{.*}}[%{{.*}}, all] :
    %a = kite.load %y[%tr, all] : !kite.tensor<*x?>[!kite.span] -> !kite.tile<*x?>
    kite.store %a, %y[%tr, all] : !kite.tile<*x?>, !kite.tensor<*x?>[!kite.span]
    // The end of a tile plus one, clamped: [0, 64] + 1 <= 65 <= 256.
    %e = kite.span_query end %tr
    %e1 = arith.addi %e, %c1 : i64
    kite.tile_for (%tk) = (%c0) to (%e1) block (%b1) {
      // CHECK: kite.load %{{.*}}[%{{.*}}, all] :
      %c = kite.load %x[%tk, all] : !kite.tensor<*x?>[!kite.span] -> !kite.tile<*x?>
      kite.store %c, %x[%tk, all] : !kite.tile<*x?>, !kite.tensor<*x?>[!kite.span]
    }
    // A bound from the run-time scalar n: masked at run time.
    kite.tile_for (%tn) = (%c0) to (%n) block (%b1) {
      // CHECK: kite.load %{{.*}}[%{{.*}}, all] {kite.checked = array<i32: 0>}
      %d = kite.load %x[%tn, all] : !kite.tensor<*x?>[!kite.span] -> !kite.tile<*x?>
      // CHECK: kite.store %{{.*}}, %{{.*}}[%{{.*}}, all] {kite.checked = array<i32: 0>}
      kite.store %d, %x[%tn, all] : !kite.tile<*x?>, !kite.tensor<*x?>[!kite.span]
    }
    // Over [0, 256) into y's 64 rows, but with a mask: checked, not an error.
    kite.tile_for (%tq) = (%c0) to (%c256) block (%b1) {
      %qi = kite.span_index %tq : !kite.tile<*x?>
      %f = kite.compare lt %qi, %c64 : !kite.tile<*x?>, i64 -> !kite.tile<*x?>
      // CHECK: kite.load %{{.*}}[%{{.*}}, all] mask %{{.*}} {kite.checked = array<i32: 0>}
      %g = kite.load %y[%tq, all] mask %f : !kite.tensor<*x?>[!kite.span] mask !kite.tile<*x?> -> !kite.tile<*x?>
      kite.store %g, %y[%tq, all] mask %f : !kite.tile<*x?>, !kite.tensor<*x?>[!kite.span] mask !kite.tile<*x?>
    }
    // A gather: the indices are data.
    %ids = kite.span_index %tr : !kite.tile<*x?>
    // CHECK: kite.load %{{.*}}[%{{.*}}, all] {kite.checked = array<i32: 0>}
    %h = kite.load %x[%ids, all] : !kite.tensor<*x?>[!kite.tile<*x?>] -> !kite.tile<*x?>
    kite.store %h, %x[%ids, all] : !kite.tile<*x?>, !kite.tensor<*x?>[!kite.tile<*x?>]
  }
  return
}
