// matmul.kite.cpp: [M, K] x [K, N] matrix multiply.
// The top-level 2-D tile loop is the grid; each program accumulates its
// output tile in f32 over a sequential loop of K tiles (tensor cores for
// 16-bit inputs) and the store casts to the output's dtype.
#include <kite/kite.hpp>
using namespace kite;

KITE_KERNEL Tensor matmul(Tensor x, Tensor y) {
  auto m = x.size(0), k = x.size(1), n = y.size(1);
  auto out = empty({m, n}, x.dtype());
  for (auto [tm, tn] : tile(m, n)) {
    auto acc = zeros({tm, tn}, f32);
    for (auto tk : tile(k)) acc = addmm(acc, x[tm, tk], y[tk, tn]);
    out[tm, tn] = acc;
  }
  return out;
}
