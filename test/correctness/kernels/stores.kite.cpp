// stores.kite.cpp: products from registers stored from the accumulator
// layout, where each thread holds pairs of columns: bf16 pairs (4 bytes,
// exchanged in groups of 4 lanes before 16-byte stores) and f32 pairs (8
// bytes, groups of 2). K is whole and static; rows and columns may be
// partial tiles.
#include <kite/kite.hpp>
using namespace kite;

KITE_KERNEL Tensor product_f32(Tensor x, Tensor y) {  // [M, K] @ [K, N]
  auto m = x.size(0), n = y.size(1);
  specialize(x.size(1));
  auto out = empty({m, n}, f32);
  for (auto [tm, tn] : tile(m, n))
    out[tm, tn] = addmm(zeros({tm, tn}, f32), x[tm, all], y[all, tn]);
  return out;
}

KITE_KERNEL Tensor product_bf16(Tensor x, Tensor y) {  // [M, K] @ [K, N]
  auto m = x.size(0), n = y.size(1);
  specialize(x.size(1));
  auto out = empty({m, n}, x.dtype());
  for (auto [tm, tn] : tile(m, n))
    out[tm, tn] = addmm(zeros({tm, tn}, f32), x[tm, all], y[all, tn]).to(x.dtype());
  return out;
}
