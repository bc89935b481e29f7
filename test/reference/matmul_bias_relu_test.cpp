//===- matmul_bias_relu_test.cpp - Reference mode of matmul_bias_relu -----===//
//
// This file implements the reference-mode test of the matmul with a fused
// bias + relu epilogue, for f32 and bf16 inputs.
//
//===----------------------------------------------------------------------===//

#include "../../examples/matmul_bias_relu.kite.cpp"

#include "compare.hpp"

using namespace kite_test;

namespace {

std::vector<double> referenceMatmulBiasRelu(const Tensor &x, const Tensor &y, const Tensor &bias) {
  int64_t m = x.size(0), k = x.size(1), n = y.size(1);
  auto a = x.to_doubles(), b = y.to_doubles(), c = bias.to_doubles();
  std::vector<double> out(m * n);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double acc = c[j];
      for (int64_t p = 0; p < k; ++p)
        acc += a[i * k + p] * b[p * n + j];
      out[i * n + j] = std::max(acc, 0.0);
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

} // namespace
