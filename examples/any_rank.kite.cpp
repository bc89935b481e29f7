// any_rank.kite.cpp: elementwise add of tensors of any rank. The loop tiles
// every dimension of x's shape (`tile(x.sizes())`); since the kernel does
// not fix that rank, kite captures it once per rank from 1 to 6 and each
// launch compiles the form for its tensors' rank.
#include <kite/kite.hpp>
using namespace kite;

KITE_KERNEL Tensor add_any(Tensor x, Tensor y) {
  auto out = empty_like(x);
  for (auto t : tile(x.sizes()))
    out[t] = x[t] + y[t];
  return out;
}
