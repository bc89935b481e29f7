// RUN: not kite compile %s --emit=ir 2>&1 | FileCheck %s
// Kernels take tensors and scalars by value: the registration code
// (kite_add_kernels) declares them so. Reference parameters were once
// accepted, declaring another function than the one defined.
#include <kite/kite.hpp>
#include <cstdint>
using namespace kite;

// CHECK: [[@LINE+3]]:25: error: kernel parameter 'x' has type 'Tensor &'; kite kernels take tensors and scalars by value (the registration code declares them that way): write 'Tensor'
// CHECK-NEXT: KITE_KERNEL void by_ref(Tensor &x) {}
// CHECK-NEXT: {{^ *\| *}}^~~~~~~~~{{$}}
KITE_KERNEL void by_ref(Tensor &x) {}

// CHECK: [[@LINE+1]]:31: error: kernel parameter 'x' has type 'const Tensor &'; {{.*}}: write 'Tensor'
KITE_KERNEL void by_const_ref(const Tensor &x) {}

// CHECK: [[@LINE+1]]:42: error: kernel parameter 'y' has type 'Tensor &&'; {{.*}}: write 'Tensor'
KITE_KERNEL void by_rvalue_ref(Tensor x, Tensor &&y) {}

// CHECK: [[@LINE+1]]:39: error: kernel parameter 'n' has type 'int64_t &' (aka 'long &'); {{.*}}: write 'int64_t' (aka 'long')
KITE_KERNEL void scalar_ref(Tensor x, int64_t &n) {}

// By value, const or not, is fine: no fifth error.
// CHECK-NOT: :[[@LINE+2]]:{{.*}}error
// CHECK: 4 errors generated.
KITE_KERNEL void by_value(Tensor x, const Tensor y, const int64_t n) {}
