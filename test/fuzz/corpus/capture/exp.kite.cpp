// exp.kite.cpp: elementwise exp of a contiguous tensor of any rank.
// Viewing input and output as 1-D (view({-1})) makes one flat loop serve
// every rank; the math runs in f32 and the store casts back to the output's
// dtype, so the same kernel serves f32 and 16-bit inputs.
#include <kite/kite.hpp>
using namespace kite;

KITE_KERNEL Tensor exp_kernel(Tensor x) {
  auto out = empty_like(x);
  auto flat_in = x.view({-1});
  auto flat_out = out.view({-1});
  for (auto t : tile(flat_in.size(0)))
    flat_out[t] = exp(flat_in[t].to(f32));
  return out;
}
