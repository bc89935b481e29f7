// welford.kite.cpp: layer norm forward with Welford's online mean/variance.
// Column chunks of a row are folded into a running (mean, M2) with Chan's
// parallel update, so no row is held whole and no E[x^2] - E[x]^2
// cancellation occurs; a second pass over the chunks normalizes.
#include <kite/kite.hpp>
using namespace kite;

KITE_KERNEL Tensor welford(Tensor x, Tensor weight, Tensor bias, double eps) {
  auto n = x.size(0), d = x.size(1);
  auto out = empty_like(x);
  for (auto tn : tile(n)) {
    auto mu = zeros({tn}, f32), m2 = zeros({tn}, f32);
    for (auto td : tile(d)) {
      auto chunk = x[tn, td].to(f32);
      // Columns folded in before this chunk, in it, and in all so far.
      float seen = td.begin(), cnt = td.end() - td.begin(), total = td.end();
      auto chunk_mean = mean(chunk, 1);
      auto dev = chunk - chunk_mean.unsqueeze(1);
      auto delta = chunk_mean - mu;
      mu = mu + delta * (cnt / total);
      m2 = m2 + sum(dev * dev, 1) + delta * delta * (seen * cnt / total);
    }
    auto rstd = rsqrt(m2 / d + eps);
    for (auto td : tile(d)) {
      auto y = (x[tn, td].to(f32) - mu.unsqueeze(1)) * rstd.unsqueeze(1);
      out[tn, td] = y * weight[td].to(f32) + bias[td].to(f32);
    }
  }
  return out;
}
