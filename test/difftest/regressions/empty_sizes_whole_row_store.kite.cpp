// Reduced from difftest kernel dt0080_row_reduction (seed 1).
//
// Fixed; test/codegen/difftest-regressions.mlir compiles it. It was:
//
// An output allocated with empty({...}) or zeros({...}) keeps a dynamic
// type (!kite.tensor<?x?xf32>) through kite-specialize, so a store of a
// whole-row value through an `all` subscript fails type inference, although
// the sizes are known. The same kernel with empty_like(x) compiles.
//
//   kite inspect empty_sizes_whole_row_store.kite.cpp --kernel whole_row \
//     --arg 'x=f32[500,375]' --emit=config
//   error: cannot store a value of shape [-9223372036854775808, 375] into a
//   subscript of shape [-9223372036854775808, -9223372036854775808]
//
// (grid_row: "cannot store a value of shape [375] into a subscript of shape
// [-9223372036854775808]".) The generator avoids the form with
// --avoid=empty-all-store.
#include <kite/kite.hpp>
using namespace kite;

KITE_KERNEL Tensor whole_row(Tensor x) {
  auto out = empty({x.size(0), x.size(1)}, f32);
  for (auto tn : tile(x.size(0)))
    out[tn, all] = x[tn, all] * 2.0f;
  return out;
}

KITE_KERNEL Tensor grid_row(Tensor x) {
  auto out = zeros({x.size(0), x.size(1)}, f32);
  for (auto i : grid(x.size(0)))
    out[i, all] = x[i, all];
  return out;
}
