// CONFIG: {"block_sizes":[64,64,32],"num_warps":4,"tensor_cores":true}
// ARGS: x=bf16[300,77] y=bf16[77,65]
module {
  func.func @matmul(%arg0: !kite.tensor<*x?> {kite.name = "x"}, %arg1: !kite.tensor<*x?> {kite.name = "y"}) -> !kite.tensor<?x?x?> attributes {kite.kernel} {
    %0 = kite.size %arg0[0] : !kite.tensor<*x?>
    %1 = kite.size %arg0[1] : !kite.tensor<*x?>
    %2 = kite.size %arg1[1] : !kite.tensor<*x?>
    %3 = kite.dtype_of %arg0 : !kite.tensor<*x?>
    %4 = kite.empty [%0, %2], %3 : !kite.tensor<?x?x?>
    %c0_i64 = arith.constant 0 : i64
    %c0_i64_0 = arith.constant 0 : i64
    %5 = kite.block_size 0 extent %0 : i64
    %6 = kite.block_size 1 extent %2 : i64
    kite.tile_for (%arg2, %arg3) = (%c0_i64, %c0_i64_0) to (%0, %2) block (%5, %6) {
      %7 = kite.dtype_const f32
      %cst = arith.constant 0.000000e+00 : f32
      %8 = kite.full [%arg2, %arg3], %cst, %7 : [!kite.span, !kite.span], f32 -> !kite.tile<?x?xf32>
      %c0_i64_1 = arith.constant 0 : i64
      %9 = kite.block_size 2 extent %1 : i64
      %10 = kite.tile_for (%arg4) = (%c0_i64_1) to (%1) block (%9) iter_args(%arg5 = %8) -> (!kite.tile<?x?xf32>) {
        %11 = kite.load %arg0[%arg2, %arg4] : !kite.tensor<*x?>[!kite.span, !kite.span] -> !kite.tile<*x?>
        %12 = kite.load %arg1[%arg4, %arg3] : !kite.tensor<*x?>[!kite.span, !kite.span] -> !kite.tile<*x?>
        %13 = kite.addmm %arg5, %11, %12 : !kite.tile<?x?xf32>, !kite.tile<*x?>, !kite.tile<*x?> -> !kite.tile<?x?xf32>
        kite.yield %13 : !kite.tile<?x?xf32>
      }
      kite.store %10, %4[%arg2, %arg3] : !kite.tile<?x?xf32>, !kite.tensor<?x?x?>[!kite.span, !kite.span]
    }
    return %4 : !kite.tensor<?x?x?>
  }
}

