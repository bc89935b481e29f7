// bmm.kite.cpp: batched matrix multiply, [B, M, K] x [B, K, N].
// A 3-D tile loop over (batch, rows, columns) is the grid; baddbmm adds each
// [BB, BM, BK] x [BB, BK, BN] product into an f32 accumulator.
#include <kite/kite.hpp>
using namespace kite;

KITE_KERNEL Tensor bmm(Tensor a, Tensor b) {
  auto nb = a.size(0), m = a.size(1), k = a.size(2), n = b.size(2);
  auto out = empty({nb, m, n}, a.dtype());
  for (auto [tb, tm, tn] : tile(nb, m, n)) {
    auto acc = zeros({tb, tm, tn}, f32);
    for (auto tk : tile(k)) acc = baddbmm(acc, a[tb, tm, tk], b[tb, tk, tn]);
    out[tb, tm, tn] = acc;
  }
  return out;
}
