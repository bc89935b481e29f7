// RUN: kite compile %s --emit=ir | FileCheck %s
// RUN: kite compile %s --emit=ir | kite-opt | FileCheck %s

// Subscripts: tiles, scalar indices, all, newaxis, N-D loop variables,
// gathers; loads, stores, `+=` on a subscript, masks and atomics.

#include <kite/kite.hpp>
using namespace kite;

// CHECK-LABEL: func.func @positions(
// CHECK-SAME: %[[X:[^:]*]]: !kite.tensor<*x?> {kite.name = "x"}, %[[I:[^:]*]]: i32
// CHECK: %[[OUT:.*]] = kite.empty [{{.*}}], %{{.*}} : !kite.tensor<?x?x?>
// CHECK: kite.tile_for (%[[T:.*]]) =
// CHECK:   kite.load %[[X]][%[[T]], all] : !kite.tensor<*x?>[!kite.span] -> !kite.tile<*x?>
// CHECK:   %[[I64:.*]] = arith.extsi %[[I]] : i32 to i64
// CHECK:   kite.load %[[X]][%[[I64]], %[[T]]] : !kite.tensor<*x?>[i64, !kite.span] -> !kite.tile<*x?>
// CHECK:   kite.load %[[X]][%[[T]], newaxis, all] : !kite.tensor<*x?>[!kite.span] -> !kite.tile<*x?>
// CHECK:   %[[C3:.*]] = arith.constant 3 : i64
// CHECK:   kite.load %[[OUT]][%[[T]], %[[C3]]] : !kite.tensor<?x?x?>[!kite.span, i64] -> !kite.tile<?x?>
// CHECK:   kite.load %[[OUT]][newaxis, %[[T]]] : !kite.tensor<?x?x?>[!kite.span] -> !kite.tile<1x?x?x?>
// CHECK:   kite.load %[[OUT]][all, %[[T]]] : !kite.tensor<?x?x?>[!kite.span] -> !kite.tile<?x?x?>
KITE_KERNEL void positions(Tensor x, int i) {
  auto out = empty({x.size(0), x.size(1)}, x.dtype());
  for (auto t : tile(x.size(0))) {
    auto a = x[t, all];
    auto b = x[i, t];
    auto c = x[t, newaxis, all];
    auto d = out[t, 3];
    auto e = out[newaxis, t];
    auto f = out[all, t];
  }
}

// An N-D loop variable used whole indexes one dimension per tile; t[1]
// picks one of them.
// CHECK-LABEL: func.func @tuples(
// CHECK: kite.tile_for (%[[A:.*]], %[[B:.*]], %[[C:.*]]) =
// CHECK:   %[[V:.*]] = kite.load %{{.*}}[%[[A]], %[[B]], %[[C]]]
// CHECK:   kite.store %[[V]], %{{.*}}[%[[A]], %[[B]], %[[C]]]
// CHECK:   kite.load %{{.*}}[%[[B]]]
KITE_KERNEL void tuples(Tensor x, Tensor y) {
  for (auto t : tile(x.size(0), x.size(1), x.size(2))) {
    y[t] = x[t];
    auto row = x[t[1]];
  }
}

// A tile of integers as an index is a gather.
// CHECK-LABEL: func.func @gather(
// CHECK-SAME: %[[IDS:[^:]*]]: !kite.tensor<*x?> {kite.name = "ids"}, %[[W:[^:]*]]: !kite.tensor<*x?> {kite.name = "weight"}
// CHECK: kite.tile_for (%[[TN:.*]], %[[TD:.*]]) =
// CHECK:   %[[I:.*]] = kite.load %[[IDS]][%[[TN]]] : !kite.tensor<*x?>[!kite.span] -> !kite.tile<*x?>
// CHECK:   kite.load %[[W]][%[[I]], %[[TD]]] : !kite.tensor<*x?>[!kite.tile<*x?>, !kite.span] -> !kite.tile<*x?>
// CHECK:   %[[IDX:.*]] = kite.span_index %[[TN]] : !kite.tile<?xi64>
// CHECK:   kite.load %[[W]][%[[IDX]], all] : !kite.tensor<*x?>[!kite.tile<?xi64>] -> !kite.tile<*x?>
KITE_KERNEL Tensor gather(Tensor ids, Tensor weight) {
  auto n = ids.size(0), d = weight.size(1);
  auto out = empty({n, d}, weight.dtype());
  for (auto [tn, td] : tile(n, d)) {
    out[tn, td] = weight[ids[tn], td];
    auto rows = weight[tn.index(), all];
  }
  return out;
}

// `x[...] += v` loads, adds and stores; a scalar stores broadcast.
// CHECK-LABEL: func.func @update(
// CHECK: kite.tile_for (%[[T:.*]]) =
// CHECK:   %[[OLD:.*]] = kite.load %[[X:.*]][%[[T]]]
// CHECK:   %[[NEW:.*]] = kite.binary add %[[OLD]], %{{.*}} : !kite.tile<*x?>, f32 -> !kite.tile<*x?>
// CHECK:   kite.store %[[NEW]], %[[X]][%[[T]]]
// CHECK:   %[[OLD2:.*]] = kite.load %[[X]][%[[T]]]
// CHECK:   kite.binary mul %[[OLD2]], %{{.*}} : !kite.tile<*x?>, !kite.tile<*x?> -> !kite.tile<*x?>
// CHECK:   %[[Z:.*]] = arith.constant 0 : i32
// CHECK:   kite.store %[[Z]], %{{.*}}[%[[T]]] : i32, !kite.tensor<*x?>[!kite.span]
KITE_KERNEL void update(Tensor x, Tensor y, Tensor z) {
  for (auto t : tile(x.size(0))) {
    x[t] += 1.0f;
    x[t] *= y[t];
    z[t] = 0;
  }
}

// load/store with masks, and atomics.
// CHECK-LABEL: func.func @explicit_ops(
// CHECK: kite.tile_for (%[[T:.*]]) =
// CHECK:   %[[IDX:.*]] = kite.span_index %[[T]]
// CHECK:   %[[MASK:.*]] = kite.compare lt %[[IDX]], %{{.*}} : !kite.tile<?xi64>, i64 -> !kite.tile<?xi1>
// CHECK:   %[[V:.*]] = kite.load %[[X:.*]][%[[T]], all] mask %[[MASK]] : !kite.tensor<*x?>[!kite.span] mask !kite.tile<?xi1> -> !kite.tile<*x?>
// CHECK:   kite.store %[[V]], %[[Y:.*]][%[[T]], all] mask %[[MASK]] : !kite.tile<*x?>, !kite.tensor<*x?>[!kite.span] mask !kite.tile<?xi1>
// CHECK:   %[[IDS:.*]] = kite.load %{{.*}}[%[[T]]]
// CHECK:   kite.atomic add %[[V]], %[[Y]][%[[IDS]], all] : !kite.tile<*x?>, !kite.tensor<*x?>[!kite.tile<*x?>]
// CHECK:   kite.atomic max %{{.*}}, %[[Y]][%[[T]], all] mask %[[MASK]] : f32, !kite.tensor<*x?>[!kite.span] mask !kite.tile<?xi1>
// CHECK:   kite.atomic min %[[V]], %[[Y]][%[[T]], all]
KITE_KERNEL void explicit_ops(Tensor x, Tensor y, Tensor ids, int64_t limit) {
  for (auto t : tile(x.size(0))) {
    auto mask = t.index() < limit;
    auto v = load(x, {t, all}, mask);
    store(y, {t, all}, v, mask);
    atomic_add(y, {ids[t], all}, v);
    atomic_max(y, {t, all}, 2.0f, mask);
    atomic_min(y, {t, all}, v);
  }
}
