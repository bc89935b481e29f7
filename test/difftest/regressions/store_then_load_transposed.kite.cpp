// Fixed; test/codegen/difftest-regressions.mlir checks the generated CUDA.
//
// Reduced from difftest kernel dt0197_elementwise (seed 1): on an H200 up
// to 1776 of 9300 elements came back NaN (the poisoned output's value):
//
//   difftest --kernels=dt0197_elementwise --seed=1 --sizes=M=300,N=31 --config=''
//   MISMATCH ... output 0: 196 of 9300 elements differ; first at [6, 128]
//   of [31, 300]: got nan, expected -0.809082
//
// A program stores a transposed tile into out[tn, tm] and then loads
// out[tn, tm] back (the compound assignment). The store runs in one thread
// mapping (scalar stores, transposed) and the load in another (4-element
// vectors), with no barrier between them, so a thread reads elements that
// another thread of the program has not stored yet. Reference mode (and
// the language) run the statements in order. No GPU is needed to see it:
//
//   kite inspect store_then_load_transposed.kite.cpp --arg 'x=f32[300,31]' \
//     --config '{"block_sizes":[32,32]}' --emit=cuda
//   ... o0[...] = cvt<float>(v6[...]);        (the store)
//   ... load_vec<4>(&v14[...], &o0[...]);      (the load, no __syncthreads between)
//
// The generator leaves the form out with --avoid=store-then-load.
#include <kite/kite.hpp>
using namespace kite;

KITE_KERNEL Tensor transposed_update(Tensor x) {
  auto out = empty({x.size(1), x.size(0)}, f32);
  for (auto [tm, tn] : tile(x.size(0), x.size(1))) {
    out[tn, tm] = x[tm, tn].transpose(0, 1);
    out[tn, tm] += x[tm, tn].transpose(0, 1);
  }
  return out;
}
