module {
  func.func @exp_kernel(%arg0: !kite.tensor<*x?> {kite.name = "x"}) -> !kite.tensor<*x?> attributes {kite.kernel} {
    %0 = kite.empty_like %arg0 : !kite.tensor<*x?> -> !kite.tensor<*x?>
    %c-1_i64 = arith.constant -1 : i64
    %1 = kite.tensor_reshape %arg0 [%c-1_i64] view : !kite.tensor<*x?> -> !kite.tensor<?x?>
    %c-1_i64_0 = arith.constant -1 : i64
    %2 = kite.tensor_reshape %0 [%c-1_i64_0] view : !kite.tensor<*x?> -> !kite.tensor<?x?>
    %3 = kite.size %1[0] : !kite.tensor<?x?>
    %c0_i64 = arith.constant 0 : i64
    %4 = kite.block_size 0 extent %3 : i64
    kite.tile_for (%arg1) = (%c0_i64) to (%3) block (%4) {
      %5 = kite.load %1[%arg1] : !kite.tensor<?x?>[!kite.span] -> !kite.tile<?x?>
      %6 = kite.dtype_const f32
      %7 = kite.cast %5, %6 : !kite.tile<?x?> -> !kite.tile<?xf32>
      %8 = kite.unary exp %7 : !kite.tile<?xf32> -> !kite.tile<?xf32>
      kite.store %8, %2[%arg1] : !kite.tile<?xf32>, !kite.tensor<?x?>[!kite.span]
    }
    return %0 : !kite.tensor<*x?>
  }
}

