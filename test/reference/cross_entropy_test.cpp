//===- cross_entropy_test.cpp - Reference mode of cross_entropy.kite.cpp --===//
//
// This file implements the reference-mode test of the per-row cross-entropy
// example: bf16 logits, int64 (and int32) targets, f32 losses.
//
//===----------------------------------------------------------------------===//

#include "../../examples/cross_entropy.kite.cpp"

#include "compare.hpp"

using namespace kite_test;

namespace {

// loss[i] = log(sum_j exp(logits[i, j])) - logits[i, target[i]].
std::vector<double> referenceCrossEntropy(const Tensor &logits, const Tensor &target) {
  int64_t n = logits.size(0), v = logits.size(1);
  auto z = logits.to_doubles(), t = target.to_doubles();
  std::vector<double> out(n);
  for (int64_t i = 0; i < n; ++i) {
    double mx = -INFINITY, s = 0;
    for (int64_t j = 0; j < v; ++j)
      mx = std::max(mx, z[i * v + j]);
    for (int64_t j = 0; j < v; ++j)
      s += std::exp(z[i * v + j] - mx);
    out[i] = mx + std::log(s) - z[i * v + static_cast<int64_t>(t[i])];
  }
  return out;
}

const std::vector<std::pair<int64_t, int64_t>> kShapes = {
    {1, 1}, {7, 1000}, {1000, 7}, {7, 4097}, {129, 33}};
const std::vector<BlockSizes> kSettings = {{1}, {16}, {64}};

TEST(CrossEntropyReference, MatchesPlainLoops) {
  for (DType targetType : {i64, i32}) {
    for (auto [n, v] : kShapes) {
      SCOPED_TRACE(std::string("targets ") + dtype_name(targetType) + formatSizes({n, v}));
      auto logits = randn({n, v}, bf16, 17) * 3.0f;
      auto target = randint(0, v, {n}, targetType, 18);
      // Losses are about log(v) plus the spread of the logits.
      auto tol = toleranceFor(f32, std::log(double(v)) + 10);
      checkAtBlockSizes(
          kSettings, [&] { return cross_entropy(logits, target); }, f32, {n},
          referenceCrossEntropy(logits, target), tol, tol);
    }
  }
}

} // namespace
