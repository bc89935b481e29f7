// RUN: not kite compile %s --emit=ir 2>&1 | FileCheck %s
#include <kite/kite.hpp>
using namespace kite;

KITE_KERNEL void throws(Tensor x) {
  if (x.size(0) == 0)
    // CHECK: [[@LINE+1]]:5: error: exceptions are not supported in kite kernels
    throw 1;
}

KITE_KERNEL void catches(Tensor x) {
  // CHECK: [[@LINE+1]]:3: error: exceptions are not supported in kite kernels
  try {
    auto n = x.size(0);
  } catch (...) {
  }
}
