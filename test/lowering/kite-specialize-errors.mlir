// RUN: kite-opt %s --split-input-file --verify-diagnostics --kite-specialize="args='x=bf16[8,8]'"

// expected-error @+1 {{argument 'x' has rank 3 in the kernel, but x=bf16[8,8] has rank 2}}
func.func @rank(%x: !kite.tensor<?x?x?x?> {kite.name = "x"}) attributes {kite.kernel} {
  return
}

// -----

// expected-error @+1 {{kernel 'count' takes 2 arguments, 1 given}}
func.func @count(%x: !kite.tensor<*x?>, %y: !kite.tensor<*x?>) attributes {kite.kernel} {
  return
}

// -----

// expected-error @+1 {{argument 'x' is a scalar of type 'f32', but was given a tensor (x=bf16[8,8])}}
func.func @scalar(%x: f32 {kite.name = "x"}) attributes {kite.kernel} {
  return
}

// -----

func.func @broadcast(%x: !kite.tensor<*x?> {kite.name = "x"}) attributes {kite.kernel} {
  %c0 = arith.constant 0 : i64
  %c8 = arith.constant 8 : i64
  %c4 = arith.constant 4 : i64
  kite.tile_for (%t) = (%c0) to (%c8) block (%c4) {
    %a = kite.load %x[%t, all] : !kite.tensor<*x?>[!kite.span] -> !kite.tile<*x?>
    %b = kite.load %x[all, %t] : !kite.tensor<*x?>[!kite.span] -> !kite.tile<*x?>
    // expected-error @+1 {{shapes do not broadcast: '!kite.tile<4x8xbf16>' '!kite.tile<8x4xbf16>'}}
    %c = kite.binary add %a, %b : !kite.tile<*x?>, !kite.tile<*x?> -> !kite.tile<*x?>
  }
  return
}

// -----

func.func @carried(%x: !kite.tensor<*x?> {kite.name = "x"}) attributes {kite.kernel} {
  %c0 = arith.constant 0 : i64
  %c8 = arith.constant 8 : i64
  %c4 = arith.constant 4 : i64
  kite.grid_for (%i) = (%c0) to (%c8) {
    %init = kite.load %x[%i, %i] : !kite.tensor<*x?>[i64, i64] -> !kite.tile<*x?>
    // expected-error @+1 {{a variable carried by this loop changes type from '!kite.tile<bf16>' to '!kite.tile<f32>'}}
    %r = kite.tile_for (%t) = (%c0) to (%c8) block (%c4) iter_args(%a = %init) -> (!kite.tile<*x?>) {
      %h = arith.constant 0.5 : f32
      %v = kite.load %x[%i, %t] : !kite.tensor<*x?>[i64, !kite.span] -> !kite.tile<*x?>
      %s = kite.reduce sum %v {dim = 0 : i64} : !kite.tile<*x?> -> !kite.tile<*x?>
      %w = kite.binary add %a, %s : !kite.tile<*x?>, !kite.tile<*x?> -> !kite.tile<*x?>
      %f = kite.dtype_const f32
      %n = kite.cast %w, %f : !kite.tile<*x?> -> !kite.tile<*x?>
      kite.yield %n : !kite.tile<*x?>
    }
  }
  return
}
