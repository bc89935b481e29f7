// RUN: kite-opt %s --kite-specialize="kernel=matmul args='x=bf16[512,256] y=bf16[256,384]'" --kite-apply-config="config='{\"block_sizes\": [128, 128, 32], \"num_warps\": 8, \"num_stages\": 3, \"tensor_cores\": true}'" --kite-matmul-mainloop | FileCheck %s
// RUN: kite-opt %s --kite-specialize="kernel=matmul args='x=bf16[500,300] y=bf16[300,100]'" --kite-apply-config="config='{\"block_sizes\": [64, 32, 16], \"num_warps\": 4, \"tensor_cores\": true}'" --kite-matmul-mainloop | FileCheck %s --check-prefix=ODD
// RUN: kite-opt %s --kite-specialize="kernel=matmul args='x=bf16[500,12] y=bf16[12,100]'" --kite-apply-config="config='{\"block_sizes\": [64, 32, 16], \"num_warps\": 4, \"tensor_cores\": true}'" --kite-matmul-mainloop | FileCheck %s --check-prefix=NARROW
// RUN: kite-opt %s --kite-specialize="kernel=matmul args='x=bf16[512,256] y=bf16[256,384]'" --kite-apply-config="config='{\"block_sizes\": [128, 128, 32], \"num_warps\": 8}'" --kite-matmul-mainloop | FileCheck %s --check-prefix=OFF
// RUN: kite-opt %s --kite-specialize="kernel=matmul args='x=f32[512,256] y=f32[256,384]'" --kite-apply-config="config='{\"block_sizes\": [128, 128, 32], \"num_warps\": 8, \"tensor_cores\": true}'" --kite-matmul-mainloop=explain 2>&1 | FileCheck %s --check-prefix=F32
// RUN: kite-opt %s --kite-specialize="kernel=matmul args='x=bf16[512,256] y=bf16[256,384]'" --kite-apply-config="config='{\"block_sizes\": [16, 16, 32], \"num_warps\": 8, \"tensor_cores\": true}'" --kite-matmul-mainloop=explain 2>&1 | FileCheck %s --check-prefix=WARPS
// RUN: kite-opt %s --kite-specialize="kernel=matmul args='x=bf16[512,256] y=bf16[256,384]'" --kite-apply-config="config='{\"block_sizes\": [128, 256, 64], \"num_warps\": 8, \"num_stages\": 4, \"tensor_cores\": true, \"wgmma\": true}'" --kite-matmul-mainloop | FileCheck %s --check-prefix=WGMMA
// RUN: kite-opt %s --kite-specialize="kernel=matmul args='x=bf16[512,256] y=bf16[256,384]'" --kite-apply-config="config='{\"block_sizes\": [128, 128, 32], \"num_warps\": 8, \"tensor_cores\": true, \"wgmma\": true}'" --kite-matmul-mainloop | FileCheck %s --check-prefix=NOWG
// RUN: kite-opt %s --kite-specialize="kernel=matmul args='x=bf16[512,256] y=bf16[256,384]'" --kite-apply-config="config='{\"block_sizes\": [128, 128, 64], \"num_warps\": 8, \"num_stages\": 4, \"tensor_cores\": true, \"wgmma\": true, \"warp_specialize\": true}'" --kite-matmul-mainloop | FileCheck %s --check-prefix=WS
// RUN: kite-opt %s --kite-specialize="kernel=matmul args='x=bf16[512,256] y=bf16[256,384]'" --kite-apply-config="config='{\"block_sizes\": [256, 128, 64], \"num_warps\": 12, \"num_stages\": 4, \"tensor_cores\": true, \"wgmma\": true, \"warp_specialize\": true, \"indexing\": \"tma\"}'" --kite-matmul-mainloop | FileCheck %s --check-prefix=TMA
// RUN: kite-opt %s --kite-specialize="kernel=matmul args='x=bf16[512,256] y=bf16[256,384]'" --kite-apply-config="config='{\"block_sizes\": [128, 128, 64], \"num_warps\": 8, \"num_stages\": 3, \"tensor_cores\": true, \"wgmma\": true, \"warp_specialize\": true, \"min_programs_per_sm\": 2}'" --kite-matmul-mainloop | FileCheck %s --check-prefix=CAP
// RUN: kite-opt %s --kite-specialize="kernel=matmul args='x=bf16[512,256] y=bf16[256,384]'" --kite-apply-config="config='{\"block_sizes\": [128, 256, 64], \"num_warps\": 12, \"num_stages\": 3, \"tensor_cores\": true, \"wgmma\": true, \"warp_specialize\": true, \"min_programs_per_sm\": 2}'" --kite-matmul-mainloop=explain 2>&1 | FileCheck %s --check-prefix=CAP12
// RUN: kite-opt %s --kite-specialize="kernel=matmul args='x=bf16[512,256] y=bf16[256,384]'" --kite-apply-config="config='{\"block_sizes\": [128, 256, 32], \"num_warps\": 12, \"num_stages\": 4, \"tensor_cores\": true, \"wgmma\": true, \"warp_specialize\": true}'" --kite-matmul-mainloop=explain 2>&1 | FileCheck %s --check-prefix=W12
// RUN: kite-opt %s --kite-specialize="kernel=scaled args='x=bf16[512,256] y=bf16[256,384]'" --kite-apply-config="config='{\"block_sizes\": [64, 64, 32], \"tensor_cores\": true}'" --kite-matmul-mainloop=explain 2>&1 | FileCheck %s --check-prefix=BODY

// A plain K loop on bf16 operands: 8 warps as 2 x 4 (64 x 32 warp tiles),
// the config's 3 stages, 16-byte copies of both operands.
// CHECK-LABEL: func.func @matmul
// CHECK: kite.tile_for
// CHECK: kite.addmm
// CHECK: } {kite.mainloop = {copy_a = "async", copy_b = "async", kind = "mma", stages = 3 : i64, warps_m = 2 : i64, warps_n = 4 : i64}}

// Rows of 300 and 100 elements are not 16-byte multiples: aligned loads
// shifted into place; num_stages 1 still gets the 2 stages a pipeline needs.
// ODD: kite.mainloop = {copy_a = "shifted", copy_b = "shifted", kind = "mma", stages = 2 : i64, warps_m = 2 : i64, warps_n = 2 : i64}

// Rows of 12 elements are too short for shifted loads (the aligned reads
// around a row's last chunk would pass the next row's start): element by
// element.
// NARROW: kite.mainloop = {copy_a = "elements", copy_b = "shifted", kind = "mma"

// wgmma: 8 warps are 2 warpgroups of 64 rows each, with all 256 columns.
// WGMMA: kite.mainloop = {copy_a = "async", copy_b = "async", kind = "wgmma", stages = 4 : i64, warpgroups = 2 : i64}

// warp_specialize: one producer and one consumer warpgroup of the 8 warps.
// WS: kite.mainloop = {copy_a = "async", copy_b = "async", kind = "wgmma_ws", stages = 4 : i64, warpgroups = 2 : i64}

// 12 warps with indexing "tma": a producer (one thread issuing TMA copies)
// and two consumer warpgroups of 128 rows each.
// TMA: kite.mainloop = {copy_a = "async", copy_b = "async", kind = "wgmma_tma", stages = 4 : i64, warpgroups = 3 : i64}

// Two programs an SM cap 8 warps at 128 registers a thread: one consumer's
// 128 sums would spill, so the warps split the tile as two wgmma
// warpgroups of 64 sums each instead.
// CAP: kite.mainloop = {copy_a = "async", copy_b = "async", kind = "wgmma", stages = 3 : i64, warpgroups = 2 : i64}
// At 12 warps the cap is 80 registers: no room for 128 sums.
// CAP12: remark: not a pipelined main loop: 12 warps are for a warp-specialized loop ({{.*}}at most 40 sums a thread

// 12 warps are only for the warp-specialized loop, which needs BK = 64.
// W12: remark: not a pipelined main loop: 12 warps are for a warp-specialized loop
// W12-NOT: kite.mainloop =

// wgmma needs K tiles of 64; with 32 the loop falls back to mma.sync.
// NOWG: kite.mainloop = {copy_a = "async", copy_b = "async", kind = "mma", stages = 2 : i64, warps_m = 2 : i64, warps_n = 4 : i64}

// Without tensor_cores nothing is marked.
// OFF-NOT: kite.mainloop

// f32 operands stay exact (no tensor cores).
// F32: remark: not a pipelined main loop: operands are not both bf16, both f16 or both 8-bit floats
// F32-NOT: kite.mainloop =

// 8 warps cannot split a 16 x 16 tile into parts of 16 x 16.
// WARPS: remark: not a pipelined main loop: the warps cannot split the tile
// WARPS-NOT: kite.mainloop =

// A loop that does more than accumulate the product keeps the per-step path.
// BODY: remark: not a pipelined main loop: the loop does not accumulate acc = addmm(acc, a, b)
// BODY-NOT: kite.mainloop =

func.func @matmul(%x: !kite.tensor<*x?> {kite.name = "x"}, %y: !kite.tensor<*x?> {kite.name = "y"}) -> !kite.tensor<?x?x?> attributes {kite.kernel} {
  %m = kite.size %x[0] : !kite.tensor<*x?>
  %k = kite.size %x[1] : !kite.tensor<*x?>
  %n = kite.size %y[1] : !kite.tensor<*x?>
  %dt = kite.dtype_of %x : !kite.tensor<*x?>
  %out = kite.empty [%m, %n], %dt : !kite.tensor<?x?x?>
  %c0 = arith.constant 0 : i64
  %bm = kite.block_size 0 extent %m : i64
  %bn = kite.block_size 1 extent %n : i64
  kite.tile_for (%tm, %tn) = (%c0, %c0) to (%m, %n) block (%bm, %bn) {
    %f32 = kite.dtype_const f32
    %zero = arith.constant 0.000000e+00 : f32
    %init = kite.full [%tm, %tn], %zero, %f32 : [!kite.span, !kite.span], f32 -> !kite.tile<?x?xf32>
    %bk = kite.block_size 2 extent %k : i64
    %r = kite.tile_for (%tk) = (%c0) to (%k) block (%bk) iter_args(%acc = %init) -> (!kite.tile<?x?xf32>) {
      %a = kite.load %x[%tm, %tk] : !kite.tensor<*x?>[!kite.span, !kite.span] -> !kite.tile<*x?>
      %b = kite.load %y[%tk, %tn] : !kite.tensor<*x?>[!kite.span, !kite.span] -> !kite.tile<*x?>
      %s = kite.addmm %acc, %a, %b : !kite.tile<?x?xf32>, !kite.tile<*x?>, !kite.tile<*x?> -> !kite.tile<?x?xf32>
      kite.yield %s : !kite.tile<?x?xf32>
    }
    kite.store %r, %out[%tm, %tn] : !kite.tile<?x?xf32>, !kite.tensor<?x?x?>[!kite.span, !kite.span]
  }
  return %out : !kite.tensor<?x?x?>
}

func.func @scaled(%x: !kite.tensor<*x?> {kite.name = "x"}, %y: !kite.tensor<*x?> {kite.name = "y"}) -> !kite.tensor<?x?x?> attributes {kite.kernel} {
  %m = kite.size %x[0] : !kite.tensor<*x?>
  %k = kite.size %x[1] : !kite.tensor<*x?>
  %n = kite.size %y[1] : !kite.tensor<*x?>
  %dt = kite.dtype_of %x : !kite.tensor<*x?>
  %out = kite.empty [%m, %n], %dt : !kite.tensor<?x?x?>
  %c0 = arith.constant 0 : i64
  %bm = kite.block_size 0 extent %m : i64
  %bn = kite.block_size 1 extent %n : i64
  kite.tile_for (%tm, %tn) = (%c0, %c0) to (%m, %n) block (%bm, %bn) {
    %f32 = kite.dtype_const f32
    %zero = arith.constant 0.000000e+00 : f32
    %half = arith.constant 5.000000e-01 : f32
    %init = kite.full [%tm, %tn], %zero, %f32 : [!kite.span, !kite.span], f32 -> !kite.tile<?x?xf32>
    %bk = kite.block_size 2 extent %k : i64
    %r = kite.tile_for (%tk) = (%c0) to (%k) block (%bk) iter_args(%acc = %init) -> (!kite.tile<?x?xf32>) {
      %a = kite.load %x[%tm, %tk] : !kite.tensor<*x?>[!kite.span, !kite.span] -> !kite.tile<*x?>
      %b = kite.load %y[%tk, %tn] : !kite.tensor<*x?>[!kite.span, !kite.span] -> !kite.tile<*x?>
      %s = kite.addmm %acc, %a, %b : !kite.tile<?x?xf32>, !kite.tile<*x?>, !kite.tile<*x?> -> !kite.tile<?x?xf32>
      %h = kite.binary mul %s, %half : !kite.tile<?x?xf32>, f32 -> !kite.tile<?x?xf32>
      kite.yield %h : !kite.tile<?x?xf32>
    }
    kite.store %r, %out[%tm, %tn] : !kite.tile<?x?xf32>, !kite.tensor<?x?x?>[!kite.span, !kite.span]
  }
  return %out : !kite.tensor<?x?x?>
}
