// kite-split-masked-loops: a key loop that selects on an index condition
// is split where the condition holds on whole tiles; there the where is
// its true operand.
//
// A band, i - window < j <= i, over every column: tiles before the band
// (and across its lower edge), inside it, and past it (across the
// diagonal): three loops, the middle one without the where.
// RUN: kite-opt %s --kite-specialize="kernel=band_sum args='x=f32[256,256] window=i64'" --kite-apply-config="config='{\"block_sizes\": [32, 32]}'" --kite-split-masked-loops --canonicalize --cse | FileCheck %s --check-prefix=BAND
// BAND: kite.tile_for (%[[R:.*]]) = (%c0_i64) to (%c256_i64) block (%c32_i64) {
// BAND: %[[B:.*]] = kite.span_query begin %[[R]]
// The diagonal: i >= j on tiles t with b >= 32 t + 31, t < (b - 31) floordiv 32 + 1.
// BAND: %[[D:.*]] = arith.addi %[[B]], %c-31_i64
// BAND: arith.floordivsi %[[D]], %c32_i64
// The band's edge: b + 31 - 32 t < window, t >= (b + 32 - window) ceildiv 32.
// BAND: arith.ceildivsi
// BAND: %[[HEAD:.*]] = kite.tile_for (%{{.*}}) = (%c0_i64) to (%[[T0:.*]]) block (%c32_i64)
// BAND: kite.where
// BAND: %[[WHOLE:.*]] = kite.tile_for (%{{.*}}) = (%[[T0]]) to (%[[T1:.*]]) block (%c32_i64) iter_args(%{{.*}} = %[[HEAD]])
// BAND-NOT: kite.where
// BAND-NOT: kite.compare
// BAND: kite.reduce sum
// BAND: %[[TAIL:.*]] = kite.tile_for (%{{.*}}) = (%[[T1]]) to (%c256_i64) block (%c32_i64) iter_args(%{{.*}} = %[[WHOLE]])
// BAND: kite.where
// BAND: kite.store %[[TAIL]]
//
// j >= i from the row tile's begin: the condition holds on a suffix of the
// key tiles (the loop's lower bound a run-time value). The splits stop at
// the last full tile ((300 - b) floordiv 32), so the first two loops hold
// full tiles only (kite.full_tiles) and a partial last tile, if any, runs
// in the third, with the where.
// RUN: kite-opt %s --kite-specialize="kernel=upper_sum args='x=f32[256,300]'" --kite-apply-config="config='{\"block_sizes\": [32, 32]}'" --kite-split-masked-loops --canonicalize --cse | FileCheck %s --check-prefix=UPPER
// UPPER: %[[B:.*]] = kite.span_query begin
// UPPER: %[[EXTENT:.*]] = arith.subi %c300_i64, %[[B]]
// UPPER: %[[Q:.*]] = arith.floordivsi %[[EXTENT]], %c32_i64
// UPPER: %[[FULL:.*]] = arith.maxsi %[[Q]], %c0_i64
// UPPER: arith.minsi %{{.*}}, %[[FULL]]
// UPPER: %[[HEAD:.*]] = kite.tile_for (%{{.*}}) = (%[[B]]) to (%[[S:.*]]) block (%c32_i64)
// UPPER: kite.where
// UPPER: } {kite.full_tiles}
// UPPER: %[[WHOLE:.*]] = kite.tile_for (%{{.*}}) = (%[[S]]) to (%[[E:.*]]) block (%c32_i64) iter_args(%{{.*}} = %[[HEAD]])
// UPPER-NOT: kite.where
// UPPER: } {kite.full_tiles}
// UPPER: %[[TAIL:.*]] = kite.tile_for (%{{.*}}) = (%[[E]]) to (%c300_i64) block (%c32_i64) iter_args(%{{.*}} = %[[WHOLE]])
// UPPER: kite.where
// UPPER: kite.yield
// UPPER-NEXT: }
// UPPER-NEXT: kite.store %[[TAIL]]
//
// With 256 columns, the loop's bounds (the row tile's begin, 256) are both
// multiples of 32 (IndexRanges::divisorOf), so it has no partial tile:
// the suffix runs to its end and no third loop is left.
// RUN: kite-opt %s --kite-specialize="kernel=upper_sum args='x=f32[256,256]'" --kite-apply-config="config='{\"block_sizes\": [32, 32]}'" --kite-split-masked-loops --canonicalize --cse | FileCheck %s --check-prefix=UPPER256
// UPPER256: %[[HEAD:.*]] = kite.tile_for
// UPPER256: kite.where
// UPPER256: } {kite.full_tiles}
// UPPER256: %[[WHOLE:.*]] = kite.tile_for (%{{.*}}) = (%{{.*}}) to (%{{.*}}) block (%c32_i64) iter_args(%{{.*}} = %[[HEAD]])
// UPPER256-NOT: kite.where
// UPPER256: } {kite.full_tiles}
// UPPER256-NEXT: kite.store %[[WHOLE]]
//
// i < limit does not change along the loop: all its iterations or none
// (a select); i == j never holds on a whole tile and stays a where in both.
// RUN: kite-opt %s --kite-specialize="kernel=limited_sum args='x=f32[256,256] limit=i64'" --kite-apply-config="config='{\"block_sizes\": [32, 32]}'" --kite-split-masked-loops --canonicalize --cse | FileCheck %s --check-prefix=LIMIT
// LIMIT: arith.cmpi sge
// LIMIT: arith.select
// LIMIT: %[[WHOLE:.*]] = kite.tile_for
// LIMIT: kite.compare eq
// LIMIT: kite.where
// LIMIT-NOT: kite.where
// LIMIT: kite.yield
// LIMIT: kite.tile_for (%{{.*}}) = (%{{.*}}) to (%c256_i64) block (%c32_i64) iter_args(%{{.*}} = %[[WHOLE]])
// LIMIT: kite.where
// LIMIT: kite.where
//
// Causal attention (examples/causal_attention.kite.cpp): the key tiles
// below the diagonal run without the comparison and the select, the ones
// that straddle it with them; both loops prefetch k and v.
// RUN: kite inspect %kite_src/examples/causal_attention.kite.cpp --kernel causal_attention --arg 'q=bf16[2,300,128]' --arg 'k=bf16[2,300,128]' --arg 'v=bf16[2,300,128]' --config '{"block_sizes":[1,64,64],"num_warps":4,"num_stages":1,"tensor_cores":true,"wgmma":true}' --emit=lowered | FileCheck %s --check-prefix=CAUSAL
// CAUSAL: %[[BELOW:.*]]:3 = kite.tile_for
// CAUSAL: kite.prefetch = 1
// CAUSAL-NOT: kite.where
// CAUSAL: kite.yield
// CAUSAL: kite.tile_for {{.*}} iter_args(%{{.*}} = %[[BELOW]]#0, %{{.*}} = %[[BELOW]]#1, %{{.*}} = %[[BELOW]]#2)
// CAUSAL: kite.prefetch = 1
// CAUSAL: kite.compare ge
// CAUSAL: kite.where
//
// In CUDA: the first loop's tiles are full, so p's A fragments take no
// key mask; the second's last tile may be partial (S = 300), so they do.
// RUN: kite inspect %kite_src/examples/causal_attention.kite.cpp --kernel causal_attention --arg 'q=bf16[2,300,128]' --arg 'k=bf16[2,300,128]' --arg 'v=bf16[2,300,128]' --config '{"block_sizes":[1,64,64],"num_warps":4,"num_stages":1,"tensor_cores":true,"wgmma":true}' --emit=cuda | FileCheck %s --check-prefix=CAUSALCUDA
// CAUSALCUDA: for (i64 {{t[0-9]+}} = 0;
// CAUSALCUDA-NOT: < {{n[0-9]+}} ? {{v[0-9]+}}
// CAUSALCUDA: for (i64
// CAUSALCUDA: mma_pack({{.*}} < {{n[0-9]+}} ? {{v[0-9]+}}
//
// At S = 256 the diagonal loop runs over [b, e) with e the query tile's end
// (a multiple of 128, as b is): its tiles are whole, so it is marked
// kite.full_tiles too, and in CUDA it takes no key masks, zeroes no rows of
// a partial tile, and its two warpgroups take turns (pingpong) as in the
// first loop: the same sequence of turns, with no barrier between the
// loops (their buffers are the same rings and q's staging), taken back at
// the program's end.
// RUN: kite inspect %kite_src/examples/causal_attention.kite.cpp --kernel causal_attention --arg 'q=bf16[2,256,128]' --arg 'k=bf16[2,256,128]' --arg 'v=bf16[2,256,128]' --config '{"block_sizes":[1,128,128],"num_warps":12,"num_stages":2,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"overlap_products":true,"pingpong":true}' --emit=lowered | FileCheck %s --check-prefix=CAUSAL256
// CAUSAL256: %[[BELOW:.*]]:3 = kite.tile_for
// CAUSAL256-NOT: kite.where
// CAUSAL256: } {kite.full_tiles
// CAUSAL256: kite.tile_for {{.*}} iter_args(%{{.*}} = %[[BELOW]]#0
// CAUSAL256: kite.where
// CAUSAL256: } {kite.full_tiles
// RUN: kite inspect %kite_src/examples/causal_attention.kite.cpp --kernel causal_attention --arg 'q=bf16[2,256,128]' --arg 'k=bf16[2,256,128]' --arg 'v=bf16[2,256,128]' --config '{"block_sizes":[1,128,128],"num_warps":12,"num_stages":2,"tensor_cores":true,"wgmma":true,"warp_specialize":true,"overlap_products":true,"pingpong":true}' --emit=cuda | FileCheck %s --check-prefix=CAUSAL256CUDA
// CAUSAL256CUDA: kite_turn_start<2>();
// CAUSAL256CUDA-NOT: < {{n[0-9]+}} ? {{late[0-9]+}}
// CAUSAL256CUDA-NOT: if (({{n[0-9]+}}) < 128)
// CAUSAL256CUDA-NOT: kite_turn_start
// CAUSAL256CUDA-NOT: kite_turn_end
// CAUSAL256CUDA-NOT: scratch below the staging buffers
// CAUSAL256CUDA: the shared left operand: as staged before the loop above
// CAUSAL256CUDA-NOT: < {{n[0-9]+}} ? {{late[0-9]+}}
// CAUSAL256CUDA-NOT: if (({{n[0-9]+}}) < 128)
// CAUSAL256CUDA-NOT: kite_turn_start
// CAUSAL256CUDA-NOT: kite_turn_end
// CAUSAL256CUDA: kite_turn_wait<2>();
// The mask compares query and key indices below 2^31 as 32-bit values.
// CAUSAL256CUDA: = cvt<bool>(cvt<int>({{v[0-9]+}}[{{k[0-9]+}}]) >= cvt<int>({{v[0-9]+}}[{{k[0-9]+}}]));
// CAUSAL256CUDA: store_16(
// CAUSAL256CUDA: kite_turn_end<2>();
// CAUSAL256CUDA-NOT: kite_turn
//
// Attention with no mask (examples/attention.kite.cpp), S = 300: no where
// to split on, but the key loop reduces (the row max and sum), so its
// partial last tile is peeled: four full tiles [0, 256) without key masks,
// then [256, 300) as before; both prefetch k and v.
// RUN: kite inspect %kite_src/examples/attention.kite.cpp --kernel attention --arg 'q=bf16[2,300,128]' --arg 'k=bf16[2,300,128]' --arg 'v=bf16[2,300,128]' --config '{"block_sizes":[1,64,64],"num_warps":4,"num_stages":1,"tensor_cores":true,"wgmma":true}' --emit=lowered | FileCheck %s --check-prefix=PEEL
// The rest loop loads the query tile again, rather than the query tile
// staying in registers across the full-tile loop.
// PEEL: %[[Q:.*]] = kite.load %arg0[%arg3, %arg4, all] :
// PEEL: %[[FULL:.*]]:3 = kite.tile_for (%{{.*}}) = (%c0_i64) to (%c256_i64) block (%c64_i64)
// PEEL: kite.prefetch = 1
// PEEL: } {kite.full_tiles}
// PEEL: %[[Q2:.*]] = kite.load %arg0[%arg3, %arg4, all] {kite.reload}
// PEEL: %[[Q2L:.*]] = kite.convert_layout %[[Q2]]
// PEEL: kite.tile_for (%{{.*}}) = (%c256_i64) to (%c300_i64) block (%c64_i64) iter_args(%{{.*}} = %[[FULL]]#0, %{{.*}} = %[[FULL]]#1, %{{.*}} = %[[FULL]]#2)
// PEEL: kite.bmm %[[Q2L]]
// PEEL: kite.prefetch = 1
// PEEL-NOT: kite.full_tiles
// RUN: kite inspect %kite_src/examples/attention.kite.cpp --kernel attention --arg 'q=bf16[2,300,128]' --arg 'k=bf16[2,300,128]' --arg 'v=bf16[2,300,128]' --config '{"block_sizes":[1,64,64],"num_warps":4,"num_stages":1,"tensor_cores":true,"wgmma":true}' --emit=cuda | FileCheck %s --check-prefix=PEELCUDA
// PEELCUDA: for (i64 {{t[0-9]+}} = 0;
// PEELCUDA-NOT: < {{n[0-9]+}} ? {{v[0-9]+}}
// PEELCUDA: for (i64
// PEELCUDA: mma_pack({{.*}} < {{n[0-9]+}} ? {{v[0-9]+}}
//
// A product's K loop (K = 300) has no reduce: it stays one loop, which
// kite-matmul-mainloop pipelines.
// RUN: kite inspect %kite_src/examples/matmul.kite.cpp --kernel matmul --arg 'x=bf16[256,300]' --arg 'y=bf16[300,256]' --emit=lowered | FileCheck %s --check-prefix=KLOOP
// KLOOP: kite.mainloop
// KLOOP-NOT: kite.full_tiles
//
// A condition the analysis does not follow (a data-dependent one) leaves
// the loop as it is.
// RUN: kite-opt %s --kite-specialize="kernel=data_sum args='x=f32[256,256]'" --kite-apply-config="config='{\"block_sizes\": [32, 32]}'" --kite-split-masked-loops --canonicalize --cse | FileCheck %s --check-prefix=DATA
// DATA-COUNT-2: kite.tile_for
// DATA-NOT: kite.tile_for

module {
  func.func @band_sum(%arg0: !kite.tensor<*x?> {kite.name = "x"}, %arg1: i64 {kite.name = "window"}) -> !kite.tensor<?xf32> attributes {kite.kernel} {
    %0 = kite.size %arg0[0] : !kite.tensor<*x?>
    %1 = kite.size %arg0[1] : !kite.tensor<*x?>
    %2 = kite.dtype_const f32
    %3 = kite.empty [%0], %2 : !kite.tensor<?xf32>
    %c0_i64 = arith.constant 0 : i64
    %4 = kite.block_size 0 extent %0 : i64
    kite.tile_for (%arg2) = (%c0_i64) to (%0) block (%4) {
      %5 = kite.dtype_const f32
      %cst = arith.constant 0.000000e+00 : f32
      %6 = kite.full [%arg2], %cst, %5 : [!kite.span], f32 -> !kite.tile<?xf32>
      %c0_i64_0 = arith.constant 0 : i64
      %7 = kite.block_size 1 extent %1 : i64
      %8 = builtin.unrealized_conversion_cast %6 : !kite.tile<?xf32> to !kite.tile<*xf32>
      %9 = kite.tile_for (%arg3) = (%c0_i64_0) to (%1) block (%7) iter_args(%arg4 = %8) -> (!kite.tile<*xf32>) {
        %10 = kite.span_index %arg2 : !kite.tile<?xi64>
        %11 = kite.unsqueeze %10 {dim = -1 : i64} : !kite.tile<?xi64> -> !kite.tile<?x1xi64>
        %12 = kite.span_index %arg3 : !kite.tile<?xi64>
        %13 = kite.unsqueeze %12 {dim = 0 : i64} : !kite.tile<?xi64> -> !kite.tile<1x?xi64>
        %14 = kite.compare ge %11, %13 : !kite.tile<?x1xi64>, !kite.tile<1x?xi64> -> !kite.tile<?x?xi1>
        %15 = kite.binary sub %11, %13 : !kite.tile<?x1xi64>, !kite.tile<1x?xi64> -> !kite.tile<?x?xi64>
        %16 = kite.compare lt %15, %arg1 : !kite.tile<?x?xi64>, i64 -> !kite.tile<?x?xi1>
        %17 = kite.binary and %14, %16 : !kite.tile<?x?xi1>, !kite.tile<?x?xi1> -> !kite.tile<?x?xi1>
        %18 = kite.load %arg0[%arg2, %arg3] : !kite.tensor<*x?>[!kite.span, !kite.span] -> !kite.tile<*x?>
        %19 = kite.dtype_const f32
        %20 = kite.cast %18, %19 : !kite.tile<*x?> -> !kite.tile<*xf32>
        %cst_1 = arith.constant 0.000000e+00 : f32
        %21 = kite.where %17, %20, %cst_1 : !kite.tile<?x?xi1>, !kite.tile<*xf32>, f32 -> !kite.tile<*xf32>
        %22 = kite.reduce sum %21 {dim = -1 : i64} : !kite.tile<*xf32> -> !kite.tile<*xf32>
        %23 = kite.binary add %arg4, %22 : !kite.tile<*xf32>, !kite.tile<*xf32> -> !kite.tile<*xf32>
        kite.yield %23 : !kite.tile<*xf32>
      }
      kite.store %9, %3[%arg2] : !kite.tile<*xf32>, !kite.tensor<?xf32>[!kite.span]
    }
    return %3 : !kite.tensor<?xf32>
  }
  func.func @upper_sum(%arg0: !kite.tensor<*x?> {kite.name = "x"}) -> !kite.tensor<?xf32> attributes {kite.kernel} {
    %0 = kite.size %arg0[0] : !kite.tensor<*x?>
    %1 = kite.size %arg0[1] : !kite.tensor<*x?>
    %2 = kite.dtype_const f32
    %3 = kite.empty [%0], %2 : !kite.tensor<?xf32>
    %c0_i64 = arith.constant 0 : i64
    %4 = kite.block_size 0 extent %0 : i64
    kite.tile_for (%arg1) = (%c0_i64) to (%0) block (%4) {
      %5 = kite.dtype_const f32
      %cst = arith.constant 0.000000e+00 : f32
      %6 = kite.full [%arg1], %cst, %5 : [!kite.span], f32 -> !kite.tile<?xf32>
      %7 = kite.span_query begin %arg1
      %8 = arith.subi %1, %7 : i64
      %9 = kite.block_size 1 extent %8 : i64
      %10 = builtin.unrealized_conversion_cast %6 : !kite.tile<?xf32> to !kite.tile<*xf32>
      %11 = kite.tile_for (%arg2) = (%7) to (%1) block (%9) iter_args(%arg3 = %10) -> (!kite.tile<*xf32>) {
        %12 = kite.span_index %arg2 : !kite.tile<?xi64>
        %13 = kite.unsqueeze %12 {dim = 0 : i64} : !kite.tile<?xi64> -> !kite.tile<1x?xi64>
        %14 = kite.span_index %arg1 : !kite.tile<?xi64>
        %15 = kite.unsqueeze %14 {dim = -1 : i64} : !kite.tile<?xi64> -> !kite.tile<?x1xi64>
        %16 = kite.compare ge %13, %15 : !kite.tile<1x?xi64>, !kite.tile<?x1xi64> -> !kite.tile<?x?xi1>
        %17 = kite.load %arg0[%arg1, %arg2] : !kite.tensor<*x?>[!kite.span, !kite.span] -> !kite.tile<*x?>
        %18 = kite.dtype_const f32
        %19 = kite.cast %17, %18 : !kite.tile<*x?> -> !kite.tile<*xf32>
        %cst_0 = arith.constant 0.000000e+00 : f32
        %20 = kite.where %16, %19, %cst_0 : !kite.tile<?x?xi1>, !kite.tile<*xf32>, f32 -> !kite.tile<*xf32>
        %21 = kite.reduce sum %20 {dim = -1 : i64} : !kite.tile<*xf32> -> !kite.tile<*xf32>
        %22 = kite.binary add %arg3, %21 : !kite.tile<*xf32>, !kite.tile<*xf32> -> !kite.tile<*xf32>
        kite.yield %22 : !kite.tile<*xf32>
      }
      kite.store %11, %3[%arg1] : !kite.tile<*xf32>, !kite.tensor<?xf32>[!kite.span]
    }
    return %3 : !kite.tensor<?xf32>
  }
  func.func @limited_sum(%arg0: !kite.tensor<*x?> {kite.name = "x"}, %arg1: i64 {kite.name = "limit"}) -> !kite.tensor<?xf32> attributes {kite.kernel} {
    %0 = kite.size %arg0[0] : !kite.tensor<*x?>
    %1 = kite.size %arg0[1] : !kite.tensor<*x?>
    %2 = kite.dtype_const f32
    %3 = kite.empty [%0], %2 : !kite.tensor<?xf32>
    %c0_i64 = arith.constant 0 : i64
    %4 = kite.block_size 0 extent %0 : i64
    kite.tile_for (%arg2) = (%c0_i64) to (%0) block (%4) {
      %5 = kite.dtype_const f32
      %cst = arith.constant 0.000000e+00 : f32
      %6 = kite.full [%arg2], %cst, %5 : [!kite.span], f32 -> !kite.tile<?xf32>
      %c0_i64_0 = arith.constant 0 : i64
      %7 = kite.block_size 1 extent %1 : i64
      %8 = builtin.unrealized_conversion_cast %6 : !kite.tile<?xf32> to !kite.tile<*xf32>
      %9 = kite.tile_for (%arg3) = (%c0_i64_0) to (%1) block (%7) iter_args(%arg4 = %8) -> (!kite.tile<*xf32>) {
        %10 = kite.span_index %arg2 : !kite.tile<?xi64>
        %11 = kite.unsqueeze %10 {dim = -1 : i64} : !kite.tile<?xi64> -> !kite.tile<?x1xi64>
        %12 = kite.span_index %arg3 : !kite.tile<?xi64>
        %13 = kite.unsqueeze %12 {dim = 0 : i64} : !kite.tile<?xi64> -> !kite.tile<1x?xi64>
        %14 = kite.compare eq %11, %13 : !kite.tile<?x1xi64>, !kite.tile<1x?xi64> -> !kite.tile<?x?xi1>
        %15 = kite.load %arg0[%arg2, %arg3] : !kite.tensor<*x?>[!kite.span, !kite.span] -> !kite.tile<*x?>
        %16 = kite.dtype_const f32
        %17 = kite.cast %15, %16 : !kite.tile<*x?> -> !kite.tile<*xf32>
        %cst_1 = arith.constant 2.000000e+00 : f32
        %18 = kite.binary mul %17, %cst_1 : !kite.tile<*xf32>, f32 -> !kite.tile<*xf32>
        %19 = kite.load %arg0[%arg2, %arg3] : !kite.tensor<*x?>[!kite.span, !kite.span] -> !kite.tile<*x?>
        %20 = kite.dtype_const f32
        %21 = kite.cast %19, %20 : !kite.tile<*x?> -> !kite.tile<*xf32>
        %22 = kite.where %14, %18, %21 : !kite.tile<?x?xi1>, !kite.tile<*xf32>, !kite.tile<*xf32> -> !kite.tile<*xf32>
        %23 = kite.compare lt %11, %arg1 : !kite.tile<?x1xi64>, i64 -> !kite.tile<?x1xi1>
        %cst_2 = arith.constant 0.000000e+00 : f32
        %24 = kite.where %23, %22, %cst_2 : !kite.tile<?x1xi1>, !kite.tile<*xf32>, f32 -> !kite.tile<*xf32>
        %25 = kite.reduce sum %24 {dim = -1 : i64} : !kite.tile<*xf32> -> !kite.tile<*xf32>
        %26 = kite.binary add %arg4, %25 : !kite.tile<*xf32>, !kite.tile<*xf32> -> !kite.tile<*xf32>
        kite.yield %26 : !kite.tile<*xf32>
      }
      kite.store %9, %3[%arg2] : !kite.tile<*xf32>, !kite.tensor<?xf32>[!kite.span]
    }
    return %3 : !kite.tensor<?xf32>
  }
  func.func @data_sum(%arg0: !kite.tensor<*x?> {kite.name = "x"}) -> !kite.tensor<?xf32> attributes {kite.kernel} {
    %0 = kite.size %arg0[0] : !kite.tensor<*x?>
    %1 = kite.size %arg0[1] : !kite.tensor<*x?>
    %2 = kite.dtype_const f32
    %3 = kite.empty [%0], %2 : !kite.tensor<?xf32>
    %c0_i64 = arith.constant 0 : i64
    %4 = kite.block_size 0 extent %0 : i64
    kite.tile_for (%arg1) = (%c0_i64) to (%0) block (%4) {
      %5 = kite.dtype_const f32
      %cst = arith.constant 0.000000e+00 : f32
      %6 = kite.full [%arg1], %cst, %5 : [!kite.span], f32 -> !kite.tile<?xf32>
      %c0_i64_0 = arith.constant 0 : i64
      %7 = kite.block_size 1 extent %1 : i64
      %8 = builtin.unrealized_conversion_cast %6 : !kite.tile<?xf32> to !kite.tile<*xf32>
      %9 = kite.tile_for (%arg2) = (%c0_i64_0) to (%1) block (%7) iter_args(%arg3 = %8) -> (!kite.tile<*xf32>) {
        %10 = kite.load %arg0[%arg1, %arg2] : !kite.tensor<*x?>[!kite.span, !kite.span] -> !kite.tile<*x?>
        %11 = kite.dtype_const f32
        %12 = kite.cast %10, %11 : !kite.tile<*x?> -> !kite.tile<*xf32>
        %cst_1 = arith.constant 0.000000e+00 : f32
        %13 = kite.compare gt %12, %cst_1 : !kite.tile<*xf32>, f32 -> !kite.tile<*xi1>
        %cst_2 = arith.constant 0.000000e+00 : f32
        %14 = kite.where %13, %12, %cst_2 : !kite.tile<*xi1>, !kite.tile<*xf32>, f32 -> !kite.tile<*xf32>
        %15 = kite.reduce sum %14 {dim = -1 : i64} : !kite.tile<*xf32> -> !kite.tile<*xf32>
        %16 = kite.binary add %arg3, %15 : !kite.tile<*xf32>, !kite.tile<*xf32> -> !kite.tile<*xf32>
        kite.yield %16 : !kite.tile<*xf32>
      }
      kite.store %9, %3[%arg1] : !kite.tile<*xf32>, !kite.tensor<?xf32>[!kite.span]
    }
    return %3 : !kite.tensor<?xf32>
  }
}

