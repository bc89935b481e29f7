// launch_kernels.kite.cpp: small kernels for launch_test and
// launch_gpu_test, captured at build time by kite_add_kernels.
#include <kite/kite.hpp>
#include <tuple>
using namespace kite;

KITE_KERNEL Tensor add(Tensor x, Tensor y) {
  auto out = empty_like(x);
  for (auto [tm, tn] : tile(x.size(0), x.size(1)))
    out[tm, tn] = x[tm, tn] + y[tm, tn];
  return out;
}

// Every scalar parameter type, no result.
KITE_KERNEL void scalars(Tensor x, int64_t a, int b, double c, float d, bool e) {}

// Two results.
KITE_KERNEL std::tuple<Tensor, Tensor> pair(Tensor x, Tensor y) {
  auto s = empty_like(x);
  auto p = empty_like(x);
  for (auto [tm, tn] : tile(x.size(0), x.size(1))) {
    s[tm, tn] = x[tm, tn] + y[tm, tn];
    p[tm, tn] = x[tm, tn] * y[tm, tn];
  }
  return std::make_tuple(s, p);
}
