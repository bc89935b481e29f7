// RUN: kite compile %s --emit=ir | FileCheck %s
// RUN: kite compile %s --emit=ir | kite-opt | FileCheck %s

// Structured bindings of loop variables and tuples, and kernels returning
// several tensors.

#include <kite/kite.hpp>
#include <tuple>
using namespace kite;

std::tuple<Tensor, Tensor> stats(const Tensor &row) {
  return {sum(row, 1), amax(row, 1)};
}

// CHECK-LABEL: func.func @bindings(
// CHECK-SAME: -> (!kite.tensor<*x?>, !kite.tensor<?xf32>)
// CHECK: %[[OUT:.*]] = kite.empty_like
// CHECK: %[[S:.*]] = kite.empty [%{{.*}}], %{{.*}} : !kite.tensor<?xf32>
// CHECK: kite.tile_for (%[[A:.*]], %[[B:.*]]) =
// CHECK:   %[[V:.*]] = kite.load %{{.*}}[%[[A]], %[[B]]]
// CHECK:   kite.store %[[V]], %[[OUT]][%[[A]], %[[B]]]
// CHECK:   %[[ROW:.*]] = kite.load %{{.*}}[%[[A]], all]
// CHECK:   %[[SUM:.*]] = kite.reduce sum %[[ROW]] {dim = 1 : i64}
// CHECK:   %[[MAX:.*]] = kite.reduce amax %[[ROW]] {dim = 1 : i64}
// CHECK:   %[[D:.*]] = kite.binary sub %[[SUM]], %[[MAX]]
// CHECK:   kite.store %[[D]], %[[S]][%[[A]]]
// CHECK: return %[[OUT]], %[[S]] : !kite.tensor<*x?>, !kite.tensor<?xf32>
KITE_KERNEL std::tuple<Tensor, Tensor> bindings(Tensor x) {
  auto out = empty_like(x);
  auto s = empty({x.size(0)}, f32);
  for (auto t : tile(x.size(0), x.size(1))) {
    auto [a, b] = t;
    out[a, b] = x[a, b];
    auto [total, peak] = stats(x[a, all]);
    s[a] = total - std::get<1>(std::make_tuple(total, peak));
  }
  return std::make_tuple(out, s);
}

// CHECK-LABEL: func.func @three(
// CHECK: kite.tile_for (%[[I:.*]], %[[J:.*]], %[[K:.*]]) =
// CHECK:   kite.load %{{.*}}[%[[K]], %[[J]], %[[I]]]
KITE_KERNEL Tensor three(Tensor x) {
  auto out = empty_like(x);
  for (auto [i, j, k] : tile(x.size(0), x.size(1), x.size(2)))
    out[i, j, k] = x[k, j, i];
  return out;
}
