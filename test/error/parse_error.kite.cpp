// RUN: not kite compile %s --emit=ir 2>&1 | FileCheck %s
// RUN: not kite compile %s --emit=ir 2>/dev/null | count 0
#include <kite/kite.hpp>
using namespace kite;

// Clang's own error is shown and nothing is captured.
KITE_KERNEL void broken(Tensor x) {
  // CHECK: [[@LINE+1]]:17: error: use of undeclared identifier 'undefined_thing'
  auto y = x.to(undefined_thing);
}
// CHECK: 1 error generated.
