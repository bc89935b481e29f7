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

// The 8 largest of each row of 8-bit floats (radix keys of 8 bits).
KITE_KERNEL std::tuple<Tensor, Tensor> top8(Tensor x) {
  auto m = x.size(0), n = specialize(x.size(1));
  auto v = empty({m, 8}, x.dtype());
  auto i = empty({m, 8}, i64);
  for (auto tm : tile(m)) {
    auto [a, b] = topk(x[tm, all], 8, 1, true);
    v[tm, all] = a;
    i[tm, all] = b;
  }
  return {v, i};
}

// Atomic adds into an 8-bit tensor: no GPU atomic takes one.
KITE_KERNEL Tensor scatter_add(Tensor idx, Tensor src) {
  auto n = idx.size(0);
  auto out = zeros({64}, src.dtype());
  for (auto tn : tile(n)) atomic_add(out, {idx[tn]}, src[tn]);
  return out;
}
