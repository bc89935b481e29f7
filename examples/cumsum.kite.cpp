// cumsum.kite.cpp: inclusive scans along rows, two ways. `cumsum_rows` holds
// a whole row in registers per tile of rows (torch.cumsum(x, 1)).
// `cumsum_long` streams column tiles of a tunable width and carries each
// row's running total from one tile to the next, so rows of any length fit.
// `cummax_rows` is the running maximum and where it was found, as
// torch.cummax (NaN propagates).
#include <kite/kite.hpp>
using namespace kite;

KITE_KERNEL Tensor cumsum_rows(Tensor x) {
  auto out = empty_like(x);
  for (auto tm : tile(x.size(0)))
    out[tm, all] = cumsum(x[tm, all].to(f32), 1);
  return out;
}

KITE_KERNEL Tensor cumsum_long(Tensor x) {
  auto m = x.size(0), n = x.size(1);
  auto out = empty_like(x);
  for (auto tm : tile(m)) {
    auto carry = zeros({tm}, f32);  // the sum of the row's tiles so far
    for (auto tn : tile(n)) {
      auto values = x[tm, tn].to(f32);
      out[tm, tn] = cumsum(values, 1) + carry.unsqueeze(1);
      carry = carry + sum(values, 1);
    }
  }
  return out;
}

KITE_KERNEL std::tuple<Tensor, Tensor> cummax_rows(Tensor x) {
  auto values = empty_like(x);
  auto indices = empty({x.size(0), x.size(1)}, i64);
  for (auto tm : tile(x.size(0))) {
    auto [v, i] = cummax(x[tm, all], 1);
    values[tm, all] = v;
    indices[tm, all] = i;
  }
  return {values, indices};
}
