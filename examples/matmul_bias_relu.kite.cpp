// matmul_bias_relu.kite.cpp: relu(x @ y + bias), with the epilogue fused.
// The same loop as matmul.kite.cpp; the bias tile [BN] broadcasts over the
// rows of the f32 accumulator before the store, so the product never makes
// a round trip through memory.
#include <kite/kite.hpp>
using namespace kite;

KITE_KERNEL Tensor matmul_bias_relu(Tensor x, Tensor y, Tensor bias) {
  auto m = x.size(0), k = x.size(1), n = y.size(1);
  auto out = empty({m, n}, x.dtype());
  for (auto [tm, tn] : tile(m, n)) {
    auto acc = zeros({tm, tn}, f32);
    for (auto tk : tile(k)) acc = addmm(acc, x[tm, tk], y[tk, tn]);
    out[tm, tn] = relu(acc + bias[tn]);
  }
  return out;
}

// A richer epilogue, as a transformer block writes it: gelu(x @ y + bias)
// scaled and added to a residual [M, N], all on the f32 sums before the
// one store. The residual and bias tiles are read straight into the sums'
// layout.
KITE_KERNEL Tensor matmul_epilogue(Tensor x, Tensor y, Tensor bias, Tensor residual,
                                   double scale) {
  auto m = x.size(0), k = x.size(1), n = y.size(1);
  auto out = empty({m, n}, x.dtype());
  for (auto [tm, tn] : tile(m, n)) {
    auto acc = zeros({tm, tn}, f32);
    for (auto tk : tile(k)) acc = addmm(acc, x[tm, tk], y[tk, tn]);
    out[tm, tn] = gelu(acc + bias[tn]) * scale + residual[tm, tn];
  }
  return out;
}
