// RUN: kite compile %s --emit=ir | FileCheck %s
// RUN: kite compile %s --emit=ir --debug-locations | FileCheck %s --check-prefix=LOC
// RUN: kite compile %s --emit=ir | kite-opt | FileCheck %s

// Helper functions, templates and lambdas whose bodies are visible are
// inlined; their ops carry call-site locations.

#include <kite/kite.hpp>
using namespace kite;

Tensor scale(const Tensor &v, float s) { return v * s; }
template <class T> T twice(T v) { return v + v; }
template <int N> Tensor power(const Tensor &v) {
  Tensor r = v;
  for (int i = 1; i < N; ++i)
    r = r * v;
  return r;
}
void accumulate(Tensor &acc, const Tensor &v) { acc = acc + v; }
inline int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// CHECK-LABEL: func.func @helpers(
// CHECK-SAME: %[[X:[^:]*]]: !kite.tensor<*x?> {kite.name = "x"}, %[[ALPHA:[^:]*]]: f32
// CHECK: %[[N:.*]] = kite.size %[[X]][0]
// CHECK: %[[C64:.*]] = arith.constant 64 : i64
// CHECK: %[[S:.*]] = arith.addi %[[N]], %[[C64]] : i64
// CHECK: %[[C1:.*]] = arith.constant 1 : i64
// CHECK: %[[S1:.*]] = arith.subi %[[S]], %[[C1]] : i64
// CHECK: %[[BLOCKS:.*]] = arith.divsi %[[S1]], %{{.*}} : i64
// CHECK: kite.tile_for (%[[T:.*]]) =
// CHECK:   %[[V:.*]] = kite.load %[[X]][%[[T]]]
// CHECK:   %[[SC:.*]] = kite.binary mul %[[V]], %[[ALPHA]] : !kite.tile<*x?>, f32
// CHECK:   %[[TW:.*]] = kite.binary add %[[SC]], %[[SC]]
// CHECK:   %[[TI:.*]] = arith.addi %[[BLOCKS]], %[[BLOCKS]] : i64
// CHECK:   %[[P:.*]] = scf.for {{.*}} iter_args(%[[R:.*]] = %[[TW]])
// CHECK:     kite.binary mul %[[R]], %[[TW]]
// CHECK:   %[[ACC:.*]] = kite.binary add %[[P]], %[[V]]
// CHECK:   kite.store %[[ACC]], %[[X]][%[[T]]]
KITE_KERNEL void helpers(Tensor x, float alpha) {
  auto n = x.size(0);
  auto blocks = cdiv(n, 64);
  for (auto t : tile(n)) {
    auto v = x[t];
    auto w = twice(scale(v, alpha));
    auto b2 = twice(blocks);
    auto acc = power<3>(w);
    accumulate(acc, v);
    x[t] = acc;
  }
}

// Lambdas: captures by reference see the enclosing variables, init-captures
// are evaluated where the lambda is made, generic lambdas are templates, and
// a lambda can assign a captured variable.
// CHECK-LABEL: func.func @lambdas(
// CHECK-SAME: %[[X:[^:]*]]: !kite.tensor<*x?> {kite.name = "x"}, %[[S:[^:]*]]: f32
// CHECK: %[[TWO:.*]] = arith.constant 2.000000e+00 : f32
// CHECK: %[[K:.*]] = arith.mulf %[[S]], %[[TWO]] : f32
// CHECK: kite.tile_for (%[[T:.*]]) =
// CHECK:   %[[V:.*]] = kite.load %[[X]][%[[T]]]
// CHECK:   %[[A:.*]] = kite.binary mul %[[V]], %[[S]]
// CHECK:   %[[B:.*]] = kite.binary add %[[A]], %[[K]]
// CHECK:   %[[C:.*]] = kite.unary relu %[[B]]
// CHECK:   %[[D:.*]] = kite.binary sub %[[C]], %[[V]]
// CHECK:   kite.store %[[D]], %[[X]][%[[T]]]
KITE_KERNEL void lambdas(Tensor x, float s) {
  auto scaled = [&](const Tensor &v) { return v * s; };
  auto shift = [k = s * 2.0f](const Tensor &v) { return v + k; };
  auto apply = [](auto f, const Tensor &v) { return relu(f(v)); };
  for (auto t : tile(x.size(0))) {
    auto v = x[t];
    auto r = apply(shift, scaled(v));
    auto sub = [&]() { r = r - v; };
    sub();
    x[t] = r;
  }
}

// LOC-LABEL: func.func @helpers(
// LOC: kite.binary mul {{.*}} loc(#[[MUL:loc[0-9]+]])
// LOC-DAG: #[[SCALE_BODY:loc[0-9]+]] = loc("{{.*}}inlining.kite.cpp":11:51)
// LOC-DAG: #[[SCALE_CALL:loc[0-9]+]] = loc("{{.*}}inlining.kite.cpp":44:20)
// LOC-DAG: #[[MUL]] = loc(callsite(#[[SCALE_BODY]] at #[[SCALE_CALL]]))

// Early returns in helpers become scf.if with the returned value; a
// constant condition (`if constexpr`, a literal argument) picks a branch.
Tensor activation(const Tensor &v, bool smooth) {
  if (smooth)
    return gelu(v);
  return relu(v);
}
int64_t pick_block(int64_t n) {
  if (n > 1024)
    return 128;
  else if (n > 64)
    return 64;
  return 16;
}

// CHECK-LABEL: func.func @early_returns(
// CHECK-SAME: %{{.*}}: i1 {kite.name = "smooth"}
// CHECK: %[[BS:.*]] = scf.if %{{.*}} -> (i64) {
// CHECK:   scf.yield %{{.*}} : i64
// CHECK: } else {
// CHECK:   %[[INNER:.*]] = scf.if %{{.*}} -> (i64) {
// CHECK:   scf.yield %[[INNER]] : i64
// CHECK: kite.tile_for (%[[T:.*]]) = ({{.*}}) to ({{.*}}) block (%[[BS]]) {
// CHECK:   %[[A:.*]] = scf.if %{{.*}} -> (!kite.tile<*x?>) {
// CHECK:     kite.unary gelu
// CHECK:   } else {
// CHECK:     kite.unary relu
// CHECK:   }
// CHECK-NOT: scf.if
// CHECK:   %[[B:.*]] = kite.unary relu
// CHECK:   kite.binary add %[[A]], %[[B]]
KITE_KERNEL Tensor early_returns(Tensor x, bool smooth) {
  auto out = empty_like(x);
  auto bs = block(pick_block(x.size(0)));
  for (auto t : tile(x.size(0), bs))
    out[t] = activation(x[t], smooth) + activation(x[t], false);
  return out;
}
