// RUN: not kite compile %s --emit=ir 2>&1 | FileCheck %s
#include <kite/kite.hpp>
using namespace kite;

KITE_KERNEL void count_tiles(Tensor x) {
  int64_t tiles = 0;
  for (auto t : tile(x.size(0))) {
    // CHECK: [[@LINE+1]]:5: error: cannot assign host variable 'tiles' inside a top-level tile loop: each program runs the loop body independently; declare the variable inside the loop, or store the value into a tensor
    tiles += 1;
  }
}

void bump(float &v) { v = v + 1.0f; }

KITE_KERNEL void through_reference(Tensor x) {
  float s = 0.0f;
  for (auto i : grid(x.size(0))) {
    // CHECK: [[@LINE+1]]:5: error: cannot assign host variable 's' inside a top-level grid loop
    bump(s);
  }
}
