// Kernels for dynamic-shapes codegen tests (test/codegen/dynamic-shapes.mlir).
#include <kite/kite.hpp>
using namespace kite;

// An output sized by a run-time scalar: no specialize().
KITE_KERNEL Tensor bincount(Tensor x, int64_t bins) {
  auto counts = zeros({bins}, i32);
  for (auto t : tile(x.size(0))) {
    auto v = x[t];
    atomic_add(counts, {v}, 1, (v >= 0) & (v < bins));
  }
  return counts;
}

// Rows of x scaled by a per-row factor: the rows are the dynamic dim of
// both tensors; the kernel also reads a row count's worth of `scale`.
KITE_KERNEL Tensor scale_rows(Tensor x, Tensor scale) {
  auto out = empty_like(x);
  for (auto [tm, tn] : tile(x.size(0), x.size(1)))
    out[tm, tn] = x[tm, tn] * scale[tm].unsqueeze(1);
  return out;
}

// A size used in arithmetic stays static (an inner bound from it).
KITE_KERNEL Tensor first_half(Tensor x) {
  auto n = x.size(0) / 2;
  auto out = empty({n, x.size(1)}, x.dtype());
  for (auto [tm, tn] : tile(n, x.size(1)))
    out[tm, tn] = x[tm, tn];
  return out;
}
