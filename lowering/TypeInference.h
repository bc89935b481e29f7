//===- TypeInference.h - dtype and shape inference --------------*- C++ -*-===//
//
// This file declares the type rules of the kite dialect: PyTorch's dtype
// promotion (scalars are weak types) and broadcasting, and the shapes of
// subscripts, reductions, matmuls and shape ops. Specialization and config
// application run them over a whole kernel.
//
//===----------------------------------------------------------------------===//

#ifndef KITE_LOWERING_TYPEINFERENCE_H
#define KITE_LOWERING_TYPEINFERENCE_H

#include "ir/KiteDialect.h"

namespace kite {

/// Re-infers the type of every value in `func`, in program order, from the
/// types of its arguments and the constants it sees (sizes, block sizes,
/// dtypes). Updates the function type from what it returns. Emits an error
/// at the offending op (at the user's source line) and fails on a type
/// error: shapes that do not broadcast, a reduction dim out of range, a
/// loop-carried value whose type changes, ...
/// With `strict` false, a loop-carried value whose type is still becoming
/// static (a dim that folds to a constant later) is not an error yet.
mlir::LogicalResult inferTypes(mlir::func::FuncOp func, bool strict = true);

/// PyTorch's torch.promote_types on element types; null if either is.
mlir::Type promoteTypes(mlir::Type a, mlir::Type b);

/// The result element type of an elementwise op on `a` and `b`, each a tile
/// or a scalar; scalars are weak (a bf16 tile times an f32 scalar is bf16).
mlir::Type promoteOperands(mlir::Type a, mlir::Type b);

/// Broadcasts two shapes (right-aligned); failure if they are incompatible.
mlir::FailureOr<llvm::SmallVector<int64_t>>
broadcastShapes(llvm::ArrayRef<int64_t> a, llvm::ArrayRef<int64_t> b);

/// The size a dimension operand stands for: a span's block size or an
/// integer constant; ShapedType::kDynamic if not (yet) known.
int64_t getStaticDim(mlir::Value dim);

} // namespace kite

#endif // KITE_LOWERING_TYPEINFERENCE_H
