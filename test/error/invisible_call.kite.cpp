// RUN: not kite compile %s --emit=ir 2>&1 | FileCheck %s
#include <kite/kite.hpp>
using namespace kite;

float opaque_scale(float);

KITE_KERNEL void invisible(Tensor x, float s) {
  // CHECK: [[@LINE+2]]:13: error: call to 'opaque_scale', whose body kite cannot see; kite inlines calls, so define the function in this file or in an included header
  // CHECK: [[@LINE-4]]:7: note: 'opaque_scale' declared here
  float k = opaque_scale(s);
  for (auto t : tile(x.size(0)))
    x[t] = x[t] * k;
}
