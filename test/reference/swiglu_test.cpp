//===- swiglu_test.cpp - Reference mode of examples/swiglu.kite.cpp -------===//
//
// This file implements the reference-mode tests of the SwiGLU gate,
// silu(a) * b, for bf16 (the usual case) and f32 inputs, and of the gated
// up-projection silu(x @ w1) * (x @ w3).
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

// silu(x @ w1) * (x @ w3), the products in double.
std::vector<double> referenceSwigluUp(const Tensor &x, const Tensor &w1, const Tensor &w3) {
  auto gate = productDoubles(x, w1), up = productDoubles(x, w3);
  std::vector<double> out(gate.size());
  for (size_t i = 0; i < out.size(); ++i)
    out[i] = gate[i] / (1 + std::exp(-gate[i])) * up[i];
  return out;
}

TEST(SwigluUpReference, MatchesPlainLoops) {
  // (m, k, n); tile(m, n) takes two block sizes, each tile(k) one.
  const std::vector<std::array<int64_t, 3>> shapes = {{1, 1, 1}, {7, 129, 33}, {65, 40, 129}};
  const std::vector<BlockSizes> settings = {{7, 9, 5, 3}, {16}, {64, 128, 32, 64}};
  for (DType dtype : {f32, bf16}) {
    for (auto [m, k, n] : shapes) {
      SCOPED_TRACE(std::string(dtype_name(dtype)) + " m, k, n = " + formatSizes({m, k, n}));
      auto x = randn({m, k}, dtype, 31), w1 = randn({k, n}, dtype, 32), w3 = randn({k, n}, dtype, 33);
      // Each output is the product of two k-term dot products of standard
      // normals.
      auto tol = toleranceFor(dtype, double(k));
      checkAtBlockSizes(
          settings, [&] { return swiglu_up(x, w1, w3); }, dtype, {m, n},
          referenceSwigluUp(x, w1, w3), tol, tol);
    }
  }
}

} // namespace
