// RUN: not kite compile %s --emit=ir 2>&1 | FileCheck %s
#include <kite/kite.hpp>
using namespace kite;

KITE_KERNEL void load_on_host(Tensor x) {
  // CHECK: [[@LINE+1]]:12: error: indexing a tensor (a load or a store) can only be used inside a tile or grid loop
  auto v = x[0];
}

KITE_KERNEL void empty_in_loop(Tensor x) {
  for (auto t : tile(x.size(0))) {
    // CHECK: [[@LINE+1]]:16: error: 'empty' allocates or reshapes a tensor and can only be used outside tile loops; use zeros({...}) or full({...}) for a tile
    auto tmp = empty({t}, f32);
  }
}

KITE_KERNEL void whole_tensor(Tensor x) {
  for (auto t : tile(x.size(0))) {
    // CHECK: [[@LINE+1]]:16: error: 'exp' needs a tile, but this is a whole tensor; load a tile first by indexing it, e.g. 'x[t]'
    x[t] = exp(x);
  }
}
