// RUN: not kite compile %s --emit=ir 2>&1 | FileCheck %s
#include <kite/kite.hpp>
using namespace kite;

KITE_KERNEL void scan_past_rank(Tensor x) {
  for (auto tm : tile(x.size(0))) {
    auto acc = zeros({tm}, f32);
    // CHECK: [[@LINE+1]]:25: error: 'cumsum' over dim 1, but the value has rank 1
    x[tm] = cumsum(acc, 1);
  }
}

KITE_KERNEL void float_offsets(Tensor x, int64_t seed) {
  for (auto tm : tile(x.size(0))) {
    auto f = zeros({tm}, f32);
    // CHECK: [[@LINE+1]]:24: error: expected an integer tile of offsets here, but this is a tile of f32
    x[tm] = rand(seed, f);
  }
}

KITE_KERNEL void empty_range(Tensor x, int64_t seed) {
  for (auto tm : tile(x.size(0)))
    // CHECK: [[@LINE+1]]:13: error: randint needs low < high, got [4, 4)
    x[tm] = randint(seed, tm.index(), 4, 4);
}

KITE_KERNEL void bmm_dtype_of_value(Tensor x, Tensor out) {
  for (auto tb : tile(x.size(0))) {
    auto a = x[tb, all, all];
    // CHECK: [[@LINE+1]]:35: error: 'kite::bmm' is not supported by the kite frontend with an out_dtype that is not a constant dtype (write f32)
    out[tb, all, all] = bmm(a, a, x.dtype());
  }
}
