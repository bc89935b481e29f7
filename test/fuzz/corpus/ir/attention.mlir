// ARGS: q=bf16[12,100,64] k=bf16[12,100,64] v=bf16[12,100,64]
module {
  func.func @attention(%arg0: !kite.tensor<*x?> {kite.name = "q"}, %arg1: !kite.tensor<*x?> {kite.name = "k"}, %arg2: !kite.tensor<*x?> {kite.name = "v"}) -> !kite.tensor<*x?> attributes {kite.kernel} {
    %0 = kite.size %arg0[0] : !kite.tensor<*x?>
    %1 = kite.size %arg0[1] : !kite.tensor<*x?>
    %2 = kite.size %arg0[2] : !kite.tensor<*x?>
    %3 = kite.specialize %2 : i64
    %4 = kite.empty_like %arg0 : !kite.tensor<*x?> -> !kite.tensor<*x?>
    %cst = arith.constant 1.000000e+00 : f32
    %5 = arith.sitofp %3 : i64 to f32
    %6 = math.sqrt %5 : f32
    %7 = arith.divf %cst, %6 : f32
    %cst_0 = arith.constant 1.44269502 : f32
    %8 = arith.mulf %7, %cst_0 : f32
    %c0_i64 = arith.constant 0 : i64
    %c0_i64_1 = arith.constant 0 : i64
    %9 = kite.block_size 0 extent %0 : i64
    %10 = kite.block_size 1 extent %1 : i64
    kite.tile_for (%arg3, %arg4) = (%c0_i64, %c0_i64_1) to (%0, %1) block (%9, %10) {
      %cst_2 = arith.constant 0xFFF0000000000000 : f64
      %11 = kite.dtype_const f32
      %12 = kite.full [%arg3, %arg4], %cst_2, %11 : [!kite.span, !kite.span], f64 -> !kite.tile<?x?xf32>
      %13 = kite.dtype_const f32
      %cst_3 = arith.constant 0.000000e+00 : f32
      %14 = kite.full [%arg3, %arg4], %cst_3, %13 : [!kite.span, !kite.span], f32 -> !kite.tile<?x?xf32>
      %15 = kite.dtype_const f32
      %cst_4 = arith.constant 0.000000e+00 : f32
      %16 = kite.full [%arg3, %arg4, %3], %cst_4, %15 : [!kite.span, !kite.span, i64], f32 -> !kite.tile<?x?x?xf32>
      %17 = kite.load %arg0[%arg3, %arg4, all] : !kite.tensor<*x?>[!kite.span, !kite.span] -> !kite.tile<*x?>
      %c0_i64_5 = arith.constant 0 : i64
      %18 = kite.block_size 2 extent %1 : i64
      %19 = builtin.unrealized_conversion_cast %14 : !kite.tile<?x?xf32> to !kite.tile<?x?x?>
      %20 = builtin.unrealized_conversion_cast %16 : !kite.tile<?x?x?xf32> to !kite.tile<?x?x?x?>
      %21 = builtin.unrealized_conversion_cast %12 : !kite.tile<?x?xf32> to !kite.tile<?x?x?>
      %22:3 = kite.tile_for (%arg5) = (%c0_i64_5) to (%1) block (%18) iter_args(%arg6 = %19, %arg7 = %20, %arg8 = %21) -> (!kite.tile<?x?x?>, !kite.tile<?x?x?x?>, !kite.tile<?x?x?>) {
        %25 = kite.load %arg1[%arg3, %arg5, all] : !kite.tensor<*x?>[!kite.span, !kite.span] -> !kite.tile<*x?>
        %26 = kite.transpose %25 {dim0 = 1 : i64, dim1 = 2 : i64} : !kite.tile<*x?> -> !kite.tile<*x?>
        %27 = kite.bmm %17, %26 : !kite.tile<*x?>, !kite.tile<*x?> -> !kite.tile<?x?x?x?>
        %28 = kite.binary mul %27, %8 : !kite.tile<?x?x?x?>, f32 -> !kite.tile<?x?x?x?>
        %29 = kite.reduce amax %28 {dim = -1 : i64} : !kite.tile<?x?x?x?> -> !kite.tile<?x?x?>
        %30 = kite.binary maximum %arg8, %29 : !kite.tile<?x?x?>, !kite.tile<?x?x?> -> !kite.tile<?x?x?>
        %31 = kite.unsqueeze %30 {dim = -1 : i64} : !kite.tile<?x?x?> -> !kite.tile<?x?x1x?>
        %32 = kite.binary sub %28, %31 : !kite.tile<?x?x?x?>, !kite.tile<?x?x1x?> -> !kite.tile<?x?x?x?>
        %33 = kite.unary exp2 %32 : !kite.tile<?x?x?x?> -> !kite.tile<?x?x?x?>
        %34 = kite.binary sub %arg8, %30 : !kite.tile<?x?x?>, !kite.tile<?x?x?> -> !kite.tile<?x?x?>
        %35 = kite.unary exp2 %34 : !kite.tile<?x?x?> -> !kite.tile<?x?x?>
        %36 = kite.binary mul %arg6, %35 : !kite.tile<?x?x?>, !kite.tile<?x?x?> -> !kite.tile<?x?x?>
        %37 = kite.reduce sum %33 {dim = -1 : i64} : !kite.tile<?x?x?x?> -> !kite.tile<?x?x?>
        %38 = kite.binary add %36, %37 : !kite.tile<?x?x?>, !kite.tile<?x?x?> -> !kite.tile<?x?x?>
        %39 = kite.unsqueeze %35 {dim = -1 : i64} : !kite.tile<?x?x?> -> !kite.tile<?x?x1x?>
        %40 = kite.binary mul %arg7, %39 : !kite.tile<?x?x?x?>, !kite.tile<?x?x1x?> -> !kite.tile<?x?x?x?>
        %41 = kite.dtype_of %arg2 : !kite.tensor<*x?>
        %42 = kite.cast %33, %41 : !kite.tile<?x?x?x?> -> !kite.tile<?x?x?x?>
        %43 = kite.load %arg2[%arg3, %arg5, all] : !kite.tensor<*x?>[!kite.span, !kite.span] -> !kite.tile<*x?>
        %44 = kite.baddbmm %40, %42, %43 : !kite.tile<?x?x?x?>, !kite.tile<?x?x?x?>, !kite.tile<*x?> -> !kite.tile<?x?x?x?>
        kite.yield %38, %44, %30 : !kite.tile<?x?x?>, !kite.tile<?x?x?x?>, !kite.tile<?x?x?>
      }
      %23 = kite.unsqueeze %22#0 {dim = -1 : i64} : !kite.tile<?x?x?> -> !kite.tile<?x?x1x?>
      %24 = kite.binary div %22#1, %23 : !kite.tile<?x?x?x?>, !kite.tile<?x?x1x?> -> !kite.tile<?x?x?x?>
      kite.store %24, %4[%arg3, %arg4, all] : !kite.tile<?x?x?x?>, !kite.tensor<*x?>[!kite.span, !kite.span]
    }
    return %4 : !kite.tensor<*x?>
  }
}

