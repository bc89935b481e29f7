//===- DynamicShapes.h - sizes taken at launch ------------------*- C++ -*-===//
//
// This file declares what the compiler knows about sizes a plan takes at
// launch (Options::static_shapes = false):
//
//   - dynamicDims: which sizes of a launch's arguments a plan may take at
//     launch. That is any dim of a contiguous tensor whose size is at least
//     2, where the kernel uses that size only as the end of a loop (at any
//     depth), a block size's extent or an output's size, and indexes that
//     dim with tiles, scalars or gathers, so every tile shape and layout
//     stays static, or spans it whole (`all`) where a reduction looped over
//     chunks takes it (the compiler checks after specializing, and keeps
//     the size static where not); a stride that depends on such a size
//     is a kernel parameter's product, and what it is a multiple of comes
//     from the sizes' divisor classes. Such a dim is dynamic where a
//     top-level loop runs to it or an output is sized by it, or where only
//     tiles of loops over dynamic dims index it;
//   - sizeOrigin: where a tensor's size comes from (an argument's dim, or a
//     scalar), so that a loop over `x.size(0)` provably stays inside
//     `empty_like(x)`.
//
//===----------------------------------------------------------------------===//

#ifndef KITE_LOWERING_DYNAMICSHAPES_H
#define KITE_LOWERING_DYNAMICSHAPES_H

#include "ir/KiteDialect.h"
#include "lowering/LaunchArg.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <optional>
#include <utility>
#include <vector>

namespace kite {

/// The canonical source of a size: (a tensor argument, its dim), or (a
/// scalar value, -1) for an output sized by a scalar. Outputs made by
/// empty_like or sized by `x.size(d)` resolve to the argument's dim.
using SizeOrigin = std::pair<mlir::Value, int64_t>;
std::optional<SizeOrigin> sizeOrigin(mlir::Value tensor, int64_t dim);
/// The origin of an i64 value that is a size (kite.size) or a scalar.
std::optional<SizeOrigin> sizeOriginOf(mlir::Value size);

/// A size that `end`, a loop's end, is at most: its origin where it is a
/// size, for a tile's begin or end (`tq.end()`) the bounding size of that
/// tile's loop's end, and for a minimum that of either operand.
std::optional<SizeOrigin> boundingSize(mlir::Value end);

/// The bucket of `tensor`'s dim `dim` where its size is taken at launch and
/// the plan holds it whole (kite.bounds on the argument it comes from:
/// ArgSpec::size_bound's B, or -1 past the largest bucket); 0 where none.
int64_t sizeBound(mlir::Value tensor, int64_t dim);

/// The extent of a tile that spans `tensor`'s dim `dim` whole: its size
/// where static; for a size taken at launch in a bucket, the bucket's upper
/// end (the tile is that long, its lanes past the size masked); else
/// ShapedType::kDynamic.
int64_t wholeExtent(mlir::Value tensor, int64_t dim);

/// What an i64 size is at most: a constant, or the upper end of the bucket
/// of a size taken at launch (sizeBound); none where not known.
std::optional<int64_t> sizeUpperBound(mlir::Value size);

/// Whether the loop of tile variable `span` runs to the size of `tensor`'s
/// dim `dim` taken at launch (one origin), from a constant start; that
/// start, or nullopt.
std::optional<int64_t> spanStartToSize(mlir::Value span, mlir::Value tensor, int64_t dim);

/// Whether the loop of tile variable `span` ends at the size of `tensor`'s
/// dim `dim`: a static size its constant upper bound, a size taken at launch
/// as spanStartToSize says. A tile's elements past its extent then lie past
/// the tensor, where a TMA box reads zeros.
bool spanRunsToSize(mlir::Value span, mlir::Value tensor, int64_t dim);

/// Whether a size can be taken at launch (`dynamic`), and whether a
/// subscript spans it whole (`whole`): then its tiles' shape is taken at
/// launch too, which only works where kite-reduction-loops loops over it
/// in chunks (planSpecs checks after specializing).
struct DynamicDim {
  bool dynamic = false, whole = false;
  /// Whether a top-level loop runs to it (the grid, and so the configs
  /// that fit, depend on it).
  bool topLoop = false;
  /// Whether its divisor class cannot change the code, as far as the
  /// kernel shows: no tensor has it as its last dim and no loop to it
  /// indexes a last dim (vector widths), so the class matters only through
  /// the strides of the dims outside it; the caller checks those, given
  /// the static sizes inside it (`insideOutput`: an output has it at a dim
  /// other than its first, whose inner sizes must then be a multiple of 16
  /// elements).
  bool classFree = false, insideOutput = false;
};
/// For each argument of the captured kernel `captured`, and each of its
/// dims, whether that size can be taken at launch, given the arguments'
/// ranks (-1 for a scalar; see the file comment).
std::vector<std::vector<DynamicDim>> dynamicDims(mlir::func::FuncOp captured,
                                                 llvm::ArrayRef<int64_t> ranks);

/// What stride `dim` of kernel argument `arg` is, as specialized: a
/// constant (`value`), or for a stride that depends on a size taken at
/// launch, none; and a number it is a multiple of (`divisor`: the stride
/// itself where constant, else the product of the inner dims' static sizes
/// and divisor classes).
struct StrideFact {
  std::optional<int64_t> value;
  int64_t divisor = 1;
};
/// The strides of kernel argument `arg` (kite.strides, kite.divisors);
/// empty where the argument has none (not a specialized tensor).
llvm::SmallVector<StrideFact> argStrides(mlir::func::FuncOp kernel, unsigned arg);

} // namespace kite

#endif // KITE_LOWERING_DYNAMICSHAPES_H
