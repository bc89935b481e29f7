//===- softmax_test.cpp - Reference mode of examples/softmax.kite.cpp -----===//
//
// This file implements the reference-mode tests of both softmax kernels:
// `softmax` (whole rows) and `softmax_two_pass` (online max and sum over
// column tiles), against a plain-loop softmax in double.
//
//===----------------------------------------------------------------------===//

#include "../../examples/softmax.kite.cpp"

#include "compare.hpp"

using namespace kite_test;

namespace {

std::vector<double> referenceSoftmax(const Tensor &x) {
  int64_t n = x.size(0), m = x.size(1);
  auto v = x.to_doubles();
  std::vector<double> out(v.size());
  for (int64_t i = 0; i < n; ++i) {
    double mx = -INFINITY, s = 0;
    for (int64_t j = 0; j < m; ++j)
      mx = std::max(mx, v[i * m + j]);
    for (int64_t j = 0; j < m; ++j)
      s += std::exp(v[i * m + j] - mx);
    for (int64_t j = 0; j < m; ++j)
      out[i * m + j] = std::exp(v[i * m + j] - mx) / s;
  }
  return out;
}

const std::vector<std::pair<int64_t, int64_t>> kShapes = {
    {1, 1}, {7, 1000}, {1000, 7}, {3, 4097}, {129, 33}};
// softmax: the row tile. softmax_two_pass: row tile, then column tile.
const std::vector<BlockSizes> kSettings = {{3, 1}, {4, 16}, {64, 128}};

// Outputs are in (0, 1], so the absolute tolerance is scaled to a row's
// average probability 1/m.
Tolerance softmaxTolerance(DType dtype, int64_t m) { return toleranceFor(dtype, 1.0 / m); }

TEST(SoftmaxReference, WholeRowMatchesPlainLoops) {
  for (DType dtype : {f32, bf16}) {
    for (auto [n, m] : kShapes) {
      SCOPED_TRACE(std::string(dtype_name(dtype)) + formatSizes({n, m}));
      auto x = randn({n, m}, dtype, 4);
      checkAtBlockSizes(
          kSettings, [&] { return softmax(x); }, dtype, {n, m}, referenceSoftmax(x),
          softmaxTolerance(dtype, m), softmaxTolerance(dtype, m));
    }
  }
}

TEST(SoftmaxReference, TwoPassMatchesPlainLoops) {
  for (DType dtype : {f32, bf16}) {
    for (auto [n, m] : kShapes) {
      SCOPED_TRACE(std::string(dtype_name(dtype)) + formatSizes({n, m}));
      auto x = randn({n, m}, dtype, 5);
      checkAtBlockSizes(
          kSettings, [&] { return softmax_two_pass(x); }, dtype, {n, m}, referenceSoftmax(x),
          softmaxTolerance(dtype, m), softmaxTolerance(dtype, m));
    }
  }
}

// Large logits: the online max must keep exp() from overflowing.
TEST(SoftmaxReference, TwoPassIsStableForLargeInputs) {
  auto x = randn({5, 300}, f32, 6) * 100.0f;
  auto expected = referenceSoftmax(x);
  kite::ReferenceBlockSizes scope({2, 16});
  EXPECT_TRUE(allClose(softmax_two_pass(x), f32, {5, 300}, expected, toleranceFor(f32, 1e-2)));
}

} // namespace
