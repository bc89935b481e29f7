// RUN: kite compile %s --emit=ir | FileCheck %s
// RUN: kite compile %s --emit=ir | kite-opt | FileCheck %s

// The host prologue: sizes, scalar arithmetic (arith and math ops, C++
// conversions as arith casts), specialize, allocation and reshapes.

#include <cmath>
#include <kite/kite.hpp>
using namespace kite;

// CHECK-LABEL: func.func @prologue(
// CHECK-SAME: %[[Q:[^:]*]]: !kite.tensor<*x?> {kite.name = "q"}, %[[EPS:[^:]*]]: f64 {kite.name = "eps"}, %[[HEADS:[^:]*]]: i32 {kite.name = "heads"})
// CHECK: %[[D0:.*]] = kite.size %[[Q]][2] : !kite.tensor<*x?>
// CHECK: %[[D:.*]] = kite.specialize %[[D0]] : i64
// CHECK: %[[LAST:.*]] = kite.size %[[Q]][-1]
// CHECK: %[[H:.*]] = arith.extsi %[[HEADS]] : i32 to i64
// CHECK: %[[BH:.*]] = arith.divsi %[[LAST]], %[[H]] : i64
// CHECK: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK: %[[DF:.*]] = arith.sitofp %[[D]] : i64 to f32
// CHECK: %[[SQ:.*]] = math.sqrt %[[DF]] : f32
// CHECK: %[[INV:.*]] = arith.divf %[[ONE]], %[[SQ]] : f32
// CHECK: %[[LOG2E:.*]] = arith.constant 1.44269502 : f32
// CHECK: %[[SCALE:.*]] = arith.mulf %[[INV]], %[[LOG2E]] : f32
// CHECK: %[[EPSF:.*]] = arith.truncf %[[EPS]] : f64 to f32
// CHECK: %[[HALF:.*]] = arith.constant 5.000000e-01 : f32
// CHECK: arith.cmpf ogt, %[[EPSF]], %[[HALF]] : f32
// CHECK: %[[MAX:.*]] = arith.maxsi %{{.*}}, %{{.*}} : i64
// CHECK: %[[F32:.*]] = kite.dtype_const f32
// CHECK: %[[OUT:.*]] = kite.empty [%[[BH]], %[[D]]], %[[F32]] : !kite.tensor<?x?xf32>
// CHECK: %[[Z:.*]] = kite.empty [%[[BH]]], %{{.*}} zeroed : !kite.tensor<?x?>
// CHECK: %[[ZL:.*]] = kite.empty_like %[[Q]] zeroed : !kite.tensor<*x?> -> !kite.tensor<*x?>
// CHECK: %[[M1:.*]] = arith.constant -1 : i64
// CHECK: %[[R:.*]] = kite.tensor_reshape %[[Q]] [%[[M1]], %[[D]]] : !kite.tensor<*x?> -> !kite.tensor<?x?x?>
// CHECK: %[[V:.*]] = kite.tensor_reshape %[[Q]] [%{{.*}}] view : !kite.tensor<*x?> -> !kite.tensor<?x?>
// CHECK: %[[BF:.*]] = kite.dtype_const bf16
// CHECK: %[[EL:.*]] = kite.size %[[OUT]][0] : !kite.tensor<?x?xf32>
// CHECK: %[[EL1:.*]] = kite.size %[[OUT]][1] : !kite.tensor<?x?xf32>
// CHECK: kite.empty [%[[EL]], %[[EL1]]], %[[BF]] : !kite.tensor<?x?xbf16>
KITE_KERNEL std::tuple<Tensor, Tensor, Tensor, Tensor, Tensor>
prologue(Tensor q, double eps, int heads) {
  auto d = specialize(q.size(2));
  int64_t bh = q.size(-1) / heads;
  float scale = 1.0f / std::sqrt(float(d)) * 1.44269504f;
  bool big = float(eps) > 0.5f;
  int64_t width = std::max(bh, d);
  auto out = empty({bh, d}, f32);
  auto z = zeros({bh}, q.dtype());
  auto zl = zeros_like(q);
  auto r = q.reshape({-1, d});
  auto v = q.view({q.size(0) * q.size(1)});
  auto cast = empty_like(out, bf16);
  return {out, z, zl, r, cast};
}

// Host `if` on scalars becomes scf.if; variables it assigns are results.
// CHECK-LABEL: func.func @host_if(
// CHECK: %[[N:.*]] = kite.size
// CHECK: %[[C:.*]] = arith.cmpi sgt, %[[N]], %{{.*}} : i64
// CHECK: %[[B:.*]]:2 = scf.if %[[C]] -> (i64, f32) {
// CHECK:   scf.yield %{{.*}}, %{{.*}} : i64, f32
// CHECK: } else {
// CHECK:   scf.yield %{{.*}}, %{{.*}} : i64, f32
// CHECK: }
// CHECK: kite.tile_for ({{.*}}) = ({{.*}}) to (%[[N]]) block (%[[BS:.*]]) {
// CHECK:   kite.binary mul %{{.*}}, %[[B]]#1 : !kite.tile<*x?>, f32
KITE_KERNEL void host_if(Tensor x) {
  auto n = x.size(0);
  int64_t chunk = 64;
  float s = 1.0f;
  if (n > 4096) {
    chunk = 128;
    s = 0.5f;
  } else {
    s = 2.0f;
  }
  auto bs = block(chunk);
  for (auto t : tile(n, bs))
    x[t] = x[t] * s;
}
