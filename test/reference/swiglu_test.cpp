//===- swiglu_test.cpp - Reference mode of examples/swiglu.kite.cpp -------===//
//
// This file implements the reference-mode test of the SwiGLU gate,
// silu(a) * b, for bf16 (the usual case) and f32 inputs.
//
//===----------------------------------------------------------------------===//

#include "../../examples/swiglu.kite.cpp"

#include "compare.hpp"

using namespace kite_test;

namespace {

std::vector<double> referenceSwiglu(const Tensor &a, const Tensor &b) {
  auto x = a.to_doubles(), y = b.to_doubles();
  std::vector<double> out(x.size());
  for (std::size_t i = 0; i < x.size(); ++i)
    out[i] = x[i] / (1 + std::exp(-x[i])) * y[i];
  return out;
}

const std::vector<std::pair<int64_t, int64_t>> kShapes = {
    {1, 1}, {7, 1000}, {1000, 7}, {1, 4097}, {129, 65}};
const std::vector<BlockSizes> kSettings = {{1}, {4, 16}, {64, 128}};

TEST(SwigluReference, MatchesPlainLoops) {
  for (DType dtype : {bf16, f32}) {
    for (auto [m, n] : kShapes) {
      SCOPED_TRACE(std::string(dtype_name(dtype)) + formatSizes({m, n}));
      auto a = randn({m, n}, dtype, 21) * 4.0f, b = randn({m, n}, dtype, 22);
      checkAtBlockSizes(
          kSettings, [&] { return swiglu(a, b); }, dtype, {m, n}, referenceSwiglu(a, b),
          toleranceFor(dtype), Tolerance{0, 0});
    }
  }
}

} // namespace
