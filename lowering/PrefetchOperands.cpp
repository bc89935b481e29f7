//===- PrefetchOperands.cpp - the kite-prefetch-operands pass -------------===//
//
// This file implements operand prefetching: with `num_stages` S in the
// config, a load whose tile is only a tensor-core product's right
// operand (kite.mma; directly or through one transpose), in the body of a
// key loop, with subscripts that change only with that loop's tile, is
// marked `kite.prefetch = S`. CUDA emission then copies its tiles straight
// into S shared-memory staging buffers with cp.async, S - 1 iterations
// ahead of the product that reads them (the first ones before the loop),
// instead of loading them into registers and staging them at the product:
//
//   for (auto tk : tile(s)) {              prologue: copy k[tb, 0:B, all] -> buffer 0
//     kt = k[tb, tk, all].transpose(1, 2)  for (i = 0; ...) {
//     qk = bmm(qt, kt)              ->       wait for buffer i % 2; barrier
//     ...                                    copy k[tb, tile i + 1, all] -> buffer (i + 1) % 2
//   }                                        qk = bmm(qt, buffer i % 2)
//
// The barrier before each product already separates the last reads of a
// buffer (iteration i - 1's product) from its refill (issued after
// iteration i's barrier), so prefetching adds no barrier.
//
// With S = 1 the one buffer is refilled as soon as its product is done
// (after a barrier): tile i + 1's copy runs under the rest of iteration i
// (in attention, the softmax and the other product), in half the shared
// memory of S = 2.
//
//===----------------------------------------------------------------------===//

#include "lowering/Config.h"
#include "lowering/Passes.h"

namespace kite {
#define GEN_PASS_DEF_KITEPREFETCHOPERANDS
#include "lowering/Passes.h.inc"
} // namespace kite

using namespace mlir;
using namespace kite;

Operation *kite::stagedProduct(LoadOp load, TransposeOp *transpose) {
  Value v = load.getResult();
  if (!v.hasOneUse())
    return nullptr;
  Operation *user = *v.getUsers().begin();
  if (auto t = dyn_cast<TransposeOp>(user)) {
    if (!t.getResult().hasOneUse() || t->getBlock() != load->getBlock())
      return nullptr;
    if (transpose)
      *transpose = t;
    v = t.getResult();
    user = *v.getUsers().begin();
  }
  if (!user->hasAttr(kMmaAttrName) || user->getOperand(user->getNumOperands() - 1) != v)
    return nullptr;
  return user;
}

namespace {

/// True if anything in `kernel` writes the memory of `tensor`.
bool written(func::FuncOp kernel, Value tensor) {
  return kernel
      .walk([&](Operation *op) {
        Value t = writtenTensor(op);
        return t && memoryOf(t) == tensor ? WalkResult::interrupt() : WalkResult::advance();
      })
      .wasInterrupted();
}

} // namespace

bool kite::prefetchable(LoadOp load, TileForOp loop, func::FuncOp kernel) {
  if (load.getMask())
    return false;
  // A kernel parameter itself (not a view of one).
  auto arg = dyn_cast<BlockArgument>(load.getTensor());
  if (!arg || arg.getOwner()->getParentOp() != kernel || written(kernel, arg))
    return false;
  bool usesSpan = false;
  for (const Subscript &s : load.getSubscripts()) {
    if (s.kind == Subscript::Kind::Gather)
      return false;
    if (!s.value)
      continue;
    if (s.kind == Subscript::Kind::Span && s.value == loop.getSpans()[0]) {
      usesSpan = true;
      continue;
    }
    Value v = s.value;
    if (loop->isAncestor(v.getParentBlock()->getParentOp()))
      return false;
  }
  return usesSpan;
}

namespace {

struct KitePrefetchOperandsPass
    : public kite::impl::KitePrefetchOperandsBase<KitePrefetchOperandsPass> {
  void runOnOperation() override {
    FailureOr<ConfiguredKernel> found = configuredKernel(getOperation());
    if (failed(found) || !found->config)
      return;
    func::FuncOp kernel = found->kernel;
    int64_t stages = found->config->num_stages;
    kernel.walk([&](LoadOp load) {
      load->removeAttr(kPrefetchAttrName);
      auto loop = dyn_cast<TileForOp>(load->getParentOp());
      if (stages < 1 || !loop || loop.isTopLevel() || loop.getNumDims() != 1 ||
          loop->hasAttr("kite.mainloop"))
        return;
      Operation *product = stagedProduct(load);
      if (!product || product->getBlock() != load->getBlock() ||
          !prefetchable(load, loop, kernel))
        return;
      load->setAttr(kPrefetchAttrName,
                    IntegerAttr::get(IntegerType::get(&getContext(), 64), stages));
    });
  }
};

} // namespace
