module {
  func.func @sum_kernel(%arg0: !kite.tensor<*x?> {kite.name = "x"}) -> !kite.tensor<?x?> attributes {kite.kernel} {
    %0 = kite.size %arg0[0] : !kite.tensor<*x?>
    %1 = kite.dtype_of %arg0 : !kite.tensor<*x?>
    %2 = kite.empty [%0], %1 : !kite.tensor<?x?>
    %3 = kite.size %arg0[0] : !kite.tensor<*x?>
    %c0_i64 = arith.constant 0 : i64
    %4 = kite.block_size 0 extent %3 : i64
    kite.tile_for (%arg1) = (%c0_i64) to (%3) block (%4) {
      %5 = kite.load %arg0[%arg1, all] : !kite.tensor<*x?>[!kite.span] -> !kite.tile<*x?>
      %6 = kite.dtype_const f32
      %7 = kite.cast %5, %6 : !kite.tile<*x?> -> !kite.tile<*xf32>
      %8 = kite.reduce sum %7 {dim = 1 : i64} : !kite.tile<*xf32> -> !kite.tile<*xf32>
      kite.store %8, %2[%arg1] : !kite.tile<*xf32>, !kite.tensor<?x?>[!kite.span]
    }
    return %2 : !kite.tensor<?x?>
  }
}

