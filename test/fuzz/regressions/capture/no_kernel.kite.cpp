// RUN: not kite compile %s --emit=ir 2>&1 | FileCheck %s -DFILE=%s
// RUN: not kite compile %s --emit=registration 2>&1 | FileCheck %s -DFILE=%s
// A file without KITE_KERNEL once compiled to an empty module with exit
// status 0, so a build that embeds it (kite_add_kernels) never noticed.
// CHECK: [[FILE]]:1:1: error: no KITE_KERNEL function in '[[FILE]]'; mark each kernel with KITE_KERNEL (from <kite/kite.hpp>)
#include <kite/kite.hpp>

kite::Tensor not_a_kernel(kite::Tensor x) { return x; }
