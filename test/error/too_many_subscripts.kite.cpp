// RUN: not kite compile %s --emit=ir 2>&1 | FileCheck %s
#include <kite/kite.hpp>
using namespace kite;

KITE_KERNEL Tensor too_many(Tensor x) {
  auto out = empty({x.size(0)}, f32);
  for (auto t : tile(x.size(0))) {
    // CHECK: [[@LINE+1]]:5: error: too many subscripts: 'out' has rank 1 but is indexed with 2 subscripts
    out[t, all] = x[t];
  }
  return out;
}

KITE_KERNEL Tensor too_many_load(Tensor x) {
  auto buf = zeros({x.size(0), x.size(1)}, f32);
  for (auto [tm, tn] : tile(x.size(0), x.size(1))) {
    // newaxis does not count.
    auto ok = buf[tm, newaxis, tn];
    // CHECK: [[@LINE+1]]:16: error: too many subscripts: 'buf' has rank 2 but is indexed with 3 subscripts
    auto bad = buf[tm, tn, 0];
  }
  return buf;
}
