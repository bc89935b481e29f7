//===- linear_test.cpp - Reference mode of examples/linear.kite.cpp -------===//
//
// This file implements the reference-mode test of the K-major products:
// linear (x @ w^T + bias) and bmm_nt (a @ b^T per batch) against plain
// loops in double, for f32, bf16 and f16, at sizes no block size divides.
//
//===----------------------------------------------------------------------===//

#include "../../examples/linear.kite.cpp"

#include "compare.hpp"

using namespace kite_test;

namespace {

/// out[z, i, j] = sum_p a[z, i, p] * b[z, j, p] (+ bias[j]), in double.
std::vector<double> productNT(const Tensor &a, const Tensor &b, const Tensor *bias, int64_t nb) {
  int64_t m = a.size(a.dim() - 2), k = a.size(a.dim() - 1), n = b.size(b.dim() - 2);
  auto x = a.to_doubles(), y = b.to_doubles();
  std::vector<double> c = bias ? bias->to_doubles() : std::vector<double>(n, 0.0);
  std::vector<double> out(nb * m * n, 0.0);
  for (int64_t z = 0; z < nb; ++z)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double s = c[j];
        for (int64_t p = 0; p < k; ++p)
          s += x[(z * m + i) * k + p] * y[(z * n + j) * k + p];
        out[(z * m + i) * n + j] = s;
      }
  return out;
}

// (m, k, n).
const std::vector<std::array<int64_t, 3>> kShapes = {
    {1, 1, 1}, {7, 129, 33}, {129, 7, 200}, {1, 1000, 7}, {65, 1, 129}};
// tile(m, n) takes two entries, tile(k) the third.
const std::vector<BlockSizes> kSettings = {{7, 9, 5}, {16}, {64, 128, 64}};

TEST(LinearReference, MatchesPlainLoops) {
  for (DType dtype : {f32, bf16, f16}) {
    for (auto [m, k, n] : kShapes) {
      SCOPED_TRACE(std::string(dtype_name(dtype)) + " m, k, n = " + formatSizes({m, k, n}));
      auto x = randn({m, k}, dtype, 51), w = randn({n, k}, dtype, 52), bias = randn({n}, dtype, 53);
      auto tol = toleranceFor(dtype, std::sqrt(double(k + 1)));
      checkAtBlockSizes(
          kSettings, [&] { return linear(x, w, bias); }, dtype, {m, n}, productNT(x, w, &bias, 1), tol,
          tol);
    }
  }
}

TEST(LinearReference, BatchedMatchesPlainLoops) {
  // (batch, m, k, n); tile(batch, m, n) takes three entries, tile(k) the fourth.
  for (DType dtype : {f32, bf16}) {
    for (auto [nb, m, k, n] : std::vector<std::array<int64_t, 4>>{{1, 1, 1, 1}, {3, 7, 129, 33}, {2, 65, 7, 100}}) {
      SCOPED_TRACE(std::string(dtype_name(dtype)) + " batch, m, k, n = " + formatSizes({nb, m, k, n}));
      auto a = randn({nb, m, k}, dtype, 54), b = randn({nb, n, k}, dtype, 55);
      auto tol = toleranceFor(dtype, std::sqrt(double(k)));
      checkAtBlockSizes(
          {{1, 3, 5, 7}, {2, 16}, {1, 64, 64, 64}}, [&] { return bmm_nt(a, b); }, dtype, {nb, m, n},
          productNT(a, b, nullptr, nb), tol, tol);
    }
  }
}

} // namespace
