// ARGS: x=f32[100,130] y=f32[100,130]
module {
  func.func @add(%arg0: !kite.tensor<*x?> {kite.name = "x"}, %arg1: !kite.tensor<*x?> {kite.name = "y"}) -> !kite.tensor<*x?> attributes {kite.kernel} {
    %0 = kite.empty_like %arg0 : !kite.tensor<*x?> -> !kite.tensor<*x?>
    %1 = kite.size %arg0[0] : !kite.tensor<*x?>
    %c0_i64 = arith.constant 0 : i64
    %2 = kite.size %arg0[1] : !kite.tensor<*x?>
    %c0_i64_0 = arith.constant 0 : i64
    %3 = kite.block_size 0 extent %1 : i64
    %4 = kite.block_size 1 extent %2 : i64
    kite.tile_for (%arg2, %arg3) = (%c0_i64, %c0_i64_0) to (%1, %2) block (%3, %4) {
      %5 = kite.load %arg0[%arg2, %arg3] : !kite.tensor<*x?>[!kite.span, !kite.span] -> !kite.tile<*x?>
      %6 = kite.load %arg1[%arg2, %arg3] : !kite.tensor<*x?>[!kite.span, !kite.span] -> !kite.tile<*x?>
      %7 = kite.binary add %5, %6 : !kite.tile<*x?>, !kite.tile<*x?> -> !kite.tile<*x?>
      kite.store %7, %0[%arg2, %arg3] : !kite.tile<*x?>, !kite.tensor<*x?>[!kite.span, !kite.span]
    }
    return %0 : !kite.tensor<*x?>
  }
}

