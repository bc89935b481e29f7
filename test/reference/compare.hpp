//===- compare.hpp - Checks shared by the reference-mode tests --*- C++ -*-===//
//
// This file implements what every test in test/reference needs: tolerances
// by dtype, an element-by-element closeness check that names the first
// mismatch by its multi-index, and a helper that runs a kernel once per
// ReferenceBlockSizes setting. Each test compares a kernel from examples/
// against its own plain-loop implementation, at several block sizes, and the
// block sizes against each other.
//
//===----------------------------------------------------------------------===//

#ifndef KITE_TEST_REFERENCE_COMPARE_HPP
#define KITE_TEST_REFERENCE_COMPARE_HPP

#include <kite/kite.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

namespace kite_test {

/// |actual - expected| <= atol + rtol * |expected|.
struct Tolerance {
  double rtol = 0;
  double atol = 0;
};

/// Tolerance of a kernel output of dtype `t` against a double-precision
/// reference of a short computation; `scale` is the typical magnitude of the
/// outputs (sqrt(K) for a K-term dot product), so values near zero are
/// judged by the absolute error a computation of that size makes.
inline Tolerance toleranceFor(kite::DType t, double scale = 1.0) {
  switch (t) {
  case kite::DType::f64:
    return {1e-12, 1e-12 * scale};
  case kite::DType::f32:
    return {1e-5, 1e-5 * scale};
  case kite::DType::f16:
    return {2e-3, 2e-3 * scale};
  case kite::DType::bf16:
    return {1e-2, 1e-2 * scale};
  case kite::DType::e4m3: // a step of an 8-bit float: 2^-3 (e4m3), 2^-2 (e5m2) of its value
    return {0.13, 0.13 * scale};
  case kite::DType::e5m2:
    return {0.26, 0.26 * scale};
  default: // integers and booleans compare exactly
    return {0, 0};
  }
}

inline std::string formatSizes(const std::vector<int64_t> &sizes) {
  std::ostringstream os;
  os << "[";
  for (std::size_t i = 0; i < sizes.size(); ++i)
    os << (i ? ", " : "") << sizes[i];
  os << "]";
  return os.str();
}

/// The row-major multi-index of flat element `flat` of a tensor of `sizes`.
inline std::string formatIndex(int64_t flat, const std::vector<int64_t> &sizes) {
  std::vector<int64_t> idx(sizes.size());
  for (std::size_t d = sizes.size(); d-- > 0;) {
    idx[d] = sizes[d] ? flat % sizes[d] : 0;
    flat = sizes[d] ? flat / sizes[d] : 0;
  }
  return formatSizes(idx);
}

/// Checks every element; NaN matches only NaN and infinities only
/// themselves. On failure, names the first mismatch and how many there are.
inline ::testing::AssertionResult allClose(const std::vector<double> &actual,
                                           const std::vector<double> &expected,
                                           const std::vector<int64_t> &sizes, Tolerance tol) {
  if (actual.size() != expected.size())
    return ::testing::AssertionFailure() << "got " << actual.size() << " elements, expected "
                                         << expected.size();
  int64_t bad = 0, first = -1;
  for (std::size_t i = 0; i < actual.size(); ++i) {
    double a = actual[i], e = expected[i];
    bool ok;
    if (std::isnan(e) || std::isnan(a))
      ok = std::isnan(e) && std::isnan(a);
    else if (std::isinf(e) || std::isinf(a))
      ok = a == e;
    else
      ok = std::abs(a - e) <= tol.atol + tol.rtol * std::abs(e);
    if (!ok && bad++ == 0)
      first = static_cast<int64_t>(i);
  }
  if (bad == 0)
    return ::testing::AssertionSuccess();
  auto f = static_cast<std::size_t>(first);
  return ::testing::AssertionFailure()
         << bad << " of " << actual.size() << " elements differ; first at "
         << formatIndex(first, sizes) << " of " << formatSizes(sizes) << ": got "
         << ::testing::PrintToString(actual[f]) << ", expected "
         << ::testing::PrintToString(expected[f]) << " (|diff| "
         << std::abs(actual[f] - expected[f]) << " > " << tol.atol << " + " << tol.rtol
         << " * |expected|)";
}

/// `actual` has dtype `dtype` and shape `sizes`, and its elements are close
/// to `expected` (row-major).
inline ::testing::AssertionResult allClose(const kite::Tensor &actual, kite::DType dtype,
                                           const std::vector<int64_t> &sizes,
                                           const std::vector<double> &expected, Tolerance tol) {
  if (actual.dtype() != dtype)
    return ::testing::AssertionFailure() << "dtype " << kite::dtype_name(actual.dtype())
                                         << ", expected " << kite::dtype_name(dtype);
  if (actual.sizes() != sizes)
    return ::testing::AssertionFailure() << "shape " << formatSizes(actual.sizes())
                                         << ", expected " << formatSizes(sizes);
  return allClose(actual.to_doubles(), expected, sizes, tol);
}

/// Two results of one kernel (e.g. at two block sizes) agree: same dtype,
/// same shape, elements close.
inline ::testing::AssertionResult allClose(const kite::Tensor &actual, const kite::Tensor &expected,
                                           Tolerance tol) {
  return allClose(actual, expected.dtype(), expected.sizes(), expected.to_doubles(), tol);
}

/// The settings of kite::ReferenceBlockSizes a test runs a kernel under.
using BlockSizes = std::vector<int64_t>;

/// Runs `kernel()` once under each block-size setting; returns the results
/// in order.
template <class F>
auto runAtBlockSizes(const std::vector<BlockSizes> &settings, F kernel) {
  std::vector<decltype(kernel())> results;
  for (const auto &s : settings) {
    kite::ReferenceBlockSizes scope(s);
    results.push_back(kernel());
  }
  return results;
}

/// Runs `kernel()` under each setting, checks each result against the
/// reference `expected` (dtype `dtype`, shape `sizes`) with `tol`, and every
/// result against the first setting's with `agree`.
template <class F>
void checkAtBlockSizes(const std::vector<BlockSizes> &settings, F kernel, kite::DType dtype,
                       const std::vector<int64_t> &sizes, const std::vector<double> &expected,
                       Tolerance tol, Tolerance agree) {
  auto results = runAtBlockSizes(settings, kernel);
  for (std::size_t i = 0; i < settings.size(); ++i) {
    SCOPED_TRACE("block sizes " + formatSizes(settings[i]));
    EXPECT_TRUE(allClose(results[i], dtype, sizes, expected, tol))
        << "vs. the plain-loop reference";
    if (i > 0) {
      EXPECT_TRUE(allClose(results[i], results[0], agree))
          << "vs. block sizes " << formatSizes(settings[0]);
    }
  }
}

/// Rounds through `dtype`'s precision, as a store into a tensor of that
/// dtype does (for references of kernels with 16-bit outputs).
inline double roundTo(kite::DType dtype, double v) {
  switch (dtype) {
  case kite::DType::bf16:
    return static_cast<float>(kite::bfloat16(static_cast<float>(v)));
  case kite::DType::f16:
    return static_cast<float>(kite::half(static_cast<float>(v)));
  case kite::DType::f32:
    return static_cast<float>(v);
  default:
    return v;
  }
}

/// The product of 2-D tensors x [m, k] and y [k, n] in double, row-major
/// (the plain-loop side of the product kernels' references).
inline std::vector<double> productDoubles(const kite::Tensor &x, const kite::Tensor &y) {
  int64_t m = x.size(0), k = x.size(1), n = y.size(1);
  auto a = x.to_doubles(), b = y.to_doubles();
  std::vector<double> out(m * n, 0.0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t p = 0; p < k; ++p)
      for (int64_t j = 0; j < n; ++j)
        out[i * n + j] += a[i * k + p] * b[p * n + j];
  return out;
}

} // namespace kite_test

#endif // KITE_TEST_REFERENCE_COMPARE_HPP
