// RUN: kite compile %s --emit=ir | FileCheck %s
// RUN: kite compile %s --emit=ir | kite-opt | FileCheck %s

// Every family of value ops, with the types the frontend infers: ranks
// where it knows them, element types where they are known (a constant
// dtype, comparisons, argmax), `?` and `*` otherwise.

#include <kite/kite.hpp>
using namespace kite;

// CHECK-LABEL: func.func @unary(
// CHECK: %[[A:.*]] = kite.full {{.*}} -> !kite.tile<?x?xf32>
// CHECK: kite.unary neg %[[A]] : !kite.tile<?x?xf32> -> !kite.tile<?x?xf32>
// CHECK: kite.unary exp %[[A]]
// CHECK: kite.unary exp2 %[[A]]
// CHECK: kite.unary log %[[A]]
// CHECK: kite.unary log2 %[[A]]
// CHECK: kite.unary sqrt %[[A]]
// CHECK: kite.unary rsqrt %[[A]]
// CHECK: kite.unary abs %[[A]]
// CHECK: kite.unary sin %[[A]]
// CHECK: kite.unary cos %[[A]]
// CHECK: kite.unary tanh %[[A]]
// CHECK: kite.unary erf %[[A]]
// CHECK: kite.unary sigmoid %[[A]]
// CHECK: kite.unary relu %[[A]]
// CHECK: kite.unary silu %[[A]]
// CHECK: kite.unary gelu %[[A]]
// CHECK: kite.unary floor %[[A]]
// CHECK: kite.unary ceil %[[A]]
// CHECK: %[[B:.*]] = kite.full {{.*}} -> !kite.tile<?xi1>
// CHECK: kite.unary not %[[B]] : !kite.tile<?xi1> -> !kite.tile<?xi1>
// CHECK: %[[I:.*]] = kite.full {{.*}} -> !kite.tile<?xi32>
// CHECK: kite.unary exp %[[I]] : !kite.tile<?xi32> -> !kite.tile<?xf32>
KITE_KERNEL void unary(Tensor x) {
  for (auto [tm, tn] : tile(x.size(0), x.size(1))) {
    auto a = zeros({tm, tn}, f32);
    auto r = -a + exp(a) + exp2(a) + log(a) + log2(a) + sqrt(a) + rsqrt(a) +
             abs(a) + sin(a) + cos(a) + tanh(a) + erf(a) + sigmoid(a) +
             relu(a) + silu(a) + gelu(a) + floor(a) + ceil(a);
    auto b = ~zeros({tm}, boolean);
    auto c = exp(zeros({tm}, i32));
  }
}

// Binary operators take a tile or a scalar on either side; `/` of integers
// is true division; comparisons give booleans.
// CHECK-LABEL: func.func @binary(
// CHECK-SAME: %{{.*}}: f32 {kite.name = "s"}
// CHECK: %[[A:.*]] = kite.full {{.*}} -> !kite.tile<?xf32>
// CHECK: %[[I:.*]] = kite.full {{.*}} -> !kite.tile<?xi64>
// CHECK: kite.binary add %[[A]], %[[A]] : !kite.tile<?xf32>, !kite.tile<?xf32> -> !kite.tile<?xf32>
// CHECK: kite.binary sub %[[A]], %[[S:.*]] : !kite.tile<?xf32>, f32 -> !kite.tile<?xf32>
// CHECK: kite.binary mul %[[S]], %[[A]] : f32, !kite.tile<?xf32> -> !kite.tile<?xf32>
// CHECK: kite.binary div %[[I]], %[[I]] : !kite.tile<?xi64>, !kite.tile<?xi64> -> !kite.tile<?xf32>
// CHECK: kite.binary mod %[[I]], %{{.*}} : !kite.tile<?xi64>, i32 -> !kite.tile<?xi64>
// CHECK: kite.binary pow %[[A]], %{{.*}} : !kite.tile<?xf32>, f64 -> !kite.tile<?xf32>
// CHECK: kite.binary maximum %[[A]], %[[A]]
// CHECK: kite.binary minimum %[[A]], %[[S]]
// CHECK: kite.binary add %[[I]], %{{.*}} : !kite.tile<?xi64>, f64 -> !kite.tile<?xf32>
// CHECK: %[[LT:.*]] = kite.compare lt %[[A]], %[[S]] : !kite.tile<?xf32>, f32 -> !kite.tile<?xi1>
// CHECK: kite.compare eq %[[I]], %[[I]] : !kite.tile<?xi64>, !kite.tile<?xi64> -> !kite.tile<?xi1>
// CHECK: kite.compare ne
// CHECK: kite.compare le
// CHECK: kite.compare gt
// CHECK: kite.compare ge
// CHECK: kite.binary and %[[LT]], %[[LT]] : !kite.tile<?xi1>, !kite.tile<?xi1> -> !kite.tile<?xi1>
// CHECK: kite.binary xor
// CHECK: kite.binary or
// CHECK: kite.where %[[LT]], %[[A]], %{{.*}} : !kite.tile<?xi1>, !kite.tile<?xf32>, f64 -> !kite.tile<?xf32>
// CHECK: %[[LO:.*]] = kite.binary maximum %[[A]], %{{.*}} : !kite.tile<?xf32>, f64
// CHECK: kite.binary minimum %[[LO]], %{{.*}} : !kite.tile<?xf32>, f64
KITE_KERNEL void binary(Tensor x, float s) {
  for (auto t : tile(x.size(0))) {
    auto a = zeros({t}, f32);
    auto i = zeros({t}, i64);
    auto r1 = a + a;
    auto r2 = a - s;
    auto r3 = s * a;
    auto r4 = i / i;
    auto r5 = i % 3;
    auto r6 = pow(a, 2.0);
    auto r7 = maximum(a, a);
    auto r8 = minimum(a, s);
    auto r9 = i + 0.5;
    auto lt = a < s;
    auto c = (i == i) & (i != i) & (a <= a) & (a > a) & (a >= a);
    auto l = (lt & lt) | (lt ^ lt);
    auto w = where(lt, a, 0.0);
    auto k = clamp(a, 0.0, 6.0);
  }
}

// Casts, reductions and shape ops.
// CHECK-LABEL: func.func @shapes(
// CHECK-SAME: %[[X:[^:]*]]: !kite.tensor<*x?>
// CHECK: %[[A:.*]] = kite.full {{.*}} -> !kite.tile<?x?xf32>
// CHECK: %[[BF16:.*]] = kite.dtype_const bf16
// CHECK: kite.cast %[[A]], %[[BF16]] : !kite.tile<?x?xf32> -> !kite.tile<?x?xbf16>
// CHECK: %[[DT:.*]] = kite.dtype_of %[[X]] : !kite.tensor<*x?>
// CHECK: kite.cast %[[A]], %[[DT]] : !kite.tile<?x?xf32> -> !kite.tile<?x?x?>
// CHECK: kite.reduce sum %[[A]] {dim = 1 : i64} : !kite.tile<?x?xf32> -> !kite.tile<?xf32>
// CHECK: kite.reduce mean %[[A]] {dim = -1 : i64, keepdim} : !kite.tile<?x?xf32> -> !kite.tile<?x1xf32>
// CHECK: kite.reduce amax %[[A]] {dim = 0 : i64} : !kite.tile<?x?xf32> -> !kite.tile<?xf32>
// CHECK: kite.reduce amin %[[A]] {dim = 0 : i64, keepdim} : !kite.tile<?x?xf32> -> !kite.tile<1x?xf32>
// CHECK: kite.reduce prod %[[A]] {dim = 1 : i64}
// CHECK: kite.reduce argmax %[[A]] {dim = 1 : i64} : !kite.tile<?x?xf32> -> !kite.tile<?xi64>
// CHECK: kite.reduce argmin %[[A]] {dim = 1 : i64} : !kite.tile<?x?xf32> -> !kite.tile<?xi64>
// CHECK: kite.unsqueeze %[[A]] {dim = 1 : i64} : !kite.tile<?x?xf32> -> !kite.tile<?x1x?xf32>
// CHECK: %[[U:.*]] = kite.unsqueeze %[[A]] {dim = -1 : i64} : !kite.tile<?x?xf32> -> !kite.tile<?x?x1xf32>
// CHECK: kite.squeeze %[[U]] {dim = 2 : i64} : !kite.tile<?x?x1xf32> -> !kite.tile<?x?xf32>
// CHECK: kite.transpose %[[A]] {dim0 = 0 : i64, dim1 = 1 : i64} : !kite.tile<?x?xf32> -> !kite.tile<?x?xf32>
// CHECK: kite.permute %[[U]] {dims = array<i64: 2, 0, 1>} : !kite.tile<?x?x1xf32> -> !kite.tile<1x?x?xf32>
// CHECK: %[[C4:.*]] = arith.constant 4 : i64
// CHECK: kite.reshape %[[A]] [%[[TM:.*]], %[[C4]], %{{.*}}] : !kite.tile<?x?xf32>, !kite.span, i64, i64 -> !kite.tile<?x4x?xf32>
// CHECK: kite.expand %[[U]] [%{{.*}}, %{{.*}}, %[[TN:.*]]] : !kite.tile<?x?x1xf32>, i64, i64, !kite.span -> !kite.tile<?x?x?xf32>
// CHECK: kite.unsqueeze %[[A]] {dim = 0 : i64}
// CHECK: kite.transpose %[[A]] {dim0 = 1 : i64, dim1 = 0 : i64}
KITE_KERNEL void shapes(Tensor x, int64_t k) {
  for (auto [tm, tn] : tile(x.size(0), x.size(1))) {
    auto a = zeros({tm, tn}, f32);
    auto c1 = a.to(bf16);
    auto c2 = a.to(x.dtype());
    auto r1 = sum(a, 1);
    auto r2 = mean(a, -1, true);
    auto r3 = amax(a, 0);
    auto r4 = amin(a, 0, true);
    auto r5 = prod(a, 1);
    auto r6 = argmax(a, 1);
    auto r7 = argmin(a, 1);
    auto s1 = a.unsqueeze(1);
    auto u = a.unsqueeze(-1);
    auto s2 = u.squeeze(2);
    auto s3 = a.transpose(0, 1);
    auto s4 = u.permute({2, 0, 1});
    auto s5 = a.reshape({tm, 4, k});
    auto s6 = u.expand({-1, -1, tn});
    auto f1 = unsqueeze(a, 0);
    auto f2 = transpose(a, 1, 0);
  }
}

// Matmuls and creation.
// CHECK-LABEL: func.func @matmuls(
// CHECK: %[[A:.*]] = kite.full {{.*}} -> !kite.tile<?x?xbf16>
// CHECK: %[[B3:.*]] = kite.full {{.*}} -> !kite.tile<?x?x?xf32>
// CHECK: kite.dot %[[A]], %[[A]] : !kite.tile<?x?xbf16>, !kite.tile<?x?xbf16> -> !kite.tile<?x?xf32>
// CHECK: kite.matmul %[[A]], %[[A]] : !kite.tile<?x?xbf16>, !kite.tile<?x?xbf16> -> !kite.tile<?x?xbf16>
// CHECK: %[[ACC:.*]] = kite.full {{.*}} -> !kite.tile<?x?xf32>
// CHECK: kite.addmm %[[ACC]], %[[A]], %[[A]] : !kite.tile<?x?xf32>, !kite.tile<?x?xbf16>, !kite.tile<?x?xbf16> -> !kite.tile<?x?xf32>
// CHECK: kite.bmm %[[B3]], %[[B3]] : !kite.tile<?x?x?xf32>, !kite.tile<?x?x?xf32> -> !kite.tile<?x?x?xf32>
// CHECK: kite.baddbmm %[[B3]], %[[B3]], %[[B3]]
// CHECK: kite.bmm %[[B3]], %[[B3]] {out_dtype = f32} : !kite.tile<?x?x?xf32>, !kite.tile<?x?x?xf32> -> !kite.tile<?x?x?xf32>
// CHECK: %[[NINF:.*]] = arith.constant 0xFFF0000000000000 : f64
// CHECK: kite.full [%{{.*}}], %[[NINF]], %{{.*}} : [!kite.span], f64 -> !kite.tile<?xf32>
// CHECK: %[[ONE:.*]] = arith.constant 1 : i32
// CHECK: kite.full [%{{.*}}, %{{.*}}], %[[ONE]], %{{.*}} : [!kite.span, i64], i32 -> !kite.tile<?x16xi32>
// CHECK: %[[C0:.*]] = arith.constant 0 : i64
// CHECK: %[[C32:.*]] = arith.constant 32 : i64
// CHECK: kite.arange %[[C0]], %[[C32]] : !kite.tile<32xi64>
// CHECK: %[[BEGIN:.*]] = kite.span_query begin %[[T:.*]]
// CHECK: %[[END:.*]] = kite.span_query end %[[T]]
// CHECK: kite.arange %[[BEGIN]], %[[END]] : !kite.tile<?xi64>
// CHECK: kite.span_query block_size %[[T]]
// CHECK: kite.span_query id %[[T]]
// CHECK: kite.span_query count %[[T]]
KITE_KERNEL void matmuls(Tensor x) {
  for (auto [tm, tn, tk] : tile(x.size(0), x.size(1), x.size(2))) {
    auto a = zeros({tm, tk}, bf16);
    auto b3 = zeros({tm, tn, tk}, f32);
    auto d = dot(a, a);
    auto m = matmul(a, a);
    auto acc = zeros({tm, tn}, f32);
    auto am = addmm(acc, a, a);
    auto bm = bmm(b3, b3);
    auto bb = baddbmm(b3, b3, b3);
    auto bo = bmm(b3, b3, f32);
    auto f = full({tm}, -INFINITY, f32);
    auto o = ones({tm, 16}, i32);
    auto r1 = arange(32);
    auto r2 = arange(tm.begin(), tm.end());
    auto q = tm.block_size() + tm.id() + tm.count();
  }
}
