// rmsnorm.kite.cpp: RMS norm over the last dimension of [N, D], with a weight.
// One tile of rows per program, whole rows in registers, f32 statistics; the
// store casts the result back to the input's dtype.
#include <kite/kite.hpp>
using namespace kite;

KITE_KERNEL Tensor rmsnorm(Tensor x, Tensor weight, double eps) {
  auto out = empty_like(x);
  for (auto tn : tile(x.size(0))) {
    auto row = x[tn, all].to(f32);
    auto rrms = rsqrt(mean(row * row, 1, true) + eps);
    out[tn, all] = row * rrms * weight[all].to(f32);
  }
  return out;
}
