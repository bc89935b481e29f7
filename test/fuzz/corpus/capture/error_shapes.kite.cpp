// RUN: not kite compile %s --emit=ir 2>&1 | FileCheck %s
#include <kite/kite.hpp>
using namespace kite;

// Shape and dtype errors the frontend can see before specialization are
// user errors, never invalid IR.

KITE_KERNEL void no_broadcast(Tensor x) {
  for (auto t : tile(x.size(0))) {
    auto a = zeros({t, 4}, f32), b = zeros({t, 8}, f32);
    // CHECK: [[@LINE+1]]:16: error: shapes do not broadcast: '!kite.tile<?x4xf32>' and '!kite.tile<?x8xf32>'
    auto c = a + b;
  }
}

KITE_KERNEL void store_rank(Tensor x) {
  auto out = empty({x.size(0)}, f32);
  for (auto [tm, tn] : tile(x.size(0), x.size(1))) {
    // CHECK: [[@LINE+1]]:5: error: cannot store a value of rank 2 into a subscript of rank 1
    out[tm] = zeros({tm, tn}, f32);
  }
}

KITE_KERNEL void block_range(Tensor x) {
  // CHECK: [[@LINE+1]]:13: error: register_block_size(lo, hi) needs 1 <= lo <= hi; got 64 and 16
  auto bs = register_block_size(64, 16);
}

KITE_KERNEL void float_logic(Tensor x) {
  for (auto t : tile(x.size(0))) {
    auto a = zeros({t}, f32);
    // CHECK: [[@LINE+1]]:16: error: expected boolean or integer operands here, but this is a value of element type f32
    auto b = a & a;
  }
}

KITE_KERNEL void float_condition(Tensor x) {
  for (auto t : tile(x.size(0))) {
    auto a = zeros({t}, f32);
    // CHECK: [[@LINE+1]]:20: error: expected a boolean condition here, but this is a tile value
    auto c = where(a, a, 0.0f);
  }
}
