// mlp.kite.cpp: a fused two-layer MLP, gelu(x @ w1) @ w2, with x [M, D],
// w1 [D, H] and w2 [H, E]. Each program owns a tile of rows and streams the
// hidden dim: a [BM, BH] tile of the hidden activations is computed, passed
// through gelu and multiplied into the [BM, E] f32 accumulator at once, so
// the [M, H] activations never reach memory.
#include <kite/kite.hpp>
using namespace kite;

KITE_KERNEL Tensor mlp(Tensor x, Tensor w1, Tensor w2) {
  auto m = x.size(0), hidden = w1.size(1);
  auto e = specialize(w2.size(1));
  auto out = empty({m, e}, x.dtype());
  for (auto tm : tile(m)) {
    auto acc = zeros({tm, e}, f32);
    auto xt = x[tm, all];
    for (auto th : tile(hidden)) {
      auto h = gelu(kite::matmul(xt, w1[all, th])); // [BM, BH], x's dtype
      acc = addmm(acc, h, w2[th, all]);
    }
    out[tm, all] = acc;
  }
  return out;
}
