// cross_entropy.kite.cpp: per-row cross-entropy loss of bf16 logits [N, V].
// loss[i] = logsumexp(logits[i, :]) - logits[i, target[i]]. The whole row is
// reduced in f32, and the target logit is a gather: logits indexed by the
// tile's row indices and the loaded targets, pointwise. Average on the host.
#include <kite/kite.hpp>
using namespace kite;

KITE_KERNEL Tensor cross_entropy(Tensor logits, Tensor target) {
  auto n = logits.size(0);
  auto losses = empty({n}, f32);
  for (auto tn : tile(n)) {
    auto row = logits[tn, all].to(f32);
    auto row_max = amax(row, 1);
    auto lse = row_max + log(sum(exp(row - row_max.unsqueeze(1)), 1));
    losses[tn] = lse - logits[tn.index(), target[tn]].to(f32);
  }
  return losses;
}
