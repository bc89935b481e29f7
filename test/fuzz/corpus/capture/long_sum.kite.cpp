// long_sum.kite.cpp: row sum of [N, M] for rows too long for registers.
// register_block_size(m) declares the chunk width as a tunable before the
// loops; each program walks its rows chunk by chunk, adding every chunk's
// f32 partial sums into a running [BN] accumulator.
#include <kite/kite.hpp>
using namespace kite;

KITE_KERNEL Tensor long_sum(Tensor x) {
  auto n = x.size(0), m = x.size(1);
  auto out = empty({n}, x.dtype());
  auto bm = register_block_size(m);
  for (auto tn : tile(n)) {
    auto acc = zeros({tn}, f32);
    for (auto tm : tile(m, bm))
      acc = acc + sum(x[tn, tm].to(f32), 1);
    out[tn] = acc;
  }
  return out;
}
