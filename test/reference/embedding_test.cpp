//===- embedding_test.cpp - Reference mode of examples/embedding.kite.cpp -===//
//
// This file implements the reference-mode test of the embedding gather:
// every output row must be exactly the weight row its id selects.
//
//===----------------------------------------------------------------------===//

#include "../../examples/embedding.kite.cpp"

#include "compare.hpp"

using namespace kite_test;

namespace {

std::vector<double> referenceEmbedding(const Tensor &ids, const Tensor &weight) {
  int64_t n = ids.size(0), d = weight.size(1);
  auto idx = ids.to_doubles(), w = weight.to_doubles();
  std::vector<double> out(n * d);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < d; ++j)
      out[i * d + j] = w[static_cast<int64_t>(idx[i]) * d + j];
  return out;
}

// (ids, vocabulary, embedding width).
const std::vector<std::array<int64_t, 3>> kShapes = {
    {1, 1, 1}, {7, 13, 129}, {1000, 4097, 7}, {129, 50, 33}, {3, 5, 1000}};
// The id tile, then the column tile.
const std::vector<BlockSizes> kSettings = {{1}, {4, 16}, {64, 128}};

TEST(EmbeddingReference, MatchesPlainLoops) {
  for (DType idType : {i64, i32}) {
    for (DType dtype : {f32, bf16}) {
      for (auto [n, v, d] : kShapes) {
        SCOPED_TRACE(std::string("ids ") + dtype_name(idType) + ", weight " + dtype_name(dtype) +
                     formatSizes({n, v, d}));
        auto ids = randint(0, v, {n}, idType, 19);
        auto weight = randn({v, d}, dtype, 20);
        checkAtBlockSizes(
            kSettings, [&] { return embedding(ids, weight); }, dtype, {n, d},
            referenceEmbedding(ids, weight), Tolerance{0, 0}, Tolerance{0, 0});
      }
    }
  }
}

} // namespace
