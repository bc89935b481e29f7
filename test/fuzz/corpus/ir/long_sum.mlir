module {
  func.func @long_sum(%arg0: !kite.tensor<*x?> {kite.name = "x"}) -> !kite.tensor<?x?> attributes {kite.kernel} {
    %0 = kite.size %arg0[0] : !kite.tensor<*x?>
    %1 = kite.size %arg0[1] : !kite.tensor<*x?>
    %2 = kite.dtype_of %arg0 : !kite.tensor<*x?>
    %3 = kite.empty [%0], %2 : !kite.tensor<?x?>
    %4 = kite.block_size 0 extent %1 : i64
    %c0_i64 = arith.constant 0 : i64
    %5 = kite.block_size 1 extent %0 : i64
    kite.tile_for (%arg1) = (%c0_i64) to (%0) block (%5) {
      %6 = kite.dtype_const f32
      %cst = arith.constant 0.000000e+00 : f32
      %7 = kite.full [%arg1], %cst, %6 : [!kite.span], f32 -> !kite.tile<?xf32>
      %c0_i64_0 = arith.constant 0 : i64
      %8 = builtin.unrealized_conversion_cast %7 : !kite.tile<?xf32> to !kite.tile<*xf32>
      %9 = kite.tile_for (%arg2) = (%c0_i64_0) to (%1) block (%4) iter_args(%arg3 = %8) -> (!kite.tile<*xf32>) {
        %10 = kite.load %arg0[%arg1, %arg2] : !kite.tensor<*x?>[!kite.span, !kite.span] -> !kite.tile<*x?>
        %11 = kite.dtype_const f32
        %12 = kite.cast %10, %11 : !kite.tile<*x?> -> !kite.tile<*xf32>
        %13 = kite.reduce sum %12 {dim = 1 : i64} : !kite.tile<*xf32> -> !kite.tile<*xf32>
        %14 = kite.binary add %arg3, %13 : !kite.tile<*xf32>, !kite.tile<*xf32> -> !kite.tile<*xf32>
        kite.yield %14 : !kite.tile<*xf32>
      }
      kite.store %9, %3[%arg1] : !kite.tile<*xf32>, !kite.tensor<?x?>[!kite.span]
    }
    return %3 : !kite.tensor<?x?>
  }
}

