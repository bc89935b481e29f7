//===- layernorm_test.cpp - Reference mode of examples/layernorm.kite.cpp -===//
//
// This file implements the reference-mode tests of the layer norm forward
// examples: layernorm's three outputs (out, mean, rstd) and layer_norm's
// one, for f32 and bf16 inputs.
//
//===----------------------------------------------------------------------===//

#include "../../examples/layernorm.kite.cpp"

#include "compare.hpp"

using namespace kite_test;

namespace {

struct LayerNormResult {
  std::vector<double> out, mean, rstd;
};

LayerNormResult referenceLayerNorm(const Tensor &x, const Tensor &weight, const Tensor &bias,
                                   double eps) {
  int64_t n = x.size(0), d = x.size(1);
  auto v = x.to_doubles(), w = weight.to_doubles(), b = bias.to_doubles();
  LayerNormResult r{std::vector<double>(v.size()), std::vector<double>(n),
                    std::vector<double>(n)};
  for (int64_t i = 0; i < n; ++i) {
    double mu = 0, var = 0;
    for (int64_t j = 0; j < d; ++j)
      mu += v[i * d + j];
    mu /= d;
    for (int64_t j = 0; j < d; ++j)
      var += (v[i * d + j] - mu) * (v[i * d + j] - mu);
    var /= d;
    double rstd = 1.0 / std::sqrt(var + eps);
    for (int64_t j = 0; j < d; ++j)
      r.out[i * d + j] = (v[i * d + j] - mu) * rstd * w[j] + b[j];
    r.mean[i] = mu;
    r.rstd[i] = rstd;
  }
  return r;
}

const std::vector<std::pair<int64_t, int64_t>> kShapes = {
    {1, 1}, {7, 1000}, {1000, 7}, {2, 4097}, {129, 33}};
const std::vector<BlockSizes> kSettings = {{1}, {4}, {64}};

TEST(LayerNormReference, MatchesPlainLoops) {
  const double eps = 1e-5;
  for (DType dtype : {f32, bf16}) {
    for (auto [n, d] : kShapes) {
      SCOPED_TRACE(std::string(dtype_name(dtype)) + formatSizes({n, d}));
      auto x = randn({n, d}, dtype, 7) + 0.5f;
      auto weight = randn({d}, dtype, 8), bias = randn({d}, dtype, 9);
      auto expected = referenceLayerNorm(x, weight, bias, eps);
      auto results = runAtBlockSizes(kSettings, [&] { return layernorm(x, weight, bias, eps); });
      // rstd is up to 1/sqrt(eps) for a one-column row.
      double rstdScale = d == 1 ? 1 / std::sqrt(eps) : 1;
      for (std::size_t i = 0; i < kSettings.size(); ++i) {
        SCOPED_TRACE("block sizes " + formatSizes(kSettings[i]));
        auto [out, mean, rstd] = results[i];
        EXPECT_TRUE(allClose(out, dtype, {n, d}, expected.out, toleranceFor(dtype)));
        EXPECT_TRUE(allClose(mean, f32, {n}, expected.mean, toleranceFor(f32)));
        EXPECT_TRUE(allClose(rstd, f32, {n}, expected.rstd, toleranceFor(f32, rstdScale)));
        auto [out0, mean0, rstd0] = results[0];
        EXPECT_TRUE(allClose(out, out0, toleranceFor(dtype)));
        EXPECT_TRUE(allClose(mean, mean0, toleranceFor(f32)));
        EXPECT_TRUE(allClose(rstd, rstd0, toleranceFor(f32, rstdScale)));
      }
    }
  }
}

TEST(LayerNormReference, OutputOnlyKernelMatchesPlainLoops) {
  const double eps = 1e-5;
  for (DType dtype : {f32, bf16}) {
    for (auto [n, d] : kShapes) {
      SCOPED_TRACE(std::string(dtype_name(dtype)) + formatSizes({n, d}));
      auto x = randn({n, d}, dtype, 17) - 0.25f;
      auto weight = randn({d}, dtype, 18), bias = randn({d}, dtype, 19);
      auto expected = referenceLayerNorm(x, weight, bias, eps);
      auto results = runAtBlockSizes(kSettings, [&] { return layer_norm(x, weight, bias, eps); });
      auto [withStats, mean, rstd] = layernorm(x, weight, bias, eps);
      for (std::size_t i = 0; i < kSettings.size(); ++i) {
        SCOPED_TRACE("block sizes " + formatSizes(kSettings[i]));
        EXPECT_TRUE(allClose(results[i], dtype, {n, d}, expected.out, toleranceFor(dtype)));
        EXPECT_TRUE(allClose(results[i], withStats, toleranceFor(dtype)));
      }
    }
  }
}

} // namespace
