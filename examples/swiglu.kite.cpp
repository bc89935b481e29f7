// swiglu.kite.cpp: the SwiGLU gate, silu(a) * b, over 2-D tiles.
// Inputs are usually bf16; silu runs in f32 and the store casts back to the
// output's dtype, as PyTorch does for 16-bit activations.
#include <kite/kite.hpp>
using namespace kite;

KITE_KERNEL Tensor swiglu(Tensor a, Tensor b) {
  auto out = empty_like(a);
  for (auto [tm, tn] : tile(a.size(0), a.size(1)))
    out[tm, tn] = silu(a[tm, tn].to(f32)) * b[tm, tn].to(f32);
  return out;
}

// The gated up-projection of a SwiGLU MLP, silu(x @ w1) * (x @ w3), in one
// kernel: two product loops over the same rows of x, whose sums meet in the
// gate before the store (the [M, N] products never reach memory).
KITE_KERNEL Tensor swiglu_up(Tensor x, Tensor w1, Tensor w3) {
  auto m = x.size(0), k = x.size(1), n = w1.size(1);
  auto out = empty({m, n}, x.dtype());
  for (auto [tm, tn] : tile(m, n)) {
    auto gate = zeros({tm, tn}, f32);
    for (auto tk : tile(k))
      gate = addmm(gate, x[tm, tk], w1[tk, tn]);
    auto up = zeros({tm, tn}, f32);
    for (auto tk : tile(k))
      up = addmm(up, x[tm, tk], w3[tk, tn]);
    out[tm, tn] = silu(gate) * up;
  }
  return out;
}
