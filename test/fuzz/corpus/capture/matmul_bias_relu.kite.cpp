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
