// RUN: kite-opt %s --canonicalize --split-input-file | FileCheck %s

// A positive scale leaves the max: amax(x * c) is amax(x) * c. The scaled
// tile stays for its other reader (the subtraction).
// CHECK-LABEL: func.func @scaled_max
// CHECK-DAG:     %[[C:.*]] = arith.constant 1.250000e-01 : f32
// CHECK-DAG:     %[[XC:.*]] = kite.binary mul %arg0, %[[C]]
// CHECK-DAG:     %[[M:.*]] = kite.reduce amax %arg0 {dim = 1 : i64, keepdim}
// CHECK:         %[[MC:.*]] = kite.binary mul %[[M]], %[[C]] : !kite.tile<64x1xf32>, f32
// CHECK:         kite.binary sub %[[XC]], %[[MC]]
func.func @scaled_max(%x: !kite.tile<64x64xf32>) -> !kite.tile<64x64xf32> {
  %c = arith.constant 0.125 : f32
  %s = kite.binary mul %x, %c : !kite.tile<64x64xf32>, f32 -> !kite.tile<64x64xf32>
  %m = kite.reduce amax %s {dim = 1 : i64, keepdim} : !kite.tile<64x64xf32> -> !kite.tile<64x1xf32>
  %d = kite.binary sub %s, %m : !kite.tile<64x64xf32>, !kite.tile<64x1xf32> -> !kite.tile<64x64xf32>
  return %d : !kite.tile<64x64xf32>
}

// -----

// amin too, with the scale on the left; bf16 keeps its dtype.
// CHECK-LABEL: func.func @scaled_min_bf16
// CHECK:         %[[M:.*]] = kite.reduce amin %arg0 {dim = 0 : i64} : !kite.tile<8x4xbf16> -> !kite.tile<4xbf16>
// CHECK:         kite.binary mul %[[M]], %{{.*}} : !kite.tile<4xbf16>, f64 -> !kite.tile<4xbf16>
func.func @scaled_min_bf16(%x: !kite.tile<8x4xbf16>) -> !kite.tile<4xbf16> {
  %c = arith.constant 3.0 : f64
  %s = kite.binary mul %c, %x : f64, !kite.tile<8x4xbf16> -> !kite.tile<8x4xbf16>
  %m = kite.reduce amin %s {dim = 0 : i64} : !kite.tile<8x4xbf16> -> !kite.tile<4xbf16>
  return %m : !kite.tile<4xbf16>
}

// -----

// A negative or zero scale, a scale that is not a constant, a sum and an
// integer tile stay as they are.
// CHECK-LABEL: func.func @kept
// CHECK:         kite.reduce amax %{{.*}} {dim = 0 : i64} : !kite.tile<8xf32> -> !kite.tile<f32>
// CHECK:         kite.reduce amax %{{.*}} {dim = 0 : i64} : !kite.tile<8xf32> -> !kite.tile<f32>
// CHECK:         kite.reduce amax %{{.*}} {dim = 0 : i64} : !kite.tile<8xf32> -> !kite.tile<f32>
// CHECK:         kite.reduce sum %{{.*}} {dim = 0 : i64} : !kite.tile<8xf32> -> !kite.tile<f32>
// CHECK:         kite.reduce amax %{{.*}} {dim = 0 : i64} : !kite.tile<8xi32> -> !kite.tile<i32>
func.func @kept(%x: !kite.tile<8xf32>, %s: f32, %i: !kite.tile<8xi32>) -> (!kite.tile<f32>, !kite.tile<f32>, !kite.tile<f32>, !kite.tile<f32>, !kite.tile<i32>) {
  %neg = arith.constant -2.0 : f32
  %zero = arith.constant 0.0 : f32
  %two = arith.constant 2 : i32
  %a = kite.binary mul %x, %neg : !kite.tile<8xf32>, f32 -> !kite.tile<8xf32>
  %b = kite.binary mul %x, %zero : !kite.tile<8xf32>, f32 -> !kite.tile<8xf32>
  %c = kite.binary mul %x, %s : !kite.tile<8xf32>, f32 -> !kite.tile<8xf32>
  %j = kite.binary mul %i, %two : !kite.tile<8xi32>, i32 -> !kite.tile<8xi32>
  %ra = kite.reduce amax %a {dim = 0 : i64} : !kite.tile<8xf32> -> !kite.tile<f32>
  %rb = kite.reduce amax %b {dim = 0 : i64} : !kite.tile<8xf32> -> !kite.tile<f32>
  %rc = kite.reduce amax %c {dim = 0 : i64} : !kite.tile<8xf32> -> !kite.tile<f32>
  %rd = kite.reduce sum %c {dim = 0 : i64} : !kite.tile<8xf32> -> !kite.tile<f32>
  %rj = kite.reduce amax %j {dim = 0 : i64} : !kite.tile<8xi32> -> !kite.tile<i32>
  return %ra, %rb, %rc, %rd, %rj : !kite.tile<f32>, !kite.tile<f32>, !kite.tile<f32>, !kite.tile<f32>, !kite.tile<i32>
}

// -----

// A masked scaled tile (causal attention's scores): the select runs on the
// unscaled tile, the scale after it, and then leaves the max.
// CHECK-LABEL: func.func @masked_scaled_max
// CHECK:         %[[W:.*]] = kite.where %arg1, %arg0, %{{.*}} : !kite.tile<4x8xi1>, !kite.tile<4x8xf32>, f32 -> !kite.tile<4x8xf32>
// CHECK-DAG:     kite.binary mul %[[W]], %{{.*}} : !kite.tile<4x8xf32>, f32 -> !kite.tile<4x8xf32>
// CHECK-DAG:     kite.reduce amax %[[W]] {dim = 1 : i64}
func.func @masked_scaled_max(%x: !kite.tile<4x8xf32>, %m: !kite.tile<4x8xi1>) -> (!kite.tile<4x8xf32>, !kite.tile<4xf32>) {
  %c = arith.constant 0.5 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %s = kite.binary mul %x, %c : !kite.tile<4x8xf32>, f32 -> !kite.tile<4x8xf32>
  %w = kite.where %m, %s, %ninf : !kite.tile<4x8xi1>, !kite.tile<4x8xf32>, f32 -> !kite.tile<4x8xf32>
  %r = kite.reduce amax %w {dim = 1 : i64} : !kite.tile<4x8xf32> -> !kite.tile<4xf32>
  return %w, %r : !kite.tile<4x8xf32>, !kite.tile<4xf32>
}

// -----

// A constant the scale would change (1.0 * 0.5 is not 1.0) or a scaled
// tile read elsewhere keeps the select on the scaled tile.
// CHECK-LABEL: func.func @where_kept
// CHECK:         kite.where %arg1, %{{.*}}, %{{.*}} : !kite.tile<8xi1>, !kite.tile<8xf32>, f32
// CHECK-NEXT:    kite.where %arg1, %{{.*}}, %{{.*}} : !kite.tile<8xi1>, f32, !kite.tile<8xf32>
func.func @where_kept(%x: !kite.tile<8xf32>, %m: !kite.tile<8xi1>) -> (!kite.tile<8xf32>, !kite.tile<8xf32>, !kite.tile<8xf32>) {
  %c = arith.constant 0.5 : f32
  %one = arith.constant 1.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %s = kite.binary mul %x, %c : !kite.tile<8xf32>, f32 -> !kite.tile<8xf32>
  %a = kite.where %m, %s, %one : !kite.tile<8xi1>, !kite.tile<8xf32>, f32 -> !kite.tile<8xf32>
  %b = kite.where %m, %ninf, %s : !kite.tile<8xi1>, f32, !kite.tile<8xf32> -> !kite.tile<8xf32>
  return %a, %b, %s : !kite.tile<8xf32>, !kite.tile<8xf32>, !kite.tile<8xf32>
}
