// sum.kite.cpp: sum of each row of [N, M], a whole row per tile.
// The simplest reduction: load rows, reduce along dim 1. Whether the row is
// reduced in one piece or in chunks is the autotuner's choice
// (`reduction_loops`); long_sum.kite.cpp writes the chunked loop by hand.
#include <kite/kite.hpp>
using namespace kite;

KITE_KERNEL Tensor sum_kernel(Tensor x) {
  auto out = empty({x.size(0)}, x.dtype());
  for (auto tn : tile(x.size(0)))
    out[tn] = sum(x[tn, all].to(f32), 1);
  return out;
}
