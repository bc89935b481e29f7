// CONFIG: {"block_sizes":[1],"num_warps":8,"reduction_loops":[256]}
// ARGS: x=bf16[64,1000]
module {
  func.func @softmax(%arg0: !kite.tensor<*x?> {kite.name = "x"}) -> !kite.tensor<*x?> attributes {kite.kernel} {
    %0 = kite.empty_like %arg0 : !kite.tensor<*x?> -> !kite.tensor<*x?>
    %1 = kite.size %arg0[0] : !kite.tensor<*x?>
    %c0_i64 = arith.constant 0 : i64
    %2 = kite.block_size 0 extent %1 : i64
    kite.tile_for (%arg1) = (%c0_i64) to (%1) block (%2) {
      %3 = kite.load %arg0[%arg1, all] : !kite.tensor<*x?>[!kite.span] -> !kite.tile<*x?>
      %4 = kite.dtype_const f32
      %5 = kite.cast %3, %4 : !kite.tile<*x?> -> !kite.tile<*xf32>
      %6 = kite.reduce amax %5 {dim = 1 : i64, keepdim} : !kite.tile<*xf32> -> !kite.tile<*xf32>
      %7 = kite.binary sub %5, %6 : !kite.tile<*xf32>, !kite.tile<*xf32> -> !kite.tile<*xf32>
      %8 = kite.unary exp %7 : !kite.tile<*xf32> -> !kite.tile<*xf32>
      %9 = kite.reduce sum %8 {dim = 1 : i64, keepdim} : !kite.tile<*xf32> -> !kite.tile<*xf32>
      %10 = kite.binary div %8, %9 : !kite.tile<*xf32>, !kite.tile<*xf32> -> !kite.tile<*xf32>
      kite.store %10, %0[%arg1, all] : !kite.tile<*xf32>, !kite.tensor<*x?>[!kite.span]
    }
    return %0 : !kite.tensor<*x?>
  }
}

