//===- matmul_test.cpp - Reference mode of examples/matmul.kite.cpp -------===//
//
// This file implements the reference-mode test of the matmul example (DESIGN
// 1.6), for f32 and bf16 inputs, at odd sizes and block sizes that divide
// none of them.
//
//===----------------------------------------------------------------------===//

#include "../../examples/matmul.kite.cpp"

#include "compare.hpp"

using namespace kite_test;

namespace {

// (m, k, n).
const std::vector<std::array<int64_t, 3>> kShapes = {
    {1, 1, 1}, {7, 129, 33}, {129, 7, 200}, {1, 1000, 7}, {65, 1, 129}, {200, 200, 200}};
// tile(m, n) takes two entries, tile(k) the third.
const std::vector<BlockSizes> kSettings = {{7, 9, 5}, {16}, {64, 128, 32}};

TEST(MatmulReference, MatchesPlainLoops) {
  for (DType dtype : {f32, bf16}) {
    for (auto [m, k, n] : kShapes) {
      SCOPED_TRACE(std::string(dtype_name(dtype)) + " m, k, n = " + formatSizes({m, k, n}));
      auto x = randn({m, k}, dtype, 23), y = randn({k, n}, dtype, 24);
      // Each output is a k-term dot product of standard normals.
      auto tol = toleranceFor(dtype, std::sqrt(double(k)));
      checkAtBlockSizes(
          kSettings, [&] { return ::matmul(x, y); }, dtype, {m, n}, productDoubles(x, y), tol,
          tol);
    }
  }
}

} // namespace
