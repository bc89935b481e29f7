// RUN: not kite compile %s --emit=ir 2>&1 | FileCheck %s
#include <kite/kite.hpp>
using namespace kite;

struct Activation {
  virtual float slope() const { return 0.1f; }
};

KITE_KERNEL void leaky(Tensor x) {
  // CHECK: [[@LINE+1]]:26: error: virtual call to 'Activation::slope' is not supported in kite kernels
  float a = Activation{}.slope();
}
