//===- TensorInfo.h - Describing tensors in runtime messages ----*- C++ -*-===//
//
// This file declares the small helpers the runtime's messages and copies
// share: how a tensor or shape is written in an error ("a CPU tensor [8, 8]
// bf16"), and a tensor's size in bytes.
//
//===----------------------------------------------------------------------===//

#ifndef KITE_RUNTIME_TENSORINFO_H
#define KITE_RUNTIME_TENSORINFO_H

#include <kite/kite.hpp>

#include <span>
#include <string>

namespace kite::runtime {

/// "[8, 8]" (and "[]" for a 0-d tensor).
std::string shapeString(std::span<const int64_t> sizes);
/// "a CPU tensor [8, 8] bf16", "a CUDA tensor [8] f32" ("on cuda:1" is added
/// for devices other than cuda:0), "an undefined tensor".
std::string describe(const Tensor &t);
/// numel * element size.
int64_t byteSize(const Tensor &t);
/// The product of sizes; throws kite::Error (naming `what`) for a negative
/// size.
int64_t checkedNumel(std::span<const int64_t> sizes, std::string_view what);

} // namespace kite::runtime

#endif // KITE_RUNTIME_TENSORINFO_H
