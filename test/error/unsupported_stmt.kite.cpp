// RUN: not kite compile %s --emit=ir 2>&1 | FileCheck %s
#include <kite/kite.hpp>
using namespace kite;

KITE_KERNEL void uses_goto(Tensor x) {
  // CHECK: [[@LINE+1]]:3: error: 'goto' statements are not supported in kite kernels
  goto done;
done:;
}

KITE_KERNEL void uses_while(Tensor x) {
  for (auto t : tile(x.size(0))) {
    int i = 0;
    // CHECK: [[@LINE+1]]:5: error: 'while' statements are not supported in kite kernels; use a 'for' loop over an integer range
    while (i < 3)
      ++i;
  }
}

KITE_KERNEL void uses_switch(Tensor x, int mode) {
  // CHECK: [[@LINE+1]]:3: error: 'switch' statements are not supported in kite kernels; use 'if'
  switch (mode) {
  default:
    break;
  }
}

KITE_KERNEL void uses_break(Tensor x) {
  for (auto t : tile(x.size(0))) {
    for (int i = 0; i < 4; ++i)
      // CHECK: [[@LINE+1]]:7: error: 'break' statements are not supported in kite kernels; loops always run to their end
      break;
  }
}

KITE_KERNEL void uses_early_return(Tensor x, bool flag) {
  if (flag)
    // CHECK: [[@LINE+1]]:5: error: 'return' must be the last statement of a kite kernel
    return;
}

KITE_KERNEL void odd_for(Tensor x) {
  for (auto t : tile(x.size(0))) {
    // CHECK: [[@LINE+1]]:5: error: unsupported 'for' loop: kite runs 'for (int64_t i = begin; i < end; ++i)' (or 'i += step') over integers, and tile/grid loops
    for (int i = 10; i > 0; --i)
      x[t] = 0.0f;
  }
}
