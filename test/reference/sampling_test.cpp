//===- sampling_test.cpp - Reference mode of examples/sampling.kite.cpp ---===//
//
// This file implements the reference-mode test of the top-k sampler
// against plain loops (sort, softmax, running sum, the same uniform draw),
// and checks that draws follow the distribution.
//
//===----------------------------------------------------------------------===//

#include "../../examples/sampling.kite.cpp"

#include "compare.hpp"

#include <algorithm>
#include <cmath>

using namespace kite_test;

namespace {

std::vector<double> referenceTokens(const Tensor &logits, int64_t k, double temperature,
                                    int64_t seed) {
  int64_t b = logits.size(0), v = logits.size(1);
  auto x = logits.to_doubles();
  std::vector<double> out;
  for (int64_t r = 0; r < b; ++r) {
    std::vector<int64_t> order(v);
    for (int64_t j = 0; j < v; ++j)
      order[j] = j;
    std::stable_sort(order.begin(), order.end(),
                     [&](int64_t a, int64_t c) { return x[r * v + a] > x[r * v + c]; });
    double top = x[r * v + order[0]], total = 0;
    std::vector<double> e(k);
    for (int64_t j = 0; j < k; ++j)
      total += e[j] = std::exp((x[r * v + order[j]] - top) / temperature);
    double u = kite::random::uniform(uint64_t(seed), uint64_t(r)), cdf = 0;
    int64_t pick = k - 1;
    for (int64_t j = 0; j < k; ++j) {
      cdf += e[j] / total;
      if (cdf > u) {
        pick = j;
        break;
      }
    }
    out.push_back(double(order[pick]));
  }
  return out;
}

TEST(SamplingReference, MatchesPlainLoops) {
  for (auto [b, v, k] : std::vector<std::tuple<int64_t, int64_t, int64_t>>{
           {1, 10, 1}, {7, 100, 8}, {33, 1000, 64}}) {
    SCOPED_TRACE(formatSizes({b, v, k}));
    auto logits = randn({b, v}, bf16, uint64_t(v));
    checkAtBlockSizes(
        {{1}, {4}, {64}}, [&] { return sample_topk(logits, k, 0.7, 99); }, i64, {b},
        referenceTokens(logits, k, 0.7, 99), {0, 0}, {0, 0});
  }
}

// One row repeated: the tokens drawn follow softmax over the top k.
TEST(SamplingReference, FollowsTheDistribution) {
  int64_t b = 4000;
  std::vector<float> row = {2.0f, 1.0f, 0.5f, -1.0f, -3.0f, 0.0f};
  std::vector<float> all;
  for (int64_t r = 0; r < b; ++r)
    all.insert(all.end(), row.begin(), row.end());
  auto tokens = sample_topk(from_vector(all, {b, 6}), 3, 1.0, 5).to_doubles();
  double z = std::exp(2.0) + std::exp(1.0) + std::exp(0.5);
  std::vector<double> expected = {std::exp(2.0) / z, std::exp(1.0) / z, std::exp(0.5) / z};
  std::vector<double> counts(6, 0);
  for (double t : tokens)
    counts[int64_t(t)] += 1;
  for (int j = 0; j < 3; ++j)
    EXPECT_NEAR(counts[j] / b, expected[j], 6 * std::sqrt(expected[j] / b)) << "token " << j;
  EXPECT_EQ(counts[3] + counts[4] + counts[5], 0);
}

} // namespace
