// ARGS: logits=bf16[8,100] target=i64[8]
module {
  func.func @cross_entropy(%arg0: !kite.tensor<*x?> {kite.name = "logits"}, %arg1: !kite.tensor<*x?> {kite.name = "target"}) -> !kite.tensor<?xf32> attributes {kite.kernel} {
    %0 = kite.size %arg0[0] : !kite.tensor<*x?>
    %1 = kite.dtype_const f32
    %2 = kite.empty [%0], %1 : !kite.tensor<?xf32>
    %c0_i64 = arith.constant 0 : i64
    %3 = kite.block_size 0 extent %0 : i64
    kite.tile_for (%arg2) = (%c0_i64) to (%0) block (%3) {
      %4 = kite.load %arg0[%arg2, all] : !kite.tensor<*x?>[!kite.span] -> !kite.tile<*x?>
      %5 = kite.dtype_const f32
      %6 = kite.cast %4, %5 : !kite.tile<*x?> -> !kite.tile<*xf32>
      %7 = kite.reduce amax %6 {dim = 1 : i64} : !kite.tile<*xf32> -> !kite.tile<*xf32>
      %8 = kite.unsqueeze %7 {dim = 1 : i64} : !kite.tile<*xf32> -> !kite.tile<*xf32>
      %9 = kite.binary sub %6, %8 : !kite.tile<*xf32>, !kite.tile<*xf32> -> !kite.tile<*xf32>
      %10 = kite.unary exp %9 : !kite.tile<*xf32> -> !kite.tile<*xf32>
      %11 = kite.reduce sum %10 {dim = 1 : i64} : !kite.tile<*xf32> -> !kite.tile<*xf32>
      %12 = kite.unary log %11 : !kite.tile<*xf32> -> !kite.tile<*xf32>
      %13 = kite.binary add %7, %12 : !kite.tile<*xf32>, !kite.tile<*xf32> -> !kite.tile<*xf32>
      %14 = kite.span_index %arg2 : !kite.tile<?xi64>
      %15 = kite.load %arg1[%arg2] : !kite.tensor<*x?>[!kite.span] -> !kite.tile<*x?>
      %16 = kite.load %arg0[%14, %15] : !kite.tensor<*x?>[!kite.tile<?xi64>, !kite.tile<*x?>] -> !kite.tile<*x?>
      %17 = kite.dtype_const f32
      %18 = kite.cast %16, %17 : !kite.tile<*x?> -> !kite.tile<*xf32>
      %19 = kite.binary sub %13, %18 : !kite.tile<*xf32>, !kite.tile<*xf32> -> !kite.tile<*xf32>
      kite.store %19, %2[%arg2] : !kite.tile<*xf32>, !kite.tensor<?xf32>[!kite.span]
    }
    return %2 : !kite.tensor<?xf32>
  }
}

