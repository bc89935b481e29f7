// RUN: not kite compile %s --emit=ir 2>&1 | FileCheck %s
#include <kite/kite.hpp>
using namespace kite;

KITE_KERNEL void in_if(Tensor x, bool flag) {
  if (flag) {
    // CHECK: [[@LINE+1]]:5: error: a top-level tile loop cannot be nested inside an 'if' statement: top-level loops map onto the launch grid and must run unconditionally in the kernel body (put the condition inside the loop instead)
    for (auto t : tile(x.size(0)))
      x[t] = 0.0f;
  }
}

KITE_KERNEL void in_while(Tensor x) {
  int64_t i = 0;
  while (i < 4) {
    // CHECK: [[@LINE+1]]:5: error: a top-level tile loop cannot be nested inside a 'while' loop
    for (auto t : tile(x.size(0)))
      x[t] = 0.0f;
  }
}

KITE_KERNEL void in_for(Tensor x) {
  for (int64_t i = 0; i < 4; ++i) {
    // CHECK: [[@LINE+1]]:5: error: a top-level grid loop cannot be nested inside a 'for' loop
    for (auto j : grid(x.size(0)))
      x[j] = 0.0f;
  }
}
