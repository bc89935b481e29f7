//===- exp_test.cpp - Reference mode of examples/exp.kite.cpp -------------===//
//
// This file implements the reference-mode test of the elementwise exp
// example, for ranks 1 to 3 (the kernel tiles every dimension of x.sizes()),
// f32 and bf16.
//
//===----------------------------------------------------------------------===//

#include "../../examples/exp.kite.cpp"

#include "compare.hpp"

using namespace kite_test;

namespace {

std::vector<double> referenceExp(const Tensor &x) {
  auto v = x.to_doubles();
  for (double &e : v)
    e = std::exp(e);
  return v;
}

const std::vector<BlockSizes> kSettings = {{1}, {2, 3, 16}, {64, 128}};

TEST(ExpReference, MatchesPlainLoops) {
  for (DType dtype : {f32, bf16}) {
    for (std::vector<int64_t> sizes :
         std::vector<std::vector<int64_t>>{{1}, {4097}, {7, 1000}, {1000, 7}, {3, 7, 65}}) {
      SCOPED_TRACE(std::string(dtype_name(dtype)) + formatSizes(sizes));
      auto x = randn(sizes, dtype, 3);
      checkAtBlockSizes(
          kSettings, [&] { return exp_kernel(x); }, dtype, sizes, referenceExp(x),
          toleranceFor(dtype), Tolerance{0, 0});
    }
  }
}

} // namespace
