// RUN: kite-opt %s --kite-specialize="kernel=norm args='x=f32[64,256]'" --kite-apply-config="config='{\"block_sizes\": [4]}'" --kite-assign-layouts | FileCheck %s --check-prefix=NORM
// RUN: kite-opt %s --kite-specialize="kernel=offsets args='x=f32[64,256]'" --kite-apply-config="config='{\"block_sizes\": [4]}'" --kite-assign-layouts | FileCheck %s --check-prefix=CONVERT
// RUN: kite-opt %s --kite-specialize="kernel=carried args='x=f32[64,1024]'" --kite-apply-config="config='{\"block_sizes\": [4], \"reduction_loops\": [256]}'" --kite-reduction-loops --kite-assign-layouts | FileCheck %s --check-prefix=CARRIED
// RUN: kite-opt %s --kite-specialize="kernel=chained args='q=bf16[256,64] k=bf16[256,64] v=bf16[256,64]'" --kite-apply-config="config='{\"block_sizes\": [64, 32], \"num_warps\": 4, \"tensor_cores\": true}'" --kite-assign-layouts | FileCheck %s --check-prefix=CHAIN
// RUN: kite-opt %s --kite-specialize="kernel=chained args='q=bf16[256,64] k=bf16[256,64] v=bf16[256,64]'" --kite-apply-config="config='{\"block_sizes\": [16, 32], \"num_warps\": 4, \"tensor_cores\": true}'" --kite-assign-layouts | FileCheck %s --check-prefix=FEWROWS
// RUN: kite-opt %s --kite-specialize="kernel=chained args='q=bf16[256,64] k=bf16[256,64] v=bf16[256,64]'" --kite-apply-config="config='{\"block_sizes\": [64, 32], \"num_warps\": 4, \"tensor_cores\": true, \"wgmma\": true}'" --kite-assign-layouts | FileCheck %s --check-prefix=CHAINWG
// RUN: kite-opt %s --kite-specialize="kernel=chained args='q=bf16[256,64] k=bf16[256,64] v=bf16[256,64]'" --kite-apply-config="config='{\"block_sizes\": [64, 32], \"num_warps\": 4, \"tensor_cores\": true, \"wgmma\": true}'" --kite-assign-layouts="arch=sm_80" | FileCheck %s --check-prefix=CHAINSYNC
// RUN: kite-opt %s --kite-specialize="kernel=chained args='q=bf16[256,64] k=bf16[256,64] v=bf16[256,64]'" --kite-apply-config="config='{\"block_sizes\": [64, 32], \"num_warps\": 2, \"tensor_cores\": true, \"wgmma\": true}'" --kite-assign-layouts | FileCheck %s --check-prefix=CHAINSYNC
// RUN: not kite-opt %s --kite-specialize="kernel=norm args='x=f32[64,256]'" --kite-assign-layouts 2>&1 | FileCheck %s --check-prefix=UNCONFIGURED

// A row's statistic keeps the row's context with the reduced dim gone, so
// `row - mean` and the stores need no conversion. The [4, 256] f32 rows: 64
// threads along the row, 4 floats (16 bytes) each; 2 rows at a time.
// NORM-DAG: #[[ROW:blocked[0-9]*]] = #kite.blocked<shape = [4, 256], vec = [1, 4], threads = [2, 64], dims = [0, 1]>
// NORM-DAG: #[[KEEP:blocked[0-9]*]] = #kite.blocked<shape = [4, 256], vec = [1, 4], threads = [2, 64], dims = [0, -1]>
// NORM-DAG: #[[STAT:blocked[0-9]*]] = #kite.blocked<shape = [4, 256], vec = [1, 4], threads = [2, 64], dims = [0]>
// NORM-LABEL: func.func @norm
// NORM: kite.tile_for
// NORM: %[[R:.*]] = kite.load {{.*}} -> !kite.tile<4x256xf32, #[[ROW]]>
// NORM: %[[M:.*]] = kite.reduce mean %[[R]] {{.*}} -> !kite.tile<4x1xf32, #[[KEEP]]>
// NORM-NOT: kite.convert_layout
// NORM: kite.binary sub %[[R]], %[[M]] : !kite.tile<4x256xf32, #[[ROW]]>, !kite.tile<4x1xf32, #[[KEEP]]> -> !kite.tile<4x256xf32, #[[ROW]]>
// NORM: kite.store {{.*}} {kite.layout = #[[ROW]]}
// NORM: kite.squeeze %[[M]] {{.*}} -> !kite.tile<4xf32, #[[STAT]]>
// NORM: kite.store {{.*}} {kite.layout = #[[STAT]]}
// NORM: } {kite.layout = #[[ROW]]}
func.func @norm(%x: !kite.tensor<*x?> {kite.name = "x"}) -> (!kite.tensor<*x?>, !kite.tensor<?xf32>) attributes {kite.kernel} {
  %n = kite.size %x[0] : !kite.tensor<*x?>
  %out = kite.empty_like %x : !kite.tensor<*x?> -> !kite.tensor<*x?>
  %f32 = kite.dtype_const f32
  %means = kite.empty [%n], %f32 : !kite.tensor<?xf32>
  %c0 = arith.constant 0 : i64
  %bs = kite.block_size 0 extent %n : i64
  kite.tile_for (%t) = (%c0) to (%n) block (%bs) {
    %row = kite.load %x[%t, all] : !kite.tensor<*x?>[!kite.span] -> !kite.tile<*x?>
    %mean = kite.reduce mean %row {dim = 1 : i64, keepdim} : !kite.tile<*x?> -> !kite.tile<*x?>
    %c = kite.binary sub %row, %mean : !kite.tile<*x?>, !kite.tile<*x?> -> !kite.tile<*x?>
    kite.store %c, %out[%t, all] : !kite.tile<*x?>, !kite.tensor<*x?>[!kite.span]
    %m = kite.squeeze %mean {dim = 1 : i64} : !kite.tile<*x?> -> !kite.tile<*x?>
    kite.store %m, %means[%t] : !kite.tile<*x?>, !kite.tensor<?xf32>[!kite.span]
  }
  return %out, %means : !kite.tensor<*x?>, !kite.tensor<?xf32>
}

// A [4] index range does not fit the loop's [4, 256] context (right-aligned,
// its 4 would lie along the 256), so it gets a context of its own; added to
// the rows, which read it as a unit dim along the row, it is not converted
// but computed again in their context (the range and its unsqueeze: index
// ranges and constants cost no data movement), and the first one is erased.
// CONVERT-DAG: #[[ROW:blocked[0-9]*]] = #kite.blocked<shape = [4, 256], vec = [1, 4], threads = [2, 64], dims = [0, 1]>
// CONVERT-DAG: #[[RANGE:blocked[0-9]*]] = #kite.blocked<shape = [4, 256], vec = [1, 4], threads = [2, 64], dims = [0]>
// CONVERT-DAG: #[[COL:blocked[0-9]*]] = #kite.blocked<shape = [4, 256], vec = [1, 4], threads = [2, 64], dims = [0, -1]>
// CONVERT-LABEL: func.func @offsets
// CONVERT-NOT: kite.arange
// CONVERT: %[[I:.*]] = kite.arange {{.*}} : !kite.tile<4xi64, #[[RANGE]]>
// CONVERT-NEXT: %[[U:.*]] = kite.unsqueeze %[[I]] {{.*}} -> !kite.tile<4x1xi64, #[[COL]]>
// CONVERT-NEXT: kite.binary add %{{.*}}, %[[U]] : !kite.tile<4x256xf32, #[[ROW]]>, !kite.tile<4x1xi64, #[[COL]]>
// CONVERT-NOT: kite.convert_layout
// CONVERT-NOT: kite.arange
// CONVERT: return
func.func @offsets(%x: !kite.tensor<*x?> {kite.name = "x"}) -> !kite.tensor<*x?> attributes {kite.kernel} {
  %n = kite.size %x[0] : !kite.tensor<*x?>
  %out = kite.empty_like %x : !kite.tensor<*x?> -> !kite.tensor<*x?>
  %c0 = arith.constant 0 : i64
  %c4 = arith.constant 4 : i64
  %bs = kite.block_size 0 extent %n : i64
  kite.tile_for (%t) = (%c0) to (%n) block (%bs) {
    %row = kite.load %x[%t, all] : !kite.tensor<*x?>[!kite.span] -> !kite.tile<*x?>
    %i = kite.arange %c0, %c4 : !kite.tile<?xi64>
    %u = kite.unsqueeze %i {dim = -1 : i64} : !kite.tile<?xi64> -> !kite.tile<?x1xi64>
    %s = kite.binary add %row, %u : !kite.tile<*x?>, !kite.tile<?x1xi64> -> !kite.tile<*x?>
    kite.store %s, %out[%t, all] : !kite.tile<*x?>, !kite.tensor<*x?>[!kite.span]
  }
  return %out : !kite.tensor<*x?>
}

// A looped reduction's accumulator and its loop's results keep the layout of
// the accumulator's initial value; the chunk loop's body reads in it.
// CARRIED-LABEL: func.func @carried
// CARRIED: %[[INIT:.*]] = kite.full {{.*}} -> !kite.tile<4x256xf32, #[[L:blocked[0-9]*]]>
// CARRIED: %[[S:.*]] = kite.tile_for {{.*}} iter_args(%[[ACC:.*]] = %[[INIT]]) -> (!kite.tile<4x256xf32, #[[L]]>)
// CARRIED: kite.yield %{{.*}} : !kite.tile<4x256xf32, #[[L]]>
// CARRIED: kite.reduce sum %[[S]] {{.*}} : !kite.tile<4x256xf32, #[[L]]>
func.func @carried(%x: !kite.tensor<*x?> {kite.name = "x"}) -> !kite.tensor<*x?> attributes {kite.kernel} {
  %n = kite.size %x[0] : !kite.tensor<*x?>
  %out = kite.empty_like %x : !kite.tensor<*x?> -> !kite.tensor<*x?>
  %c0 = arith.constant 0 : i64
  %bs = kite.block_size 0 extent %n : i64
  kite.tile_for (%t) = (%c0) to (%n) block (%bs) {
    %row = kite.load %x[%t, all] : !kite.tensor<*x?>[!kite.span] -> !kite.tile<*x?>
    %sum = kite.reduce sum %row {dim = 1 : i64, keepdim} : !kite.tile<*x?> -> !kite.tile<*x?>
    %c = kite.binary sub %row, %sum : !kite.tile<*x?>, !kite.tile<*x?> -> !kite.tile<*x?>
    kite.store %c, %out[%t, all] : !kite.tile<*x?>, !kite.tensor<*x?>[!kite.span]
  }
  return %out : !kite.tensor<*x?>
}

// Two chained products with an online softmax between them (attention's
// key loop, 2-D). With 64 rows on 4 warps both products take the tensor
// cores' layout (kite.mma): the scores [64, 32] and the accumulator
// [64, 64] in it, the left operands read in it (q converted once, outside
// the key loop; p as it is), the row maximum in the scores' layout without
// the key dim. The carried maximum starts in its initializer's layout, and
// the loop is laid out again with it in the layout the body yields (the
// scores' row layout): no conversion is left inside the loop.
// CHAIN-DAG: #[[ROW:blocked[0-9]*]] = #kite.blocked<shape = [64, 32], vec = [1, 2], threads = [32, 4], dims = [0]>
// CHAIN-DAG: #[[ACC:blocked[0-9]*]] = #kite.blocked<shape = [64, 64], vec = [1, 2], threads = [32, 4], dims = [0, 1]>
// CHAIN-DAG: #[[S:blocked[0-9]*]] = #kite.blocked<shape = [64, 32], vec = [1, 2], threads = [32, 4], dims = [0, 1]>
// CHAIN-LABEL: func.func @chained
// CHAIN: %[[M0:.*]] = kite.full {{.*}} -> !kite.tile<64xf32, #[[ROW]]>
// CHAIN: %[[Q:.*]] = kite.convert_layout {{.*}} -> !kite.tile<64x64xbf16, #[[ACC]]>
// CHAIN: kite.tile_for {{.*}} iter_args({{.*}} = %{{.*}}, {{.*}} = %[[M0]]) -> (!kite.tile<64x64xf32, #[[ACC]]>, !kite.tile<64xf32, #[[ROW]]>)
// CHAIN-NOT: kite.convert_layout
// CHAIN: kite.matmul %[[Q]], %{{.*}} {kite.mma = "mma_sync"} : !kite.tile<64x64xbf16, #[[ACC]]>, {{.*}} -> !kite.tile<64x32xbf16, #[[S]]>
// CHAIN-NOT: kite.convert_layout
// CHAIN: kite.reduce amax {{.*}} -> !kite.tile<64xbf16, #[[ROW]]>
// CHAIN-NOT: kite.convert_layout
// CHAIN: kite.addmm {{.*}} {kite.mma = "mma_sync"} : !kite.tile<64x64xf32, #[[ACC]]>, !kite.tile<64x32xbf16, #[[S]]>, {{.*}} -> !kite.tile<64x64xf32, #[[ACC]]>
// CHAIN-NOT: kite.convert_layout
// CHAIN: kite.yield
//
// With wgmma in the config, on sm_90a the same products run on wgmma (4
// warps: one warpgroup; k^T staged along its K of 64, v along its N of 64);
// not before sm_90a, and not on 2 warps (no whole warpgroup). q, defined
// outside the key loop, is read from shared memory (kite.shared_lhs); p,
// computed in it, from registers.
// CHAINWG: kite.matmul {{.*}} {kite.mma = "wgmma", kite.shared_lhs}
// CHAINWG: kite.addmm {{.*}} {kite.mma = "wgmma"} :
// CHAINSYNC: kite.matmul {{.*}} {kite.mma = "mma_sync"}
// CHAINSYNC: kite.addmm {{.*}} {kite.mma = "mma_sync"}
//
// With 16 rows on 4 warps no warp owns a 16-row tile: the products keep
// the generic layouts (staged for mma_tile at emission), the result takes
// its accumulator's layout, and the row statistic converts to the
// accumulator's context to scale it.
// FEWROWS-LABEL: func.func @chained
// FEWROWS-NOT: kite.mma
// FEWROWS: kite.convert_layout {{.*}} : !kite.tile<16x1xf32, {{.*}}> -> !kite.tile<16x1xf32
// FEWROWS-NOT: kite.mma
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

// UNCONFIGURED: kite-assign-layouts needs a configured kernel (run kite-apply-config first)
