//===- histogram_test.cpp - Reference mode of examples/histogram.kite.cpp -===//
//
// This file implements the reference-mode test of the histogram example
// against plain counting, with values outside the bins (not counted), at
// several block sizes.
//
//===----------------------------------------------------------------------===//

#include "../../examples/histogram.kite.cpp"

#include "compare.hpp"

using namespace kite_test;

namespace {

std::vector<double> referenceCounts(const Tensor &x, int64_t bins) {
  std::vector<double> out(bins, 0.0);
  for (double v : x.to_doubles())
    if (v >= 0 && v < bins)
      out[int64_t(v)] += 1;
  return out;
}

TEST(HistogramReference, MatchesPlainCounting) {
  for (int64_t n : {1, 7, 1000, 4097}) {
    for (int64_t bins : {1, 5, 256}) {
      SCOPED_TRACE("n " + std::to_string(n) + ", bins " + std::to_string(bins));
      // A few values fall outside [0, bins) on both sides.
      auto x = randint(-2, bins + 2, {n}, i32, uint64_t(n * 31 + bins));
      checkAtBlockSizes(
          {{1}, {7}, {64}}, [&] { return histogram(x, bins); }, i32, {bins},
          referenceCounts(x, bins), {0, 0}, {0, 0});
    }
  }
}

} // namespace
