// RUN: not kite compile %s --emit=ir 2>&1 | FileCheck %s
#include <kite/kite.hpp>
using namespace kite;

KITE_KERNEL void uninitialized(Tensor x) {
  // CHECK: [[@LINE+1]]:9: error: variable 'scale' must be initialized where it is declared
  float scale;
  scale = 2.0f;
}

KITE_KERNEL void range_over_vector(Tensor x) {
  // CHECK: [[@LINE+1]]:17: error: a range-based for loop in a kite kernel must iterate over kite::tile(...) or kite::grid(...)
  for (auto s : x.sizes()) {
  }
}
