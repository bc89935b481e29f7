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
