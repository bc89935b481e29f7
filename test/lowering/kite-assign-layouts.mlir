// RUN: kite-opt %s --kite-specialize="kernel=norm args='x=f32[64,256]'" --kite-apply-config="config='{\"block_sizes\": [4]}'" --kite-assign-layouts | FileCheck %s --check-prefix=NORM
// RUN: kite-opt %s --kite-specialize="kernel=offsets args='x=f32[64,256]'" --kite-apply-config="config='{\"block_sizes\": [4]}'" --kite-assign-layouts | FileCheck %s --check-prefix=CONVERT
// RUN: kite-opt %s --kite-specialize="kernel=carried args='x=f32[64,1024]'" --kite-apply-config="config='{\"block_sizes\": [4], \"reduction_loops\": [256]}'" --kite-reduction-loops --kite-assign-layouts | FileCheck %s --check-prefix=CARRIED
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
// the rows it is converted into theirs, a unit dim along the row.
// CONVERT-DAG: #[[ROW:blocked[0-9]*]] = #kite.blocked<shape = [4, 256], vec = [1, 4], threads = [2, 64], dims = [0, 1]>
// CONVERT-DAG: #[[OWN:blocked[0-9]*]] = #kite.blocked<shape = [4], vec = [4], threads = [1], dims = [0]>
// CONVERT-DAG: #[[OWNU:blocked[0-9]*]] = #kite.blocked<shape = [4], vec = [4], threads = [1], dims = [0, -1]>
// CONVERT-DAG: #[[COL:blocked[0-9]*]] = #kite.blocked<shape = [4, 256], vec = [1, 4], threads = [2, 64], dims = [0, -1]>
// CONVERT-LABEL: func.func @offsets
// CONVERT: %[[I:.*]] = kite.arange {{.*}} : !kite.tile<4xi64, #[[OWN]]>
// CONVERT: %[[U:.*]] = kite.unsqueeze %[[I]] {{.*}} -> !kite.tile<4x1xi64, #[[OWNU]]>
// CONVERT: %[[C:.*]] = kite.convert_layout %[[U]] : !kite.tile<4x1xi64, #[[OWNU]]> -> !kite.tile<4x1xi64, #[[COL]]>
// CONVERT: kite.binary add %{{.*}}, %[[C]] : !kite.tile<4x256xf32, #[[ROW]]>, !kite.tile<4x1xi64, #[[COL]]>
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

// UNCONFIGURED: kite-assign-layouts needs a configured kernel (run kite-apply-config first)
