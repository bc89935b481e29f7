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

KITE_KERNEL void scan_combine_dtype(Tensor x) {
  for (auto tm : tile(x.size(0))) {
    auto acc = zeros({tm}, f32);
    // CHECK: [[@LINE+1]]:38: error: the combine function of associative_scan returns a tile value of f64 for tensor 0; it must return a value of that tensor's dtype f32
    x[tm] = associative_scan(acc, 0, [](auto a, auto b) { return (a + b).to(f64); });
  }
}

inline Tensor add_two(Tensor a, Tensor b) { return a + b; }

KITE_KERNEL void scan_combine_not_lambda(Tensor x) {
  for (auto tm : tile(x.size(0))) {
    auto acc = zeros({tm}, f32);
    // CHECK: [[@LINE+1]]:38: error: the combine function of associative_scan must be a lambda (or a variable holding one); got the function 'add_two' (wrap it: [](auto a, auto b) { return add_two(a, b); })
    x[tm] = associative_scan(acc, 0, add_two);
  }
}

KITE_KERNEL void scan_shapes(Tensor x) {
  for (auto [tm, tn] : tile(x.size(0), x.size(1))) {
    auto row = zeros({tm}, f32);
    auto block = zeros({tm, tn}, f32);
    // CHECK: [[@LINE+1]]:36: error: associative_scan needs tiles of one shape; got '!kite.tile<?xf32>' and '!kite.tile<?x?xf32>'
    auto [p, q] = associative_scan(std::tuple{row, block}, 0,
        [](auto a0, auto b0, auto a1, auto b1) { return std::tuple{a0 + a1, b0 + b1}; });
    x[tm, tn] = q;
  }
}
