// embedding.kite.cpp: look up rows of weight [V, D] by integer ids [N].
// weight[ids[tn], td] is a gather: the loaded ids index dimension 0 and the
// tile td indexes dimension 1, giving a [BN, BD] tile, as in PyTorch.
#include <kite/kite.hpp>
using namespace kite;

KITE_KERNEL Tensor embedding(Tensor ids, Tensor weight) {
  auto n = ids.size(0), d = weight.size(1);
  auto out = empty({n, d}, weight.dtype());
  for (auto [tn, td] : tile(n, d))
    out[tn, td] = weight[ids[tn], td];
  return out;
}
