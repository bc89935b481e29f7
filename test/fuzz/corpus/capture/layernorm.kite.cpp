// layernorm.kite.cpp: layer norm forward over the last dimension of [N, D].
// Statistics are computed in f32 on a whole row. Two kernels:
//   layer_norm  the output only, as torch.nn.functional.layer_norm;
//   layernorm   the output and the per-row mean and 1/std, as PyTorch's
//               native_layer_norm (for a backward pass): a kernel with
//               several outputs.
#include <kite/kite.hpp>
using namespace kite;

KITE_KERNEL Tensor layer_norm(Tensor x, Tensor weight, Tensor bias, double eps) {
  auto out = empty_like(x);
  for (auto tn : tile(x.size(0))) {
    auto row = x[tn, all].to(f32);
    auto centered = row - mean(row, 1, true);
    auto rstd = rsqrt(mean(centered * centered, 1, true) + eps);
    out[tn, all] = centered * rstd * weight[all].to(f32) + bias[all].to(f32);
  }
  return out;
}

KITE_KERNEL std::tuple<Tensor, Tensor, Tensor>
layernorm(Tensor x, Tensor weight, Tensor bias, double eps) {
  auto n = x.size(0);
  auto out = empty_like(x);
  auto mean_out = empty({n}, f32), rstd_out = empty({n}, f32);
  for (auto tn : tile(n)) {
    auto row = x[tn, all].to(f32);
    auto mu = mean(row, 1, true);
    auto centered = row - mu;
    auto rstd = rsqrt(mean(centered * centered, 1, true) + eps);
    out[tn, all] = centered * rstd * weight[all].to(f32) + bias[all].to(f32);
    mean_out[tn] = mu.squeeze(1);
    rstd_out[tn] = rstd.squeeze(1);
  }
  return {out, mean_out, rstd_out};
}
