// RUN: not kite compile %s --emit=ir 2>&1 | FileCheck %s
#include <kite/kite.hpp>
using namespace kite;

// A loop over every dimension of a tensor whose rank is only known at
// launch has no form in captured IR yet.
KITE_KERNEL Tensor any_rank(Tensor x) {
  auto out = empty_like(x);
  // CHECK: [[@LINE+1]]:22: error: cannot tile x.sizes(): its rank is only known at launch; tile explicit sizes (tile(x.size(0), x.size(1))) or a 1-D view (x.view({-1}))
  for (auto t : tile(x.sizes()))
    out[t] = x[t];
  return out;
}

KITE_KERNEL void sizes_unknown(Tensor x) {
  // CHECK: [[@LINE+1]]:20: error: 'sizes()' needs a tensor of known rank, and this tensor's rank is only known at launch
  auto out = empty(x.sizes(), f32);
}
