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

/// kite-assign-layouts' mark on an unmasked store (config bulk_stores, on
/// sm_90 and later): where its tile's rows are whole rows of the tensor
/// (the last subscript `all`, contiguous, 16-byte multiples and
/// alignment), emission writes the tile into shared memory and copies each
/// row with one bulk copy; elsewhere it stores as without the mark.
constexpr llvm::StringLiteral kBulkStoreAttrName = "kite.bulk_store";

/// kite-assign-layouts' mark on a matrix product that runs on the tensor
/// cores from registers: its left operand and result lie in the tensor
/// cores' layout (`mmaLayout`), its right operand is staged in shared
/// memory. The value names the instruction: `kMmaSync` (`mma.sync`
/// m16n8k16 a warp, B fragments by ldmatrix from padded rows) or `kWgmma`
/// (Hopper's `wgmma.mma_async` m64nNk16 a warpgroup, A from registers, B by
/// descriptor from 128-byte-swizzled rows).
constexpr llvm::StringLiteral kMmaAttrName = "kite.mma";
constexpr llvm::StringLiteral kMmaSync = "mma_sync";
constexpr llvm::StringLiteral kWgmma = "wgmma";

/// kite-assign-layouts' mark on a wgmma product whose left operand is
/// defined outside the tile loop around it (attention's q): emission
/// writes the operand's A fragments once, before the loop, into a
/// 128-byte-swizzled K-major buffer, and the wgmmas read A by descriptor.
/// A loop-invariant A in registers would stay live across every wgmma of
/// the loop, which ptxas (CUDA 13.0) has been seen to allocate over.
constexpr llvm::StringLiteral kSharedLhsAttrName = "kite.shared_lhs";

/// kite-prefetch-operands' mark on a load that CUDA emission copies
/// straight into its product's staging buffers, this many (an integer, 1
/// or more) a ring, `value - 1` iterations of its loop ahead (one buffer:
/// refilled right after its product).
constexpr llvm::StringLiteral kPrefetchAttrName = "kite.prefetch";

/// kite-split-masked-loops' mark on a nested tile loop all of whose tiles
/// are full: its bounds are a multiple of its block size apart (by
/// construction), so emission masks nothing past a tile's end.
constexpr llvm::StringLiteral kFullTilesAttrName = "kite.full_tiles";

/// kite-matmul-mainloop's mark under Config::stream_k on the product K loop
/// (run as kernel code, generic_mainloop) whose iterations the programs'
/// stream-K schedule shares out.
constexpr llvm::StringLiteral kStreamKAttrName = "kite.stream_k";

/// kite-overlap-products' marks: on a key loop whose late stage (the ops
/// marked `kLateAttrName`: what depends on a tile the loop carries into a
/// wgmma product, and the loads only they read) CUDA emission runs one
/// iteration late, just after the next iteration's first wgmma is issued.
constexpr llvm::StringLiteral kOverlapAttrName = "kite.overlap";
constexpr llvm::StringLiteral kLateAttrName = "kite.late";

/// True if kite-assign-layouts put product `op` on wgmma.
bool onWgmma(mlir::Operation *op);

/// The values the late stage (ops where `isLate`) of `loop`, whose own
/// carried slot is `slot`, reads from the rest of the body: early values
/// and the other carried ones (not the span), in order of first read. What
/// emission keeps for an iteration; kite-overlap-products requires tiles.
llvm::SmallVector<mlir::Value> lateStageReads(TileForOp loop,
                                              llvm::function_ref<bool(mlir::Operation *)> isLate,
                                              int64_t slot);

/// True if a tensor-core product's right operand, of layout `b` and rank
/// `rank`, is staged as N rows of K: its threads hold runs of 8 or more
/// along K and none along N (a transposed tile, as attention's k^T), which
/// stay whole that way. Otherwise it is staged as K rows of N.
inline bool stagedAlongK(BlockedLayoutAttr b, int64_t rank) {
  auto run = [&](int64_t i) {
    int64_t c = b.getDims()[i];
    return c < 0 ? 1 : b.getVec()[c];
  };
  return run(rank - 2) >= 8 && run(rank - 1) == 1;
}

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

/// Elements of type `t` in one 128-byte row of wgmma's swizzled layout
/// (and one TMA box's columns): 64 of 16 bits, 128 of 8.
inline int64_t swizzleRowElems(mlir::Type t) { return 128 / elementBytes(t); }

/// The tensor whose memory `t` is: views (kite.tensor_reshape) resolved to
/// what they view.
inline mlir::Value memoryOf(mlir::Value t) {
  while (auto view = t.getDefiningOp<TensorReshapeOp>())
    t = view.getSource();
  return t;
}

/// The tensor a store or atomic writes; null for any other op.
inline mlir::Value writtenTensor(mlir::Operation *op) {
  if (auto store = llvm::dyn_cast<StoreOp>(op))
    return store.getTensor();
  if (auto atomic = llvm::dyn_cast<AtomicOp>(op))
    return atomic.getTensor();
  return {};
}

/// The tensor-core product (kite.mma) whose right operand `load`'s tile
/// is, directly or through one transpose of the same block (returned in
/// `transpose`), if that is the tile's only use; else null. What
/// kite-prefetch-operands requires of a load, and how emission finds a
/// marked load's product.
mlir::Operation *stagedProduct(LoadOp load, TransposeOp *transpose = nullptr);

/// True if `load`, in the body of `loop`, reads a tile that depends on the
/// loop only through its span: every subscript a span of `loop` or a value
/// defined outside it (no gathers), no mask, a kernel parameter never
/// written. What a load needs for its tiles to be copied ahead.
bool prefetchable(LoadOp load, TileForOp loop, mlir::func::FuncOp kernel);

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
