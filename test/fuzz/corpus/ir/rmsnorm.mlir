// ARGS: x=bf16[64,1000] weight=bf16[1000] eps=f64
module {
  func.func @rmsnorm(%arg0: !kite.tensor<*x?> {kite.name = "x"}, %arg1: !kite.tensor<*x?> {kite.name = "weight"}, %arg2: f64 {kite.name = "eps"}) -> !kite.tensor<*x?> attributes {kite.kernel} {
    %0 = kite.empty_like %arg0 : !kite.tensor<*x?> -> !kite.tensor<*x?>
    %1 = kite.size %arg0[0] : !kite.tensor<*x?>
    %c0_i64 = arith.constant 0 : i64
    %2 = kite.block_size 0 extent %1 : i64
    kite.tile_for (%arg3) = (%c0_i64) to (%1) block (%2) {
      %3 = kite.load %arg0[%arg3, all] : !kite.tensor<*x?>[!kite.span] -> !kite.tile<*x?>
      %4 = kite.dtype_const f32
      %5 = kite.cast %3, %4 : !kite.tile<*x?> -> !kite.tile<*xf32>
      %6 = kite.binary mul %5, %5 : !kite.tile<*xf32>, !kite.tile<*xf32> -> !kite.tile<*xf32>
      %7 = kite.reduce mean %6 {dim = 1 : i64, keepdim} : !kite.tile<*xf32> -> !kite.tile<*xf32>
      %8 = kite.binary add %7, %arg2 : !kite.tile<*xf32>, f64 -> !kite.tile<*xf32>
      %9 = kite.unary rsqrt %8 : !kite.tile<*xf32> -> !kite.tile<*xf32>
      %10 = kite.binary mul %5, %9 : !kite.tile<*xf32>, !kite.tile<*xf32> -> !kite.tile<*xf32>
      %11 = kite.load %arg1[all] : !kite.tensor<*x?> -> !kite.tile<*x?>
      %12 = kite.dtype_const f32
      %13 = kite.cast %11, %12 : !kite.tile<*x?> -> !kite.tile<*xf32>
      %14 = kite.binary mul %10, %13 : !kite.tile<*xf32>, !kite.tile<*xf32> -> !kite.tile<*xf32>
      kite.store %14, %0[%arg3, all] : !kite.tile<*xf32>, !kite.tensor<*x?>[!kite.span]
    }
    return %0 : !kite.tensor<*x?>
  }
}

