// exp.kite.cpp: elementwise exp of a tensor of any rank.
// tile(x.sizes()) tiles every dimension at once and x[t] indexes with the
// whole N-D tile; the math runs in f32 and the store casts back to the
// output's dtype, so the same kernel serves f32 and 16-bit inputs.
#include <kite/kite.hpp>
using namespace kite;

KITE_KERNEL Tensor exp_kernel(Tensor x) {
  auto out = empty_like(x);
  for (auto t : tile(x.sizes()))
    out[t] = exp(x[t].to(f32));
  return out;
}
