module {
  func.func @layer_norm(%arg0: !kite.tensor<*x?> {kite.name = "x"}, %arg1: !kite.tensor<*x?> {kite.name = "weight"}, %arg2: !kite.tensor<*x?> {kite.name = "bias"}, %arg3: f64 {kite.name = "eps"}) -> !kite.tensor<*x?> attributes {kite.kernel} {
    %0 = kite.empty_like %arg0 : !kite.tensor<*x?> -> !kite.tensor<*x?>
    %1 = kite.size %arg0[0] : !kite.tensor<*x?>
    %c0_i64 = arith.constant 0 : i64
    %2 = kite.block_size 0 extent %1 : i64
    kite.tile_for (%arg4) = (%c0_i64) to (%1) block (%2) {
      %3 = kite.load %arg0[%arg4, all] : !kite.tensor<*x?>[!kite.span] -> !kite.tile<*x?>
      %4 = kite.dtype_const f32
      %5 = kite.cast %3, %4 : !kite.tile<*x?> -> !kite.tile<*xf32>
      %6 = kite.reduce mean %5 {dim = 1 : i64, keepdim} : !kite.tile<*xf32> -> !kite.tile<*xf32>
      %7 = kite.binary sub %5, %6 : !kite.tile<*xf32>, !kite.tile<*xf32> -> !kite.tile<*xf32>
      %8 = kite.binary mul %7, %7 : !kite.tile<*xf32>, !kite.tile<*xf32> -> !kite.tile<*xf32>
      %9 = kite.reduce mean %8 {dim = 1 : i64, keepdim} : !kite.tile<*xf32> -> !kite.tile<*xf32>
      %10 = kite.binary add %9, %arg3 : !kite.tile<*xf32>, f64 -> !kite.tile<*xf32>
      %11 = kite.unary rsqrt %10 : !kite.tile<*xf32> -> !kite.tile<*xf32>
      %12 = kite.binary mul %7, %11 : !kite.tile<*xf32>, !kite.tile<*xf32> -> !kite.tile<*xf32>
      %13 = kite.load %arg1[all] : !kite.tensor<*x?> -> !kite.tile<*x?>
      %14 = kite.dtype_const f32
      %15 = kite.cast %13, %14 : !kite.tile<*x?> -> !kite.tile<*xf32>
      %16 = kite.binary mul %12, %15 : !kite.tile<*xf32>, !kite.tile<*xf32> -> !kite.tile<*xf32>
      %17 = kite.load %arg2[all] : !kite.tensor<*x?> -> !kite.tile<*x?>
      %18 = kite.dtype_const f32
      %19 = kite.cast %17, %18 : !kite.tile<*x?> -> !kite.tile<*xf32>
      %20 = kite.binary add %16, %19 : !kite.tile<*xf32>, !kite.tile<*xf32> -> !kite.tile<*xf32>
      kite.store %20, %0[%arg4, all] : !kite.tile<*xf32>, !kite.tensor<*x?>[!kite.span]
    }
    return %0 : !kite.tensor<*x?>
  }
  func.func @layernorm(%arg0: !kite.tensor<*x?> {kite.name = "x"}, %arg1: !kite.tensor<*x?> {kite.name = "weight"}, %arg2: !kite.tensor<*x?> {kite.name = "bias"}, %arg3: f64 {kite.name = "eps"}) -> (!kite.tensor<*x?>, !kite.tensor<?xf32>, !kite.tensor<?xf32>) attributes {kite.kernel} {
    %0 = kite.size %arg0[0] : !kite.tensor<*x?>
    %1 = kite.empty_like %arg0 : !kite.tensor<*x?> -> !kite.tensor<*x?>
    %2 = kite.dtype_const f32
    %3 = kite.empty [%0], %2 : !kite.tensor<?xf32>
    %4 = kite.dtype_const f32
    %5 = kite.empty [%0], %4 : !kite.tensor<?xf32>
    %c0_i64 = arith.constant 0 : i64
    %6 = kite.block_size 0 extent %0 : i64
    kite.tile_for (%arg4) = (%c0_i64) to (%0) block (%6) {
      %7 = kite.load %arg0[%arg4, all] : !kite.tensor<*x?>[!kite.span] -> !kite.tile<*x?>
      %8 = kite.dtype_const f32
      %9 = kite.cast %7, %8 : !kite.tile<*x?> -> !kite.tile<*xf32>
      %10 = kite.reduce mean %9 {dim = 1 : i64, keepdim} : !kite.tile<*xf32> -> !kite.tile<*xf32>
      %11 = kite.binary sub %9, %10 : !kite.tile<*xf32>, !kite.tile<*xf32> -> !kite.tile<*xf32>
      %12 = kite.binary mul %11, %11 : !kite.tile<*xf32>, !kite.tile<*xf32> -> !kite.tile<*xf32>
      %13 = kite.reduce mean %12 {dim = 1 : i64, keepdim} : !kite.tile<*xf32> -> !kite.tile<*xf32>
      %14 = kite.binary add %13, %arg3 : !kite.tile<*xf32>, f64 -> !kite.tile<*xf32>
      %15 = kite.unary rsqrt %14 : !kite.tile<*xf32> -> !kite.tile<*xf32>
      %16 = kite.binary mul %11, %15 : !kite.tile<*xf32>, !kite.tile<*xf32> -> !kite.tile<*xf32>
      %17 = kite.load %arg1[all] : !kite.tensor<*x?> -> !kite.tile<*x?>
      %18 = kite.dtype_const f32
      %19 = kite.cast %17, %18 : !kite.tile<*x?> -> !kite.tile<*xf32>
      %20 = kite.binary mul %16, %19 : !kite.tile<*xf32>, !kite.tile<*xf32> -> !kite.tile<*xf32>
      %21 = kite.load %arg2[all] : !kite.tensor<*x?> -> !kite.tile<*x?>
      %22 = kite.dtype_const f32
      %23 = kite.cast %21, %22 : !kite.tile<*x?> -> !kite.tile<*xf32>
      %24 = kite.binary add %20, %23 : !kite.tile<*xf32>, !kite.tile<*xf32> -> !kite.tile<*xf32>
      kite.store %24, %1[%arg4, all] : !kite.tile<*xf32>, !kite.tensor<*x?>[!kite.span]
      %25 = kite.squeeze %10 {dim = 1 : i64} : !kite.tile<*xf32> -> !kite.tile<*xf32>
      kite.store %25, %3[%arg4] : !kite.tile<*xf32>, !kite.tensor<?xf32>[!kite.span]
      %26 = kite.squeeze %15 {dim = 1 : i64} : !kite.tile<*xf32> -> !kite.tile<*xf32>
      kite.store %26, %5[%arg4] : !kite.tile<*xf32>, !kite.tensor<?xf32>[!kite.span]
    }
    return %1, %3, %5 : !kite.tensor<*x?>, !kite.tensor<?xf32>, !kite.tensor<?xf32>
  }
}

