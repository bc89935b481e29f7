// atomics.kite.cpp: atomics into gathered rows in every float dtype, as
// torch.Tensor.index_add_ and index_reduce_ with "amax"/"amin" (NaN
// propagates): rows of `src` go to the rows `idx` names, several to each.
#include <kite/kite.hpp>
using namespace kite;

KITE_KERNEL Tensor index_add_rows(Tensor idx, Tensor src, int64_t rows) {
  auto n = src.size(0), c = src.size(1);
  auto out = zeros({rows, c}, src.dtype());
  for (auto [tn, tc] : tile(n, c))
    atomic_add(out, {idx[tn], tc}, src[tn, tc]);
  return out;
}

// With `src` positive, rows start at 0: `hi` gets each row's largest and
// `lo` the smallest of the negated values (rows no index names stay 0).
KITE_KERNEL std::tuple<Tensor, Tensor> index_max_min_rows(Tensor idx, Tensor src, int64_t rows) {
  auto n = src.size(0), c = src.size(1);
  auto hi = zeros({rows, c}, src.dtype());
  auto lo = zeros({rows, c}, src.dtype());
  for (auto [tn, tc] : tile(n, c)) {
    auto v = src[tn, tc];
    atomic_max(hi, {idx[tn], tc}, v);
    atomic_min(lo, {idx[tn], tc}, -v);
  }
  return {hi, lo};
}

// A weighted histogram into few enough bins to gather in shared memory
// (privatize_atomics): 16-bit weights add up in f32 there, and each
// program adds its bins to the output once.
KITE_KERNEL Tensor weighted_histogram(Tensor x, Tensor w, int64_t bins) {
  auto counts = zeros({specialize(bins)}, w.dtype());
  for (auto t : tile(x.size(0))) {
    auto v = x[t];
    atomic_add(counts, {v}, w[t], (v >= 0) & (v < bins));
  }
  return counts;
}
