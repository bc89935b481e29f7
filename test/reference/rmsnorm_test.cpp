//===- rmsnorm_test.cpp - Reference mode of examples/rmsnorm.kite.cpp -----===//
//
// This file implements the reference-mode test of the RMS norm example, for
// f32 and bf16 inputs.
//
//===----------------------------------------------------------------------===//

#include "../../examples/rmsnorm.kite.cpp"

#include "compare.hpp"

using namespace kite_test;

namespace {

std::vector<double> referenceRmsNorm(const Tensor &x, const Tensor &weight, double eps) {
  int64_t n = x.size(0), d = x.size(1);
  auto v = x.to_doubles(), w = weight.to_doubles();
  std::vector<double> out(v.size());
  for (int64_t i = 0; i < n; ++i) {
    double ms = 0;
    for (int64_t j = 0; j < d; ++j)
      ms += v[i * d + j] * v[i * d + j];
    double rrms = 1.0 / std::sqrt(ms / d + eps);
    for (int64_t j = 0; j < d; ++j)
      out[i * d + j] = v[i * d + j] * rrms * w[j];
  }
  return out;
}

const std::vector<std::pair<int64_t, int64_t>> kShapes = {
    {1, 1}, {7, 1000}, {1000, 7}, {2, 4097}, {129, 33}};
const std::vector<BlockSizes> kSettings = {{1}, {4}, {64}};

TEST(RmsNormReference, MatchesPlainLoops) {
  const double eps = 1e-6;
  for (DType dtype : {f32, bf16}) {
    for (auto [n, d] : kShapes) {
      SCOPED_TRACE(std::string(dtype_name(dtype)) + formatSizes({n, d}));
      auto x = randn({n, d}, dtype, 10), weight = randn({d}, dtype, 11);
      checkAtBlockSizes(
          kSettings, [&] { return rmsnorm(x, weight, eps); }, dtype, {n, d},
          referenceRmsNorm(x, weight, eps), toleranceFor(dtype), toleranceFor(dtype));
    }
  }
}

} // namespace
