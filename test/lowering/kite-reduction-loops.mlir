// RUN: kite-opt %s --kite-specialize="kernel=norm args='x=bf16[8,1000]'" --kite-apply-config="config='{\"block_sizes\": [2], \"reduction_loops\": [256]}'" --kite-reduction-loops | FileCheck %s
// RUN: kite-opt %s --kite-specialize="kernel=norm args='x=bf16[8,1000]'" --kite-apply-config="config='{\"block_sizes\": [2], \"reduction_loops\": [1024]}'" --kite-reduction-loops | FileCheck %s --check-prefix=WHOLE
// RUN: not kite-opt %s --kite-specialize="kernel=norm args='x=bf16[8,1000]'" --kite-apply-config="config='{\"block_sizes\": [2], \"reduction_loops\": [256, 64]}'" 2>&1 | FileCheck %s --check-prefix=COUNT
// RUN: not kite-opt %s --kite-specialize="kernel=argmax args='x=f32[8,1000]'" --kite-apply-config="config='{\"block_sizes\": [2], \"reduction_loops\": [256]}'" --kite-reduction-loops 2>&1 | FileCheck %s --check-prefix=ARGMAX
// RUN: kite-opt %s --kite-specialize="kernel=norm args='x=bf16[8,65536]'" --kite-apply-config | FileCheck %s --check-prefix=DEFAULT
// RUN: kite-opt %s --kite-specialize="kernel=softmax args='x=bf16[8,1000]'" --kite-apply-config="config='{\"block_sizes\": [2], \"reduction_loops\": [256]}'" --kite-reduction-loops | FileCheck %s --check-prefix=SOFTMAX

// x - mean(x) over rows, stored, with sum(x)/n as a second output: the mean
// becomes a loop that adds each chunk elementwise into a chunk-shaped f32
// accumulator (bf16 accumulates in f32; lanes past the 1000th hold 0), one
// sum of the accumulator after it divided by the row length, and the store
// a loop that recomputes the row.
// CHECK-LABEL: func.func @norm
// CHECK: kite.tile_for (%[[T:.*]]) = {{.*}} block (%c2_i64)
// CHECK: %[[INIT:.*]] = kite.full {{.*}} -> !kite.tile<2x256xf32>
// CHECK: %[[ACCS:.*]] = kite.tile_for (%[[C:.*]]) = ({{.*}}) to ({{%c1000_i64.*}}) block ({{%c256_i64.*}}) iter_args(%[[ACC:.*]] = %[[INIT]])
// CHECK: kite.load %arg0[%[[T]], %[[C]]] {{.*}} -> !kite.tile<2x256xbf16>
// CHECK: %[[X:.*]] = kite.cast {{.*}} !kite.tile<2x256xbf16> -> !kite.tile<2x256xf32>
// CHECK: %[[I:.*]] = kite.span_index %[[C]] : !kite.tile<256xi64>
// CHECK: %[[V:.*]] = kite.compare lt %[[I]], %c1000_i64
// CHECK: %[[XV:.*]] = kite.where %[[V]], %[[X]], %{{.*}} -> !kite.tile<2x256xf32>
// CHECK: %[[N:.*]] = kite.binary add %[[ACC]], %[[XV]]
// CHECK: kite.yield %[[N]]
// CHECK: %[[SUM:.*]] = kite.reduce sum %[[ACCS]] {{.*}} : !kite.tile<2x256xf32> -> !kite.tile<2x1xf32>
// CHECK: %[[MEANF:.*]] = kite.binary div %[[SUM]], %{{.*}} : !kite.tile<2x1xf32>, f64
// CHECK: %[[MEAN:.*]] = kite.cast %[[MEANF]], {{.*}} -> !kite.tile<2x1xbf16>
// CHECK: kite.tile_for (%[[C2:.*]]) = ({{.*}}) to ({{%c1000_i64.*}}) block ({{%c256_i64.*}}) {
// CHECK: kite.load %arg0[%[[T]], %[[C2]]]
// CHECK: kite.binary sub {{.*}}, %[[MEAN]]
// CHECK: kite.store {{.*}}[%[[T]], %[[C2]]]
// CHECK-NOT: all]
// CHECK: return

// A chunk as large as the row keeps the whole row in registers.
// WHOLE: kite.load %arg0[%{{.*}}, all] {{.*}} -> !kite.tile<2x1000xbf16>
// WHOLE-NOT: iter_args

// COUNT: config does not fit kernel 'norm': reduction_loops has 2 entries, but the kernel has 1 reduction dimensions (of sizes 1000)

// ARGMAX: error: config does not fit kernel 'argmax': reduction_loops cannot loop over the dimension of size 1000 here: argmax and argmin need the whole row (use null for this reduction)

// Rows of 65536 are looped by default, in chunks of 4096.
// DEFAULT: \22reduction_loops\22:[4096]

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

// Softmax's statistics in one pass (online softmax): a running max per
// thread (each chunk's local amax, masked lanes -inf: no cross-thread step in
// the loop) and chunk-shaped sums rescaled by exp(old max - new max); a max
// still -inf is subtracted as 0 (one select per thread, none per lane);
// after the loop, the row max across threads and the sums rescaled to it,
// then one sum.
// The store is a second pass over the row.
// SOFTMAX-LABEL: func.func @softmax
// SOFTMAX: %[[S:.*]]:2 = kite.tile_for (%[[C:.*]]) = ({{.*}}) to ({{%c1000_i64.*}}) block ({{%c256_i64.*}}) iter_args(%[[M:.*]] = %{{.*}}, %[[ACC:.*]] = %{{.*}}) -> (!kite.tile<2x1xf32>, !kite.tile<2x256xf32>)
// SOFTMAX: %[[X:.*]] = kite.cast {{.*}} -> !kite.tile<2x256xf32>
// SOFTMAX: %[[XV:.*]] = kite.where %{{.*}}, %[[X]], %cst{{.*}} : !kite.tile<256xi1>, !kite.tile<2x256xf32>, f64
// SOFTMAX: %[[CM:.*]] = kite.reduce amax %[[XV]] {dim = 1 : i64, keepdim, local}
// SOFTMAX: %[[MN:.*]] = kite.binary maximum %[[M]], %[[CM]]
// SOFTMAX: %[[UNSET:.*]] = kite.compare eq %[[MN]], %{{.*}} : !kite.tile<2x1xf32>, f64
// SOFTMAX: %[[BASE:.*]] = kite.where %[[UNSET]], %{{.*}}, %[[MN]]
// SOFTMAX: %[[D:.*]] = kite.binary sub %[[M]], %[[BASE]]
// SOFTMAX: %[[SCALE:.*]] = kite.unary exp %[[D]]
// SOFTMAX: %[[TD:.*]] = kite.binary sub %[[XV]], %[[BASE]]
// SOFTMAX: %[[T:.*]] = kite.unary exp %[[TD]]
// SOFTMAX-NOT: kite.where
// SOFTMAX: %[[R:.*]] = kite.binary mul %[[ACC]], %[[SCALE]]
// SOFTMAX: %[[N:.*]] = kite.binary add %[[R]], %[[T]]
// SOFTMAX: kite.yield %[[MN]], %[[N]]
// SOFTMAX: %[[ML:.*]] = kite.expand %[[S]]#0 [{{.*}}] : !kite.tile<2x1xf32>, i64, i64 -> !kite.tile<2x256xf32>
// SOFTMAX: %[[ROW:.*]] = kite.reduce amax %[[ML]] {dim = 1 : i64, keepdim} :
// SOFTMAX: %[[U2:.*]] = kite.compare eq %[[ROW]], %{{.*}} : !kite.tile<2x1xf32>, f64
// SOFTMAX: %[[B2:.*]] = kite.where %[[U2]], %{{.*}}, %[[ROW]]
// SOFTMAX: %[[D2:.*]] = kite.binary sub %[[S]]#0, %[[B2]]
// SOFTMAX: %[[TOROW:.*]] = kite.unary exp %[[D2]]
// SOFTMAX: %[[RS:.*]] = kite.binary mul %[[S]]#1, %[[TOROW]]
// SOFTMAX: %[[SUM:.*]] = kite.reduce sum %[[RS]] {dim = 1 : i64, keepdim}
// SOFTMAX: kite.tile_for
// SOFTMAX: kite.binary sub %{{.*}}, %[[ROW]]
// SOFTMAX: kite.binary div %{{.*}}, %[[SUM]]
// SOFTMAX: kite.store
// SOFTMAX-NOT: kite.tile_for

func.func @softmax(%x: !kite.tensor<*x?> {kite.name = "x"}) -> !kite.tensor<*x?> attributes {kite.kernel} {
  %n = kite.size %x[0] : !kite.tensor<*x?>
  %out = kite.empty_like %x : !kite.tensor<*x?> -> !kite.tensor<*x?>
  %f32 = kite.dtype_const f32
  %c0 = arith.constant 0 : i64
  %bs = kite.block_size 0 extent %n : i64
  kite.tile_for (%t) = (%c0) to (%n) block (%bs) {
    %raw = kite.load %x[%t, all] : !kite.tensor<*x?>[!kite.span] -> !kite.tile<*x?>
    %row = kite.cast %raw, %f32 : !kite.tile<*x?> -> !kite.tile<*x?>
    %m = kite.reduce amax %row {dim = 1 : i64, keepdim} : !kite.tile<*x?> -> !kite.tile<*x?>
    %d = kite.binary sub %row, %m : !kite.tile<*x?>, !kite.tile<*x?> -> !kite.tile<*x?>
    %e = kite.unary exp %d : !kite.tile<*x?> -> !kite.tile<*x?>
    %s = kite.reduce sum %e {dim = 1 : i64, keepdim} : !kite.tile<*x?> -> !kite.tile<*x?>
    %y = kite.binary div %e, %s : !kite.tile<*x?>, !kite.tile<*x?> -> !kite.tile<*x?>
    kite.store %y, %out[%t, all] : !kite.tile<*x?>, !kite.tensor<*x?>[!kite.span]
  }
  return %out : !kite.tensor<*x?>
}

func.func @argmax(%x: !kite.tensor<*x?> {kite.name = "x"}) -> !kite.tensor<?xi64> attributes {kite.kernel} {
  %n = kite.size %x[0] : !kite.tensor<*x?>
  %i64 = kite.dtype_const i64
  %out = kite.empty [%n], %i64 : !kite.tensor<?xi64>
  %c0 = arith.constant 0 : i64
  %bs = kite.block_size 0 extent %n : i64
  kite.tile_for (%t) = (%c0) to (%n) block (%bs) {
    %row = kite.load %x[%t, all] : !kite.tensor<*x?>[!kite.span] -> !kite.tile<*x?>
    %i = kite.reduce argmax %row {dim = 1 : i64} : !kite.tile<*x?> -> !kite.tile<*x?>
    kite.store %i, %out[%t] : !kite.tile<*x?>, !kite.tensor<?xi64>[!kite.span]
  }
  return %out : !kite.tensor<?xi64>
}
