// sorts.kite.cpp: sorts and top-k in the orders, dims and dtypes the
// examples leave out, so that every algorithm kite.sort lowers to (radix
// selection, radix sort, bitonic networks) meets them: ascending order,
// the k smallest, and lines along a tensor's first dim.
#include <kite/kite.hpp>
using namespace kite;

// Each row ascending (torch.sort(x, 1, stable=True)).
KITE_KERNEL std::tuple<Tensor, Tensor> sort_rows_ascending(Tensor x) {
  auto values = empty_like(x);
  auto indices = empty({x.size(0), x.size(1)}, i64);
  for (auto tm : tile(x.size(0))) {
    auto [v, i] = sort(x[tm, all], 1);
    values[tm, all] = v;
    indices[tm, all] = i;
  }
  return {values, indices};
}

// The k smallest of each row, smallest first (torch.topk(x, k, 1, largest=False)).
KITE_KERNEL std::tuple<Tensor, Tensor> smallest_k(Tensor x, int64_t k_) {
  auto m = x.size(0), k = specialize(k_);
  auto values = empty({m, k}, x.dtype());
  auto indices = empty({m, k}, i64);
  for (auto tm : tile(m)) {
    auto [v, i] = topk(x[tm, all], k, 1, /*largest=*/false);
    values[tm, all] = v;
    indices[tm, all] = i;
  }
  return {values, indices};
}

// Each column descending: the lines run along dim 0.
KITE_KERNEL std::tuple<Tensor, Tensor> sort_columns(Tensor x) {
  auto values = empty_like(x);
  auto indices = empty({x.size(0), x.size(1)}, i64);
  for (auto tn : tile(x.size(1))) {
    auto [v, i] = sort(x[all, tn], 0, /*descending=*/true);
    values[all, tn] = v;
    indices[all, tn] = i;
  }
  return {values, indices};
}
