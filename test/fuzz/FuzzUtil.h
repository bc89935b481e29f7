//===- FuzzUtil.h - what the fuzz targets share -----------------*- C++ -*-===//
//
// This file declares helpers shared by kite's fuzz targets: launch argument
// specs from their command-line text (as `kite inspect --arg` builds them),
// default specs for a kernel's signature, and the optional header lines
// (`// ARGS: ...`, `// CONFIG: ...`) with which an IR input chooses its
// arguments and config.
//
//===----------------------------------------------------------------------===//

#ifndef KITE_TEST_FUZZ_FUZZUTIL_H
#define KITE_TEST_FUZZ_FUZZUTIL_H

#include "ir/KiteDialect.h"
#include "lowering/LaunchArg.h"

#include <kite/kite.hpp>
#include <kite/runtime.hpp>

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kite::fuzz {

/// The runtime's spec of parsed `--arg` texts, converted as the CLI does
/// (tools/kite/Common.cpp); nullopt where one does not parse.
inline std::optional<std::vector<ArgSpec>>
argSpecsOf(mlir::MLIRContext *ctx, const std::vector<std::string> &texts) {
  std::vector<ArgSpec> specs;
  for (const std::string &text : texts) {
    std::string why;
    mlir::FailureOr<LaunchArg> a = parseLaunchArg(ctx, text, why);
    if (mlir::failed(a))
      return std::nullopt;
    DType dtype;
    if (!dtype_from_name(dtypeName(a->dtype), dtype))
      return std::nullopt;
    if (!a->isTensor) {
      specs.push_back(ArgSpec::scalar(a->name, dtype, a->value));
      continue;
    }
    std::vector<int64_t> strides;
    if (!a->isContiguous())
      strides.assign(a->strides.begin(), a->strides.end());
    specs.push_back(ArgSpec::tensor(a->name, dtype,
                                    std::vector<int64_t>(a->sizes.begin(), a->sizes.end()),
                                    strides, a->alignment));
  }
  return specs;
}

/// True when KITE_FUZZ_VERBOSE is set: the targets then print the user
/// errors they expect, to check that a corpus reaches past them.
inline bool verbose() {
  static const bool on = std::getenv("KITE_FUZZ_VERBOSE") != nullptr;
  return on;
}

/// Splits text at blanks.
inline std::vector<std::string> words(std::string_view text) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t' || text[i] == '\n'))
      ++i;
    size_t j = i;
    while (j < text.size() && text[j] != ' ' && text[j] != '\t' && text[j] != '\n')
      ++j;
    if (j > i)
      out.emplace_back(text.substr(i, j - i));
    i = j;
  }
  return out;
}

/// The text after `// KEY:` on a line of its own in `input`, if any.
inline std::optional<std::string> headerLine(std::string_view input, std::string_view key) {
  std::string tag = "// " + std::string(key) + ":";
  size_t at = input.find(tag);
  if (at == std::string_view::npos || (at > 0 && input[at - 1] != '\n'))
    return std::nullopt;
  size_t begin = at + tag.size();
  size_t end = input.find('\n', begin);
  return std::string(input.substr(begin, end == std::string_view::npos ? end : end - begin));
}

/// Specs for a kernel's parameters when the input names none: 2-D tensors
/// of their dtype (f32 when unknown) with sizes that no block size divides,
/// and unspecialized scalars.
inline std::vector<ArgSpec> defaultSpecs(mlir::func::FuncOp kernel) {
  std::vector<ArgSpec> specs;
  for (auto [i, type] : llvm::enumerate(kernel.getArgumentTypes())) {
    std::string name = "arg" + std::to_string(i);
    if (auto attr = kernel.getArgAttrOfType<mlir::StringAttr>(i, kArgNameAttrName))
      name = attr.str();
    mlir::Type element = type;
    auto tensor = llvm::dyn_cast<TensorType>(type);
    if (tensor)
      element = tensor.getElementType();
    DType dtype = DType::f32;
    if (element && isKiteDType(element))
      dtype_from_name(dtypeName(element), dtype);
    if (!tensor) {
      specs.push_back(ArgSpec::scalar(name, dtype));
      continue;
    }
    std::vector<int64_t> sizes = {37, 100};
    if (tensor.hasRank()) {
      sizes.clear();
      for (int64_t d = 0; d < tensor.getRank(); ++d)
        sizes.push_back(d % 2 ? 100 : 37);
    }
    specs.push_back(ArgSpec::tensor(name, dtype, sizes));
  }
  return specs;
}

} // namespace kite::fuzz

#endif // KITE_TEST_FUZZ_FUZZUTIL_H
