// Kernels whose associative_scan is wrong only once dtypes and ranks are
// known (test/codegen/associative-scan.mlir).
#include <kite/kite.hpp>
using namespace kite;

KITE_KERNEL void outside(Tensor x, Tensor y) {
  for (auto tm : tile(x.size(0))) {
    auto row = y[tm, all];
    y[tm, all] = associative_scan(x[tm, all], 1, [&](auto a, auto b) { return a + b + row; });
  }
}

KITE_KERNEL void widen(Tensor x, Tensor y) {
  for (auto tm : tile(x.size(0)))
    y[tm, all] = associative_scan(x[tm, all], 1, [](auto a, auto b) { return (a + b).to(f64); });
}
