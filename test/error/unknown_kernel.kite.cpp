// RUN: not kite compile %s --kernel missing --emit=ir 2>&1 | FileCheck %s
// RUN: kite compile %s --kernel present --emit=ir | FileCheck %s --check-prefix=OK
#include <kite/kite.hpp>
using namespace kite;

// CHECK: error: no kernel named 'missing' in this file
// CHECK: note: kernels in this file: present, other
// OK: func.func @present(
KITE_KERNEL void present(Tensor x) {}
KITE_KERNEL void other(Tensor x) {}
