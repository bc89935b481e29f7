//===- KiteDialect.h - the kite dialect -------------------------*- C++ -*-===//
//
// This file declares the kite dialect, its types and its ops. Include this
// one header to use the dialect.
//
//===----------------------------------------------------------------------===//

#ifndef KITE_IR_KITEDIALECT_H
#define KITE_IR_KITEDIALECT_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "ir/KiteDialect.h.inc"
#include "ir/KiteEnums.h.inc"
#include "ir/Layout.h"

#define GET_ATTRDEF_CLASSES
#include "ir/KiteAttrs.h.inc"

#define GET_TYPEDEF_CLASSES
#include "ir/KiteTypes.h.inc"

namespace kite {

/// One position of a subscript `x[a, b, ...]`.
struct Subscript {
  enum class Kind { Span, Scalar, All, NewAxis, Gather };
  Kind kind;
  mlir::Value value; // null for All and NewAxis
};

/// Layout entries of a subscript op that are not operands.
constexpr int32_t kSubscriptAll = -1;
constexpr int32_t kSubscriptNewAxis = -2;

/// The largest `kite.block_size` id (ids are indices into a config's
/// `block_sizes`, so this bounds a config's length). The frontend numbers
/// block sizes from 0 in source order; no real kernel has a thousand.
constexpr int64_t kMaxBlockSizeId = 1023;

/// The kind of an index operand, from its type; failure if it is none.
mlir::FailureOr<Subscript::Kind> getSubscriptKind(mlir::Type type);

/// True if `type` is a tile or a scalar whose element type is an integer
/// (or unknown).
bool isIntegerLike(mlir::Type type);

/// Checks that `tile`'s layout, if it has one, is a kite layout that fits
/// its shape.
mlir::LogicalResult verifyTileLayout(llvm::function_ref<mlir::InFlightDiagnostic()> emitError,
                                     TileType tile);

/// Element type of a tile or scalar; null if unknown.
mlir::Type getElementTypeOrNull(mlir::Type type);

/// Rank of a tile (0 for scalars); nullopt if unranked.
std::optional<int64_t> getRankOf(mlir::Type type);

/// The dtypes of the language, as MLIR types: f16 bf16 f32 f64 i8 i32 i64
/// i1, and f8E4M3FN f8E5M2 (the language's e4m3 and e5m2).
bool isKiteDType(mlir::Type type);

/// True for the 8-bit floats e4m3 and e5m2.
bool isFloat8(mlir::Type type);

/// True for the floats narrower than f32 (f16, bf16, e4m3, e5m2): storage
/// types whose arithmetic, reductions and products' sums run in f32.
bool isNarrowFloat(mlir::Type type);

/// The MLIR type of a dtype name: f16 bf16 f32 f64 i8 i32 i64 e4m3 e5m2,
/// and bool (also spelled boolean, as the C++ enumerator, or i1); null if
/// none.
mlir::Type parseDTypeName(mlir::MLIRContext *ctx, llvm::StringRef name);

/// Name of the unit attribute that marks a kernel function, and the
/// argument attribute holding a parameter's source name.
constexpr llvm::StringLiteral kKernelAttrName = "kite.kernel";
constexpr llvm::StringLiteral kArgNameAttrName = "kite.name";
/// On a kernel declaration whose body exists once per rank of one tensor
/// parameter (`tile(x.sizes())` of a parameter of unknown rank): a
/// dictionary {param = index, ranks = [the ranks captured]}; the forms are
/// the functions rankFormName(kernel, rank), which kite-specialize picks
/// from by the launch's rank.
constexpr llvm::StringLiteral kRankFormsAttrName = "kite.rank_forms";
/// The largest rank a rank form is captured for.
constexpr int64_t kMaxRankForm = 6;
inline std::string rankFormName(llvm::StringRef kernel, int64_t rank) {
  return (kernel + ".rank" + llvm::Twine(rank)).str();
}
/// The parameter of rank-forms declaration `decl` whose rank picks a form,
/// or -1 where `decl` has no (well-formed) kRankFormsAttrName.
int64_t rankFormParam(mlir::func::FuncOp decl);
/// The form of rank-forms declaration `decl` for `rank`, or null where it
/// was not captured for that rank.
mlir::func::FuncOp rankFormOf(mlir::func::FuncOp decl, int64_t rank);

} // namespace kite

#define GET_OP_CLASSES
#include "ir/KiteOps.h.inc"

namespace kite {

/// The `kite.tile_for` of which `span` is a loop variable, and the dim;
/// a null loop for any other value.
std::pair<TileForOp, unsigned> getSpanLoop(mlir::Value span);

} // namespace kite

#endif // KITE_IR_KITEDIALECT_H
