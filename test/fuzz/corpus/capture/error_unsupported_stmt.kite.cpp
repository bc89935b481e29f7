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

KITE_KERNEL void uses_early_return(Tensor x) {
  for (auto t : tile(x.size(0))) {
    // CHECK: [[@LINE+1]]:5: error: 'return' inside a loop is not supported in a kite kernel: loops always run to their end
    return;
  }
}

int64_t first_big(int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    // CHECK: [[@LINE+1]]:5: error: 'return' inside a loop is not supported in an inlined function
    return i;
  return n;
}

KITE_KERNEL void uses_loop_return(Tensor x) { auto i = first_big(x.size(0)); }

KITE_KERNEL Tensor loop_after_return(Tensor x) {
  if (x.size(0) == 0)
    return x;
  // CHECK: [[@LINE+1]]:3: error: a top-level tile loop cannot be nested inside the code after an early 'return'
  for (auto t : tile(x.size(0)))
    x[t] = 0.0f;
  return x;
}

KITE_KERNEL void odd_for(Tensor x) {
  for (auto t : tile(x.size(0))) {
    // CHECK: [[@LINE+1]]:5: error: unsupported 'for' loop: kite runs 'for (int64_t i = begin; i < end; ++i)' (or 'i += step') over integers, and tile/grid loops
    for (int i = 10; i > 0; --i)
      x[t] = 0.0f;
  }
}
