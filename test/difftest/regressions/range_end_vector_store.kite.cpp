// Fixed; test/codegen/difftest-regressions.mlir checks the generated CUDA.
//
// Reduced from difftest kernel dt0035_loops (seed 1): on an H200 it wrote
// out[n - 1], one past its loop's range, under every config tried:
//
//   difftest --kernels=dt0035_loops --seed=1 --sizes=N=20 --config=''
//   MISMATCH ... output 0: 1 of 20 elements differ; first at [19] of [20]:
//   got 0.143677, expected 0
//
// A tile loop over range(2, n - 1) accesses x[t] and out[t] with vectors
// of 2 elements, and masks each vector by its first element alone
// (`idx < n2` with n2 = (n - 1) - begin): vectorizing assumed the last tile
// ends at the tensor's end, where n = 20 is a multiple of 2, but the range
// ends at 19, so the last vector stores elements 18 and 19. No GPU is
// needed to see it:
//
//   kite inspect range_end_vector_store.kite.cpp --arg 'x=f32[20]' \
//     --config '{"block_sizes":[32]}' --emit=cuda
//   ... if (... < n2) store_vec<2>(&o0[(int)(b1 + ...)], ...)
//
// Expected: out[2..18] = 2 x[2..18], the rest 0. The generator leaves the
// form out with --avoid=range-end-vector.
#include <kite/kite.hpp>
using namespace kite;

KITE_KERNEL Tensor range_store(Tensor x) {
  auto n = x.size(0);
  auto out = zeros({n}, f32);
  for (auto t : tile(range(2, n - 1)))
    out[t] = x[t] * 2.0f;
  return out;
}
