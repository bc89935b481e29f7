// ARGS: x=f32[8,64]
// CONFIG: {"block_sizes": [2], "early_loads": true}
// The reshape's static size product multiplies kDynamic (INT64_MIN) dims: signed overflow in lowering/TypeInference.cpp (UBSan).
func.func @readback(%arg0: !kite.tensor<*x?> {kite.name = "x"}) -> !kite.tensor<*x?> attributes {kite.kernel} {
  %0 = kite.empty_like %arg0 : !kite.tensor<*x?> -> !kite.tensor<*x?>
  %1 = kite.size %arg0[0] : !kite.tensor<*x?>
  %2 = kite.size %arg0[1] : !kite.tensor<*x?>
  %3 = kite.tensor_reshape %0 [%1, %2] view : !kite.tensor<*x?> -> !kite.tensor<?x?x?>
  %c0_i64 = arith.constant 0 : i64
  %4 = kite.block_size 0 extent %1 : i64
  kite.tile_for (%arg1) = (%c0_i64) to (%1) block (%4) {
    %5 = kite.load %arg0[%arg1, all] : !kite.tensor<*x?>[!kite.span] -> !kite.tile<*x?>
    kite.store %5, %0[%arg1, all] : !kite.tile<*x?>, !kite.tensor<*x?>[!kite.span]
    %6 = kite.reduce sum %5 {dim = 1 : i64, keepdim} : !kite.tile<*x?> -> !kite.tile<*x?>
    %7 = kite.load %3[%arg1, all] : !kite.tensor<?x?x?>[!kite.span] -> !kite.tile<*x?>
    %8 = kite.binary add %7, %6 : !kite.tile<*x?>, !kite.tile<*x?> -> !kite.tile<*x?>
    kite.store %8, %0[%arg1, all] : !kite.tile<*x?>, !kite.tensor<*x?>[!kite.span]
  }
  return %0 : !kite.tensor<*x?>
}
