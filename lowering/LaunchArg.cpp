//===- LaunchArg.cpp - launch arguments as the compiler sees them -----------===//
//
// This file implements the text form of launch arguments.
//
//===----------------------------------------------------------------------===//

#include "lowering/LaunchArg.h"
#include "ir/KiteDialect.h"

#include <kite/runtime.hpp>

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <charconv>
#include <cmath>

using namespace mlir;
using namespace kite;

Type kite::parseDType(MLIRContext *ctx, llvm::StringRef name) {
  return parseDTypeName(ctx, name);
}

std::string kite::dtypeName(Type type) {
  if (!type)
    return "?";
  if (type.isInteger(1))
    return "bool";
  if (type.isFloat8E4M3FN())
    return "e4m3";
  if (type.isFloat8E5M2())
    return "e5m2";
  std::string s;
  llvm::raw_string_ostream os(s);
  os << type;
  return s;
}

bool LaunchArg::isContiguous() const {
  if (strides.empty())
    return true;
  int64_t expected = 1;
  for (int64_t i = sizes.size() - 1; i >= 0; --i) {
    if (sizes[i] != 1 && strides[i] != expected)
      return false;
    expected *= sizes[i];
  }
  return true;
}

std::string LaunchArg::str() const {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << name << "=" << dtypeName(dtype);
  if (isTensor) {
    os << "[";
    for (size_t d = 0; d < sizes.size(); ++d) {
      if (d)
        os << ",";
      if (!isDynamic(d))
        os << sizes[d];
      else if (divisors[d] == 1)
        os << "?";
      else
        os << "?" << divisors[d];
      if (isDynamic(d))
        os << kite::ArgSpec::bound_text(bound(d));
    }
    os << "]";
    if (!strides.empty() && !isContiguous()) {
      os << ":strides[";
      llvm::interleave(strides, os, ",");
      os << "]";
    }
    if (alignment != 16)
      os << ":align" << alignment;
    if (index32)
      os << ":idx32";
  } else if (value) {
    if (dtype.isIntOrIndex()) {
      os << ":" << (int64_t)*value;
    } else {
      // The shortest text that reads back as the same double.
      char buf[32];
      auto r = std::to_chars(buf, buf + sizeof buf, *value);
      os << ":" << llvm::StringRef(buf, r.ptr - buf);
    }
  }
  return s;
}

namespace {
/// Parses `[a,b,c]` at the front of `text`, consuming it; on failure,
/// `error` says what is wrong (`what` names the list: "sizes", "strides").
bool parseIntList(llvm::StringRef &text, llvm::SmallVectorImpl<int64_t> &out,
                  const std::string &what, std::string &error,
                  llvm::SmallVectorImpl<int64_t> *divisors = nullptr,
                  llvm::SmallVectorImpl<int64_t> *bounds = nullptr) {
  if (!text.consume_front("[")) {
    error = "expected '[' to start the " + what;
    return false;
  }
  size_t close = text.find(']');
  if (close == llvm::StringRef::npos) {
    error = "the " + what + " have no closing ']'";
    return false;
  }
  llvm::StringRef body = text.take_front(close);
  text = text.drop_front(close + 1);
  if (body.trim().empty())
    return true; // rank 0
  llvm::SmallVector<llvm::StringRef> parts;
  body.split(parts, ',');
  for (llvm::StringRef p : parts) {
    int64_t v;
    llvm::StringRef item = p.trim();
    if (divisors && item.consume_front("?")) {
      // A size taken at launch: `?` or `?N`, N a power of two up to 16,
      // then a bucket: `<=B` (B a power of two from 128 to 16384) or
      // `>16384`.
      std::string text = "?" + item.str();
      size_t cut = item.find_first_of("<>");
      llvm::StringRef bucket = cut == llvm::StringRef::npos ? "" : item.substr(cut);
      item = item.take_front(cut);
      // `?*`: any size (its class does not change the code): to the
      // compiler, a multiple of 1.
      item.consume_front("*");
      int64_t d = 1;
      if (!item.empty() && (item.getAsInteger(10, d) || d < 1 || d > 16 || !llvm::isPowerOf2_64(d))) {
        error = "'" + text + "' in the " + what +
                " is not a dynamic size ('?', or '?N' with N 2, 4, 8 or 16)";
        return false;
      }
      int64_t b = 0;
      if (!bucket.empty()) {
        bool ok = bounds != nullptr;
        if (bucket.consume_front("<="))
          ok &= !bucket.getAsInteger(10, b) && b >= kite::ArgSpec::kMinBound &&
                b <= kite::ArgSpec::kMaxBound && llvm::isPowerOf2_64(b);
        else
          ok &= bucket.consume_front(">") && !bucket.getAsInteger(10, b) &&
                b == kite::ArgSpec::kMaxBound && (b = -1);
        if (!ok) {
          error = "'" + text + "' in the " + what + " has no valid bucket ('<=B' with B a power "
                  "of two from " + std::to_string(kite::ArgSpec::kMinBound) + " to " +
                  std::to_string(kite::ArgSpec::kMaxBound) + ", or '>" +
                  std::to_string(kite::ArgSpec::kMaxBound) + "')";
          return false;
        }
        bounds->resize(out.size(), 0);
        bounds->push_back(b);
      }
      divisors->resize(out.size(), 0);
      divisors->push_back(d);
      out.push_back(ShapedType::kDynamic);
      continue;
    }
    if (p.trim().getAsInteger(10, v)) {
      error = "'" + p.trim().str() + "' in the " + what + " is not an integer (or does not fit in 64 bits)";
      return false;
    }
    if (v < 0) {
      error = "the " + what + " must not be negative (got " + std::to_string(v) + ")";
      return false;
    }
    out.push_back(v);
  }
  if (divisors && !divisors->empty())
    divisors->resize(out.size(), 0);
  if (bounds && !bounds->empty())
    bounds->resize(out.size(), 0);
  return true;
}

/// The largest tensor, in bytes, a spec may describe: 2^48 (256 TiB), far
/// beyond any GPU, and small enough that no offset or element count kite
/// computes from it overflows 64 bits.
constexpr int64_t kMaxTensorBytes = int64_t(1) << 48;

/// Checks that a tensor's elements (and, with strides, its reach) fit in
/// kMaxTensorBytes.
bool checkExtent(const LaunchArg &spec, std::string &error) {
  int64_t elemBytes = std::max<int64_t>(1, (int64_t)llvm::divideCeil(
                                               spec.dtype.getIntOrFloatBitWidth(), 8));
  int64_t limit = kMaxTensorBytes / elemBytes;
  int64_t numel = 1, reach = 1;
  for (auto [d, size] : llvm::enumerate(spec.sizes)) {
    int64_t n = spec.isDynamic(d) ? 1 : size;
    if (n == 0)
      return true; // an empty tensor
    if (n > limit || numel > limit / n) {
      error = "'" + spec.name + "' is larger than any GPU memory (" + spec.str() + ")";
      return false;
    }
    numel *= n;
    if (!spec.strides.empty()) {
      int64_t s = spec.strides[d];
      if (s != 0 && (n - 1 > limit / s || reach > limit - (n - 1) * s)) {
        error = "the strides of '" + spec.name + "' reach past any GPU memory";
        return false;
      }
      reach += (n - 1) * s;
    }
  }
  return true;
}
} // namespace

FailureOr<LaunchArg> kite::parseLaunchArg(MLIRContext *ctx, llvm::StringRef text,
                                      std::string &error) {
  LaunchArg spec;
  auto [name, rest] = text.split('=');
  if (name.empty() || rest.empty()) {
    error = "expected NAME=DTYPE[SIZES] or NAME=DTYPE, got '" + text.str() + "'";
    return failure();
  }
  spec.name = name.str();
  size_t end = rest.find_first_of("[:");
  llvm::StringRef dtypeText = rest.take_front(end);
  spec.dtype = parseDType(ctx, dtypeText);
  if (!spec.dtype) {
    error = "unknown dtype '" + dtypeText.str() + "' for '" + spec.name +
            "' (expected f16, bf16, f32, f64, i8, i32, i64, bool, e4m3 or e5m2)";
    return failure();
  }
  rest = rest.drop_front(dtypeText.size());
  spec.isTensor = rest.starts_with("[");
  if (spec.isTensor &&
      !parseIntList(rest, spec.sizes, "sizes of '" + spec.name + "'", error, &spec.divisors,
                    &spec.bounds)) {
    error = "malformed sizes in '" + text.str() + "': " + error + " (expected e.g. bf16[8192,8192])";
    return failure();
  }
  while (rest.consume_front(":")) {
    if (spec.isTensor && rest.consume_front("strides")) {
      spec.strides.clear();
      if (!parseIntList(rest, spec.strides, "strides of '" + spec.name + "'", error))
        return failure();
      if (spec.strides.size() != spec.sizes.size()) {
        error = "strides of '" + spec.name + "' must list one stride per dimension (" +
                std::to_string(spec.sizes.size()) + ", got " +
                std::to_string(spec.strides.size()) + ")";
        return failure();
      }
    } else if (spec.isTensor && rest.consume_front("align")) {
      size_t n = rest.find(':');
      if (rest.take_front(n).getAsInteger(10, spec.alignment) || spec.alignment <= 0 ||
          !llvm::isPowerOf2_64(spec.alignment) || spec.alignment > 4096) {
        error = "the alignment of '" + spec.name + "' must be a power of two from 1 to 4096 "
                "bytes, not '" + rest.take_front(n).str() + "'";
        return failure();
      }
      rest = rest.drop_front(std::min(n, rest.size()));
    } else if (spec.isTensor && rest.starts_with("idx32") &&
               (rest.size() == 5 || rest[5] == ':')) {
      rest = rest.drop_front(5);
      spec.index32 = true;
    } else if (!spec.isTensor && !spec.value) {
      double v;
      size_t n = rest.find(':');
      llvm::StringRef valueText = rest.take_front(n);
      if (valueText.getAsDouble(v) || (!std::isfinite(v) && spec.dtype.isIntOrIndex())) {
        error = "malformed value '" + valueText.str() + "' for scalar '" + spec.name + "'";
        return failure();
      }
      if (spec.dtype.isIntOrIndex()) {
        unsigned width = spec.dtype.getIntOrFloatBitWidth();
        double lo = width == 1 ? 0 : -std::ldexp(1.0, width - 1);
        double hi = width == 1 ? 1 : std::ldexp(1.0, width - 1) - 1;
        // 2^63 - 1 is not a double: compare against the double below 2^63.
        if (width == 64)
          hi = std::nextafter(std::ldexp(1.0, 63), 0.0);
        if (v != std::trunc(v) || v < lo || v > hi) {
          error = "the value of '" + spec.name + "' must be " +
                  (width == 1 ? std::string("0 or 1") : "an integer that fits in " + dtypeName(spec.dtype)) +
                  ", not '" + valueText.str() + "'";
          return failure();
        }
      }
      if (spec.dtype.isF32() && std::isfinite(v) && std::abs(v) > 3.4028234663852886e38) {
        error = "the value of '" + spec.name + "' does not fit in f32: '" + valueText.str() + "'";
        return failure();
      }
      spec.value = v;
      rest = rest.drop_front(std::min(n, rest.size()));
    } else {
      break;
    }
  }
  if (!rest.empty()) {
    error = "unexpected '" + rest.str() + "' in '" + text.str() + "'";
    return failure();
  }
  if (spec.isTensor && !checkExtent(spec, error))
    return failure();
  if (!spec.divisors.empty() && !spec.strides.empty()) {
    error = "'" + spec.name + "' has dynamic sizes and strides; a tensor with dynamic sizes is "
            "contiguous (" + text.str() + ")";
    return failure();
  }
  return spec;
}

FailureOr<std::vector<LaunchArg>>
kite::parseLaunchArgs(MLIRContext *ctx, llvm::StringRef text, std::string &error) {
  std::vector<LaunchArg> specs;
  llvm::SmallVector<llvm::StringRef> parts;
  text.split(parts, ' ', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef p : parts) {
    FailureOr<LaunchArg> spec = parseLaunchArg(ctx, p, error);
    if (failed(spec))
      return failure();
    specs.push_back(*spec);
  }
  return specs;
}
