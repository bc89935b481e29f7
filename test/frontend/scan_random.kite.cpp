// RUN: kite compile %s --emit=ir | FileCheck %s
// RUN: kite compile %s --emit=ir | kite-opt | FileCheck %s
#include <kite/kite.hpp>
using namespace kite;

// CHECK-LABEL: func.func @scans(
// CHECK: kite.scan sum %{{.*}} {dim = 1 : i64} : !kite.tile<?x?xf32> -> !kite.tile<?x?xf32>
// CHECK: kite.scan prod %{{.*}} {dim = 0 : i64}
// CHECK: kite.scan max %{{.*}} {dim = -1 : i64} : !kite.tile<?x?xf32> -> !kite.tile<?x?xf32>, !kite.tile<?x?xi64>
// CHECK: kite.scan min %{{.*}} {dim = 1 : i64}
// CHECK: kite.scan sum %{{.*}} {dim = 1 : i64} : !kite.tile<?x?xi32> -> !kite.tile<?x?xi64>
KITE_KERNEL void scans(Tensor x) {
  for (auto [tm, tn] : tile(x.size(0), x.size(1))) {
    auto a = zeros({tm, tn}, f32);
    auto s1 = cumsum(a, 1);
    auto s2 = cumprod(a, 0);
    auto [s3, i3] = cummax(a, -1);
    auto [s4, i4] = cummin(a, 1);
    auto s5 = cumsum(a.to(i32), 1);
  }
}

// CHECK-LABEL: func.func @user_scans(
// CHECK: %[[A:.*]] = kite.load
// CHECK: %[[B:.*]] = kite.load
// CHECK: %{{.*}}:2 = kite.associative_scan %[[A]], %[[B]] {dim = 1 : i64}
// CHECK-NEXT: ^bb0(%[[A0:.*]]: !kite.tile<?>, %[[B0:.*]]: !kite.tile<?>, %[[A1:.*]]: !kite.tile<?>, %[[B1:.*]]: !kite.tile<?>):
// CHECK-NEXT: %[[M:.*]] = kite.binary mul %[[A0]], %[[A1]]
// CHECK-NEXT: %[[T:.*]] = kite.binary mul %[[B0]], %[[A1]]
// CHECK-NEXT: %[[S:.*]] = kite.binary add %[[T]], %[[B1]]
// CHECK-NEXT: kite.yield %[[M]], %[[S]]
// CHECK: kite.associative_scan %{{.*}} {dim = 0 : i64} : !kite.tile<?x?xf32> -> !kite.tile<?x?xf32>
// CHECK-NEXT: ^bb0(%[[X:.*]]: !kite.tile<f32>, %[[Y:.*]]: !kite.tile<f32>):
// CHECK-NEXT: %[[MAX:.*]] = kite.binary maximum %[[X]], %[[Y]]
// CHECK-NEXT: kite.yield %[[MAX]] : !kite.tile<f32>
KITE_KERNEL void user_scans(Tensor a, Tensor b, Tensor out) {
  for (auto [tm, tn] : tile(a.size(0), a.size(1))) {
    auto [steps, h] = associative_scan(std::tuple{a[tm, tn], b[tm, tn]}, 1,
        [](auto a0, auto b0, auto a1, auto b1) { return std::tuple{a0 * a1, b0 * a1 + b1}; });
    auto running = [](auto x, auto y) { return maximum(x, y); };
    auto m = associative_scan(zeros({tm, tn}, f32), 0, running);
    out[tm, tn] = h + m;
  }
}

// CHECK-LABEL: func.func @draws(
// CHECK-SAME: %[[SEED:[^:]*]]: i64
// CHECK: %[[OFF:.*]] = kite.span_index
// CHECK: kite.random uniform %[[SEED]], %[[OFF]] : i64, !kite.tile<?xi64> -> !kite.tile<?xf32>
// CHECK: kite.random normal %[[SEED]], %[[OFF]]
// CHECK: %[[BITS:.*]] = kite.random bits %[[SEED]], %[[OFF]] : i64, !kite.tile<?xi64> -> !kite.tile<?xi64>
// CHECK: %[[R:.*]] = kite.binary mod %[[BITS]], %{{.*}} : !kite.tile<?xi64>, i64 -> !kite.tile<?xi64>
// CHECK: kite.binary add %[[R]], %{{.*}} : !kite.tile<?xi64>, i64 -> !kite.tile<?xi64>
KITE_KERNEL void draws(Tensor x, int64_t seed) {
  for (auto t : tile(x.size(0))) {
    auto off = t.index();
    auto u = rand(seed, off);
    auto z = randn(seed, off);
    auto k = randint(seed, off, 3, 17);
  }
}
