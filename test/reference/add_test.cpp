//===- add_test.cpp - Reference mode of the elementwise add examples ------===//
//
// This file implements the reference-mode tests of the elementwise add
// examples (examples/add.kite.cpp, and examples/any_rank.kite.cpp at ranks
// 1 to 6): plain loops in double vs. the kernel on the CPU, at several
// block sizes and at shapes no block size divides.
//
//===----------------------------------------------------------------------===//

#include "../../examples/add.kite.cpp"
#include "../../examples/any_rank.kite.cpp"

#include "compare.hpp"

using namespace kite_test;

namespace {

// out = x + y, rounded to the output dtype (the add itself happens in f32
// for 16-bit inputs, which is exact before the rounding).
std::vector<double> referenceAdd(const Tensor &x, const Tensor &y) {
  auto a = x.to_doubles(), b = y.to_doubles();
  std::vector<double> out(a.size());
  for (std::size_t i = 0; i < a.size(); ++i)
    out[i] = roundTo(x.dtype(), a[i] + b[i]);
  return out;
}

const std::vector<BlockSizes> kSettings = {{1}, {4, 16}, {64, 128}};

TEST(AddReference, MatchesPlainLoops) {
  for (DType dtype : {f32, bf16}) {
    for (auto [m, n] : std::vector<std::pair<int64_t, int64_t>>{
             {1, 1}, {7, 1000}, {1000, 7}, {1, 4097}, {4097, 3}, {129, 65}}) {
      SCOPED_TRACE(std::string(dtype_name(dtype)) + formatSizes({m, n}));
      auto x = randn({m, n}, dtype, 1), y = randn({m, n}, dtype, 2);
      checkAtBlockSizes(
          kSettings, [&] { return add(x, y); }, dtype, {m, n}, referenceAdd(x, y),
          Tolerance{0, 0}, Tolerance{0, 0});
    }
  }
}

TEST(AddReference, AnyRankMatchesPlainLoops) {
  for (const std::vector<int64_t> &shape : std::vector<std::vector<int64_t>>{
           {1}, {4097}, {7, 1000}, {3, 5, 7}, {2, 3, 4, 65}, {1, 2, 1, 3, 1, 5}}) {
    SCOPED_TRACE(formatSizes(shape));
    auto x = randn(shape, f32, 3), y = randn(shape, f32, 4);
    checkAtBlockSizes(
        kSettings, [&] { return add_any(x, y); }, f32, shape, referenceAdd(x, y),
        Tolerance{0, 0}, Tolerance{0, 0});
  }
}

// The comparison itself must be able to fail, and name the element.
TEST(AddReference, ComparisonReportsTheFirstMismatch) {
  auto x = randn({7, 9}, f32, 1), y = randn({7, 9}, f32, 2);
  auto expected = referenceAdd(x, y);
  expected[5 * 9 + 3] += 1e-3;
  auto result = allClose(add(x, y), f32, {7, 9}, expected, toleranceFor(f32));
  EXPECT_FALSE(result);
  EXPECT_NE(std::string(result.message()).find("first at [5, 3]"), std::string::npos)
      << result.message();
  EXPECT_FALSE(allClose(add(x, y), f32, {9, 7}, referenceAdd(x, y), toleranceFor(f32)));
}

} // namespace
