// fp8.kite.cpp: conversions to and from the 8-bit floats, which the GPU
// must round exactly as reference mode does (examples_gpu_test compares
// them bit for bit): to nearest even, without saturating.
#include <kite/kite.hpp>
using namespace kite;

KITE_KERNEL std::tuple<Tensor, Tensor> quantize_both(Tensor x) {
  auto m = x.size(0), n = x.size(1);
  auto q4 = empty({m, n}, e4m3);
  auto q5 = empty({m, n}, e5m2);
  for (auto [tm, tn] : tile(m, n)) {
    auto v = x[tm, tn];
    q4[tm, tn] = v.to(e4m3);
    q5[tm, tn] = v.to(e5m2);
  }
  return {q4, q5};
}

// Each 8-bit value widened (to f32 and to bf16) and narrowed again to the
// other 8-bit type.
KITE_KERNEL std::tuple<Tensor, Tensor, Tensor> widen(Tensor q) {
  auto m = q.size(0), n = q.size(1);
  auto f = empty({m, n}, f32);
  auto h = empty({m, n}, bf16);
  auto other = empty({m, n}, e5m2);
  for (auto [tm, tn] : tile(m, n)) {
    auto v = q[tm, tn];
    f[tm, tn] = v.to(f32);
    h[tm, tn] = v.to(bf16);
    other[tm, tn] = v.to(e5m2);
  }
  return {f, h, other};
}
