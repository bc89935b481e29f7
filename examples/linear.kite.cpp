// linear.kite.cpp: products with a K-major right operand, the layout of
// torch.nn.Linear's weight ([N, K], each output column's weights in one
// row) and of attention's keys.
//
//   linear  out = x @ w^T + bias   (torch.nn.functional.linear)
//   bmm_nt  out = a @ b^T per batch ([B, M, K] x [B, N, K], q @ k^T)
//
// w[tn, tk].transpose(0, 1) is the [tk, tn] tile the product takes; on
// Hopper it is also the layout wgmma reads natively, so the main loop
// copies w's rows by TMA as they are.
#include <kite/kite.hpp>
using namespace kite;

KITE_KERNEL Tensor linear(Tensor x, Tensor w, Tensor bias) {
  auto m = x.size(0), k = x.size(1), n = w.size(0);
  auto out = empty({m, n}, x.dtype());
  for (auto [tm, tn] : tile(m, n)) {
    auto acc = zeros({tm, tn}, f32);
    for (auto tk : tile(k)) acc = addmm(acc, x[tm, tk], w[tn, tk].transpose(0, 1));
    out[tm, tn] = acc + bias[tn];
  }
  return out;
}

KITE_KERNEL Tensor bmm_nt(Tensor a, Tensor b) {
  auto nb = a.size(0), m = a.size(1), k = a.size(2), n = b.size(1);
  auto out = empty({nb, m, n}, a.dtype());
  for (auto [tb, tm, tn] : tile(nb, m, n)) {
    auto acc = zeros({tb, tm, tn}, f32);
    for (auto tk : tile(k)) acc = baddbmm(acc, a[tb, tm, tk], b[tb, tn, tk].transpose(1, 2));
    out[tb, tm, tn] = acc;
  }
  return out;
}
