// RUN: not kite compile %s --emit=ir 2>&1 | FileCheck %s
#include <kite/kite.hpp>
using namespace kite;

KITE_KERNEL void store_to_tile(Tensor x) {
  for (auto t : tile(x.size(0))) {
    auto row = x[t, all];
    // CHECK: [[@LINE+1]]:5: error: can only store to a tensor subscript such as 'out[t] = v'; this indexes a tile value, not a tensor
    row[t] = 1.0f;
  }
}

KITE_KERNEL void store_to_tensor(Tensor x, Tensor y) {
  for (auto t : tile(x.size(0))) {
    // CHECK: [[@LINE+1]]:5: error: can only store to a tensor subscript such as 'out[t] = v'; 'y' is a tensor; store into a subscript of it, e.g. 'y[t] = v'
    y = x[t];
  }
}

KITE_KERNEL void store_to_value(Tensor x) {
  for (auto t : tile(x.size(0))) {
    // CHECK: [[@LINE+1]]:5: error: can only store to a tensor subscript such as 'out[t] = v'; this is a tile value
    x[t].to(f32) = 0.0f;
  }
}
