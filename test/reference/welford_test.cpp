//===- welford_test.cpp - Reference mode of examples/welford.kite.cpp -----===//
//
// This file implements the reference-mode test of the Welford layer norm:
// a two-pass plain-loop layer norm in double vs. the kernel's chunked online
// mean/variance, with chunk widths that do and do not divide the row.
//
//===----------------------------------------------------------------------===//

#include "../../examples/welford.kite.cpp"

#include "compare.hpp"

using namespace kite_test;

namespace {

std::vector<double> referenceLayerNorm(const Tensor &x, const Tensor &weight, const Tensor &bias,
                                       double eps) {
  int64_t n = x.size(0), d = x.size(1);
  auto v = x.to_doubles(), w = weight.to_doubles(), b = bias.to_doubles();
  std::vector<double> out(v.size());
  for (int64_t i = 0; i < n; ++i) {
    double mu = 0, var = 0;
    for (int64_t j = 0; j < d; ++j)
      mu += v[i * d + j];
    mu /= d;
    for (int64_t j = 0; j < d; ++j)
      var += (v[i * d + j] - mu) * (v[i * d + j] - mu);
    double rstd = 1.0 / std::sqrt(var / d + eps);
    for (int64_t j = 0; j < d; ++j)
      out[i * d + j] = (v[i * d + j] - mu) * rstd * w[j] + b[j];
  }
  return out;
}

const std::vector<std::pair<int64_t, int64_t>> kShapes = {
    {1, 1}, {7, 1000}, {1000, 7}, {2, 4097}, {129, 33}};
// The row tile, the statistics pass's column chunk, the output pass's.
const std::vector<BlockSizes> kSettings = {{3, 1}, {4, 16, 8}, {64, 128, 256}};

TEST(WelfordReference, MatchesPlainLoops) {
  const double eps = 1e-5;
  for (DType dtype : {f32, bf16}) {
    for (auto [n, d] : kShapes) {
      SCOPED_TRACE(std::string(dtype_name(dtype)) + formatSizes({n, d}));
      auto x = randn({n, d}, dtype, 12) + 3.0f;
      auto weight = randn({d}, dtype, 13), bias = randn({d}, dtype, 14);
      // x - mean is computed from values of magnitude |x| ~ 4, not 1.
      auto tol = toleranceFor(dtype, 4.0);
      checkAtBlockSizes(
          kSettings, [&] { return welford(x, weight, bias, eps); }, dtype, {n, d},
          referenceLayerNorm(x, weight, bias, eps), tol, tol);
    }
  }
}

// A mean far from zero: E[x^2] - E[x]^2 in f32 would lose every bit of the
// variance (1e6 +- 1), the chunked Welford update must not.
TEST(WelfordReference, IsStableForALargeMean) {
  const double eps = 1e-5;
  auto x = randn({4, 4097}, f32, 15) + 1000.0f;
  auto weight = randn({4097}, f32, 16), bias = randn({4097}, f32, 17);
  auto expected = referenceLayerNorm(x, weight, bias, eps);
  // x - mean loses the bits of |x| ~ 1000 below f32's precision.
  checkAtBlockSizes(
      kSettings, [&] { return welford(x, weight, bias, eps); }, f32, {4, 4097}, expected,
      toleranceFor(f32, 1000.0), toleranceFor(f32, 1000.0));
}

} // namespace
