// RUN: kite-opt %s --kite-specialize="kernel=chained args='q=bf16[256,64] k=bf16[256,64] v=bf16[256,64]'" --kite-apply-config="config='{\"block_sizes\": [64, 64], \"num_warps\": 4, \"tensor_cores\": true, \"wgmma\": true, \"num_stages\": 2, \"overlap_products\": true}'" --kite-assign-layouts="arch=sm_90a" --kite-prefetch-operands --kite-overlap-products | FileCheck %s --check-prefix=LATE
// RUN: kite-opt %s --kite-specialize="kernel=chained args='q=bf16[256,64] k=bf16[256,64] v=bf16[256,64]'" --kite-apply-config="config='{\"block_sizes\": [64, 64], \"num_warps\": 4, \"tensor_cores\": true, \"wgmma\": true, \"num_stages\": 2}'" --kite-assign-layouts="arch=sm_90a" --kite-prefetch-operands --kite-overlap-products | FileCheck %s --check-prefix=NONE
// RUN: kite-opt %s --kite-specialize="kernel=chained args='q=bf16[256,64] k=bf16[256,64] v=bf16[256,64]'" --kite-apply-config="config='{\"block_sizes\": [64, 64], \"num_warps\": 4, \"tensor_cores\": true, \"wgmma\": true, \"num_stages\": 1, \"overlap_products\": true}'" --kite-assign-layouts="arch=sm_90a" --kite-prefetch-operands --kite-overlap-products | FileCheck %s --check-prefix=NONE
// RUN: kite-opt %s --kite-specialize="kernel=tangled args='q=bf16[256,64] k=bf16[256,64] v=bf16[256,64]'" --kite-apply-config="config='{\"block_sizes\": [64, 64], \"num_warps\": 4, \"tensor_cores\": true, \"wgmma\": true, \"num_stages\": 2, \"overlap_products\": true}'" --kite-assign-layouts="arch=sm_90a" --kite-prefetch-operands --kite-overlap-products | FileCheck %s --check-prefix=NONE
//
// Attention's key loop on wgmma with k and v copied ahead: the late stage
// is what depends on the carried accumulator (its rescaling and the second
// product) and v's load, which only the product reads. The first product,
// the softmax and the cast of p stay early; the loop is marked.
// LATE: kite.tile_for
// LATE: kite.load {{.*}} {kite.prefetch = 2 : i64}
// LATE-NEXT: kite.transpose
// LATE-NOT: kite.late
// LATE: kite.matmul {{.*}} {kite.mma = "wgmma", kite.shared_lhs}
// LATE-NOT: kite.late
// LATE: kite.binary mul %{{.*}}, %{{.*}} {kite.late}
// LATE-NOT: kite.late
// LATE: kite.cast
// LATE-NOT: kite.late
// LATE: kite.load {{.*}} {kite.late, kite.prefetch = 2 : i64}
// LATE-NEXT: kite.addmm {{.*}} {kite.late, kite.mma = "wgmma"}
// LATE-NEXT: kite.yield
// LATE-NEXT: } {kite.overlap}
//
// Not asked for, no ring for the operands (one stage), or a loop whose
// row maximum reads the accumulator (the late stage would reach the
// early one): nothing is marked.
// NONE-NOT: kite.late
// NONE-NOT: kite.overlap
func.func @chained(%q: !kite.tensor<*x?> {kite.name = "q"}, %k: !kite.tensor<*x?> {kite.name = "k"}, %v: !kite.tensor<*x?> {kite.name = "v"}) -> !kite.tensor<*x?> attributes {kite.kernel} {
  %s = kite.size %q[0] : !kite.tensor<*x?>
  %d0 = kite.size %q[1] : !kite.tensor<*x?>
  %d = kite.specialize %d0 : i64
  %out = kite.empty_like %q : !kite.tensor<*x?> -> !kite.tensor<*x?>
  %c0 = arith.constant 0 : i64
  %bq = kite.block_size 0 extent %s : i64
  kite.tile_for (%tq) = (%c0) to (%s) block (%bq) {
    %ninf = arith.constant 0xFFF0000000000000 : f64
    %f32 = kite.dtype_const f32
    %m0 = kite.full [%tq], %ninf, %f32 : [!kite.span], f64 -> !kite.tile<?xf32>
    %zero = arith.constant 0.000000e+00 : f32
    %a0 = kite.full [%tq, %d], %zero, %f32 : [!kite.span, i64], f32 -> !kite.tile<?x?xf32>
    %qt = kite.load %q[%tq, all] : !kite.tensor<*x?>[!kite.span] -> !kite.tile<*x?>
    %bk = kite.block_size 1 extent %s : i64
    %a0c = builtin.unrealized_conversion_cast %a0 : !kite.tile<?x?xf32> to !kite.tile<?x?x?>
    %m0c = builtin.unrealized_conversion_cast %m0 : !kite.tile<?xf32> to !kite.tile<*x?>
    %r:2 = kite.tile_for (%tk) = (%c0) to (%s) block (%bk) iter_args(%acc = %a0c, %m = %m0c) -> (!kite.tile<?x?x?>, !kite.tile<*x?>) {
      %kt0 = kite.load %k[%tk, all] : !kite.tensor<*x?>[!kite.span] -> !kite.tile<*x?>
      %kt = kite.transpose %kt0 {dim0 = 0 : i64, dim1 = 1 : i64} : !kite.tile<*x?> -> !kite.tile<*x?>
      %qk = kite.matmul %qt, %kt : !kite.tile<*x?>, !kite.tile<*x?> -> !kite.tile<*x?>
      %mx = kite.reduce amax %qk {dim = -1 : i64} : !kite.tile<*x?> -> !kite.tile<*x?>
      %mn = kite.binary maximum %m, %mx : !kite.tile<*x?>, !kite.tile<*x?> -> !kite.tile<*x?>
      %mu = kite.unsqueeze %mn {dim = -1 : i64} : !kite.tile<*x?> -> !kite.tile<*x?>
      %ps = kite.binary sub %qk, %mu : !kite.tile<*x?>, !kite.tile<*x?> -> !kite.tile<*x?>
      %p = kite.unary exp2 %ps : !kite.tile<*x?> -> !kite.tile<*x?>
      %ds = kite.binary sub %m, %mn : !kite.tile<*x?>, !kite.tile<*x?> -> !kite.tile<*x?>
      %alpha = kite.unary exp2 %ds : !kite.tile<*x?> -> !kite.tile<*x?>
      %au = kite.unsqueeze %alpha {dim = -1 : i64} : !kite.tile<*x?> -> !kite.tile<*x?>
      %scaled = kite.binary mul %acc, %au : !kite.tile<?x?x?>, !kite.tile<*x?> -> !kite.tile<*x?>
      %vt = kite.dtype_of %v : !kite.tensor<*x?>
      %p16 = kite.cast %p, %vt : !kite.tile<*x?> -> !kite.tile<*x?>
      %vv = kite.load %v[%tk, all] : !kite.tensor<*x?>[!kite.span] -> !kite.tile<*x?>
      %next = kite.addmm %scaled, %p16, %vv : !kite.tile<*x?>, !kite.tile<*x?>, !kite.tile<*x?> -> !kite.tile<?x?x?>
      kite.yield %next, %mn : !kite.tile<?x?x?>, !kite.tile<*x?>
    }
    kite.store %r#0, %out[%tq, all] : !kite.tile<?x?x?>, !kite.tensor<*x?>[!kite.span]
  }
  return %out : !kite.tensor<*x?>
}

func.func @tangled(%q: !kite.tensor<*x?> {kite.name = "q"}, %k: !kite.tensor<*x?> {kite.name = "k"}, %v: !kite.tensor<*x?> {kite.name = "v"}) -> !kite.tensor<*x?> attributes {kite.kernel} {
  %s = kite.size %q[0] : !kite.tensor<*x?>
  %d0 = kite.size %q[1] : !kite.tensor<*x?>
  %d = kite.specialize %d0 : i64
  %out = kite.empty_like %q : !kite.tensor<*x?> -> !kite.tensor<*x?>
  %c0 = arith.constant 0 : i64
  %bq = kite.block_size 0 extent %s : i64
  kite.tile_for (%tq) = (%c0) to (%s) block (%bq) {
    %ninf = arith.constant 0xFFF0000000000000 : f64
    %f32 = kite.dtype_const f32
    %m0 = kite.full [%tq], %ninf, %f32 : [!kite.span], f64 -> !kite.tile<?xf32>
    %zero = arith.constant 0.000000e+00 : f32
    %a0 = kite.full [%tq, %d], %zero, %f32 : [!kite.span, i64], f32 -> !kite.tile<?x?xf32>
    %qt = kite.load %q[%tq, all] : !kite.tensor<*x?>[!kite.span] -> !kite.tile<*x?>
    %bk = kite.block_size 1 extent %s : i64
    %a0c = builtin.unrealized_conversion_cast %a0 : !kite.tile<?x?xf32> to !kite.tile<?x?x?>
    %m0c = builtin.unrealized_conversion_cast %m0 : !kite.tile<?xf32> to !kite.tile<*x?>
    %r:2 = kite.tile_for (%tk) = (%c0) to (%s) block (%bk) iter_args(%acc = %a0c, %m = %m0c) -> (!kite.tile<?x?x?>, !kite.tile<*x?>) {
      %kt0 = kite.load %k[%tk, all] : !kite.tensor<*x?>[!kite.span] -> !kite.tile<*x?>
      %kt = kite.transpose %kt0 {dim0 = 0 : i64, dim1 = 1 : i64} : !kite.tile<*x?> -> !kite.tile<*x?>
      %qk = kite.matmul %qt, %kt : !kite.tile<*x?>, !kite.tile<*x?> -> !kite.tile<*x?>
      %mx = kite.reduce amax %qk {dim = -1 : i64} : !kite.tile<*x?> -> !kite.tile<*x?>
      %am = kite.reduce amax %acc {dim = -1 : i64} : !kite.tile<?x?x?> -> !kite.tile<*x?>
      %mx2 = kite.binary maximum %mx, %am : !kite.tile<*x?>, !kite.tile<*x?> -> !kite.tile<*x?>
      %mn = kite.binary maximum %m, %mx2 : !kite.tile<*x?>, !kite.tile<*x?> -> !kite.tile<*x?>
      %mu = kite.unsqueeze %mn {dim = -1 : i64} : !kite.tile<*x?> -> !kite.tile<*x?>
      %ps = kite.binary sub %qk, %mu : !kite.tile<*x?>, !kite.tile<*x?> -> !kite.tile<*x?>
      %p = kite.unary exp2 %ps : !kite.tile<*x?> -> !kite.tile<*x?>
      %ds = kite.binary sub %m, %mn : !kite.tile<*x?>, !kite.tile<*x?> -> !kite.tile<*x?>
      %alpha = kite.unary exp2 %ds : !kite.tile<*x?> -> !kite.tile<*x?>
      %au = kite.unsqueeze %alpha {dim = -1 : i64} : !kite.tile<*x?> -> !kite.tile<*x?>
      %scaled = kite.binary mul %acc, %au : !kite.tile<?x?x?>, !kite.tile<*x?> -> !kite.tile<*x?>
      %vt = kite.dtype_of %v : !kite.tensor<*x?>
      %p16 = kite.cast %p, %vt : !kite.tile<*x?> -> !kite.tile<*x?>
      %vv = kite.load %v[%tk, all] : !kite.tensor<*x?>[!kite.span] -> !kite.tile<*x?>
      %next = kite.addmm %scaled, %p16, %vv : !kite.tile<*x?>, !kite.tile<*x?>, !kite.tile<*x?> -> !kite.tile<?x?x?>
      kite.yield %next, %mn : !kite.tile<?x?x?>, !kite.tile<*x?>
    }
    kite.store %r#0, %out[%tq, all] : !kite.tile<?x?x?>, !kite.tensor<*x?>[!kite.span]
  }
  return %out : !kite.tensor<*x?>
}
