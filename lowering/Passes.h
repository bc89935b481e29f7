//===- Passes.h - kite lowering passes --------------------------*- C++ -*-===//
//
// This file declares the lowering passes and their registration.
//
//===----------------------------------------------------------------------===//

#ifndef KITE_LOWERING_PASSES_H
#define KITE_LOWERING_PASSES_H

#include "ir/KiteDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "llvm/Support/MathExtras.h"

namespace kite {

/// kite-check-bounds' mark on a load, store or atomic: the subscript
/// positions (indices into its subscripts) that CUDA emission masks
/// against the indexed dimension at run time.
constexpr llvm::StringLiteral kCheckedAttrName = "kite.checked";

/// kite-assign-layouts' mark on a store or atomic: the layout
/// (`#kite.blocked`) its elements are iterated in; on a top-level loop: its
/// main context, the layout of its largest tile.
constexpr llvm::StringLiteral kLayoutAttrName = "kite.layout";

/// kite-assign-layouts' mark on a matrix product that runs on the tensor
/// cores from registers (`mma.sync` m16n8k16): its left operand and result
/// lie in the tensor cores' layout (`mmaLayout`), its right operand is
/// staged in shared memory.
constexpr llvm::StringLiteral kMmaAttrName = "kite.mma";

/// The power-of-two size a tile dim of `n` elements is padded to.
inline int64_t paddedSize(int64_t n) {
  return n <= 1 ? 1 : (int64_t)llvm::PowerOf2Ceil((uint64_t)n);
}

/// Bytes of one element of type `t` in memory (i1: 1), or 0 if unknown.
inline int64_t elementBytes(mlir::Type t) {
  if (t.isInteger(1))
    return 1;
  return t.isIntOrFloat() ? t.getIntOrFloatBitWidth() / 8 : 0;
}

#define GEN_PASS_DECL
#include "lowering/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "lowering/Passes.h.inc"

/// The kernel function a lowering pass works on: the one named `name`, or
/// the only `kite.kernel` function when `name` is empty. Emits an error
/// listing the kernels when there is no such kernel.
mlir::FailureOr<mlir::func::FuncOp> findKernel(mlir::ModuleOp module,
                                               llvm::StringRef name);

/// kite-early-loads' reordering of `kernel` (EarlyLoads.cpp): each load to
/// just after the last op it must follow. Moves nothing unless `apply`;
/// returns how many loads move above a reduction either way.
int moveLoadsEarly(mlir::func::FuncOp kernel, bool apply);

} // namespace kite

#endif // KITE_LOWERING_PASSES_H
