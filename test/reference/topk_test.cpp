//===- topk_test.cpp - Reference mode of examples/topk.kite.cpp -----------===//
//
// This file implements the reference-mode tests of row sorts and top-k
// against std::stable_sort of each row, with NaN and ties, and the order
// rules themselves (NaN largest, stable ties, integers, errors).
//
//===----------------------------------------------------------------------===//

#include "../../examples/topk.kite.cpp"

#include "compare.hpp"

#include <algorithm>
#include <cmath>

using namespace kite_test;

namespace {

/// Each row's values in descending order (NaN first, ties by column) and
/// their columns, the first k of them.
std::pair<std::vector<double>, std::vector<double>> referenceDescending(const Tensor &x,
                                                                        int64_t k) {
  int64_t n = x.size(0), m = x.size(1);
  auto v = x.to_doubles();
  std::vector<double> values, cols;
  for (int64_t i = 0; i < n; ++i) {
    std::vector<int64_t> order(m);
    for (int64_t j = 0; j < m; ++j)
      order[j] = j;
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
      double x = v[i * m + a], y = v[i * m + b];
      if (std::isnan(x) || std::isnan(y))
        return std::isnan(x) && !std::isnan(y);
      return x > y;
    });
    for (int64_t j = 0; j < k; ++j) {
      values.push_back(v[i * m + order[j]]);
      cols.push_back(double(order[j]));
    }
  }
  return {values, cols};
}

/// Rows of rounded normals (many ties in bf16) with a NaN in row 1.
Tensor rows(int64_t n, int64_t m, DType dtype, uint64_t seed) {
  auto x = randn({n, m}, f32, seed);
  float *p = x.data<float>();
  for (int64_t i = 0; i < n * m; ++i)
    p[i] = std::round(p[i] * 4) / 4;
  if (n > 1 && m > 2)
    p[m + m / 2] = NAN;
  return x.to(dtype);
}

TEST(TopkReference, SortRowsMatchesStableSort) {
  for (DType dtype : {f32, bf16, i32}) {
    for (auto [n, m] : std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {7, 100}, {3, 1000}}) {
      SCOPED_TRACE(std::string(dtype_name(dtype)) + formatSizes({n, m}));
      auto x = rows(n, m, dtype == i32 ? f32 : dtype, uint64_t(n + m));
      if (dtype == i32)
        x = (x * 4).to(i32); // the NaN becomes the integer minimum
      auto [values, cols] = referenceDescending(x, m);
      auto [v, i] = sort_rows(x);
      EXPECT_TRUE(allClose(v, dtype, {n, m}, values, {0, 0}));
      EXPECT_TRUE(allClose(i, i64, {n, m}, cols, {0, 0}));
    }
  }
}

TEST(TopkReference, TopkRowsMatchesStableSort) {
  for (int64_t k : {1, 8, 64}) {
    SCOPED_TRACE("k " + std::to_string(k));
    auto x = rows(9, 300, bf16, uint64_t(k));
    auto [values, cols] = referenceDescending(x, k);
    auto results = runAtBlockSizes({{1}, {4}, {64}}, [&] { return topk_rows(x, k); });
    for (auto &[v, i] : results) {
      EXPECT_TRUE(allClose(v, bf16, {9, k}, values, {0, 0}));
      EXPECT_TRUE(allClose(i, i64, {9, k}, cols, {0, 0}));
    }
  }
}

TEST(TopkReference, OrderRules) {
  auto x = from_vector<float>({2, NAN, 1, 2, -INFINITY, 5}, {6});
  auto [up, upIdx] = sort(x, 0);
  EXPECT_EQ(upIdx.to_doubles(), (std::vector<double>{4, 2, 0, 3, 5, 1})); // NaN last, ties stable
  auto [down, downIdx] = sort(x, 0, true);
  EXPECT_EQ(downIdx.to_doubles(), (std::vector<double>{1, 5, 0, 3, 2, 4}));
  auto [small, smallIdx] = topk(x, 2, 0, /*largest=*/false);
  EXPECT_EQ(small.to_doubles(), (std::vector<double>{-INFINITY, 1}));
  EXPECT_EQ(smallIdx.dtype(), i64);
  auto cols = from_vector<int32_t>({3, 1, 2, 9, 8, 7}, {2, 3});
  auto [c0, c0Idx] = sort(cols, 0);
  EXPECT_EQ(c0.to_doubles(), (std::vector<double>{3, 1, 2, 9, 8, 7}));
  EXPECT_EQ(c0.dtype(), i32);
  EXPECT_THROW(topk(x, 7, 0), Error);
  EXPECT_THROW(sort(x, 1), Error);
}

} // namespace
