//===- mlp_test.cpp - Reference mode of examples/mlp.kite.cpp -------------===//
//
// This file implements the reference-mode test of the fused two-layer MLP:
// plain loops computing gelu(x @ w1) @ w2 vs. the kernel's streamed hidden
// dim, for f32 and bf16.
//
//===----------------------------------------------------------------------===//

#include "../../examples/mlp.kite.cpp"

#include "compare.hpp"

using namespace kite_test;

namespace {

// The hidden activations are rounded to the inputs' dtype, as torch.matmul
// and gelu of bf16 tensors return bf16; the second product is in double.
std::vector<double> referenceMlp(const Tensor &x, const Tensor &w1, const Tensor &w2) {
  int64_t m = x.size(0), d = x.size(1), h = w1.size(1), e = w2.size(1);
  DType dtype = x.dtype();
  auto X = x.to_doubles(), W1 = w1.to_doubles(), W2 = w2.to_doubles();
  std::vector<double> out(m * e, 0.0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < h; ++j) {
      double s = 0;
      for (int64_t c = 0; c < d; ++c)
        s += X[i * d + c] * W1[c * h + j];
      double a = roundTo(dtype, s);
      double g = roundTo(dtype, 0.5 * a * (1 + std::erf(a / std::sqrt(2.0))));
      for (int64_t c = 0; c < e; ++c)
        out[i * e + c] += g * W2[j * e + c];
    }
  return out;
}

// (m, d, hidden, e).
const std::vector<std::array<int64_t, 4>> kShapes = {
    {1, 1, 1, 1}, {7, 16, 33, 8}, {65, 32, 100, 24}, {130, 8, 7, 16}};
// tile(m) takes the first entry, the hidden loop's tile the second.
const std::vector<BlockSizes> kSettings = {{3, 5}, {16, 8}, {64, 128}};

TEST(MlpReference, MatchesPlainLoops) {
  for (DType dtype : {f32, bf16}) {
    for (auto [m, d, h, e] : kShapes) {
      SCOPED_TRACE(std::string(dtype_name(dtype)) + " m, d, hidden, e = " +
                   formatSizes({m, d, h, e}));
      auto x = randn({m, d}, dtype, 40), w1 = randn({d, h}, dtype, 41);
      auto w2 = randn({h, e}, dtype, 42);
      auto tol = toleranceFor(dtype, std::sqrt(double(h + 1)));
      checkAtBlockSizes(
          kSettings, [&] { return mlp(x, w1, w2); }, dtype, {m, e}, referenceMlp(x, w1, w2), tol,
          tol);
    }
  }
}

} // namespace
