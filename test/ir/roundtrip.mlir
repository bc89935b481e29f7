// RUN: kite-opt %s | kite-opt | FileCheck %s
// RUN: kite-opt %s --mlir-print-op-generic | kite-opt | FileCheck %s

// Layouts print once each, at the top, as aliases (@layouts, at the end).
// CHECK-DAG: #[[ROWS:blocked[0-9]*]] = #kite.blocked<shape = [4, 256], vec = [1, 4], threads = [2, 64], dims = [0, 1]>
// CHECK-DAG: #[[SUMS:blocked[0-9]*]] = #kite.blocked<shape = [4, 256], vec = [1, 4], threads = [2, 64], dims = [0]>
// CHECK-DAG: #[[OWN:blocked[0-9]*]] = #kite.blocked<shape = [4], vec = [4], threads = [1], dims = [0]>

// CHECK-LABEL: func.func @softmax
// CHECK-SAME: (%[[X:.*]]: !kite.tensor<*x?> {kite.name = "x"}) -> !kite.tensor<*x?>
func.func @softmax(%x: !kite.tensor<*x?> {kite.name = "x"}) -> !kite.tensor<*x?> attributes {kite.kernel} {
  // CHECK: %[[OUT:.*]] = kite.empty_like %[[X]] : !kite.tensor<*x?> -> !kite.tensor<*x?>
  %out = kite.empty_like %x : !kite.tensor<*x?> -> !kite.tensor<*x?>
  // CHECK: %[[N:.*]] = kite.size %[[X]][0] : !kite.tensor<*x?>
  %n = kite.size %x[0] : !kite.tensor<*x?>
  %c0 = arith.constant 0 : i64
  // CHECK: %[[BS:.*]] = kite.block_size 0 extent %[[N]] : i64
  %bs = kite.block_size 0 extent %n : i64
  %f32 = kite.dtype_const f32
  // CHECK: kite.tile_for (%[[T:.*]]) = (%{{.*}}) to (%[[N]]) block (%[[BS]]) {
  kite.tile_for (%tn) = (%c0) to (%n) block (%bs) {
    // CHECK: kite.load %[[X]][%[[T]], all] : !kite.tensor<*x?>[!kite.span] -> !kite.tile<*x?>
    %row0 = kite.load %x[%tn, all] : !kite.tensor<*x?>[!kite.span] -> !kite.tile<*x?>
    // CHECK: kite.cast
    %row = kite.cast %row0, %f32 : !kite.tile<*x?> -> !kite.tile<*xf32>
    // CHECK: kite.reduce amax %{{.*}} {dim = 1 : i64, keepdim}
    %m = kite.reduce amax %row {dim = 1 : i64, keepdim} : !kite.tile<*xf32> -> !kite.tile<*xf32>
    // CHECK: kite.binary sub
    %d = kite.binary sub %row, %m : !kite.tile<*xf32>, !kite.tile<*xf32> -> !kite.tile<*xf32>
    // CHECK: kite.unary exp
    %e = kite.unary exp %d : !kite.tile<*xf32> -> !kite.tile<*xf32>
    %s = kite.reduce sum %e {dim = 1 : i64, keepdim} : !kite.tile<*xf32> -> !kite.tile<*xf32>
    %q = kite.binary div %e, %s : !kite.tile<*xf32>, !kite.tile<*xf32> -> !kite.tile<*xf32>
    // CHECK: kite.store %{{.*}}, %[[OUT]][%[[T]], all] : !kite.tile<*xf32>, !kite.tensor<*x?>[!kite.span]
    kite.store %q, %out[%tn, all] : !kite.tile<*xf32>, !kite.tensor<*x?>[!kite.span]
  }
  return %out : !kite.tensor<*x?>
}

// CHECK-LABEL: func.func @matmul
func.func @matmul(%x: !kite.tensor<?x?x?>, %y: !kite.tensor<?x?x?>) -> !kite.tensor<?x?x?> attributes {kite.kernel} {
  %m = kite.size %x[0] : !kite.tensor<?x?x?>
  %k = kite.size %x[1] : !kite.tensor<?x?x?>
  %n = kite.size %y[-1] : !kite.tensor<?x?x?>
  %dt = kite.dtype_of %x : !kite.tensor<?x?x?>
  // CHECK: kite.empty [%{{.*}}, %{{.*}}], %{{.*}} : !kite.tensor<?x?x?>
  %out = kite.empty [%m, %n], %dt : !kite.tensor<?x?x?>
  %c0 = arith.constant 0 : i64
  %zero = arith.constant 0.0 : f32
  %f32 = kite.dtype_const f32
  %b0 = kite.block_size 0 extent %m : i64
  %b1 = kite.block_size 1 extent %n : i64
  // CHECK: kite.block_size 2 {max = 128 : i64, min = 16 : i64} : i64
  %b2 = kite.block_size 2 {min = 16, max = 128} : i64
  kite.tile_for (%tm, %tn) = (%c0, %c0) to (%m, %n) block (%b0, %b1) {
    // CHECK: kite.full [%{{.*}}, %{{.*}}], %{{.*}}, %{{.*}} : [!kite.span, !kite.span], f32 -> !kite.tile<?x?xf32>
    %acc0 = kite.full [%tm, %tn], %zero, %f32 : [!kite.span, !kite.span], f32 -> !kite.tile<?x?xf32>
    // CHECK: %{{.*}} = kite.tile_for (%[[TK:.*]]) = (%{{.*}}) to (%{{.*}}) block (%{{.*}}) iter_args(%[[ACC:.*]] = %{{.*}}) -> (!kite.tile<?x?xf32>) {
    %acc = kite.tile_for (%tk) = (%c0) to (%k) block (%b2) iter_args(%a = %acc0) -> (!kite.tile<?x?xf32>) {
      %xa = kite.load %x[%tm, %tk] : !kite.tensor<?x?x?>[!kite.span, !kite.span] -> !kite.tile<?x?x?>
      %yb = kite.load %y[%tk, %tn] : !kite.tensor<?x?x?>[!kite.span, !kite.span] -> !kite.tile<?x?x?>
      // CHECK: kite.addmm %[[ACC]], %{{.*}}, %{{.*}}
      %next = kite.addmm %a, %xa, %yb : !kite.tile<?x?xf32>, !kite.tile<?x?x?>, !kite.tile<?x?x?> -> !kite.tile<?x?xf32>
      // CHECK: kite.yield %{{.*}} : !kite.tile<?x?xf32>
      kite.yield %next : !kite.tile<?x?xf32>
    }
    %d = kite.dot %acc, %acc : !kite.tile<?x?xf32>, !kite.tile<?x?xf32> -> !kite.tile<?x?xf32>
    kite.store %acc, %out[%tm, %tn] : !kite.tile<?x?xf32>, !kite.tensor<?x?x?>[!kite.span, !kite.span]
  }
  return %out : !kite.tensor<?x?x?>
}

// CHECK-LABEL: func.func @everything
func.func @everything(%x: !kite.tensor<?x?xbf16>, %ids: !kite.tensor<?xi64>, %w: !kite.tensor<?x?x?>, %s: f32) attributes {kite.kernel} {
  %c0 = arith.constant 0 : i64
  %c4 = arith.constant 4 : i64
  %n = kite.size %x[0] : !kite.tensor<?x?xbf16>
  %nn = kite.specialize %n : i64
  %r = kite.tensor_reshape %x [%n, %c4] view : !kite.tensor<?x?xbf16> -> !kite.tensor<?x?xbf16>
  %b0 = kite.block_size 0 extent %n : i64
  %i64 = kite.dtype_const i64
  // CHECK: kite.grid_for (%[[I:.*]]) = (%{{.*}}) to (%{{.*}}) {
  kite.grid_for (%i) = (%c0) to (%n) {
    // CHECK: kite.load %{{.*}}[%[[I]], newaxis, all]
    %row = kite.load %x[%i, newaxis, all] : !kite.tensor<?x?xbf16>[i64] -> !kite.tile<1x?xbf16>
  }
  kite.tile_for (%t) = (%c0) to (%n) block (%b0) {
    %begin = kite.span_query begin %t
    %end = kite.span_query end %t
    %bsz = kite.span_query block_size %t
    %id = kite.span_query id %t
    %cnt = kite.span_query count %t
    %idx = kite.span_index %t : !kite.tile<?xi64>
    %g = kite.load %ids[%t] : !kite.tensor<?xi64>[!kite.span] -> !kite.tile<?xi64>
    // CHECK: kite.load %{{.*}}[%{{.*}}, all] : !kite.tensor<?x?x?>[!kite.tile<?xi64>] -> !kite.tile<?x?x?>
    %rows = kite.load %w[%g, all] : !kite.tensor<?x?x?>[!kite.tile<?xi64>] -> !kite.tile<?x?x?>
    %mask = kite.compare lt %idx, %n : !kite.tile<?xi64>, i64 -> !kite.tile<?xi1>
    // CHECK: kite.load %{{.*}}[%{{.*}}] mask %{{.*}} : !kite.tensor<?xi64>[!kite.span] mask !kite.tile<?xi1> -> !kite.tile<?xi64>
    %gm = kite.load %ids[%t] mask %mask : !kite.tensor<?xi64>[!kite.span] mask !kite.tile<?xi1> -> !kite.tile<?xi64>
    %nm = kite.unary not %mask : !kite.tile<?xi1> -> !kite.tile<?xi1>
    %both = kite.binary and %mask, %nm : !kite.tile<?xi1>, !kite.tile<?xi1> -> !kite.tile<?xi1>
    %sel = kite.where %both, %rows, %s : !kite.tile<?xi1>, !kite.tile<?x?x?>, f32 -> !kite.tile<?x?x?>
    %u = kite.unsqueeze %idx {dim = -1 : i64} : !kite.tile<?xi64> -> !kite.tile<?x1xi64>
    %sq = kite.squeeze %u {dim = 1 : i64} : !kite.tile<?x1xi64> -> !kite.tile<?xi64>
    %tr = kite.transpose %rows {dim0 = 0 : i64, dim1 = 1 : i64} : !kite.tile<?x?x?> -> !kite.tile<?x?x?>
    %pm = kite.permute %rows {dims = array<i64: 1, 0>} : !kite.tile<?x?x?> -> !kite.tile<?x?x?>
    %rs = kite.reshape %idx [%t, %c4] : !kite.tile<?xi64>, !kite.span, i64 -> !kite.tile<?x4xi64>
    %ex = kite.expand %u [%t, %c4] : !kite.tile<?x1xi64>, !kite.span, i64 -> !kite.tile<?x4xi64>
    %ar = kite.arange %c0, %bsz : !kite.tile<?xi64>
    %am = kite.reduce argmax %rows {dim = 1 : i64} : !kite.tile<?x?x?> -> !kite.tile<?xi64>
    %mm = kite.matmul %rows, %tr : !kite.tile<?x?x?>, !kite.tile<?x?x?> -> !kite.tile<?x?x?>
    // CHECK: kite.atomic add %{{.*}}, %{{.*}}[%{{.*}}, all]
    kite.atomic add %sel, %w[%g, all] : !kite.tile<?x?x?>, !kite.tensor<?x?x?>[!kite.tile<?xi64>]
    kite.store %s, %w[%t, all] mask %mask : f32, !kite.tensor<?x?x?>[!kite.span] mask !kite.tile<?xi1>
  }
  return
}

// CHECK-LABEL: func.func @batched
func.func @batched(%q: !kite.tensor<?x?x?x?>) attributes {kite.kernel} {
  %c0 = arith.constant 0 : i64
  %n = kite.size %q[0] : !kite.tensor<?x?x?x?>
  %b = kite.block_size 0 extent %n : i64
  kite.tile_for (%t) = (%c0) to (%n) block (%b) {
    %a = kite.load %q[%t, all, all] : !kite.tensor<?x?x?x?>[!kite.span] -> !kite.tile<?x?x?x?>
    // CHECK: kite.bmm
    %c = kite.bmm %a, %a : !kite.tile<?x?x?x?>, !kite.tile<?x?x?x?> -> !kite.tile<?x?x?x?>
    // CHECK: kite.baddbmm
    %d = kite.baddbmm %c, %a, %a : !kite.tile<?x?x?x?>, !kite.tile<?x?x?x?>, !kite.tile<?x?x?x?> -> !kite.tile<?x?x?x?>
    // CHECK: kite.bmm {{.*}} {out_dtype = f32}
    %w = kite.bmm %a, %a {out_dtype = f32} : !kite.tile<?x?x?x?>, !kite.tile<?x?x?x?> -> !kite.tile<?x?x?xf32>
  }
  return
}

// A conversion changes only the layout (@layouts, below).
// CHECK-LABEL: func.func @layouts
// CHECK-SAME: !kite.tile<4x256xf32, #[[ROWS]]>
// CHECK: kite.reduce sum %{{.*}} : !kite.tile<4x256xf32, #[[ROWS]]> -> !kite.tile<4xf32, #[[SUMS]]>
// CHECK: kite.convert_layout %{{.*}} : !kite.tile<4xf32, #[[SUMS]]> -> !kite.tile<4xf32, #[[OWN]]>
func.func @layouts(%x: !kite.tile<4x256xf32, #kite.blocked<shape = [4, 256], vec = [1, 4], threads = [2, 64], dims = [0, 1]>>) {
  %s = kite.reduce sum %x {dim = 1 : i64} : !kite.tile<4x256xf32, #kite.blocked<shape = [4, 256], vec = [1, 4], threads = [2, 64], dims = [0, 1]>> -> !kite.tile<4xf32, #kite.blocked<shape = [4, 256], vec = [1, 4], threads = [2, 64], dims = [0]>>
  %c = kite.convert_layout %s : !kite.tile<4xf32, #kite.blocked<shape = [4, 256], vec = [1, 4], threads = [2, 64], dims = [0]>> -> !kite.tile<4xf32, #kite.blocked<shape = [4], vec = [4], threads = [1], dims = [0]>>
  return
}

// Scans and random draws.
// CHECK-LABEL: func.func @scan_and_random
func.func @scan_and_random(%x: !kite.tile<?x?xbf16>, %seed: i64, %off: !kite.tile<?x?xi64>) {
  // CHECK: kite.scan sum %{{.*}} {dim = 1 : i64} : !kite.tile<?x?xbf16> -> !kite.tile<?x?xbf16>
  %c = kite.scan sum %x {dim = 1 : i64} : !kite.tile<?x?xbf16> -> !kite.tile<?x?xbf16>
  // CHECK: kite.scan min %{{.*}} {dim = -1 : i64} : !kite.tile<?x?xbf16> -> !kite.tile<?x?xbf16>{{$}}
  %m = kite.scan min %x {dim = -1 : i64} : !kite.tile<?x?xbf16> -> !kite.tile<?x?xbf16>
  // CHECK: kite.scan max %{{.*}} {dim = 1 : i64} : !kite.tile<?x?xbf16> -> !kite.tile<?x?xbf16>, !kite.tile<?x?xi64>
  %mv, %mi = kite.scan max %x {dim = 1 : i64} : !kite.tile<?x?xbf16> -> !kite.tile<?x?xbf16>, !kite.tile<?x?xi64>
  // CHECK: kite.random normal %{{.*}}, %{{.*}} : i64, !kite.tile<?x?xi64> -> !kite.tile<?x?xf32>
  %z = kite.random normal %seed, %off : i64, !kite.tile<?x?xi64> -> !kite.tile<?x?xf32>
  // CHECK: kite.random bits
  %b = kite.random bits %seed, %off : i64, !kite.tile<?x?xi64> -> !kite.tile<?x?xi64>
  return
}
