//===- scaled_matmul_test.cpp - Reference mode of examples/scaled_matmul --===//
//
// This file implements the reference-mode test of the FP8 scaled products
// against a dequantized plain-loop product: every 8-bit input widened to
// double, summed in double, scaled and rounded once to bf16. e4m3 and e5m2,
// mixed too, at sizes no block size divides.
//
//===----------------------------------------------------------------------===//

#include "../../examples/scaled_matmul.kite.cpp"

#include "compare.hpp"

using namespace kite_test;

namespace {

/// (x @ w^T)[i, j] * rowScale[i] * colScale[j], in double.
std::vector<double> dequantized(const Tensor &x, const Tensor &w, const std::vector<double> &rowScale,
                                const std::vector<double> &colScale) {
  int64_t m = x.size(0), k = x.size(1), n = w.size(0);
  auto a = x.to_doubles(), b = w.to_doubles();
  std::vector<double> out(m * n, 0.0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t p = 0; p < k; ++p)
        s += a[i * k + p] * b[j * k + p];
      out[i * n + j] = s * rowScale[i] * colScale[j];
    }
  return out;
}

// (m, k, n).
const std::vector<std::array<int64_t, 3>> kShapes = {
    {1, 1, 1}, {7, 129, 33}, {129, 7, 200}, {1, 300, 7}, {65, 16, 129}};
const std::vector<BlockSizes> kSettings = {{7, 9, 5}, {16}, {64, 128, 128}};

TEST(ScaledMatmulReference, PerTensorScalesMatchDequantized) {
  for (auto [dx, dw] : {std::pair{e4m3, e4m3}, std::pair{e5m2, e5m2}, std::pair{e4m3, e5m2}}) {
    for (auto [m, k, n] : kShapes) {
      SCOPED_TRACE(std::string(dtype_name(dx)) + " x " + dtype_name(dw) + ", m, k, n = " +
                   formatSizes({m, k, n}));
      Tensor x = randn({m, k}, dx, 31), w = randn({n, k}, dw, 32);
      EXPECT_EQ(x.dtype(), dx);
      float sx = 0.5f, sw = 0.125f;
      auto want = dequantized(x, w, std::vector<double>(m, sx), std::vector<double>(n, sw));
      // The f32 sums of exact products, rounded once to bf16.
      auto tol = toleranceFor(bf16, std::sqrt(double(k)) * sx * sw);
      checkAtBlockSizes(
          kSettings, [&] { return scaled_matmul(x, w, sx, sw); }, bf16, {m, n}, want, tol, tol);
    }
  }
}

TEST(ScaledMatmulReference, RowwiseScalesMatchDequantized) {
  for (auto [m, k, n] : kShapes) {
    SCOPED_TRACE("m, k, n = " + formatSizes({m, k, n}));
    Tensor x = randn({m, k}, e4m3, 41), w = randn({n, k}, e4m3, 42);
    Tensor sx = rand({m}, f32, 43) + 0.5, sw = rand({n}, f32, 44) + 0.5;
    auto want = dequantized(x, w, sx.to_doubles(), sw.to_doubles());
    auto tol = toleranceFor(bf16, 1.5 * 1.5 * std::sqrt(double(k)));
    checkAtBlockSizes(
        kSettings, [&] { return scaled_matmul_rowwise(x, w, sx, sw); }, bf16, {m, n}, want, tol,
        tol);
  }
}

TEST(ScaledMatmulReference, NonSaturatingCastOfTheInputs) {
  // 8-bit inputs are what a cast makes of them: 1000 is past e4m3's largest
  // value (448), so NaN, and the product that reads it is NaN.
  Tensor x = from_vector<float>({1000.0f, 1.0f}, {1, 2}).to(e4m3);
  Tensor w = from_vector<float>({1.0f, 1.0f}, {1, 2}).to(e4m3);
  EXPECT_TRUE(std::isnan(scaled_matmul(x, w, 1.0f, 1.0f).to_doubles()[0]));
}

} // namespace
