module {
  func.func @swiglu(%arg0: !kite.tensor<*x?> {kite.name = "a"}, %arg1: !kite.tensor<*x?> {kite.name = "b"}) -> !kite.tensor<*x?> attributes {kite.kernel} {
    %0 = kite.empty_like %arg0 : !kite.tensor<*x?> -> !kite.tensor<*x?>
    %1 = kite.size %arg0[0] : !kite.tensor<*x?>
    %c0_i64 = arith.constant 0 : i64
    %2 = kite.size %arg0[1] : !kite.tensor<*x?>
    %c0_i64_0 = arith.constant 0 : i64
    %3 = kite.block_size 0 extent %1 : i64
    %4 = kite.block_size 1 extent %2 : i64
    kite.tile_for (%arg2, %arg3) = (%c0_i64, %c0_i64_0) to (%1, %2) block (%3, %4) {
      %5 = kite.load %arg0[%arg2, %arg3] : !kite.tensor<*x?>[!kite.span, !kite.span] -> !kite.tile<*x?>
      %6 = kite.dtype_const f32
      %7 = kite.cast %5, %6 : !kite.tile<*x?> -> !kite.tile<*xf32>
      %8 = kite.unary silu %7 : !kite.tile<*xf32> -> !kite.tile<*xf32>
      %9 = kite.load %arg1[%arg2, %arg3] : !kite.tensor<*x?>[!kite.span, !kite.span] -> !kite.tile<*x?>
      %10 = kite.dtype_const f32
      %11 = kite.cast %9, %10 : !kite.tile<*x?> -> !kite.tile<*xf32>
      %12 = kite.binary mul %8, %11 : !kite.tile<*xf32>, !kite.tile<*xf32> -> !kite.tile<*xf32>
      kite.store %12, %0[%arg2, %arg3] : !kite.tile<*xf32>, !kite.tensor<*x?>[!kite.span, !kite.span]
    }
    return %0 : !kite.tensor<*x?>
  }
}

