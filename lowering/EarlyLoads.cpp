//===- EarlyLoads.cpp - loads issued as early as their operands allow -----===//
//
// This file implements `kite-early-loads` (see Passes.td). With
// `early_loads` in the config, each load moves up its block to just after
// the last op it must follow: one that defines an operand (pure ops that
// compute its operands, index arithmetic, move up first, each after its own
// operands), one that may write the tensor it reads, or the load before it
// (loads keep their order). What it passes is mostly arithmetic and
// reductions, so that a weight's read no longer waits for the row's
// statistics and the barrier of their block reduction:
//
//   x = load x[tn, all]                x = load x[tn, all]
//   r = reduce mean (x * x)      ->    w = load w[all]
//   w = load w[all]                    r = reduce mean (x * x)
//   store x * rsqrt(r) * w             store x * rsqrt(r) * w
//
// The price is registers: the moved load's values live across what it
// passed. The pass changes no result (CUDA emission follows op order).
//
//===----------------------------------------------------------------------===//

#include "lowering/Config.h"
#include "lowering/Passes.h"

#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace kite {
#define GEN_PASS_DEF_KITEEARLYLOADS
#include "lowering/Passes.h.inc"
} // namespace kite

using namespace mlir;
using namespace kite;

namespace {

/// True if `op`, or an op nested in it, may write the memory `tensor`: a
/// store or atomic to it, or an op whose effects are not known.
bool mayWrite(Operation *op, Value tensor) {
  WalkResult r = op->walk([&](Operation *inner) {
    bool writes = false;
    if (Value t = writtenTensor(inner))
      writes = memoryOf(t) == tensor;
    else if (inner->getNumRegions() == 0 && !isa<LoadOp, EmptyOp, EmptyLikeOp>(inner))
      writes = !isMemoryEffectFree(inner);
    return writes ? WalkResult::interrupt() : WalkResult::advance();
  });
  return r.wasInterrupted();
}

bool containsReduction(Operation *op) {
  return op->walk([](ReduceOp) { return WalkResult::interrupt(); }).wasInterrupted();
}

/// The later of two ops of one block; null stands for the block's start.
Operation *later(Operation *a, Operation *b) {
  if (!a || !b)
    return a ? a : b;
  return a->isBeforeInBlock(b) ? b : a;
}

/// Moves `op` up to just after `after` (null: the block's start).
void moveUpTo(Operation *op, Operation *after) {
  if (after == op->getPrevNode())
    return;
  if (after)
    op->moveAfter(after);
  else
    op->moveBefore(&op->getBlock()->front());
}

/// Whether a pure op is cheap enough to move up with a load that needs it:
/// not a reduction or a matrix product, which stay where they are.
bool movesWithLoad(Operation *op) {
  return isPure(op) && op->getNumRegions() == 0 &&
         !isa<ReduceOp, DotOp, MatmulOp, AddmmOp, BmmOp, BaddbmmOp>(op);
}

/// Moves the cheap pure ops of `op`'s block that compute its operands
/// (index arithmetic, a span's indices) up, each to just after its own
/// operands; returns the latest op of the block that `op` must follow.
Operation *hoistOperands(Operation *op) {
  Block *block = op->getBlock();
  Operation *latest = nullptr;
  for (Value v : op->getOperands()) {
    Operation *def = v.getDefiningOp();
    if (!def || def->getBlock() != block)
      continue;
    if (movesWithLoad(def))
      moveUpTo(def, hoistOperands(def));
    latest = later(latest, def);
  }
  return latest;
}

/// The reordering itself, on `kernel`; returns how many loads passed a
/// reduction.
int moveLoads(func::FuncOp kernel) {
  int passedReductions = 0;
  SmallVector<Block *> blocks;
  kernel.walk([&](Block *block) { blocks.push_back(block); });
  for (Block *block : blocks) {
    // A matrix product's main loop is emitted whole, from its own plan.
    if (Operation *parent = block->getParentOp(); parent && parent->hasAttr("kite.mainloop"))
      continue;
    Operation *lastLoad = nullptr; // loads keep their order
    for (Operation &op : llvm::make_early_inc_range(*block)) {
      auto load = dyn_cast<LoadOp>(&op);
      if (!load)
        continue;
      Value tensor = memoryOf(load.getTensor());
      Operation *writer = nullptr; // the nearest op before it that may write its tensor
      for (Operation *prev = load->getPrevNode(); prev && prev != lastLoad;
           prev = prev->getPrevNode())
        if (mayWrite(prev, tensor)) {
          writer = prev;
          break;
        }
      Operation *after = later(later(writer, lastLoad), hoistOperands(load));
      for (Operation *passed = after ? after->getNextNode() : &block->front(); passed != load;
           passed = passed->getNextNode())
        if (containsReduction(passed)) {
          ++passedReductions;
          break;
        }
      moveUpTo(load, after);
      lastLoad = load;
    }
  }
  return passedReductions;
}

} // namespace

int kite::moveLoadsEarly(func::FuncOp kernel, bool apply) {
  if (apply)
    return moveLoads(kernel);
  // On a copy: operands' ops move too, and what a load passes depends on it.
  auto copy = cast<func::FuncOp>(kernel->clone());
  int passed = moveLoads(copy);
  copy->erase();
  return passed;
}

namespace {

struct KiteEarlyLoadsPass : public kite::impl::KiteEarlyLoadsBase<KiteEarlyLoadsPass> {
  void runOnOperation() override {
    FailureOr<ConfiguredKernel> found = configuredKernel(getOperation());
    if (failed(found))
      return signalPassFailure();
    if (found->config && found->config->early_loads)
      moveLoadsEarly(found->kernel, /*apply=*/true);
  }
};

} // namespace
