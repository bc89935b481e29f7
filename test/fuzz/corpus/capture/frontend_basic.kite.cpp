// RUN: kite compile %s --emit=ir | FileCheck %s
// RUN: kite compile %s --emit=ir | kite-opt | FileCheck %s

// A kernel becomes a func.func marked kite.kernel, with each parameter's
// name; the host prologue comes first, then the top-level tile loop.

#include <kite/kite.hpp>
using namespace kite;

// CHECK-LABEL: func.func @add(
// CHECK-SAME: %[[X:.*]]: !kite.tensor<*x?> {kite.name = "x"}, %[[Y:.*]]: !kite.tensor<*x?> {kite.name = "y"})
// CHECK-SAME: -> !kite.tensor<*x?> attributes {kite.kernel}
// CHECK: %[[OUT:.*]] = kite.empty_like %[[X]] : !kite.tensor<*x?> -> !kite.tensor<*x?>
// CHECK: %[[M:.*]] = kite.size %[[X]][0]
// CHECK: %[[ZERO0:.*]] = arith.constant 0 : i64
// CHECK: %[[N:.*]] = kite.size %[[X]][1]
// CHECK: %[[ZERO1:.*]] = arith.constant 0 : i64
// CHECK: %[[BM:.*]] = kite.block_size 0 extent %[[M]] : i64
// CHECK: %[[BN:.*]] = kite.block_size 1 extent %[[N]] : i64
// CHECK: kite.tile_for (%[[TM:.*]], %[[TN:.*]]) = (%[[ZERO0]], %[[ZERO1]]) to (%[[M]], %[[N]]) block (%[[BM]], %[[BN]]) {
// CHECK:   %[[A:.*]] = kite.load %[[X]][%[[TM]], %[[TN]]] : !kite.tensor<*x?>[!kite.span, !kite.span] -> !kite.tile<*x?>
// CHECK:   %[[B:.*]] = kite.load %[[Y]][%[[TM]], %[[TN]]]
// CHECK:   %[[S:.*]] = kite.binary add %[[A]], %[[B]] : !kite.tile<*x?>, !kite.tile<*x?> -> !kite.tile<*x?>
// CHECK:   kite.store %[[S]], %[[OUT]][%[[TM]], %[[TN]]] : !kite.tile<*x?>, !kite.tensor<*x?>[!kite.span, !kite.span]
// CHECK: }
// CHECK: return %[[OUT]] : !kite.tensor<*x?>
KITE_KERNEL Tensor add(Tensor x, Tensor y) {
  auto out = empty_like(x);
  for (auto [tm, tn] : tile(x.size(0), x.size(1)))
    out[tm, tn] = x[tm, tn] + y[tm, tn];
  return out;
}

// Every kernel of the file is captured, in source order; scalars map to
// builtin types.
// CHECK-LABEL: func.func @softmax(
// CHECK-SAME: %[[X:.*]]: !kite.tensor<*x?> {kite.name = "x"})
// CHECK: kite.tile_for (%[[T:.*]]) =
// CHECK:   %[[ROW:.*]] = kite.load %[[X]][%[[T]], all] : !kite.tensor<*x?>[!kite.span] -> !kite.tile<*x?>
// CHECK:   %[[F32:.*]] = kite.dtype_const f32
// CHECK:   %[[R:.*]] = kite.cast %[[ROW]], %[[F32]] : !kite.tile<*x?> -> !kite.tile<*xf32>
// CHECK:   %[[MAX:.*]] = kite.reduce amax %[[R]] {dim = 1 : i64, keepdim} : !kite.tile<*xf32> -> !kite.tile<*xf32>
// CHECK:   %[[D:.*]] = kite.binary sub %[[R]], %[[MAX]]
// CHECK:   %[[E:.*]] = kite.unary exp %[[D]] : !kite.tile<*xf32> -> !kite.tile<*xf32>
// CHECK:   %[[SUM:.*]] = kite.reduce sum %[[E]] {dim = 1 : i64, keepdim}
// CHECK:   %[[Q:.*]] = kite.binary div %[[E]], %[[SUM]]
// CHECK:   kite.store %[[Q]], %{{.*}}[%[[T]], all]
KITE_KERNEL Tensor softmax(Tensor x) {
  auto out = empty_like(x);
  for (auto tn : tile(x.size(0))) {
    auto row = x[tn, all].to(f32);
    auto e = exp(row - amax(row, 1, true));
    out[tn, all] = e / sum(e, 1, true);
  }
  return out;
}

// CHECK-LABEL: func.func @scalars(
// CHECK-SAME: %{{.*}}: i64 {kite.name = "a"}, %{{.*}}: i32 {kite.name = "b"}, %{{.*}}: f64 {kite.name = "c"}, %{{.*}}: f32 {kite.name = "d"}, %{{.*}}: i1 {kite.name = "e"})
// CHECK-NOT: -> 
// CHECK: return{{$}}
KITE_KERNEL void scalars(Tensor x, int64_t a, int b, double c, float d, bool e) {}
