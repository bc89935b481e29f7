// ARGS: a=f16[3,100,64] b=f16[3,64,72]
module {
  func.func @bmm(%arg0: !kite.tensor<*x?> {kite.name = "a"}, %arg1: !kite.tensor<*x?> {kite.name = "b"}) -> !kite.tensor<?x?x?x?> attributes {kite.kernel} {
    %0 = kite.size %arg0[0] : !kite.tensor<*x?>
    %1 = kite.size %arg0[1] : !kite.tensor<*x?>
    %2 = kite.size %arg0[2] : !kite.tensor<*x?>
    %3 = kite.size %arg1[2] : !kite.tensor<*x?>
    %4 = kite.dtype_of %arg0 : !kite.tensor<*x?>
    %5 = kite.empty [%0, %1, %3], %4 : !kite.tensor<?x?x?x?>
    %c0_i64 = arith.constant 0 : i64
    %c0_i64_0 = arith.constant 0 : i64
    %c0_i64_1 = arith.constant 0 : i64
    %6 = kite.block_size 0 extent %0 : i64
    %7 = kite.block_size 1 extent %1 : i64
    %8 = kite.block_size 2 extent %3 : i64
    kite.tile_for (%arg2, %arg3, %arg4) = (%c0_i64, %c0_i64_0, %c0_i64_1) to (%0, %1, %3) block (%6, %7, %8) {
      %9 = kite.dtype_const f32
      %cst = arith.constant 0.000000e+00 : f32
      %10 = kite.full [%arg2, %arg3, %arg4], %cst, %9 : [!kite.span, !kite.span, !kite.span], f32 -> !kite.tile<?x?x?xf32>
      %c0_i64_2 = arith.constant 0 : i64
      %11 = kite.block_size 3 extent %2 : i64
      %12 = kite.tile_for (%arg5) = (%c0_i64_2) to (%2) block (%11) iter_args(%arg6 = %10) -> (!kite.tile<?x?x?xf32>) {
        %13 = kite.load %arg0[%arg2, %arg3, %arg5] : !kite.tensor<*x?>[!kite.span, !kite.span, !kite.span] -> !kite.tile<*x?>
        %14 = kite.load %arg1[%arg2, %arg5, %arg4] : !kite.tensor<*x?>[!kite.span, !kite.span, !kite.span] -> !kite.tile<*x?>
        %15 = kite.baddbmm %arg6, %13, %14 : !kite.tile<?x?x?xf32>, !kite.tile<*x?>, !kite.tile<*x?> -> !kite.tile<?x?x?xf32>
        kite.yield %15 : !kite.tile<?x?x?xf32>
      }
      kite.store %12, %5[%arg2, %arg3, %arg4] : !kite.tile<?x?x?xf32>, !kite.tensor<?x?x?x?>[!kite.span, !kite.span, !kite.span]
    }
    return %5 : !kite.tensor<?x?x?x?>
  }
}

