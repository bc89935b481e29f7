// RUN: not kite compile %s --emit=ir 2>&1 | FileCheck %s
#include <kite/kite.hpp>
using namespace kite;

KITE_KERNEL void keep_last(Tensor x) {
  Tile last;
  for (auto t : tile(x.size(0))) {
    // CHECK: [[@LINE+1]]:5: error: tile 'last' is used outside its loop
    last = t;
  }
}

KITE_KERNEL void keep_inner(Tensor x) {
  for (auto tm : tile(x.size(0))) {
    auto cur = tm;
    for (auto tn : tile(x.size(1)))
      // CHECK: [[@LINE+1]]:7: error: tile 'cur' is used outside its loop
      cur = tn;
    x[cur] = 0.0f;
  }
}
