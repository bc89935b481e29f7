//===- matmul_bias_relu_test.cpp - Reference mode of matmul_bias_relu -----===//
//
// This file implements the reference-mode tests of the matmuls with fused
// epilogues (bias + relu; bias, gelu, scale and residual), for f32 and
// bf16 inputs.
//
//===----------------------------------------------------------------------===//

#include "../../examples/matmul_bias_relu.kite.cpp"

#include "compare.hpp"

using namespace kite_test;

namespace {

std::vector<double> referenceMatmulBiasRelu(const Tensor &x, const Tensor &y, const Tensor &bias) {
  int64_t n = y.size(1);
  auto out = productDoubles(x, y), c = bias.to_doubles();
  for (size_t i = 0; i < out.size(); ++i)
    out[i] = std::max(out[i] + c[i % n], 0.0);
  return out;
}

std::vector<double> referenceMatmulEpilogue(const Tensor &x, const Tensor &y, const Tensor &bias,
                                            const Tensor &residual, double scale) {
  int64_t n = y.size(1);
  auto out = productDoubles(x, y), c = bias.to_doubles(), r = residual.to_doubles();
  for (size_t i = 0; i < out.size(); ++i) {
    double v = out[i] + c[i % n];
    out[i] = 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0))) * scale + r[i];
  }
  return out;
}

// (m, k, n).
const std::vector<std::array<int64_t, 3>> kShapes = {
    {1, 1, 1}, {7, 129, 33}, {129, 7, 200}, {1, 1000, 7}, {65, 1, 129}, {200, 200, 200}};
const std::vector<BlockSizes> kSettings = {{7, 9, 5}, {16}, {64, 128, 32}};

TEST(MatmulBiasReluReference, MatchesPlainLoops) {
  for (DType dtype : {f32, bf16}) {
    for (auto [m, k, n] : kShapes) {
      SCOPED_TRACE(std::string(dtype_name(dtype)) + " m, k, n = " + formatSizes({m, k, n}));
      auto x = randn({m, k}, dtype, 25), y = randn({k, n}, dtype, 26);
      auto bias = randn({n}, dtype, 27);
      auto expected = referenceMatmulBiasRelu(x, y, bias);
      if (m * n > 1) { // both sides of the relu are exercised
        auto positive =
            std::count_if(expected.begin(), expected.end(), [](double v) { return v > 0; });
        EXPECT_GT(positive, 0);
        EXPECT_LT(positive, m * n);
      }
      auto tol = toleranceFor(dtype, std::sqrt(double(k + 1)));
      checkAtBlockSizes(
          kSettings, [&] { return matmul_bias_relu(x, y, bias); }, dtype, {m, n}, expected, tol,
          tol);
    }
  }
}

TEST(MatmulEpilogueReference, MatchesPlainLoops) {
  for (DType dtype : {f32, bf16}) {
    for (auto [m, k, n] : kShapes) {
      SCOPED_TRACE(std::string(dtype_name(dtype)) + " m, k, n = " + formatSizes({m, k, n}));
      auto x = randn({m, k}, dtype, 35), y = randn({k, n}, dtype, 36);
      auto bias = randn({n}, dtype, 37), residual = randn({m, n}, dtype, 38);
      auto expected = referenceMatmulEpilogue(x, y, bias, residual, 0.75);
      auto tol = toleranceFor(dtype, std::sqrt(double(k + 1)));
      checkAtBlockSizes(
          kSettings, [&] { return matmul_epilogue(x, y, bias, residual, 0.75); }, dtype, {m, n},
          expected, tol, tol);
    }
  }
}

} // namespace
