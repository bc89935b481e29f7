// RUN: kite compile %s --emit=ir | FileCheck %s
// RUN: kite compile %s --emit=ir | kite-opt | FileCheck %s

// C++ `if` and integer `for` inside loops: scf.if / scf.for, with the
// outer variables they assign as results and iter_args.

#include <kite/kite.hpp>
using namespace kite;

// CHECK-LABEL: func.func @branches(
// CHECK-SAME: %{{.*}}: i1 {kite.name = "flag"}, %[[LIMIT:[^:]*]]: i64 {kite.name = "limit"})
// CHECK: kite.tile_for (%[[T:.*]]) =
// CHECK:   %[[ACC0:.*]] = kite.full {{.*}} -> !kite.tile<?xf32>
// CHECK:   %[[B:.*]] = kite.span_query begin %[[T]]
// CHECK:   %[[C:.*]] = arith.cmpi slt, %[[B]], %[[LIMIT]] : i64
// CHECK:   %[[R:.*]]:2 = scf.if %[[C]] -> (!kite.tile<?xf32>, i64) {
// CHECK:     %[[ADD:.*]] = kite.binary add %[[ACC0]], %{{.*}} : !kite.tile<?xf32>, f32 -> !kite.tile<?xf32>
// CHECK:     scf.yield %[[ADD]], %{{.*}} : !kite.tile<?xf32>, i64
// CHECK:   } else {
// CHECK:     scf.yield %[[ACC0]], %{{.*}} : !kite.tile<?xf32>, i64
// CHECK:   }
// CHECK:   scf.if %{{.*}} {
// CHECK:     kite.store
// CHECK:   }
// CHECK-NOT: else
// CHECK:   kite.store %[[R]]#0
KITE_KERNEL void branches(Tensor x, bool flag, int64_t limit) {
  for (auto t : tile(x.size(0))) {
    auto acc = zeros({t}, f32);
    int64_t count = 0;
    if (t.begin() < limit) {
      acc = acc + 1.0f;
      count = count + 1;
    }
    if (flag)
      x[t] = acc;
    x[t] = acc;
  }
}

// Integer for loops are scf.for over the variable's type.
// CHECK-LABEL: func.func @counted(
// CHECK-SAME: %{{.*}}: i32 {kite.name = "steps"}
// CHECK: kite.tile_for (%[[T:.*]]) =
// CHECK:   %[[INIT:.*]] = kite.full
// CHECK:   %[[LB:.*]] = arith.constant 0 : i32
// CHECK:   %[[STEP:.*]] = arith.constant 1 : i32
// CHECK:   %[[S:.*]] = scf.for %[[I:.*]] = %[[LB]] to %{{.*}} step %[[STEP]] iter_args(%[[A:.*]] = %[[INIT]]) -> (!kite.tile<?xf32>)  : i32 {
// CHECK:     %[[IF:.*]] = arith.sitofp %[[I]] : i32 to f32
// CHECK:     %[[N:.*]] = kite.binary add %[[A]], %[[IF]]
// CHECK:     scf.yield %[[N]] : !kite.tile<?xf32>
// CHECK:   }
// CHECK:   %[[UB:.*]] = arith.addi %{{.*}}, %{{.*}} : i64
// CHECK:   %[[C2:.*]] = arith.constant 2 : i64
// CHECK:   scf.for %{{.*}} = %{{.*}} to %[[UB]] step %[[C2]] : i64 {
KITE_KERNEL void counted(Tensor x, int steps) {
  for (auto t : tile(x.size(0))) {
    auto s = zeros({t}, f32);
    for (int i = 0; i < steps; i++)
      s = s + float(i);
    for (int64_t j = 0; j <= 10; j += 2)
      x[t, j] = s;
  }
}

// A carried value whose type gets more general in the loop is carried with
// the general type (the initial value is cast to it).
// CHECK-LABEL: func.func @widening(
// CHECK: %[[M0:.*]] = kite.full {{.*}} -> !kite.tile<?xf32>
// CHECK: %[[W:.*]] = builtin.unrealized_conversion_cast %[[M0]] : !kite.tile<?xf32> to !kite.tile<?x?>
// CHECK: kite.tile_for (%{{.*}}) = {{.*}} iter_args(%[[M:.*]] = %[[W]]) -> (!kite.tile<?x?>) {
// CHECK:   %[[MAX:.*]] = kite.binary maximum %[[M]], %{{.*}} : !kite.tile<?x?>, !kite.tile<?x?> -> !kite.tile<?x?>
// CHECK:   kite.yield %[[MAX]] : !kite.tile<?x?>
KITE_KERNEL void widening(Tensor x, Tensor y) {
  auto out = empty({x.size(0)}, f32);
  for (auto tm : tile(x.size(0))) {
    auto m = full({tm}, -INFINITY, f32);
    for (auto tn : tile(x.size(1)))
      m = maximum(m, amax(load(x, {tm, tn}).reshape({tm, tn}), 1));
    out[tm] = m;
  }
}

// `if constexpr` and conditions that are constants pick a branch.
// CHECK-LABEL: func.func @constant_branches(
// CHECK-NOT: scf.if
// CHECK: kite.unary exp
// CHECK-NOT: kite.unary log
// CHECK: return
constexpr bool kUseExp = true;
KITE_KERNEL void constant_branches(Tensor x) {
  for (auto t : tile(x.size(0))) {
    auto v = x[t];
    if constexpr (kUseExp)
      v = exp(v);
    if (!kUseExp)
      v = log(v);
    x[t] = v;
  }
}
