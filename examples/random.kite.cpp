// random.kite.cpp: in-kernel random numbers. A draw takes a seed and an
// integer offset per element (here the element's flat index), and its value
// depends on those two only (Philox 4x32-10), never on block sizes, configs
// or the GPU: reference mode draws the same bits.
//
// `dropout` is inverted dropout (kept elements scaled by 1 / (1 - p), as
// torch.nn.functional.dropout does); `add_noise` adds Gaussian noise;
// `random_draws` returns the raw draws at given offsets.
#include <kite/kite.hpp>
using namespace kite;

KITE_KERNEL Tensor dropout(Tensor x, double p, int64_t seed) {
  auto m = x.size(0), n = x.size(1);
  auto out = empty_like(x);
  for (auto [tm, tn] : tile(m, n)) {
    auto offsets = tm.index().unsqueeze(1) * n + tn.index().unsqueeze(0);
    auto keep = rand(seed, offsets) >= p;
    out[tm, tn] = where(keep, x[tm, tn] * (1.0 / (1.0 - p)), 0.0);
  }
  return out;
}

KITE_KERNEL Tensor add_noise(Tensor x, double sigma, int64_t seed) {
  auto out = empty_like(x);
  for (auto t : tile(x.size(0)))
    out[t] = x[t] + randn(seed, t.index()) * sigma;
  return out;
}

KITE_KERNEL std::tuple<Tensor, Tensor, Tensor> random_draws(Tensor offsets, int64_t seed) {
  auto m = offsets.size(0), n = offsets.size(1);
  auto u = empty({m, n}, f32);
  auto z = empty({m, n}, f32);
  auto k = empty({m, n}, i64);
  for (auto [tm, tn] : tile(m, n)) {
    auto off = offsets[tm, tn];
    u[tm, tn] = rand(seed, off);
    z[tm, tn] = randn(seed, off);
    k[tm, tn] = randint(seed, off, -5, 1000);
  }
  return {u, z, k};
}
