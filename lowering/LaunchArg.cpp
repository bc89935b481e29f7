//===- LaunchArg.cpp - launch arguments as the compiler sees them -----------===//
//
// This file implements the text form of launch arguments.
//
//===----------------------------------------------------------------------===//

#include "lowering/LaunchArg.h"
#include "ir/KiteDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

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
    llvm::interleave(sizes, os, ",");
    os << "]";
    if (!strides.empty() && !isContiguous()) {
      os << ":strides[";
      llvm::interleave(strides, os, ",");
      os << "]";
    }
    if (alignment != 16)
      os << ":align" << alignment;
  } else if (value) {
    if (dtype.isIntOrIndex())
      os << ":" << (int64_t)*value;
    else
      os << ":" << *value;
  }
  return s;
}

namespace {
/// Parses `[a,b,c]` at the front of `text`, consuming it.
bool parseIntList(llvm::StringRef &text, llvm::SmallVectorImpl<int64_t> &out) {
  if (!text.consume_front("["))
    return false;
  size_t close = text.find(']');
  if (close == llvm::StringRef::npos)
    return false;
  llvm::StringRef body = text.take_front(close);
  text = text.drop_front(close + 1);
  if (body.trim().empty())
    return true; // rank 0
  llvm::SmallVector<llvm::StringRef> parts;
  body.split(parts, ',');
  for (llvm::StringRef p : parts) {
    int64_t v;
    if (p.trim().getAsInteger(10, v) || v < 0)
      return false;
    out.push_back(v);
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
            "' (expected f16, bf16, f32, f64, i8, i32, i64 or bool)";
    return failure();
  }
  rest = rest.drop_front(dtypeText.size());
  spec.isTensor = rest.starts_with("[");
  if (spec.isTensor && !parseIntList(rest, spec.sizes)) {
    error = "malformed sizes in '" + text.str() + "' (expected e.g. bf16[8192,8192])";
    return failure();
  }
  while (rest.consume_front(":")) {
    if (spec.isTensor && rest.consume_front("strides")) {
      if (!parseIntList(rest, spec.strides) ||
          spec.strides.size() != spec.sizes.size()) {
        error = "strides of '" + spec.name + "' must list one stride per dimension";
        return failure();
      }
    } else if (spec.isTensor && rest.consume_front("align")) {
      size_t n = rest.find(':');
      if (rest.take_front(n).getAsInteger(10, spec.alignment) ||
          spec.alignment <= 0) {
        error = "malformed alignment for '" + spec.name + "'";
        return failure();
      }
      rest = rest.drop_front(std::min(n, rest.size()));
    } else if (!spec.isTensor) {
      double v;
      size_t n = rest.find(':');
      if (rest.take_front(n).getAsDouble(v)) {
        error = "malformed value for scalar '" + spec.name + "'";
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
