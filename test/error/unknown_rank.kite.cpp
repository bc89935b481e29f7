// RUN: not kite compile %s --emit=ir 2>&1 | FileCheck %s
#include <kite/kite.hpp>
using namespace kite;

// tile(x.sizes()) of a parameter of unknown rank captures once per rank
// (for one parameter only); a second parameter's sizes have no form.
// CHECK: [[@LINE+1]]:20: error: kernel 'two_ranks' tiles the sizes of 'x', but no rank from 1 to 6 of it captures; the errors of rank 6 follow
KITE_KERNEL Tensor two_ranks(Tensor x, Tensor y) {
  auto out = empty_like(x);
  for (auto t : tile(x.sizes()))
    out[t] = x[t];
  // CHECK: [[@LINE+1]]:22: error: cannot tile y.sizes(): its rank is only known at launch, and a kernel is captured once per rank for one tensor parameter's sizes only; tile explicit sizes (tile(x.size(0), x.size(1))) or a 1-D view (x.view({-1}))
  for (auto u : tile(y.sizes()))
    y[u] = y[u] * 2;
  return out;
}

// No rank from 1 to 6 captures: the errors of rank 6 are the ones shown.
// CHECK: [[@LINE+1]]:20: error: kernel 'too_deep' tiles the sizes of 'x', but no rank from 1 to 6 of it captures; the errors of rank 6 follow
KITE_KERNEL Tensor too_deep(Tensor x) {
  auto out = empty_like(x);
  for (auto t : tile(x.sizes()))
    // CHECK: [[@LINE+1]]:24: error: 'sum' over dim 6, but the value has rank 6
    out[t] = sum(x[t], 6);
  return out;
}

KITE_KERNEL void sizes_unknown(Tensor x) {
  // CHECK: [[@LINE+1]]:20: error: 'sizes()' needs a tensor of known rank, and this tensor's rank is only known at launch
  auto out = empty(x.sizes(), f32);
}
