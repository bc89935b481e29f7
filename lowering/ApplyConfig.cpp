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
    Config c = config.empty() ? defaultConfig(func, arch) : *parsed;
    if (!config.empty() && c.block_sizes.empty())
      c.block_sizes = defaultConfig(func, arch).block_sizes;
    if (failed(validateConfig(func, c, error))) {
      func.emitError() << "config does not fit kernel '" << func.getSymName()
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
  }
};

} // namespace
