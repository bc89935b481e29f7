//===- bmm_test.cpp - Reference mode of examples/bmm.kite.cpp -------------===//
//
// This file implements the reference-mode test of the batched matmul
// example, for f32 and bf16 inputs.
//
//===----------------------------------------------------------------------===//

#include "../../examples/bmm.kite.cpp"

#include "compare.hpp"

using namespace kite_test;

namespace {

std::vector<double> referenceBmm(const Tensor &a, const Tensor &b) {
  int64_t nb = a.size(0), m = a.size(1), k = a.size(2), n = b.size(2);
  auto x = a.to_doubles(), y = b.to_doubles();
  std::vector<double> out(nb * m * n, 0.0);
  for (int64_t z = 0; z < nb; ++z)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t p = 0; p < k; ++p)
        for (int64_t j = 0; j < n; ++j)
          out[(z * m + i) * n + j] += x[(z * m + i) * k + p] * y[(z * k + p) * n + j];
  return out;
}

// (batch, m, k, n).
const std::vector<std::array<int64_t, 4>> kShapes = {
    {1, 1, 1, 1}, {3, 7, 129, 33}, {2, 65, 7, 100}, {1, 1, 1000, 7}, {5, 50, 50, 50}};
// tile(batch, m, n) takes three entries, tile(k) the fourth.
const std::vector<BlockSizes> kSettings = {{1, 3, 5, 7}, {2, 16}, {4, 64, 64, 128}};

TEST(BmmReference, MatchesPlainLoops) {
  for (DType dtype : {f32, bf16}) {
    for (auto [nb, m, k, n] : kShapes) {
      SCOPED_TRACE(std::string(dtype_name(dtype)) + " batch, m, k, n = " +
                   formatSizes({nb, m, k, n}));
      auto a = randn({nb, m, k}, dtype, 28), b = randn({nb, k, n}, dtype, 29);
      auto tol = toleranceFor(dtype, std::sqrt(double(k)));
      checkAtBlockSizes(
          kSettings, [&] { return ::bmm(a, b); }, dtype, {nb, m, n}, referenceBmm(a, b), tol, tol);
    }
  }
}

} // namespace
