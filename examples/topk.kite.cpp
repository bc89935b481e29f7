// topk.kite.cpp: sorts and top-k along rows. `sort_rows` sorts each row
// in descending order (torch.sort(x, 1, descending=True, stable=True)):
// values and their column indices. `topk_rows` keeps the k largest of each
// row with their indices, as torch.topk(x, k, 1); `k` is a compile-time
// constant of the kernel (`specialize`), so each k is its own plan.
#include <kite/kite.hpp>
using namespace kite;

KITE_KERNEL std::tuple<Tensor, Tensor> sort_rows(Tensor x) {
  auto values = empty_like(x);
  auto indices = empty({x.size(0), x.size(1)}, i64);
  for (auto tm : tile(x.size(0))) {
    auto [v, i] = sort(x[tm, all], 1, /*descending=*/true);
    values[tm, all] = v;
    indices[tm, all] = i;
  }
  return {values, indices};
}

KITE_KERNEL std::tuple<Tensor, Tensor> topk_rows(Tensor x, int64_t k_) {
  auto m = x.size(0), k = specialize(k_);
  auto values = empty({m, k}, x.dtype());
  auto indices = empty({m, k}, i64);
  for (auto tm : tile(m)) {
    auto [v, i] = topk(x[tm, all], k, 1);
    values[tm, all] = v;
    indices[tm, all] = i;
  }
  return {values, indices};
}
