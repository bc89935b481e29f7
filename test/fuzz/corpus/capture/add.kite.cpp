// add.kite.cpp: elementwise add over 2-D tiles.
// The smallest kite kernel: the top-level tile loop is the launch grid, and
// each program loads a [BM, BN] tile of x and of y, adds them and stores the
// sum. Partial tiles at the edges are masked for you.
#include <kite/kite.hpp>
using namespace kite;

KITE_KERNEL Tensor add(Tensor x, Tensor y) {
  auto out = empty_like(x);
  for (auto [tm, tn] : tile(x.size(0), x.size(1)))
    out[tm, tn] = x[tm, tn] + y[tm, tn];
  return out;
}
