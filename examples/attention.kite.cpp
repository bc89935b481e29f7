// attention.kite.cpp: flash attention forward, softmax(q k^T / sqrt(D)) v.
// q, k, v are [B*H, S, D]. Each program owns a tile of queries and streams
// key/value tiles with an online softmax in base 2 (running max m_i, running
// sum l_i), so the [S, S] score matrix is never materialized.
#include <kite/kite.hpp>
using namespace kite;

KITE_KERNEL Tensor attention(Tensor q, Tensor k, Tensor v) {  // [B*H, S, D]
  auto bh = q.size(0), s = q.size(1), d = specialize(q.size(2));
  auto out = empty_like(q);
  float scale = 1.0f / std::sqrt(float(d)) * 1.44269504f;
  for (auto [tb, tq] : tile(bh, s)) {
    auto m_i = full({tb, tq}, -INFINITY, f32);
    auto l_i = zeros({tb, tq}, f32);
    auto acc = zeros({tb, tq, d}, f32);
    auto qt = q[tb, tq, all];
    for (auto tk : tile(s)) {
      auto qk = bmm(qt, k[tb, tk, all].transpose(1, 2), f32) * scale;
      auto m_new = maximum(m_i, amax(qk, -1));
      auto p = exp2(qk - m_new.unsqueeze(-1));
      auto alpha = exp2(m_i - m_new);
      l_i = l_i * alpha + sum(p, -1);
      acc = baddbmm(acc * alpha.unsqueeze(-1), p.to(v.dtype()), v[tb, tk, all]);
      m_i = m_new;
    }
    out[tb, tq, all] = acc / l_i.unsqueeze(-1);
  }
  return out;
}
