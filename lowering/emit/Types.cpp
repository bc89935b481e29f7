//===- Types.cpp - CUDA types and literals ----------------------------------===//
//
// This file implements the element types and literals of generated CUDA.
//
//===----------------------------------------------------------------------===//

#include "lowering/emit/Emitter.h"

using namespace mlir;
using namespace kite;
using namespace kite::emit;

std::string kite::emit::cType(Type t) {
  if (t.isBF16())
    return "bf16";
  if (t.isF16())
    return "f16";
  if (t.isFloat8E4M3FN())
    return "e4m3";
  if (t.isFloat8E5M2())
    return "e5m2";
  if (t.isF32())
    return "float";
  if (t.isF64())
    return "double";
  if (t.isInteger(1))
    return "bool";
  if (t.isInteger(8))
    return "signed char";
  if (t.isInteger(32))
    return "int";
  if (t.isInteger(64))
    return "i64";
  return "<unsupported>";
}

std::string kite::emit::computeType(Type t) {
  if (isNarrowFloat(t))
    return "float";
  return cType(t);
}

/// The type a reduction accumulates in (PyTorch: f32 for 16-bit floats,
/// i64 for integer sums).

std::string kite::emit::accType(Type t) { return computeType(t); }

std::string kite::emit::floatLiteral(double v) {
  if (std::isinf(v))
    return v > 0 ? "__int_as_float(0x7f800000)" : "(-__int_as_float(0x7f800000))";
  if (std::isnan(v))
    return "__int_as_float(0x7fc00000)";
  std::string s = llvm::formatv("{0:e9}", v).str();
  return s;
}
