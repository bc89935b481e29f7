//===- LaunchArg.h - launch arguments as the compiler sees them ---*- C++ -*-===//
//
// This file declares the description of a kernel's launch arguments that
// specialization works from: a tensor's dtype, sizes, strides and alignment,
// or a scalar's type and (when specialized) value. Its text form is the
// command line's: `x=bf16[8192,8192]`, `y=f32[4,8]:strides[1,4]`,
// `eps=f32`, `n=i64:7` (a specialized value), `x=bf16[?16,4096]` (a size
// taken at launch, a multiple of 16).
//
//===----------------------------------------------------------------------===//

#ifndef KITE_LOWERING_LAUNCHARG_H
#define KITE_LOWERING_LAUNCHARG_H

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Types.h"
#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>
#include <string>
#include <vector>

namespace kite {

struct LaunchArg {
  std::string name;
  bool isTensor = true;
  mlir::Type dtype; // element type (tensor) or scalar type
  /// ShapedType::kDynamic for a size taken at launch (`?` or `?16`).
  llvm::SmallVector<int64_t> sizes;
  /// Per dim: 0 for a static size, else the power of two a dynamic size is
  /// a multiple of (`?16`: 16; `?`: 1). Empty: every size static.
  llvm::SmallVector<int64_t> divisors;
  /// Per dim: 0, or for a dynamic dim a plan holds whole, its bucket
  /// (ArgSpec::size_bound: `?8<=8192`, or -1 for `?8>16384`). Empty: none.
  llvm::SmallVector<int64_t> bounds;
  llvm::SmallVector<int64_t> strides; // elements; contiguous when not given
  int64_t alignment = 16;             // bytes, of the data pointer
  /// With dynamic sizes: the tensor is addressed with 32-bit offsets
  /// (`:idx32`; ArgSpec::index32).
  bool index32 = false;
  std::optional<double> value;        // a specialized scalar

  bool isContiguous() const;
  bool isDynamic(size_t dim) const { return dim < divisors.size() && divisors[dim] != 0; }
  /// What a size is known to be a multiple of: itself if static, else its
  /// divisor.
  int64_t knownDivisor(size_t dim) const { return isDynamic(dim) ? divisors[dim] : sizes[dim]; }
  /// The bucket of dim `dim` (0 where none).
  int64_t bound(size_t dim) const { return dim < bounds.size() ? bounds[dim] : 0; }
  /// The canonical text form (parseLaunchArg's input).
  std::string str() const;
};

/// Parses one `name=spec`; on failure, `error` says what is wrong.
mlir::FailureOr<LaunchArg> parseLaunchArg(mlir::MLIRContext *ctx,
                                      llvm::StringRef text, std::string &error);

/// Parses space-separated specs.
mlir::FailureOr<std::vector<LaunchArg>>
parseLaunchArgs(mlir::MLIRContext *ctx, llvm::StringRef text, std::string &error);

/// Parses a dtype name (f16 bf16 f32 f64 i8 i32 i64 bool/i1 e4m3 e5m2); null
/// if none.
mlir::Type parseDType(mlir::MLIRContext *ctx, llvm::StringRef name);

/// The language's name of a dtype (`bool` for i1, `e4m3` and `e5m2` for the
/// 8-bit floats).
std::string dtypeName(mlir::Type type);

} // namespace kite

#endif // KITE_LOWERING_LAUNCHARG_H
