// RUN: kite compile %s --emit=ir | FileCheck %s
// RUN: kite compile %s --emit=ir | kite-opt | FileCheck %s

// Top-level tile/grid loops, nested loops with loop-carried values, and the
// ways to give a block size.

#include <kite/kite.hpp>
using namespace kite;

// A nested loop carries `acc` as an iter_arg; the top-level loop carries
// nothing. Every tile() dimension without a block size gets a tunable
// kite.block_size, numbered in source order.
// CHECK-LABEL: func.func @matmul(
// CHECK-SAME: %[[X:[^:]*]]: !kite.tensor<*x?> {kite.name = "x"}, %[[Y:[^:]*]]: !kite.tensor<*x?>
// CHECK-DAG: %[[M:.*]] = kite.size %[[X]][0]
// CHECK-DAG: %[[K:.*]] = kite.size %[[X]][1]
// CHECK-DAG: %[[N:.*]] = kite.size %[[Y]][1]
// CHECK: %[[OUT:.*]] = kite.empty [%[[M]], %[[N]]], %{{.*}} : !kite.tensor<?x?x?>
// CHECK: %[[BM:.*]] = kite.block_size 0 extent %[[M]]
// CHECK: %[[BN:.*]] = kite.block_size 1 extent %[[N]]
// CHECK: kite.tile_for (%[[TM:.*]], %[[TN:.*]]) = ({{.*}}) to (%[[M]], %[[N]]) block (%[[BM]], %[[BN]]) {
// CHECK:   %[[F32:.*]] = kite.dtype_const f32
// CHECK:   %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:   %[[INIT:.*]] = kite.full [%[[TM]], %[[TN]]], %[[ZERO]], %[[F32]] : [!kite.span, !kite.span], f32 -> !kite.tile<?x?xf32>
// CHECK:   %[[BK:.*]] = kite.block_size 2 extent %[[K]]
// CHECK:   %[[ACC:.*]] = kite.tile_for (%[[TK:.*]]) = ({{.*}}) to (%[[K]]) block (%[[BK]]) iter_args(%[[A:.*]] = %[[INIT]]) -> (!kite.tile<?x?xf32>) {
// CHECK:     %[[L:.*]] = kite.load %[[X]][%[[TM]], %[[TK]]]
// CHECK:     %[[R:.*]] = kite.load %[[Y]][%[[TK]], %[[TN]]]
// CHECK:     %[[NEXT:.*]] = kite.addmm %[[A]], %[[L]], %[[R]] : !kite.tile<?x?xf32>, !kite.tile<*x?>, !kite.tile<*x?> -> !kite.tile<?x?xf32>
// CHECK:     kite.yield %[[NEXT]] : !kite.tile<?x?xf32>
// CHECK:   }
// CHECK:   kite.store %[[ACC]], %[[OUT]][%[[TM]], %[[TN]]]
KITE_KERNEL Tensor matmul(Tensor x, Tensor y) {
  auto m = x.size(0), k = x.size(1), n = y.size(1);
  auto out = empty({m, n}, x.dtype());
  for (auto [tm, tn] : tile(m, n)) {
    auto acc = zeros({tm, tn}, f32);
    for (auto tk : tile(k)) acc = addmm(acc, x[tm, tk], y[tk, tn]);
    out[tm, tn] = acc;
  }
  return out;
}

// register_block_size(n) has an extent, register_block_size(lo, hi) a
// range; block(64) is a constant; range(b, e) gives a lower bound (and the
// tunable block size of that dimension has extent e - b).
// CHECK-LABEL: func.func @block_sizes(
// CHECK: %[[N:.*]] = kite.size %{{.*}}[0]
// CHECK: %[[BN:.*]] = kite.block_size 0 extent %[[N]] : i64
// CHECK: %[[BR:.*]] = kite.block_size 1 {max = 128 : i64, min = 16 : i64} : i64
// CHECK: %[[C64:.*]] = arith.constant 64 : i64
// CHECK: kite.tile_for (%{{.*}}) = (%{{.*}}) to (%[[N]]) block (%[[BN]])
// CHECK: kite.tile_for (%{{.*}}, %{{.*}}) = (%{{.*}}, %{{.*}}) to (%[[N]], %[[N]]) block (%[[C64]], %[[BR]])
// CHECK: %[[B:.*]] = arith.constant 8 : i64
// CHECK: %[[E:.*]] = arith.subi %[[N]], %[[C1:.*]] : i64
// CHECK: %[[EXT:.*]] = arith.subi %[[E]], %[[B]] : i64
// CHECK: %[[BS:.*]] = kite.block_size 2 extent %[[EXT]]
// CHECK: kite.tile_for (%{{.*}}) = (%[[B]]) to (%[[E]]) block (%[[BS]])
KITE_KERNEL void block_sizes(Tensor x) {
  auto n = x.size(0);
  auto bn = register_block_size(n);
  auto br = register_block_size(16, 128);
  auto b64 = block(64);
  for (auto t : tile(n, bn))
    x[t] = 0.0f;
  for (auto [ti, tj] : tile(n, b64, n, br))
    x[ti, tj] = 1.0f;
  for (auto t : tile(range(8, n - 1)))
    x[t] = 2.0f;
}

// grid loops have i64 indices and no block sizes.
// CHECK-LABEL: func.func @grids(
// CHECK: kite.grid_for (%[[I:.*]]) = (%{{.*}}) to (%{{.*}}) {
// CHECK:   %[[V:.*]] = kite.load %{{.*}}[%[[I]], all] : !kite.tensor<*x?>[i64] -> !kite.tile<*x?>
// CHECK:   kite.store %[[V]], %{{.*}}[%[[I]], all]
// CHECK: kite.grid_for (%[[R:.*]], %[[C:.*]]) = (%[[B0:.*]], %{{.*}}) to (%{{.*}}, %{{.*}}) {
// CHECK:   kite.store %{{.*}}, %{{.*}}[%[[R]], %[[C]]] : f32, !kite.tensor<*x?>[i64, i64]
KITE_KERNEL void grids(Tensor x, Tensor y) {
  for (auto i : grid(x.size(0)))
    y[i, all] = x[i, all];
  for (auto [r, c] : grid(range(1, x.size(0)), x.size(1)))
    y[r, c] = 3.0f;
}

// Loops nest to any depth; a value carried through two loops is an
// iter_arg of both.
// CHECK-LABEL: func.func @nested(
// CHECK: kite.tile_for (%[[T:.*]]) =
// CHECK:   %[[S0:.*]] = kite.full
// CHECK:   %[[S:.*]] = kite.tile_for (%{{.*}}) = {{.*}} iter_args(%[[A:.*]] = %[[S0]]) -> (!kite.tile<?xf32>) {
// CHECK:     %[[B:.*]] = kite.tile_for (%{{.*}}) = {{.*}} iter_args(%[[C:.*]] = %[[A]]) -> (!kite.tile<?xf32>) {
// CHECK:       %[[D:.*]] = kite.binary add %[[C]], %{{.*}} : !kite.tile<?xf32>, f32 -> !kite.tile<?xf32>
// CHECK:       kite.yield %[[D]]
// CHECK:     kite.yield %[[B]]
// CHECK:   kite.store %[[S]], %{{.*}}[%[[T]]]
KITE_KERNEL void nested(Tensor x) {
  auto n = x.size(0);
  for (auto t : tile(n)) {
    auto s = zeros({t}, f32);
    for (auto u : tile(n))
      for (auto v : tile(n))
        s = s + 1.0f;
    x[t] = s;
  }
}
