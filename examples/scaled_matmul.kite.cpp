// scaled_matmul.kite.cpp: FP8 matrix products with scales, as
// torch._scaled_mm. x is [M, K] and w is [N, K], in e4m3 or e5m2; w's rows
// run along N (K-major, torch._scaled_mm's column-major second operand), the
// layout Hopper's 8-bit tensor cores take. The sums are f32, scaled once and
// stored as bf16.
//
//   scaled_matmul          out = (x @ w^T) * scale_x * scale_w (per-tensor scales)
//   scaled_matmul_rowwise  out[i, j] = (x @ w^T)[i, j] * scale_x[i] * scale_w[j]
#include <kite/kite.hpp>
using namespace kite;

KITE_KERNEL Tensor scaled_matmul(Tensor x, Tensor w, float scale_x, float scale_w) {
  auto m = x.size(0), k = x.size(1), n = w.size(0);
  auto out = empty({m, n}, bf16);
  float scale = scale_x * scale_w;
  for (auto [tm, tn] : tile(m, n)) {
    auto acc = zeros({tm, tn}, f32);
    for (auto tk : tile(k)) acc = addmm(acc, x[tm, tk], w[tn, tk].transpose(0, 1));
    out[tm, tn] = (acc * scale).to(bf16);
  }
  return out;
}

KITE_KERNEL Tensor scaled_matmul_rowwise(Tensor x, Tensor w, Tensor scale_x, Tensor scale_w) {
  auto m = x.size(0), k = x.size(1), n = w.size(0);
  auto out = empty({m, n}, bf16);
  for (auto [tm, tn] : tile(m, n)) {
    auto acc = zeros({tm, tn}, f32);
    for (auto tk : tile(k)) acc = addmm(acc, x[tm, tk], w[tn, tk].transpose(0, 1));
    out[tm, tn] = (acc * scale_x[tm].unsqueeze(-1) * scale_w[tn]).to(bf16);
  }
  return out;
}
