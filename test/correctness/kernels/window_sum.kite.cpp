// window_sum.kite.cpp: a kernel whose result and running time depend on
// run-time scalars (neither is specialized): out[r] = scale * (the sum of
// row r's first `window` columns). The tuner's and the benchmark's runs
// must see the values asked for, not placeholders.
#include <kite/kite.hpp>
using namespace kite;

KITE_KERNEL Tensor window_sum(Tensor x, int64_t window, double scale) {
  auto rows = x.size(0), cols = x.size(1);
  auto out = empty({rows}, f32);
  for (auto tr : tile(rows)) {
    auto acc = zeros({tr}, f32);
    for (auto tc : tile(range(0, std::min(window, cols))))
      acc = acc + sum(x[tr, tc].to(f32), 1);
    out[tr] = acc * scale;
  }
  return out;
}
