//===- causal_attention_test.cpp - Reference mode of the causal example ---===//
//
// This file implements the reference-mode test of
// examples/causal_attention.kite.cpp: plain loops over each query's keys at
// or before it, in double, vs. the kernel's online softmax over key tiles
// that stop at the query tile's end, for f32 and bf16.
//
//===----------------------------------------------------------------------===//

#include "../../examples/causal_attention.kite.cpp"

#include "compare.hpp"

using namespace kite_test;

namespace {

// Scores as the kernel's PyTorch semantics define them (examples/
// attention's test): q k^T and the scale in f32, then a
// base-2 softmax over keys 0..i in double.
std::vector<double> referenceCausal(const Tensor &q, const Tensor &k, const Tensor &v) {
  int64_t bh = q.size(0), s = q.size(1), d = q.size(2);
  auto Q = q.to_doubles(), K = k.to_doubles(), V = v.to_doubles();
  float scale = 1.0f / std::sqrt(float(d)) * 1.44269504f;
  std::vector<double> out(bh * s * d, 0.0), score(s);
  for (int64_t b = 0; b < bh; ++b)
    for (int64_t i = 0; i < s; ++i) {
      const double *qi = &Q[(b * s + i) * d];
      double mx = -INFINITY, total = 0;
      for (int64_t j = 0; j <= i; ++j) {
        const double *kj = &K[(b * s + j) * d];
        double dotp = 0;
        for (int64_t c = 0; c < d; ++c)
          dotp += qi[c] * kj[c];
        score[j] = roundTo(f32, roundTo(f32, dotp) * scale);
        mx = std::max(mx, score[j]);
      }
      for (int64_t j = 0; j <= i; ++j)
        total += score[j] = std::exp2(score[j] - mx);
      double *oi = &out[(b * s + i) * d];
      for (int64_t j = 0; j <= i; ++j)
        for (int64_t c = 0; c < d; ++c)
          oi[c] += score[j] / total * V[(b * s + j) * d + c];
    }
  return out;
}

// (batch * heads, sequence, head dim).
const std::vector<std::array<int64_t, 3>> kShapes = {
    {1, 1, 16}, {3, 7, 32}, {2, 129, 64}, {1, 200, 8}, {4, 33, 1}};
// tile(bh, s) takes two entries, the key loop's tile the third: query and
// key tiles of different sizes put the diagonal inside and across tiles.
const std::vector<BlockSizes> kSettings = {{1, 3, 5}, {2, 16, 8}, {1, 8, 16}, {64, 64, 128}};

TEST(CausalAttentionReference, MatchesPlainLoops) {
  for (DType dtype : {f32, bf16}) {
    for (auto [bh, s, d] : kShapes) {
      SCOPED_TRACE(std::string(dtype_name(dtype)) + " bh, s, d = " + formatSizes({bh, s, d}));
      auto q = randn({bh, s, d}, dtype, 40), k = randn({bh, s, d}, dtype, 41);
      auto v = randn({bh, s, d}, dtype, 42);
      checkAtBlockSizes(
          kSettings, [&] { return causal_attention(q, k, v); }, dtype, {bh, s, d},
          referenceCausal(q, k, v), toleranceFor(dtype), toleranceFor(dtype));
    }
  }
}

} // namespace
