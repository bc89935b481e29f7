// masked_loops.kite.cpp: key loops that select on index conditions, which
// kite-split-masked-loops splits where the condition holds on whole tiles.
// Each sums row i of x over the columns j its condition keeps.
#include <kite/kite.hpp>
using namespace kite;

// i - window < j <= i, over every column: tiles past the band, across its
// edges, and inside it (the loop splits in three).
KITE_KERNEL Tensor band_sum(Tensor x, int64_t window) {  // [R, C]
  auto rows = x.size(0), cols = x.size(1);
  auto out = empty({rows}, f32);
  for (auto tr : tile(rows)) {
    auto acc = zeros({tr}, f32);
    for (auto tc : tile(cols)) {
      auto i = tr.index().unsqueeze(-1), j = tc.index().unsqueeze(0);
      auto keep = (i >= j) & (i - j < window);
      acc = acc + sum(where(keep, x[tr, tc].to(f32), 0.0f), -1);
    }
    out[tr] = acc;
  }
  return out;
}

// j >= i from the row tile's start on: the loop's lower bound is the row
// tile's begin, and the condition holds on a suffix of the key tiles.
KITE_KERNEL Tensor upper_sum(Tensor x) {  // [R, C]
  auto rows = x.size(0), cols = x.size(1);
  auto out = empty({rows}, f32);
  for (auto tr : tile(rows)) {
    auto acc = zeros({tr}, f32);
    for (auto tc : tile(range(tr.begin(), cols))) {
      auto keep = tc.index().unsqueeze(0) >= tr.index().unsqueeze(-1);
      acc = acc + sum(where(keep, x[tr, tc].to(f32), 0.0f), -1);
    }
    out[tr] = acc;
  }
  return out;
}

// Rows below `limit` only: a condition that does not change along the
// loop (all of its iterations or none), and j == i, which never holds on
// a whole tile and is left as it is.
KITE_KERNEL Tensor limited_sum(Tensor x, int64_t limit) {  // [R, C]
  auto rows = x.size(0), cols = x.size(1);
  auto out = empty({rows}, f32);
  for (auto tr : tile(rows)) {
    auto acc = zeros({tr}, f32);
    for (auto tc : tile(cols)) {
      auto i = tr.index().unsqueeze(-1), j = tc.index().unsqueeze(0);
      auto v = where(i == j, x[tr, tc].to(f32) * 2.0f, x[tr, tc].to(f32));
      acc = acc + sum(where(i < limit, v, 0.0f), -1);
    }
    out[tr] = acc;
  }
  return out;
}

// A condition on the data: never split.
KITE_KERNEL Tensor data_sum(Tensor x) {  // [R, C]
  auto rows = x.size(0), cols = x.size(1);
  auto out = empty({rows}, f32);
  for (auto tr : tile(rows)) {
    auto acc = zeros({tr}, f32);
    for (auto tc : tile(cols)) {
      auto v = x[tr, tc].to(f32);
      acc = acc + sum(where(v > 0.0f, v, 0.0f), -1);
    }
    out[tr] = acc;
  }
  return out;
}
