module {
  func.func @welford(%arg0: !kite.tensor<*x?> {kite.name = "x"}, %arg1: !kite.tensor<*x?> {kite.name = "weight"}, %arg2: !kite.tensor<*x?> {kite.name = "bias"}, %arg3: f64 {kite.name = "eps"}) -> !kite.tensor<*x?> attributes {kite.kernel} {
    %0 = kite.size %arg0[0] : !kite.tensor<*x?>
    %1 = kite.size %arg0[1] : !kite.tensor<*x?>
    %2 = kite.empty_like %arg0 : !kite.tensor<*x?> -> !kite.tensor<*x?>
    %c0_i64 = arith.constant 0 : i64
    %3 = kite.block_size 0 extent %0 : i64
    kite.tile_for (%arg4) = (%c0_i64) to (%0) block (%3) {
      %4 = kite.dtype_const f32
      %cst = arith.constant 0.000000e+00 : f32
      %5 = kite.full [%arg4], %cst, %4 : [!kite.span], f32 -> !kite.tile<?xf32>
      %6 = kite.dtype_const f32
      %cst_0 = arith.constant 0.000000e+00 : f32
      %7 = kite.full [%arg4], %cst_0, %6 : [!kite.span], f32 -> !kite.tile<?xf32>
      %c0_i64_1 = arith.constant 0 : i64
      %8 = kite.block_size 1 extent %1 : i64
      %9 = builtin.unrealized_conversion_cast %5 : !kite.tile<?xf32> to !kite.tile<*xf32>
      %10 = builtin.unrealized_conversion_cast %7 : !kite.tile<?xf32> to !kite.tile<*xf32>
      %11:2 = kite.tile_for (%arg5) = (%c0_i64_1) to (%1) block (%8) iter_args(%arg6 = %9, %arg7 = %10) -> (!kite.tile<*xf32>, !kite.tile<*xf32>) {
        %16 = kite.load %arg0[%arg4, %arg5] : !kite.tensor<*x?>[!kite.span, !kite.span] -> !kite.tile<*x?>
        %17 = kite.dtype_const f32
        %18 = kite.cast %16, %17 : !kite.tile<*x?> -> !kite.tile<*xf32>
        %19 = kite.span_query begin %arg5
        %20 = arith.sitofp %19 : i64 to f32
        %21 = kite.span_query end %arg5
        %22 = kite.span_query begin %arg5
        %23 = arith.subi %21, %22 : i64
        %24 = arith.sitofp %23 : i64 to f32
        %25 = kite.span_query end %arg5
        %26 = arith.sitofp %25 : i64 to f32
        %27 = kite.reduce mean %18 {dim = 1 : i64} : !kite.tile<*xf32> -> !kite.tile<*xf32>
        %28 = kite.unsqueeze %27 {dim = 1 : i64} : !kite.tile<*xf32> -> !kite.tile<*xf32>
        %29 = kite.binary sub %18, %28 : !kite.tile<*xf32>, !kite.tile<*xf32> -> !kite.tile<*xf32>
        %30 = kite.binary sub %27, %arg6 : !kite.tile<*xf32>, !kite.tile<*xf32> -> !kite.tile<*xf32>
        %31 = arith.divf %24, %26 : f32
        %32 = kite.binary mul %30, %31 : !kite.tile<*xf32>, f32 -> !kite.tile<*xf32>
        %33 = kite.binary add %arg6, %32 : !kite.tile<*xf32>, !kite.tile<*xf32> -> !kite.tile<*xf32>
        %34 = kite.binary mul %29, %29 : !kite.tile<*xf32>, !kite.tile<*xf32> -> !kite.tile<*xf32>
        %35 = kite.reduce sum %34 {dim = 1 : i64} : !kite.tile<*xf32> -> !kite.tile<*xf32>
        %36 = kite.binary add %arg7, %35 : !kite.tile<*xf32>, !kite.tile<*xf32> -> !kite.tile<*xf32>
        %37 = kite.binary mul %30, %30 : !kite.tile<*xf32>, !kite.tile<*xf32> -> !kite.tile<*xf32>
        %38 = arith.mulf %20, %24 : f32
        %39 = arith.divf %38, %26 : f32
        %40 = kite.binary mul %37, %39 : !kite.tile<*xf32>, f32 -> !kite.tile<*xf32>
        %41 = kite.binary add %36, %40 : !kite.tile<*xf32>, !kite.tile<*xf32> -> !kite.tile<*xf32>
        kite.yield %33, %41 : !kite.tile<*xf32>, !kite.tile<*xf32>
      }
      %12 = kite.binary div %11#1, %1 : !kite.tile<*xf32>, i64 -> !kite.tile<*xf32>
      %13 = kite.binary add %12, %arg3 : !kite.tile<*xf32>, f64 -> !kite.tile<*xf32>
      %14 = kite.unary rsqrt %13 : !kite.tile<*xf32> -> !kite.tile<*xf32>
      %c0_i64_2 = arith.constant 0 : i64
      %15 = kite.block_size 2 extent %1 : i64
      kite.tile_for (%arg5) = (%c0_i64_2) to (%1) block (%15) {
        %16 = kite.load %arg0[%arg4, %arg5] : !kite.tensor<*x?>[!kite.span, !kite.span] -> !kite.tile<*x?>
        %17 = kite.dtype_const f32
        %18 = kite.cast %16, %17 : !kite.tile<*x?> -> !kite.tile<*xf32>
        %19 = kite.unsqueeze %11#0 {dim = 1 : i64} : !kite.tile<*xf32> -> !kite.tile<*xf32>
        %20 = kite.binary sub %18, %19 : !kite.tile<*xf32>, !kite.tile<*xf32> -> !kite.tile<*xf32>
        %21 = kite.unsqueeze %14 {dim = 1 : i64} : !kite.tile<*xf32> -> !kite.tile<*xf32>
        %22 = kite.binary mul %20, %21 : !kite.tile<*xf32>, !kite.tile<*xf32> -> !kite.tile<*xf32>
        %23 = kite.load %arg1[%arg5] : !kite.tensor<*x?>[!kite.span] -> !kite.tile<*x?>
        %24 = kite.dtype_const f32
        %25 = kite.cast %23, %24 : !kite.tile<*x?> -> !kite.tile<*xf32>
        %26 = kite.binary mul %22, %25 : !kite.tile<*xf32>, !kite.tile<*xf32> -> !kite.tile<*xf32>
        %27 = kite.load %arg2[%arg5] : !kite.tensor<*x?>[!kite.span] -> !kite.tile<*x?>
        %28 = kite.dtype_const f32
        %29 = kite.cast %27, %28 : !kite.tile<*x?> -> !kite.tile<*xf32>
        %30 = kite.binary add %26, %29 : !kite.tile<*xf32>, !kite.tile<*xf32> -> !kite.tile<*xf32>
        kite.store %30, %2[%arg4, %arg5] : !kite.tile<*xf32>, !kite.tensor<*x?>[!kite.span, !kite.span]
      }
    }
    return %2 : !kite.tensor<*x?>
  }
}

