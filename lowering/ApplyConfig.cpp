//===- ApplyConfig.cpp - apply a config to a kernel -----------------------===//
//
// This file implements `kite-apply-config` (see Passes.td).
//
//===----------------------------------------------------------------------===//

#include "lowering/Config.h"
#include "lowering/Passes.h"
#include "lowering/TypeInference.h"

#include "mlir/IR/PatternMatch.h"

namespace kite {
#define GEN_PASS_DEF_KITEAPPLYCONFIG
#include "lowering/Passes.h.inc"
} // namespace kite

using namespace mlir;
using namespace kite;

namespace {

struct ApplyConfigPass : kite::impl::KiteApplyConfigBase<ApplyConfigPass> {
  using KiteApplyConfigBase::KiteApplyConfigBase;

  void runOnOperation() override {
    FailureOr<func::FuncOp> found = findKernel(getOperation(), "");
    if (failed(found))
      return signalPassFailure();
    func::FuncOp func = *found;
    std::string error;
    FailureOr<Config> parsed = parseConfig(config, error);
    if (failed(parsed)) {
      func.emitError() << "bad config: " << error;
      return signalPassFailure();
    }
    Config c = config.empty() ? defaultConfig(func, arch, speculative) : *parsed;
    // A config without block sizes takes the plain default's (those of the
    // speculative one go with its other keys).
    if (!config.empty() && c.block_sizes.empty())
      c.block_sizes = defaultConfig(func, arch, /*speculative=*/false).block_sizes;
    if (failed(validateConfig(func, c, error))) {
      emitConfigRejection(func) << "config does not fit kernel '" << func.getSymName()
                                << "': " << error;
      return signalPassFailure();
    }
    IRRewriter rewriter(&getContext());
    func.walk([&](BlockSizeOp op) {
      rewriter.setInsertionPoint(op);
      rewriter.replaceOpWithNewOp<arith::ConstantIntOp>(
          op, c.block_sizes[op.getId()], 64);
    });
    func->setAttr("kite.config", StringAttr::get(&getContext(), c.toJson()));
    if (failed(inferTypes(func)))
      return signalPassFailure();
    if (failed(checkTileSizes(func)))
      return signalPassFailure();
  }

  /// No tile may hold more than kMaxTileElements: a bigger one cannot live
  /// in one program's registers or shared memory, and its element count
  /// would overflow the emitter's arithmetic.
  LogicalResult checkTileSizes(func::FuncOp func) {
    constexpr int64_t kMaxTileElements = int64_t(1) << 24;
    WalkResult r = func.walk([&](Operation *op) {
      for (Type t : op->getResultTypes()) {
        auto tile = dyn_cast<TileType>(t);
        if (!tile || !tile.hasRank())
          continue;
        int64_t n = 1;
        for (int64_t d : tile.getShape()) {
          if (ShapedType::isDynamic(d) || d <= 0)
            continue;
          n = d > kMaxTileElements / n ? kMaxTileElements + 1 : n * d;
        }
        if (n > kMaxTileElements) {
          emitConfigRejection(op) << "config does not fit kernel '" << func.getSymName()
                          << "': this value would be a tile of " << tile
                          << ", more than " << kMaxTileElements
                          << " elements; use smaller block sizes";
          return WalkResult::interrupt();
        }
      }
      return WalkResult::advance();
    });
    return failure(r.wasInterrupted());
  }
};

} // namespace
