//===- OverlapProducts.cpp - the kite-overlap-products pass ---------------===//
//
// This file implements product overlap (see Passes.td): with
// `overlap_products` in the config, a key loop on wgmma whose last product
// accumulates into a loop-carried tile is split in two stages. The late
// stage is what depends on that tile (its rescaling, the product) and the
// loads only it reads; the rest is the early stage. CUDA emission runs the
// late stage of iteration i - 1 inside iteration i, issued just after the
// early stage's first product, so that it runs on the tensor cores while
// the early stage's elementwise work (attention's softmax) runs:
//
//   for tk:                           for i in 0 .. n:
//     s   = bmm(q, k[tk]^T)    early    s(i) = bmm(q, k(i)^T)      issued
//     p   = softmax stats(s)   early    acc = acc * a(i-1) + p(i-1) v(i-1)   issued
//     acc = acc * a + p v      late     wait for s(i); p(i), a(i) = softmax(s(i))
//                                       wait for acc
//
// Nothing moves in the IR: the pass marks the loop and its late ops, and
// emission keeps the values that cross from one stage to the other
// (attention's p and alpha) in registers for one iteration.
//
//===----------------------------------------------------------------------===//

#include "lowering/Config.h"
#include "lowering/Passes.h"

#include "llvm/ADT/SetVector.h"

namespace kite {
#define GEN_PASS_DEF_KITEOVERLAPPRODUCTS
#include "lowering/Passes.h.inc"
} // namespace kite

using namespace mlir;
using namespace kite;

bool kite::onWgmma(Operation *op) {
  auto instr = op->getAttrOfType<StringAttr>(kMmaAttrName);
  return instr && instr.getValue() == kWgmma;
}

SmallVector<Value> kite::lateStageReads(TileForOp loop,
                                        llvm::function_ref<bool(Operation *)> isLate,
                                        int64_t slot) {
  SmallVector<Value> reads;
  Block *body = loop.getBodyBlock();
  Value ownArg = loop.getRegionIterArgs()[slot];
  for (Operation &op : body->without_terminator()) {
    if (!isLate(&op))
      continue;
    for (Value v : op.getOperands()) {
      bool early = v.getParentBlock() == body &&
                   (v.getDefiningOp() ? !isLate(v.getDefiningOp())
                                      : v != ownArg && v != loop.getSpans()[0]);
      if (early && !llvm::is_contained(reads, v))
        reads.push_back(v);
    }
  }
  return reads;
}

namespace {

/// The prefetched load whose tile is `product`'s right operand, or null.
/// (A ring of one buffer does not count: the late product would read it
/// after the next tile's copy has refilled it.)
LoadOp prefetchedOperand(Block *body, Operation *product) {
  for (auto load : body->getOps<LoadOp>())
    if (auto stages = load->getAttrOfType<IntegerAttr>(kPrefetchAttrName);
        stages && stages.getInt() >= 2 && stagedProduct(load) == product)
      return load;
  return {};
}

/// The late stage of `loop` (its ops, the first one the product whose
/// result the loop carries), or an empty set where the loop does not split.
llvm::SetVector<Operation *> lateStage(TileForOp loop) {
  Block *body = loop.getBodyBlock();
  Operation *yield = body->getTerminator();
  if (loop.walk([](Operation *op) {
            return writtenTensor(op) ? WalkResult::interrupt() : WalkResult::advance();
          })
          .wasInterrupted())
    return {};
  auto inBody = [&](Operation *user) { return body->findAncestorOpInBlock(*user); };
  for (auto [i, yielded] : llvm::enumerate(yield->getOperands())) {
    Operation *late = yielded.getDefiningOp();
    if (!late || late->getBlock() != body || !onWgmma(late))
      continue;
    // What depends on the carried value.
    llvm::SetVector<Operation *> stage;
    SmallVector<Value> work{loop.getRegionIterArgs()[i]};
    while (!work.empty()) {
      Value v = work.pop_back_val();
      for (Operation *user : v.getUsers()) {
        Operation *op = inBody(user);
        if (!op || op == yield || !stage.insert(op))
          continue;
        llvm::append_range(work, op->getResults());
      }
    }
    if (!stage.contains(late))
      continue;
    // The loads (and their transposes and layout changes) only it reads.
    for (bool grew = true; grew;) {
      grew = false;
      for (Operation &op : llvm::reverse(body->without_terminator())) {
        if (stage.contains(&op) || !isa<LoadOp, TransposeOp, ConvertLayoutOp>(op) ||
            op.use_empty())
          continue;
        if (llvm::all_of(op.getUsers(), [&](Operation *u) { return stage.contains(inBody(u)); }))
          grew |= stage.insert(&op);
      }
    }
    // Its values reach only itself and, the product's, the carried slot;
    // what it reads from the rest of the body are tiles (emission keeps
    // them in registers for an iteration).
    auto isLate = [&](Operation *op) { return stage.contains(op); };
    bool closed = llvm::all_of(lateStageReads(loop, isLate, i),
                               [](Value v) { return isa<TileType>(v.getType()); });
    closed &= llvm::all_of(stage, [&](Operation *op) {
      if (op->getNumRegions())
        return false;
      for (OpOperand &use : op->getUses()) {
        Operation *u = inBody(use.getOwner());
        if (u == yield ? op != late || use.getOperandNumber() != i : !stage.contains(u))
          return false;
      }
      return true;
    });
    // The early stage's first product, whose issue the late one follows;
    // both right operands in rings, and no other ring (the copies' waits
    // count on the rings' order).
    Operation *early = nullptr;
    for (Operation &op : body->without_terminator())
      if (!early && !stage.contains(&op) && onWgmma(&op))
        early = &op;
    if (!closed || !early)
      continue;
    LoadOp earlyOperand = prefetchedOperand(body, early), lateOperand = prefetchedOperand(body, late);
    if (!earlyOperand || !lateOperand)
      continue;
    bool rings = llvm::all_of(body->getOps<LoadOp>(), [&](LoadOp l) {
      return !l->hasAttr(kPrefetchAttrName) || l == earlyOperand || l == lateOperand;
    });
    if (!rings || !stage.contains(lateOperand))
      continue;
    return stage;
  }
  return {};
}

struct KiteOverlapProductsPass
    : public kite::impl::KiteOverlapProductsBase<KiteOverlapProductsPass> {
  void runOnOperation() override {
    FailureOr<ConfiguredKernel> found = configuredKernel(getOperation());
    if (failed(found) || !found->config)
      return;
    found->kernel.walk([&](Operation *op) {
      op->removeAttr(kOverlapAttrName);
      op->removeAttr(kLateAttrName);
    });
    if (!found->config->overlap_products)
      return;
    found->kernel.walk([&](TileForOp loop) {
      if (loop.isTopLevel() || loop.getNumDims() != 1 || loop->hasAttr("kite.mainloop"))
        return;
      llvm::SetVector<Operation *> late = lateStage(loop);
      if (late.empty())
        return;
      loop->setAttr(kOverlapAttrName, UnitAttr::get(&getContext()));
      for (Operation *op : late)
        op->setAttr(kLateAttrName, UnitAttr::get(&getContext()));
    });
  }
};

} // namespace
