//===- long_sum_test.cpp - Reference mode of examples/long_sum.kite.cpp ---===//
//
// This file implements the reference-mode test of the looped row sum: the
// chunk width (a registered block size) and the row tile are varied,
// including chunks that do not divide the row and chunks of one column.
//
//===----------------------------------------------------------------------===//

#include "../../examples/long_sum.kite.cpp"

#include "compare.hpp"

using namespace kite_test;

namespace {

std::vector<double> referenceRowSum(const Tensor &x) {
  int64_t n = x.size(0), m = x.size(1);
  auto v = x.to_doubles();
  std::vector<double> out(n, 0.0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < m; ++j)
      out[i] += v[i * m + j];
  return out;
}

const std::vector<std::pair<int64_t, int64_t>> kShapes = {
    {1, 1}, {7, 1000}, {1000, 7}, {3, 4097}, {4097, 1}, {2, 20000}};
// The chunk width (register_block_size, first to run), then the row tile.
const std::vector<BlockSizes> kSettings = {{1}, {16, 4}, {1000, 64}};

TEST(LongSumReference, MatchesPlainLoops) {
  for (DType dtype : {f32, bf16}) {
    for (auto [n, m] : kShapes) {
      SCOPED_TRACE(std::string(dtype_name(dtype)) + formatSizes({n, m}));
      auto x = randn({n, m}, dtype, 16);
      auto tol = toleranceFor(dtype, std::sqrt(double(m)));
      checkAtBlockSizes(
          kSettings, [&] { return long_sum(x); }, dtype, {n}, referenceRowSum(x), tol, tol);
    }
  }
}

} // namespace
