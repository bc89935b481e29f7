//===- Pipeline.cpp - the lowering pipeline -------------------------------===//
//
// This file implements the lowering pipeline as one readable list of passes.
//
//===----------------------------------------------------------------------===//

#include "lowering/Pipeline.h"
#include "lowering/Passes.h"

#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void kite::buildKiteLoweringPipeline(OpPassManager &pm,
                                     const LoweringOptions &options) {
  // Types and constants from the launch arguments; after this every tensor
  // is static and every tile's dtype known.
  pm.addPass(createKiteSpecialize({options.kernel, options.args}));
  // Block sizes from the config; after this every tile shape is static.
  pm.addPass(createKiteApplyConfig({options.config, options.arch, options.speculative}));
  // Reductions the config loops over chunks of, instead of whole rows.
  pm.addPass(createKiteReductionLoops());
  // Key loops split where an index mask (causal) holds on whole tiles.
  pm.addPass(createKiteSplitMaskedLoops());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  // Subscripts proven inside their tensors; the rest an error or masked.
  pm.addPass(createKiteCheckBounds());
  // L2 eviction priorities for loads the config asks for.
  pm.addPass(createKiteCacheHints());
  // Matrix-product K loops that run as a pipelined tensor-core main loop.
  pm.addPass(createKiteMatmulMainloop({/*explain=*/false, options.arch}));
  // Loads issued as early as their operands allow, if the config asks.
  pm.addPass(createKiteEarlyLoads());
  // Every tile's layout, and a conversion wherever a user needs another;
  // emission only prints them.
  pm.addPass(createKiteAssignLayouts({options.arch}));
  // Product operands copied into shared memory iterations ahead, if the
  // config has stages for them.
  pm.addPass(createKitePrefetchOperands());
  // Key loops whose last product runs an iteration late, under the next
  // iteration's elementwise work, if the config asks.
  pm.addPass(createKiteOverlapProducts());
}

void kite::registerKiteLoweringPasses() {
  registerKitePasses();
  PassPipelineRegistration<LoweringOptions>(
      "kite-lower", "Lower a captured kite kernel (the runtime's pipeline)",
      buildKiteLoweringPipeline);
}
