// RUN: not kite compile %s --emit=ir 2>&1 | FileCheck %s
#include <kite/kite.hpp>
using namespace kite;

int64_t depth(int64_t n) {
  // CHECK: [[@LINE+1]]:27: error: recursive call to 'depth'; kite inlines calls and cannot inline recursion
  return n <= 1 ? 1 : 1 + depth(n / 2);
}

KITE_KERNEL void recursive(Tensor x) {
  // CHECK: [[@LINE+1]]:15: note: 'depth' is being inlined here
  int64_t d = depth(x.size(0));
}
