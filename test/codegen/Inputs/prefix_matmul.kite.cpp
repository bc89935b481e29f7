// A product over prefixes of its operands: the first m - 3 rows of x, the
// first k - 5 of K and the first n - 7 columns of y. Its partial tiles end
// inside the tensors, so the elements past their extents are data, not
// the zeros TMA fills past a tensor's end.
#include <kite/kite.hpp>
using namespace kite;

KITE_KERNEL Tensor prefix_matmul(Tensor x, Tensor y) {
  auto m = x.size(0) - 3, k = x.size(1) - 5, n = y.size(1) - 7;
  auto out = empty({m, n}, x.dtype());
  for (auto [tm, tn] : tile(m, n)) {
    auto acc = zeros({tm, tn}, f32);
    for (auto tk : tile(k)) acc = addmm(acc, x[tm, tk], y[tk, tn]);
    out[tm, tn] = acc;
  }
  return out;
}
