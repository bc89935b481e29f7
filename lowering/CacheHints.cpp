//===- CacheHints.cpp - L2 eviction priorities from reuse -----------------===//
//
// This file implements `kite-cache-hints` (see Passes.td). With `l2_hints`
// "reuse" in the config, loads whose data is read again get L2's evict_last
// priority and the last read of such data evict_first, so that a looped
// reduction's later passes over a row find it in L2 and what every program
// reads (a weight, a bias) stays there:
//
//   tile_for %tn {                              // one row per program
//     tile_for %tc { load x[%tn, %tc] }         // evict_last: read again below
//     tile_for %tc { load x[%tn, %tc]           // evict_first: the last read
//                    load w[%tc] }              // evict_last: every program's
//   }
//
// Two loads read the same data when they read the same tensor with the same
// subscripts, where induction variables of loops with the same bounds and
// block size count as the same. With "keep_loads" every load is evict_last.
// The hints change no result.
//
//===----------------------------------------------------------------------===//

#include "lowering/Config.h"
#include "lowering/Passes.h"

#include "mlir/Dialect/Utils/StaticValueUtils.h"

namespace kite {
#define GEN_PASS_DEF_KITECACHEHINTS
#include "lowering/Passes.h.inc"
} // namespace kite

using namespace mlir;
using namespace kite;

namespace {

/// Whether values depend on the program: on a top-level loop's variables.
class ProgramDependence {
public:
  bool operator()(Value v) {
    if (auto it = memo_.find(v); it != memo_.end())
      return it->second;
    memo_[v] = true; // a cycle (a loop-carried value) counts as dependent
    bool dep = compute(v);
    memo_[v] = dep;
    return dep;
  }

private:
  bool compute(Value v) {
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      Operation *owner = arg.getOwner()->getParentOp();
      if (isa<func::FuncOp>(owner))
        return false; // a kernel parameter
      auto loopDims = [&](auto loop) -> std::optional<bool> {
        if (arg.getArgNumber() >= loop.getNumDims())
          return std::nullopt; // loop-carried
        if (loop.isTopLevel())
          return true;
        return llvm::any_of(loop->getOperands(), [&](Value o) { return (*this)(o); });
      };
      std::optional<bool> dep;
      if (auto loop = dyn_cast<TileForOp>(owner))
        dep = loopDims(loop);
      else if (auto loop = dyn_cast<GridForOp>(owner))
        dep = loopDims(loop);
      return dep.value_or(true);
    }
    Operation *def = v.getDefiningOp();
    if (def->getNumRegions() != 0)
      return true;
    return llvm::any_of(def->getOperands(), [&](Value o) { return (*this)(o); });
  }

  llvm::DenseMap<Value, bool> memo_;
};

/// Whether `a` and `b` are the same index: the same value, or the variables
/// of the same dimension of loops with the same bounds and block sizes (the
/// same values or equal constants).
bool sameIndex(Value a, Value b) {
  if (a == b)
    return true;
  auto argA = dyn_cast<BlockArgument>(a), argB = dyn_cast<BlockArgument>(b);
  if (!argA || !argB || argA.getArgNumber() != argB.getArgNumber())
    return false;
  auto loopA = dyn_cast<TileForOp>(argA.getOwner()->getParentOp());
  auto loopB = dyn_cast<TileForOp>(argB.getOwner()->getParentOp());
  if (!loopA || !loopB || argA.getArgNumber() >= loopA.getNumDims() ||
      loopA.getNumDims() != loopB.getNumDims())
    return false;
  unsigned d = argA.getArgNumber();
  auto same = [](Value x, Value y) {
    std::optional<int64_t> cx = getConstantIntValue(x), cy = getConstantIntValue(y);
    return x == y || (cx && cy && *cx == *cy);
  };
  return same(loopA.getLowerBounds()[d], loopB.getLowerBounds()[d]) &&
         same(loopA.getUpperBounds()[d], loopB.getUpperBounds()[d]) &&
         same(loopA.getBlockSizes()[d], loopB.getBlockSizes()[d]);
}

/// Whether two loads read the same elements.
bool sameData(LoadOp a, LoadOp b) {
  if (a.getTensor() != b.getTensor() || a.getLayout() != b.getLayout() ||
      a.getIndices().size() != b.getIndices().size() || a.getType() != b.getType() ||
      a.getMask() != b.getMask())
    return false;
  return llvm::all_of(llvm::zip(a.getIndices(), b.getIndices()),
                      [](auto p) { return sameIndex(std::get<0>(p), std::get<1>(p)); });
}

struct CacheHintsPass : kite::impl::KiteCacheHintsBase<CacheHintsPass> {
  void runOnOperation() override {
    FailureOr<ConfiguredKernel> found = configuredKernel(getOperation());
    if (failed(found))
      return signalPassFailure();
    if (!found->config)
      return; // no config applied: nothing to do
    func::FuncOp func = found->kernel;
    const Config &config = *found->config;
    MLIRContext *ctx = &getContext();
    auto mark = [&](LoadOp load, StringRef policy) {
      load->setAttr("kite.cache", StringAttr::get(ctx, policy));
    };
    if (config.l2_hints == "keep_loads") {
      func.walk([&](LoadOp load) { mark(load, "evict_last"); });
      return;
    }
    if (config.l2_hints != "reuse")
      return;
    ProgramDependence dependsOnProgram;
    // Loads in program order, each program loop on its own (programs of
    // different loops do not share a row).
    for (Operation &top : func.getBody().front()) {
      SmallVector<LoadOp> loads;
      top.walk<WalkOrder::PreOrder>([&](LoadOp load) { loads.push_back(load); });
      SmallVector<bool> done(loads.size(), false);
      for (size_t i = 0; i < loads.size(); ++i) {
        if (done[i])
          continue;
        LoadOp load = loads[i];
        auto dependent = [&](Value v) { return dependsOnProgram(v); };
        bool shared = !dependent(load.getTensor()) && llvm::none_of(load.getIndices(), dependent) &&
                      !(load.getMask() && dependent(load.getMask()));
        if (shared) {
          mark(load, "evict_last");
          continue;
        }
        SmallVector<size_t> same = {i};
        for (size_t j = i + 1; j < loads.size(); ++j)
          if (!done[j] && sameData(load, loads[j]))
            same.push_back(j);
        if (same.size() < 2)
          continue;
        for (size_t k : same) {
          done[k] = true;
          mark(loads[k], k == same.back() ? "evict_first" : "evict_last");
        }
      }
    }
  }
};

} // namespace
