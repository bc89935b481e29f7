// A loop of products whose sums are then reduced across warps: the
// reduction's scratch reuses the staging buffers' shared memory.
#include <kite/kite.hpp>
using namespace kite;

KITE_KERNEL Tensor pooled(Tensor q, Tensor k, Tensor v) {  // [B, S, D]
  auto b = q.size(0), s = specialize(q.size(1)), d = specialize(q.size(2));
  auto out = empty({b, d}, f32);
  for (auto tb : tile(b)) {
    auto acc = zeros({tb, s, d}, f32);
    auto qt = q[tb, all, all];
    for (auto tk : tile(s)) {
      auto p = bmm(qt, k[tb, tk, all].transpose(1, 2), f32);
      acc = baddbmm(acc, p.to(v.dtype()), v[tb, tk, all]);
    }
    out[tb, all] = sum(acc, 1);
  }
  return out;
}
