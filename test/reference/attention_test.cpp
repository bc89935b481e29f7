//===- attention_test.cpp - Reference mode of examples/attention.kite.cpp -===//
//
// This file implements the reference-mode test of the flash attention
// example (DESIGN 1.6): a plain-loop softmax(q k^T / sqrt(d)) v in double vs.
// the kernel's online softmax over key tiles, for f32 and bf16.
//
//===----------------------------------------------------------------------===//

#include "../../examples/attention.kite.cpp"

#include "compare.hpp"

using namespace kite_test;

namespace {

// Scores are computed as the kernel's PyTorch semantics define them: q k^T
// rounded once to f32 (torch.bmm(..., out_dtype=torch.float32)), times the
// log2-based scale in f32, then a base-2 softmax. Everything after is in
// double.
std::vector<double> referenceAttention(const Tensor &q, const Tensor &k, const Tensor &v) {
  int64_t bh = q.size(0), s = q.size(1), d = q.size(2);
  auto Q = q.to_doubles(), K = k.to_doubles(), V = v.to_doubles();
  float scale = 1.0f / std::sqrt(float(d)) * 1.44269504f;
  std::vector<double> out(bh * s * d, 0.0), score(s);
  for (int64_t b = 0; b < bh; ++b)
    for (int64_t i = 0; i < s; ++i) {
      const double *qi = &Q[(b * s + i) * d];
      double mx = -INFINITY, total = 0;
      for (int64_t j = 0; j < s; ++j) {
        const double *kj = &K[(b * s + j) * d];
        double dotp = 0;
        for (int64_t c = 0; c < d; ++c)
          dotp += qi[c] * kj[c];
        score[j] = roundTo(f32, roundTo(f32, dotp) * scale);
        mx = std::max(mx, score[j]);
      }
      for (int64_t j = 0; j < s; ++j)
        total += score[j] = std::exp2(score[j] - mx);
      double *oi = &out[(b * s + i) * d];
      for (int64_t j = 0; j < s; ++j)
        for (int64_t c = 0; c < d; ++c)
          oi[c] += score[j] / total * V[(b * s + j) * d + c];
    }
  return out;
}

// (batch * heads, sequence, head dim).
const std::vector<std::array<int64_t, 3>> kShapes = {
    {1, 1, 16}, {3, 7, 32}, {2, 129, 64}, {1, 200, 8}, {4, 33, 1}};
// tile(bh, s) takes two entries, the key loop's tile(s) the third.
const std::vector<BlockSizes> kSettings = {{1, 3, 5}, {2, 16, 8}, {64, 64, 128}};

TEST(AttentionReference, MatchesPlainLoops) {
  for (DType dtype : {f32, bf16}) {
    for (auto [bh, s, d] : kShapes) {
      SCOPED_TRACE(std::string(dtype_name(dtype)) + " bh, s, d = " + formatSizes({bh, s, d}));
      auto q = randn({bh, s, d}, dtype, 30), k = randn({bh, s, d}, dtype, 31);
      auto v = randn({bh, s, d}, dtype, 32);
      checkAtBlockSizes(
          kSettings, [&] { return attention(q, k, v); }, dtype, {bh, s, d},
          referenceAttention(q, k, v), toleranceFor(dtype), toleranceFor(dtype));
    }
  }
}

} // namespace
