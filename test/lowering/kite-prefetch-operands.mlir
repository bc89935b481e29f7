// RUN: kite-opt %s --kite-specialize="kernel=chained args='q=bf16[256,64] k=bf16[256,64] v=bf16[256,64]'" --kite-apply-config="config='{\"block_sizes\": [64, 32], \"num_warps\": 4, \"tensor_cores\": true, \"num_stages\": 2}'" --kite-assign-layouts --kite-prefetch-operands | FileCheck %s --check-prefix=TWO
// RUN: kite-opt %s --kite-specialize="kernel=chained args='q=bf16[256,64] k=bf16[256,64] v=bf16[256,64]'" --kite-apply-config="config='{\"block_sizes\": [64, 32], \"num_warps\": 4, \"tensor_cores\": true, \"num_stages\": 1}'" --kite-assign-layouts --kite-prefetch-operands | FileCheck %s --check-prefix=SINGLE
// RUN: kite-opt %s --kite-specialize="kernel=chained args='q=bf16[256,64] k=bf16[256,64] v=bf16[256,64]'" --kite-apply-config="config='{\"block_sizes\": [16, 32], \"num_warps\": 4, \"tensor_cores\": true, \"num_stages\": 2}'" --kite-assign-layouts --kite-prefetch-operands | FileCheck %s --check-prefix=ONE
// RUN: kite-opt %s --kite-specialize="kernel=written args='q=bf16[256,64] k=bf16[256,64] v=bf16[256,64]'" --kite-apply-config="config='{\"block_sizes\": [64, 32], \"num_warps\": 4, \"tensor_cores\": true, \"num_stages\": 3}'" --kite-assign-layouts --kite-prefetch-operands | FileCheck %s --check-prefix=WRITTEN
// RUN: kite-opt %s --kite-specialize="kernel=twice args='q=bf16[256,64] k=bf16[256,64] v=bf16[256,64]'" --kite-apply-config="config='{\"block_sizes\": [64, 32], \"num_warps\": 4, \"tensor_cores\": true, \"num_stages\": 2}'" --kite-assign-layouts --kite-prefetch-operands | FileCheck %s --check-prefix=TWICE
//
// Attention's key loop (2-D): with 2 stages, k (through its transpose) and
// v are only right operands of products on the tensor cores, indexed by
// the key tile: both are copied ahead. q, loaded outside the loop and a
// left operand, is not.
// TWO: kite.load %{{.*}}[%{{.*}}, all] : {{.*}} -> !kite.tile<64x64xbf16
// TWO-NOT: kite.prefetch
// TWO: kite.tile_for
// TWO: kite.load {{.*}} {kite.prefetch = 2 : i64}
// TWO-NEXT: kite.transpose
// TWO-NEXT: kite.matmul {{.*}} {kite.mma = "mma_sync"}
// TWO: kite.load {{.*}} {kite.prefetch = 2 : i64}
// TWO-NEXT: kite.addmm {{.*}} {kite.mma = "mma_sync"}
//
// One stage: the same loads, into one buffer each.
// SINGLE: kite.tile_for
// SINGLE: kite.load {{.*}} {kite.prefetch = 1 : i64}
// SINGLE-NEXT: kite.transpose
// SINGLE: kite.load {{.*}} {kite.prefetch = 1 : i64}
// SINGLE-NEXT: kite.addmm
//
// Products not on the tensor cores from registers (16 rows on 4 warps):
// nothing is marked.
// ONE-NOT: kite.prefetch
//
// A tensor the kernel writes (k, stored to at the end) is read where it
// stands; v still is copied ahead, 2 iterations (3 stages).
// WRITTEN: kite.tile_for
// WRITTEN: kite.load %arg1{{.*}}[
// WRITTEN-NOT: kite.prefetch
// WRITTEN: kite.matmul
// WRITTEN: kite.load {{.*}} {kite.prefetch = 3 : i64}
// WRITTEN-NEXT: kite.addmm
//
// A tile with another use (k^T, in two products) stays a load where it
// stands; v is still copied ahead.
// TWICE: kite.tile_for
// TWICE: kite.load %arg1{{.*}}[
// TWICE-NOT: kite.prefetch
// TWICE: kite.matmul
// TWICE-NOT: kite.prefetch
// TWICE: kite.matmul
// TWICE: kite.load {{.*}} {kite.prefetch = 2 : i64}
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

func.func @written(%q: !kite.tensor<*x?> {kite.name = "q"}, %k: !kite.tensor<*x?> {kite.name = "k"}, %v: !kite.tensor<*x?> {kite.name = "v"}) -> !kite.tensor<*x?> attributes {kite.kernel} {
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
    kite.store %r#0, %k[%tq, all] : !kite.tile<?x?x?>, !kite.tensor<*x?>[!kite.span]
  }
  return %out : !kite.tensor<*x?>
}

func.func @twice(%q: !kite.tensor<*x?> {kite.name = "q"}, %k: !kite.tensor<*x?> {kite.name = "k"}, %v: !kite.tensor<*x?> {kite.name = "v"}) -> !kite.tensor<*x?> attributes {kite.kernel} {
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
      %qk1 = kite.matmul %qt, %kt : !kite.tile<*x?>, !kite.tile<*x?> -> !kite.tile<*x?>
      %qk2 = kite.matmul %qt, %kt : !kite.tile<*x?>, !kite.tile<*x?> -> !kite.tile<*x?>
      %qk = kite.binary add %qk1, %qk2 : !kite.tile<*x?>, !kite.tile<*x?> -> !kite.tile<*x?>
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
