// RUN: not kite compile %s --emit=ir 2>&1 | FileCheck %s
#include <kite/kite.hpp>
using namespace kite;

// CHECK: [[@LINE+1]]:13: error: kernel 'returns_size' returns 'int64_t' (aka 'long'); a kite kernel returns void, kite::Tensor or std::tuple of kite::Tensor
KITE_KERNEL int64_t returns_size(Tensor x) { return x.size(0); }

// CHECK: [[@LINE+1]]:13: error: kernel 'returns_pair' returns 'std::tuple<Tensor, float>'
KITE_KERNEL std::tuple<Tensor, float> returns_pair(Tensor x) { return {x, 1.0f}; }

KITE_KERNEL Tensor returns_nothing(Tensor x) {
  Tensor result;
  for (auto t : tile(x.size(0)))
    x[t] = 0.0f;
  // CHECK: [[@LINE+1]]:10: error: a kite kernel can only return tensors (parameters or outputs allocated with empty/zeros/...); this is an empty (default-constructed) value
  return result;
}
