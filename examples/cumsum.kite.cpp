// cumsum.kite.cpp: inclusive scans along rows, two ways. `cumsum_rows` holds
// a whole row in registers per tile of rows (torch.cumsum(x, 1)).
// `cumsum_long` streams column tiles of a tunable width and carries each
// row's running total from one tile to the next, so rows of any length fit.
// `cummax_rows` is the running maximum and where it was found, as
// torch.cummax (NaN propagates). `linear_recurrence`, `segment_sums` and
// `forward_fill` scan with their own combine functions (associative_scan):
// the first solves h_t = a_t * h_{t-1} + b_t along each row, the second
// sums runs of a row that restart wherever `starts` is set, the third
// replaces each 0 by the last non-zero value before it.
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

// h_t = a_t * h_{t-1} + b_t (h_{-1} = 0): composing two steps (a0, b0) then
// (a1, b1) gives the step (a0 * a1, b0 * a1 + b1), which is associative.
KITE_KERNEL Tensor linear_recurrence(Tensor a, Tensor b) {
  auto h = empty({a.size(0), a.size(1)}, f32);
  for (auto tm : tile(a.size(0))) {
    auto [steps, values] = associative_scan(
        std::tuple{a[tm, all].to(f32), b[tm, all].to(f32)}, 1,
        [](auto a0, auto b0, auto a1, auto b1) { return std::tuple{a0 * a1, b0 * a1 + b1}; });
    h[tm, all] = values;
  }
  return h;
}

// A segmented sum: (started, sum) pairs, where a later start drops the
// sum before it.
KITE_KERNEL Tensor segment_sums(Tensor x, Tensor starts) {
  auto out = empty_like(x);
  for (auto tm : tile(x.size(0))) {
    auto [started, sums] = associative_scan(
        std::tuple{starts[tm, all], x[tm, all]}, 1,
        [](auto f0, auto s0, auto f1, auto s1) {
          return std::tuple{f0 | f1, where(f1, s1, s0 + s1)};
        });
    out[tm, all] = sums;
  }
  return out;
}

// Forward fill: "the later value unless it is 0" is associative.
KITE_KERNEL Tensor forward_fill(Tensor x) {
  auto out = empty_like(x);
  for (auto tm : tile(x.size(0)))
    out[tm, all] = associative_scan(x[tm, all], 1,
                                    [](auto a, auto b) { return where(b != 0, b, a); });
  return out;
}
