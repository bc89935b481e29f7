// softmax.kite.cpp: row softmax of a [N, M] tensor, two ways.
// `softmax` keeps a whole row in registers per tile of rows. `softmax_two_pass`
// streams column tiles of a tunable width: the first pass keeps an online
// max and rescaled sum, the second normalizes; rows of any length fit.
#include <kite/kite.hpp>
using namespace kite;

KITE_KERNEL Tensor softmax(Tensor x) {
  auto out = empty_like(x);
  for (auto tn : tile(x.size(0))) {
    auto row = x[tn, all].to(f32);
    auto e = exp(row - amax(row, 1, true));
    out[tn, all] = e / sum(e, 1, true);
  }
  return out;
}

KITE_KERNEL Tensor softmax_two_pass(Tensor x) {
  auto m = x.size(0), n = x.size(1);
  auto out = empty_like(x);
  auto bm = register_block_size(m);
  auto bn = register_block_size(n);
  for (auto tm : tile(m, bm)) {
    auto m_i = full({tm}, -INFINITY, f32);  // running row max
    auto d_i = zeros({tm}, f32);            // running sum of exp(x - m_i)
    for (auto tn : tile(n, bn)) {
      auto values = x[tm, tn].to(f32);
      auto m_new = maximum(m_i, amax(values, 1));
      d_i = d_i * exp(m_i - m_new) + sum(exp(values - m_new.unsqueeze(1)), 1);
      m_i = m_new;
    }
    for (auto tn : tile(n, bn)) {
      auto values = x[tm, tn].to(f32);
      out[tm, tn] = exp(values - m_i.unsqueeze(1)) / d_i.unsqueeze(1);
    }
  }
  return out;
}
