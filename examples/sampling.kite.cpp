// sampling.kite.cpp: top-k sampling of the next token, one kernel per
// batch: for each row of logits, the k largest, their softmax, its running
// sum, one uniform draw, and the first token whose running probability
// passes the draw. Every step is a kite operation on tiles (topk, softmax,
// cumsum, rand, a count), so the whole sampler is one launch. The draw for
// row r is rand(seed, r): the same token in reference mode and on the GPU.
#include <kite/kite.hpp>
using namespace kite;

KITE_KERNEL Tensor sample_topk(Tensor logits, int64_t k_, double temperature, int64_t seed) {
  auto b = logits.size(0), k = specialize(k_);
  auto tokens = empty({b}, i64);
  for (auto tb : tile(b)) {
    auto [top, index] = topk(logits[tb, all].to(f32), k, 1);  // [tb, k], largest first
    auto e = exp((top - amax(top, 1, true)) / temperature);
    auto cdf = cumsum(e / sum(e, 1, true), 1);
    auto u = rand(seed, tb.index());                           // [tb]
    // The first position whose running probability exceeds u (the last if
    // rounding leaves the total just under it).
    auto pick = minimum(sum((cdf <= u.unsqueeze(1)).to(i64), 1), k - 1);
    auto hit = arange(k).unsqueeze(0) == pick.unsqueeze(1);
    tokens[tb] = sum(where(hit, index, 0), 1);
  }
  return tokens;
}
