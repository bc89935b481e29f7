// Quantizes to e4m3 with a scale, and dequantizes back (test/codegen/fp8.mlir).
#include <kite/kite.hpp>
using namespace kite;

KITE_KERNEL Tensor quantize(Tensor x, float scale) {
  auto m = x.size(0), n = x.size(1);
  auto out = empty({m, n}, e4m3);
  for (auto [tm, tn] : tile(m, n))
    out[tm, tn] = (x[tm, tn].to(f32) * scale).to(e4m3);
  return out;
}

KITE_KERNEL Tensor dequantize(Tensor q, float scale) {
  auto m = q.size(0), n = q.size(1);
  auto out = empty({m, n}, bf16);
  for (auto [tm, tn] : tile(m, n))
    out[tm, tn] = (q[tm, tn].to(f32) * scale).to(bf16);
  return out;
}
