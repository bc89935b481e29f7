// RUN: not kite compile %s --emit=ir 2>&1 | FileCheck %s
#include <kite/kite.hpp>
using namespace kite;

// CHECK: [[@LINE+1]]:42: error: pointers are not supported in kite kernels
KITE_KERNEL void pointer_param(Tensor x, float *scale) {}

KITE_KERNEL void pointer_local(Tensor x, float s) {
  // CHECK: [[@LINE+1]]:3: error: pointers are not supported in kite kernels
  float *p = &s;
}

KITE_KERNEL void address_of(Tensor x, float s) {
  // CHECK: [[@LINE+1]]:13: error: pointers are not supported in kite kernels
  float v = *(&s);
}
