// RUN: not kite compile %s --emit=ir 2>&1 | FileCheck %s
#include <kite/kite.hpp>
using namespace kite;

KITE_KERNEL void allocate(Tensor x) {
  // CHECK: [[@LINE+1]]:18: error: 'new' is not supported in kite kernels; allocate outputs with kite::empty or kite::zeros
  auto *buffer = new float[16];
}

KITE_KERNEL void allocate_expr(Tensor x) {
  // CHECK: [[@LINE+1]]:4: error: 'new' is not supported in kite kernels
  (new Tensor(x));
}
