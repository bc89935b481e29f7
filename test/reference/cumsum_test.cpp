//===- cumsum_test.cpp - Reference mode of examples/cumsum.kite.cpp -------===//
//
// This file implements the reference-mode tests of the scan examples (whole
// rows, column tiles with a carried total, the running max) against plain
// loops in double, and of the scan operations themselves: dtypes, dims,
// NaN propagation and errors.
//
//===----------------------------------------------------------------------===//

#include "../../examples/cumsum.kite.cpp"

#include "compare.hpp"

#include <cmath>

using namespace kite_test;

namespace {

/// Running sums (or maxima) of each row of `x`, in double.
std::vector<double> referenceRowScan(const Tensor &x, bool max) {
  int64_t n = x.size(0), m = x.size(1);
  auto v = x.to_doubles();
  std::vector<double> out(v.size());
  for (int64_t i = 0; i < n; ++i) {
    double acc = 0;
    for (int64_t j = 0; j < m; ++j) {
      double e = v[i * m + j];
      if (j == 0)
        acc = e;
      else if (max)
        acc = (std::isnan(acc) || std::isnan(e)) ? NAN : std::max(acc, e);
      else
        acc += e;
      out[i * m + j] = acc;
    }
  }
  return out;
}

const std::vector<std::pair<int64_t, int64_t>> kShapes = {
    {1, 1}, {7, 1000}, {1000, 7}, {3, 4097}, {129, 33}};
const std::vector<BlockSizes> kSettings = {{1}, {7}, {64}};

TEST(CumsumReference, RowsMatchPlainLoops) {
  for (DType dtype : {f32, bf16}) {
    for (auto [n, m] : kShapes) {
      SCOPED_TRACE(std::string(dtype_name(dtype)) + formatSizes({n, m}));
      auto x = randn({n, m}, dtype, 21);
      // Running sums of standard normals grow like sqrt(m).
      auto tol = toleranceFor(dtype, std::sqrt(double(m)));
      checkAtBlockSizes(
          kSettings, [&] { return cumsum_rows(x); }, dtype, {n, m}, referenceRowScan(x, false),
          tol, tol);
      checkAtBlockSizes(
          kSettings, [&] { return cumsum_long(x); }, dtype, {n, m}, referenceRowScan(x, false),
          tol, tol);
    }
  }
}

TEST(CumsumReference, CummaxPropagatesNan) {
  auto x = randn({5, 300}, f32, 3);
  x.data<float>()[2 * 300 + 100] = NAN;
  auto [got, where] = cummax_rows(x);
  auto expected = referenceRowScan(x, true);
  EXPECT_TRUE(allClose(got, f32, {5, 300}, expected, {0, 0}));
  auto w = where.to_doubles(), xv = x.to_doubles();
  for (int64_t i = 0; i < 5; ++i)
    for (int64_t j = 0; j < 300; ++j) {
      int64_t at = int64_t(w[i * 300 + j]);
      ASSERT_TRUE(at >= 0 && at <= j);
      double v = xv[i * 300 + at], e = expected[i * 300 + j];
      EXPECT_TRUE(v == e || (std::isnan(v) && std::isnan(e))) << i << ", " << j;
    }
  EXPECT_EQ(w[2 * 300 + 299], 100); // the NaN, from where it appears
  auto v = got.to_doubles();
  EXPECT_FALSE(std::isnan(v[2 * 300 + 99]));
  EXPECT_TRUE(std::isnan(v[2 * 300 + 100]));
  EXPECT_TRUE(std::isnan(v[2 * 300 + 299]));
  EXPECT_FALSE(std::isnan(v[3 * 300 + 299]));
}

TEST(CumsumReference, AssociativeScansMatchPlainLoops) {
  for (auto [n, m] : kShapes) {
    SCOPED_TRACE(formatSizes({n, m}));
    // Steps a in (0, 1) keep h bounded.
    auto a = rand({n, m}, bf16, 5), b = randn({n, m}, f32, 6);
    auto av = a.to_doubles(), bv = b.to_doubles();
    std::vector<double> h(av.size());
    for (int64_t i = 0; i < n; ++i) {
      double acc = 0;
      for (int64_t j = 0; j < m; ++j)
        h[i * m + j] = acc = av[i * m + j] * acc + bv[i * m + j];
    }
    auto tol = toleranceFor(f32, 8);
    checkAtBlockSizes(
        kSettings, [&] { return linear_recurrence(a, b); }, f32, {n, m}, h, tol, tol);

    auto x = randint(-1000, 1000, {n, m}, i32, 7);
    auto starts = randint(0, 2, {n, m}, i32, 8).to(boolean);
    auto xv = x.to_doubles(), sv = starts.to_doubles();
    std::vector<double> sums(xv.size());
    for (int64_t i = 0; i < n; ++i) {
      double acc = 0;
      for (int64_t j = 0; j < m; ++j)
        sums[i * m + j] = acc = (sv[i * m + j] != 0 || j == 0) ? xv[i * m + j] : acc + xv[i * m + j];
    }
    checkAtBlockSizes(
        kSettings, [&] { return segment_sums(x, starts); }, i32, {n, m}, sums, {0, 0}, {0, 0});
  }
}

TEST(CumsumReference, ForwardFillKeepsTheLastNonZero) {
  auto x = from_vector<float>({0, 1.5, 0, 0, -2, 0, 3, 0}, {2, 4}).to(bf16);
  EXPECT_EQ(forward_fill(x).to_doubles(), (std::vector<double>{0, 1.5, 1.5, 1.5, -2, -2, 3, 3}));
  EXPECT_EQ(forward_fill(x).dtype(), bf16);
}

TEST(CumsumReference, AssociativeScanChecksItsCombineFunction) {
  auto f = from_vector<float>({3, 1, 4, 1, 5}, {5});
  auto g = from_vector<float>({1, 2, 3}, {3});
  auto firsts = associative_scan(f, 0, [](auto a, auto) { return a; });
  EXPECT_EQ(firsts.to_doubles(), (std::vector<double>{3, 3, 3, 3, 3}));
  auto maxima = associative_scan(f, -1, [](auto a, auto b) { return maximum(a, b); });
  EXPECT_EQ(maxima.to_doubles(), (std::vector<double>{3, 3, 4, 4, 5}));
  auto expectError = [](auto &&fn, const std::string &what) {
    try {
      fn();
      FAIL() << "no error";
    } catch (const Error &e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  expectError([&] { associative_scan(f, 0, [](auto a, auto b) { return (a + b).to(f64); }); },
              "must return a rank-0 f32");
  expectError(
      [&] {
        associative_scan(std::tuple{f, g}, 0, [](auto a0, auto b0, auto a1, auto b1) {
          return std::tuple{a0 + a1, b0 + b1};
        });
      },
      "all must have one shape");
  expectError([&] { associative_scan(f, 1, [](auto a, auto b) { return a + b; }); },
              "associative_scan");
}

TEST(CumsumReference, ScanDtypesAndDims) {
  auto i = from_vector<int32_t>({1, 2, 3, 4, 5, 6}, {2, 3});
  auto s = cumsum(i, 1);
  EXPECT_EQ(s.dtype(), i64); // as torch.cumsum of an integer tensor
  EXPECT_EQ(s.to_doubles(), (std::vector<double>{1, 3, 6, 4, 9, 15}));
  EXPECT_EQ(cumsum(i, 0).to_doubles(), (std::vector<double>{1, 2, 3, 5, 7, 9}));
  EXPECT_EQ(cumsum(i, -2).to_doubles(), (std::vector<double>{1, 2, 3, 5, 7, 9}));
  EXPECT_EQ(cumprod(i, 1).to_doubles(), (std::vector<double>{1, 2, 6, 4, 20, 120}));
  auto b = from_vector<bool>({true, false, true}, {3});
  EXPECT_EQ(cumsum(b, 0).dtype(), i64);
  EXPECT_EQ(cumsum(b, 0).to_doubles(), (std::vector<double>{1, 1, 2}));
  auto f = from_vector<float>({3, 1, 4, 1, 5, 9, 2, 6}, {8});
  auto [mx, mxAt] = cummax(f, 0);
  EXPECT_EQ(mx.to_doubles(), (std::vector<double>{3, 3, 4, 4, 5, 9, 9, 9}));
  EXPECT_EQ(mxAt.to_doubles(), (std::vector<double>{0, 0, 2, 2, 4, 5, 5, 5}));
  auto [mn, mnAt] = cummin(f, 0);
  EXPECT_EQ(mn.to_doubles(), (std::vector<double>{3, 1, 1, 1, 1, 1, 1, 1}));
  EXPECT_EQ(mnAt.to_doubles(), (std::vector<double>{0, 1, 1, 3, 3, 3, 3, 3})); // ties: the later
  EXPECT_EQ(mnAt.dtype(), i64);
  EXPECT_EQ(std::get<0>(cummax(i, 1)).dtype(), i32);
  auto nans = from_vector<float>({1, NAN, 2, NAN, 0}, {5});
  EXPECT_EQ(std::get<1>(cummax(nans, 0)).to_doubles(), (std::vector<double>{0, 1, 1, 3, 3}));
  auto h = from_vector<float>({1, 2, 3}, {3}).to(bf16);
  EXPECT_EQ(cumsum(h, 0).dtype(), bf16);
  EXPECT_THROW(cumsum(f, 1), Error);
  try {
    cumsum(f, 2);
    FAIL() << "no error";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("cumsum"), std::string::npos) << e.what();
  }
}

} // namespace
