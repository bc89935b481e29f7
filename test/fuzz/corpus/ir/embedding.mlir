module {
  func.func @embedding(%arg0: !kite.tensor<*x?> {kite.name = "ids"}, %arg1: !kite.tensor<*x?> {kite.name = "weight"}) -> !kite.tensor<?x?x?> attributes {kite.kernel} {
    %0 = kite.size %arg0[0] : !kite.tensor<*x?>
    %1 = kite.size %arg1[1] : !kite.tensor<*x?>
    %2 = kite.dtype_of %arg1 : !kite.tensor<*x?>
    %3 = kite.empty [%0, %1], %2 : !kite.tensor<?x?x?>
    %c0_i64 = arith.constant 0 : i64
    %c0_i64_0 = arith.constant 0 : i64
    %4 = kite.block_size 0 extent %0 : i64
    %5 = kite.block_size 1 extent %1 : i64
    kite.tile_for (%arg2, %arg3) = (%c0_i64, %c0_i64_0) to (%0, %1) block (%4, %5) {
      %6 = kite.load %arg0[%arg2] : !kite.tensor<*x?>[!kite.span] -> !kite.tile<*x?>
      %7 = kite.load %arg1[%6, %arg3] : !kite.tensor<*x?>[!kite.tile<*x?>, !kite.span] -> !kite.tile<*x?>
      kite.store %7, %3[%arg2, %arg3] : !kite.tile<*x?>, !kite.tensor<?x?x?>[!kite.span, !kite.span]
    }
    return %3 : !kite.tensor<?x?x?>
  }
}

