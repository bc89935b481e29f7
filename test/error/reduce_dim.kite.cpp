// RUN: not kite compile %s --emit=ir 2>&1 | FileCheck %s
#include <kite/kite.hpp>
using namespace kite;

KITE_KERNEL void reduce_past_rank(Tensor x) {
  for (auto [tm, tn] : tile(x.size(0), x.size(1))) {
    auto acc = zeros({tm, tn}, f32);
    // CHECK: [[@LINE+1]]:22: error: 'sum' over dim 2, but the value has rank 2
    x[tm] = sum(acc, 2);
  }
}

KITE_KERNEL void reduce_negative(Tensor x) {
  for (auto tm : tile(x.size(0))) {
    auto acc = zeros({tm}, f32);
    // CHECK: [[@LINE+1]]:23: error: 'amax' over dim -2, but the value has rank 1
    x[tm] = amax(acc, -2, true);
  }
}

KITE_KERNEL void unsqueeze_past_rank(Tensor x) {
  for (auto tm : tile(x.size(0))) {
    auto acc = zeros({tm}, f32);
    // CHECK: [[@LINE+1]]:27: error: dim 3 is out of range for a tile of rank 1
    x[tm] = acc.unsqueeze(3);
  }
}
